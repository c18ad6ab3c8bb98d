"""String gold values by meaning (key, description, format), from the persona's and the tool's world.

Exists so a value fits its parameter on any catalog: an `owner` gets a handle (`acme-data`), a
`repo` a repository name (`billing-service`), a `q` what people of the tool's world type
(`domains`: "is:open label:bug flaky login test"), a `team` or `gene` a real one (`value_lexicon`),
a `state` one of the options its description lists, a `title` or `body` a text about a thing of
the tool's world. A search shares a word with what it searches (the plausibility rule).

Every value here is sayable and read back losslessly by `gold_values.read`: one line, no
"; " or ". " inside, no trailing full stop, no surrounding quotes or spaces.
"""

from __future__ import annotations

import datetime as dt
import functools
import random
import re
import string

from faker import Faker

from ..core.records import Persona, Tool
from ..core.text import STOP, split_words, without_codes
from ..dialogue import person_names
from ..dialogue.values import BIRTH_WORDS, implausible
from . import domains
from .nounphrases import noun_phrases
from .value_kinds import examples, meaning_key, options, string_kind
from .value_lexicon import LEXICON, lexicon_value
from .value_tables import BODY, CHOICES, DIAL, LANGUAGES, LOCALES, MODIFIERS, ORGANISATIONS, SPOTIFY_KINDS, VERBS, WHEN

# words that say what kind of field something is, not what it is about
FIELD_FILLER = STOP | set(
    "name names id ids value values string text type field parameter param optional required default e g eg "
    "given specified provided specify use used using set list number numbers code key keys new existing "
    "whether true false must should can will returned return returns get gets create creates update updates "
    "delete deletes fetch fetches retrieve retrieves find finds search searches query queries call request "
    "api endpoint data info information item items object objects example format see also like e.g i.e etc "
    "current specific one two within without between only maximum minimum max min per page results result "
    "where want wants pulled being replaced apply applies show shows updated after before since until display "
    "implemented changes change made make makes provide provides containing contains include includes "
    "optionally always usually sure note either whose which that this these their there here used".split()
)
# words that name the container of a value, not what it is about: kept out of the value itself
KIND_WORDS = frozenset(
    "file files directory directories path paths folder branch branches repository repositories repo repos "
    "label labels tag tags title body comment message description reason summary subject content query term "
    "keyword keywords filter text note notes details url link uri email owner user username login".split()
)
BASE62 = string.ascii_letters + string.digits


@functools.cache
def _faker(locale: str) -> Faker:
    return Faker(locale)


def faker_for(persona: Persona, rng: random.Random) -> Faker:
    """A Faker in the persona's locale (Latin-script locales only), seeded from `rng`."""
    fake = _faker(LOCALES.get(country(persona), "en_US"))
    fake.seed_instance(rng.getrandbits(32))
    return fake


def country(persona: Persona) -> str:
    return str(persona.attributes.get("country") or "").upper()


# descriptive words that make no topic on their own
ADJECTIVES = frozenset(
    "wrong right short long unknown known full partial all any some many few first last next previous other "
    "same different various certain main primary secondary additional own related relevant available valid "
    "invalid active inactive public private open closed large small high low good bad best better able "
    "based single multiple several each every total whole entire general specific particular".split()
)


def topical(word: str) -> bool:
    """Whether a word can stand as a topic: not a filler, adjective, adverb or participle."""
    return (word not in FIELD_FILLER and word not in ADJECTIVES and len(word) > 2 and not word.isdigit()
            and not word.endswith(("ly", "ed")))


def prose_words(text: str) -> list[str]:
    """Lower-case words of prose (no identifier splitting: "GitHub" stays one word); URLs and codes such as
    an example id ('1301WleyT98MSx') give none."""
    return re.findall(r"[a-z][a-z0-9]*", without_codes(text).lower())


def meaning_words(key: str, schema: dict) -> list[str]:
    """The content words of a parameter's key and description, in order, fillers left out."""
    out: list[str] = []
    for w in split_words(key) + prose_words(str(schema.get("description") or "")):
        if topical(w) and w not in out:
            out.append(w)
    return out


def domain_words(tool: Tool | None) -> list[str]:
    """Content words of the tool's description that are not words of its name (a value saying
    them while the tool is being chosen would give the tool away)."""
    if not tool:
        return []
    named = name_words(tool)
    out: list[str] = []
    for w in prose_words(tool.description):
        if topical(w) and w not in named and w not in out:
            out.append(w)
    return out


def name_words(tool: Tool | None) -> set[str]:
    return set(split_words(tool.name if tool else ""))


def persona_words(persona: Persona) -> list[str]:
    """Content words of the persona's own text (its work, its world), fillers left out."""
    out: list[str] = []
    for w in re.findall(r"(?<![\w'’])[a-z][a-z0-9]*", persona.text):  # lower-case: no names
        if topical(w) and len(w) > 3 and w not in out:
            out.append(w)
    return out


def _slug(*parts: str) -> str:
    return "-".join(p for p in (re.sub(r"[^a-z0-9]+", "-", x.lower()).strip("-") for x in parts) if p)


def _who(persona: Persona, rng: random.Random) -> str:
    attrs = persona.attributes
    pool = [f"the {attrs['department']} team" if attrs.get("department") else "",
            str(attrs.get("company") or ""), f"the {attrs['city']} office" if attrs.get("city") else ""]
    pool = [p for p in pool if p] or ["the team", "our partners", "the on-call group"]
    return rng.choice(pool)


def _topic(key: str, schema: dict, tool: Tool | None, persona: Persona, rng: random.Random, n: int = 2) -> list[str]:
    """`n` words about this parameter: its own meaning first, then the tool's domain and the
    persona's world; never a word of the tool's name nor a word naming the kind of field."""
    named = name_words(tool)
    own = [w for w in meaning_words(key, schema) if w not in KIND_WORDS and w not in named]
    dom = [w for w in domain_words(tool) + persona_words(persona)[:12] if w not in own and w not in KIND_WORDS]
    picked: list[str] = []
    if own:
        picked.append(rng.choice(own))
    pool = [w for w in dom + own if w not in picked]
    while len(picked) < n and pool:
        w = rng.choice(pool)
        pool.remove(w)
        picked.append(w)
    attrs = persona.attributes
    fallback = [w for a in ("department", "city") for w in prose_words(str(attrs.get(a) or ""))
                if w not in picked and w not in FIELD_FILLER]
    while len(picked) < n:
        picked.append(fallback.pop(0) if fallback else rng.choice([m for m in MODIFIERS if m not in picked]))
    return picked


def _handle(persona: Persona, rng: random.Random, org: bool) -> str:
    if org:
        company = str(persona.attributes.get("company") or "")
        head = company.split()[0] if company and rng.random() < 0.5 else rng.choice(
            ["acme", "northwind", "bluepeak", "lumen", "orbit", "tidewater", "kestrel", "granite"])
        return _slug(head, rng.choice(["data", "labs", "dev", "tech", "platform", "io", "eng", "cloud"]))
    first, last = person_names.person_name(persona, rng, "first"), person_names.person_name(persona, rng, "last")
    styles = [f"{first}{last}", f"{first[0]}{last}", f"{first}-{last}", f"{first}{rng.randint(1, 99)}"]
    return re.sub(r"[^a-z0-9-]", "", rng.choice(styles).lower())


def _repo(persona: Persona, rng: random.Random) -> str:
    """A repository name as teams name them ('billing-service', 'obelan-checkout')."""
    company = str(persona.attributes.get("company") or "")
    head = rng.choice(domains.MODULES)
    lead = company.split()[0] if company and rng.random() < 0.25 else ""
    return _slug(lead, head, "" if "-" in head else rng.choice(domains.SUFFIXES))  # no 'mobile-app-app'


def _path(rng: random.Random, kind: str) -> str:
    """A directory, file name or file path of a code base ('src/payments/retry.go')."""
    lang = rng.choice(list(domains.EXTENSIONS))
    module = rng.choice(domains.MODULES).replace("-", "_")
    stem = rng.choice(domains.FILE_STEMS)
    ext = "md" if stem == "README" else domains.EXTENSIONS[lang]
    top = rng.choice(["src", "pkg", "lib", "app", "internal", "docs"])
    if kind == "dir":
        return f"{top}/{module}"
    if kind == "file":
        return f"{stem}.{ext}"
    return f"{top}/{module}/{stem}.{ext}"


def _base62(r: random.Random, n: int = 22) -> str:
    return "".join(r.choice(BASE62) for _ in range(n))


def _identifier(key: str, schema: dict, rng: random.Random) -> str:
    desc = str(schema.get("description") or "").lower()
    if "spotify" in desc or "base62" in desc or "base-62" in desc:
        one = _base62
    elif re.search(r"\bnumeric\b|\bdigits\b|\binteger\b", desc):
        def one(r: random.Random) -> str:
            return str(r.randint(10000, 99999999))
    else:
        prefix = "".join(w[0] for w in split_words(key)[:-1] if w not in ("s",)).upper() or split_words(key)[0][:3].upper()
        if len(prefix) < 2:
            prefix = (split_words(key)[0][:3] if split_words(key) else "ref").upper()

        def one(r: random.Random) -> str:
            return f"{prefix}-{r.randint(10000, 99999)}"
    if re.search(r"comma[- ]separated", desc):
        return ",".join(one(rng) for _ in range(rng.randint(2, 3)))
    return one(rng)


def _date(rng: random.Random) -> str:
    return (dt.date(2026, 1, 5) + dt.timedelta(days=rng.randint(0, 540))).isoformat()


def _thing(tool: Tool | None, persona: Persona, rng: random.Random) -> str:
    """What a free text is about: a thing of the tool's world ('flaky login test'), else one of the
    noun phrases its description names ('audio features'), else two words of the persona's world."""
    if (thing := domains.world_thing(tool, persona, rng)) is not None:
        return thing
    phrases = [p for p in noun_phrases(tool.description, set()) if 1 < len(p.split()) <= 3] if tool else []
    if phrases:
        return rng.choice(phrases).lower()
    words = [w for w in persona_words(persona) if not w.endswith("s") or w.endswith("ss")][:12]
    return " ".join(rng.sample(words, 2)) if len(words) >= 2 else f"{rng.choice(MODIFIERS)} plan"


def _sentence(persona: Persona, tool: Tool | None, rng: random.Random) -> str:
    text = rng.choice(BODY).format(thing=_thing(tool, persona, rng), who=_who(persona, rng), when=rng.choice(WHEN))
    return text[:1].upper() + text[1:]


# kinds a description's own example serves better than a made-up phrase
_BY_EXAMPLE = frozenset({"phrase", "title", "tag", "address", "city", "company", "body", "identifier"})


def string_value(key: str, schema: dict, persona: Persona, rng: random.Random, tool: Tool | None = None) -> str:
    """A realistic value for string parameter `key`, by what `string_kind` says it holds; for a kind
    with no shape of its own, one of the options or examples its description gives when it gives some."""
    kind = string_kind(key, schema)
    desc = str(schema.get("description") or "")
    if kind == "url" and "uri" in split_words(key) and domains.domain_of(tool) == "music":
        kind = "spotify_uri"  # a player's 'uri' is the catalog's own address, not a web page
    if kind in ("phrase", "tag", "identifier") and (listed := options(desc)):
        return rng.choice(listed)
    if kind in _BY_EXAMPLE and (given := examples(desc)):
        known = lexicon_value(meaning_key(key, schema), rng, tool) if kind in ("phrase", "title", "tag") else None
        return known if known and rng.random() < 0.5 else rng.choice(given)
    fake = faker_for(persona, rng)
    shaped = _shaped_value(kind, key, schema, persona, rng, fake, tool)
    return shaped if shaped is not None else _worded_value(kind, key, schema, persona, rng, fake, tool)


def _shaped_value(kind: str, key: str, schema: dict, persona: Persona, rng: random.Random, fake: Faker,
                  tool: Tool | None) -> str | None:
    """A value of a kind with a shape of its own (a date, an email, a URL, a locale...); None for the others."""
    attrs = persona.attributes
    if kind == "date" and BIRTH_WORDS & set(split_words(key)):
        return (dt.date(1955, 1, 1) + dt.timedelta(days=rng.randint(0, 50 * 365))).isoformat()  # born 1955-2004
    if kind == "date":
        return _date(rng)
    if kind == "datetime":
        return f"{_date(rng)}T{rng.choice([8, 9, 10, 11, 13, 14, 15, 16]):02d}:{rng.choice([0, 15, 30, 45]):02d}:00Z"
    if kind == "time":
        return f"{rng.choice([8, 9, 10, 11, 13, 14, 15, 16]):02d}:{rng.choice([0, 15, 30, 45]):02d}"
    if kind == "email":
        company = re.sub(r"[^a-z]", "", str(attrs.get("company") or "example").lower()) or "example"
        return f"{person_names.person_name(persona, rng).lower().replace(' ', '.')}@{company}.com"
    if kind == "spotify_uri":
        ws = split_words(key) + split_words(str(schema.get("description") or ""))[:15]
        return f"spotify:{next((w for w in ws if w in SPOTIFY_KINDS), 'track')}:{_base62(rng)}"
    if kind == "url":
        return f"https://{fake.domain_name()}/{_slug(*_topic(key, schema, tool, persona, rng, 2))}"
    if kind == "uuid":
        return str(fake.uuid4())
    if kind == "ipv4":
        return fake.ipv4_private()
    if kind == "hostname":
        return fake.domain_name()
    if kind == "phone":
        dial = DIAL.get(country(persona), "+1")
        return f"{dial} {rng.randint(200, 989)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}"
    if kind == "sha":
        return fake.sha1()[: rng.choice([7, 40])]
    if kind == "color":  # a label's colour is a hex code ('without the #' when told so); a painting's is a word
        said = str(schema.get("description") or "").lower()
        code = fake.hex_color().removeprefix("#" if "without" in said else "")
        return code if re.search(r"\bhex|#", said) else rng.choice(LEXICON["color"])
    if kind == "timezone":
        return str(attrs.get("timezone") or fake.timezone())
    if kind == "currency":
        return str(attrs.get("currency") or fake.currency_code())
    if kind == "country":
        return str(attrs.get("country") or fake.country_code())
    if kind == "locale":
        lang = LANGUAGES.get(country(persona), "en")
        return f"{lang}-{country(persona) or 'US'}"
    if kind == "language":
        return LANGUAGES.get(country(persona), "en")
    if kind == "version":
        return f"{rng.randint(1, 5)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}"
    return rng.choice(CHOICES[kind]) if kind in CHOICES else None


def _worded_value(kind: str, key: str, schema: dict, persona: Persona, rng: random.Random, fake: Faker,
                  tool: Tool | None) -> str:
    """A value made of words: a handle, a person, a repository, a place, a search, a title, a text, an id,
    else a short phrase of the parameter's own head noun."""
    attrs = persona.attributes
    ws = split_words(meaning_key(key, schema))
    own = str(attrs.get("handle") or "").lstrip("@")
    if kind == "handle_user" and own and rng.random() < 0.4:
        return own  # the persona's own account
    if kind in ("handle_user", "handle_org"):
        return _handle(persona, rng, org=kind == "handle_org" and ("user" not in ws or rng.random() < 0.5))
    if kind == "person":
        part = "first" if ws and ({"first", "given"} & set(ws)) else "last" if {"last", "family", "surname"} & set(ws) else "full"
        return person_names.person_name(persona, rng, part)
    if kind == "repo":
        return _repo(persona, rng)
    if kind == "branch":
        if "base" in ws:
            return rng.choice(["main", "develop", "release/2.4", "main"])
        return f"{rng.choice(['feature', 'fix', 'chore'])}/{_slug(domains.code_thing(rng))[:32].strip('-')}"
    if kind in ("dir", "file", "path"):
        return _path(rng, kind)
    if kind == "city":
        return str(attrs.get("city") or fake.city())
    if kind == "postcode":
        return fake.postcode()
    if kind == "address":
        return fake.street_address().replace("\n", ", ")
    if kind == "company":
        return str(attrs.get("company") or fake.company())
    if kind == "query":
        return _query(key, schema, persona, rng, tool)
    if kind == "tag":
        if domains.domain_of(tool, persona) == "music" and "genre" not in ws:
            return rng.choice(domains.MUSIC_TAGS)  # a player's browse category
        if known := lexicon_value(meaning_key(key, schema), rng, tool):
            return known
        return rng.choice(domains.LABELS) if domains.domain_of(tool, persona) == "code" else \
            _slug(_thing(tool, persona, rng).split()[-1])
    if kind == "title":
        return _title(key, schema, persona, rng, tool)
    if kind == "body" and "message" in ws and domains.domain_of(tool, persona) == "code":
        thing = domains.code_thing(rng)  # a commit message
        return f"{rng.choice(['Fix', 'Handle', 'Guard against'])} {thing}" if not thing.endswith("support") else f"Add {thing}"
    if kind == "body":
        return _sentence(persona, tool, rng)
    if kind == "identifier":
        if {"number", "num", "no"} & set(ws) and not {"id", "code", "ref"} & set(ws) and not schema.get("pattern"):
            return str(rng.randint(1, 3000))
        return _identifier(key, schema, rng)
    # anything else: a thing its head noun names ('team' -> a team), else a name of that thing
    shop = tool is not None and re.search(r"grocer|supermarket|walmart|safeway|whole foods|store", tool.description.lower())
    if known := lexicon_value(meaning_key(key, schema), rng, tool) or lexicon_value(("grocery " if shop else "") + key, rng) \
            or lexicon_value(" ".join(meaning_words(key, schema)[:3]), rng, tool):
        return known
    head = [w for w in split_words(key) if w not in FIELD_FILLER] or meaning_words(key, schema)[:1] or ["entry"]
    if head[-1] in ORGANISATIONS:
        return str(fake.company())
    return f"{fake.last_name()} {' '.join(head[-2:])}"


def _query(key: str, schema: dict, persona: Persona, rng: random.Random, tool: Tool | None) -> str:
    """What a person types into the tool's search box: a search of its world (`domains`), else a thing
    the tool's name is about ('find_recipes' -> a recipe), else one of its description's noun phrases."""
    context = tool.description if tool else ""  # not its name: a value saying it gives the tool away
    typed = [q for _ in range(8) if (q := domains.search_query(tool, persona, rng)) is not None]
    if grounded := [q for q in typed if implausible(key, q, schema, context) is None]:
        return grounded[0]  # a search shares a word with what it searches (`dialogue.values`)
    if typed:
        nouns = [w for p in noun_phrases(tool.description, set()) if len(w := p.split()[-1]) > 3] if tool else []
        return f"{typed[0]} {rng.choice(nouns).lower()}" if nouns else typed[0]
    if tool and (known := lexicon_value(tool.name, rng)):
        return known
    phrases = [p.lower() for p in noun_phrases(tool.description, set()) if len(p.split()) > 1] if tool else []
    if phrases:
        city = persona.attributes.get("city")
        return f"{rng.choice(phrases)} {city}" if city and rng.random() < 0.3 else rng.choice(phrases)
    return " ".join(_topic(key, schema, tool, persona, rng, 2))


def _title(key: str, schema: dict, persona: Persona, rng: random.Random, tool: Tool | None) -> str:
    """A title: of a work its key names (a song, a game), of a piece of code work, else of a task."""
    if "subject" not in split_words(key) and (known := lexicon_value(meaning_key(key, schema), rng, tool)):
        return known  # a song's or a game's title; a 'subject' is an e-mail's or a ticket's
    if domains.domain_of(tool, persona) == "code":
        thing = domains.code_thing(rng)
        return thing[:1].upper() + thing[1:] if thing.endswith("support") else f"{rng.choice(['Fix', 'Investigate'])} {thing}"
    place = persona.attributes.get("city") or persona.attributes.get("department")
    tail = f" for {place}" if place and rng.random() < 0.5 else ""
    thing = _thing(tool, persona, rng)
    return thing[:1].upper() + thing[1:] if rng.random() < 0.4 else f"{rng.choice(VERBS)} {thing}{tail}"
