"""String gold values by meaning: what a parameter's key, description and format say it holds,
filled from the persona's world and the tool's domain.

Exists so a value fits its parameter on any catalog, not only the shipped one: an `owner` gets
a handle (`acme-data`), a `repo` a repository name (`billing-service`), a `path` a file path,
a `q` a search made of the tool's own words, a `title` or `body` a short text built from the
parameter's and the tool's words. No stock phrase is shared between unrelated parameters: a
free-text value always carries words of its own parameter (key and description) or tool.

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

from ..core.text import STOP, key_words, split_words, without_codes
from ..dialogue import person_names
from ..dialogue.values import BIRTH_WORDS
from .value_tables import BODY, DIAL, LANGUAGES, LOCALES, MODIFIERS, SPOTIFY_KINDS, VERBS, WHEN

# words that say what kind of field something is, not what it is about
FILLER = STOP | set(
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


def faker_for(persona: dict, rng: random.Random) -> Faker:
    """A Faker in the persona's locale (Latin-script locales only), seeded from `rng`."""
    fake = _faker(LOCALES.get(country(persona), "en_US"))
    fake.seed_instance(rng.getrandbits(32))
    return fake


def country(persona: dict) -> str:
    return str((persona.get("attributes") or {}).get("country") or "").upper()


# descriptive words that make no topic on their own
ADJECTIVES = frozenset(
    "wrong right short long unknown known full partial all any some many few first last next previous other "
    "same different various certain main primary secondary additional own related relevant available valid "
    "invalid active inactive public private open closed large small high low good bad best better able "
    "based single multiple several each every total whole entire general specific particular".split()
)


def topical(word: str) -> bool:
    """Whether a word can stand as a topic: not a filler, adjective, adverb or participle."""
    return (word not in FILLER and word not in ADJECTIVES and len(word) > 2 and not word.isdigit()
            and not word.endswith(("ly", "ed")))


def plain_words(text: str) -> list[str]:
    """Lower-case words of prose (no identifier splitting: "GitHub" stays one word); URLs and codes such as
    an example id ('1301WleyT98MSx') give none."""
    return re.findall(r"[a-z][a-z0-9]*", without_codes(text).lower())


def meaning_words(key: str, schema: dict) -> list[str]:
    """The content words of a parameter's key and description, in order, fillers left out."""
    out: list[str] = []
    for w in split_words(key) + plain_words(str(schema.get("description") or "")):
        if topical(w) and w not in out:
            out.append(w)
    return out


def domain_words(tool: dict | None) -> list[str]:
    """Content words of the tool's description that are not words of its name (a value saying
    them while the tool is being chosen would give the tool away)."""
    if not tool:
        return []
    named = name_words(tool)
    out: list[str] = []
    for w in plain_words(str(tool.get("description") or "")):
        if topical(w) and w not in named and w not in out:
            out.append(w)
    return out


def name_words(tool: dict | None) -> set[str]:
    return set(split_words(str((tool or {}).get("name") or "")))


def persona_words(persona: dict) -> list[str]:
    """Content words of the persona's own text (its work, its world), fillers left out."""
    out: list[str] = []
    for w in re.findall(r"(?<![\w'’])[a-z][a-z0-9]*", str(persona.get("text") or "")):  # lower-case: no names
        if topical(w) and len(w) > 3 and w not in out:
            out.append(w)
    return out


def _slug(*parts: str) -> str:
    return "-".join(p for p in (re.sub(r"[^a-z0-9]+", "-", x.lower()).strip("-") for x in parts) if p)


def _who(persona: dict, rng: random.Random) -> str:
    attrs = persona.get("attributes") or {}
    pool = [f"the {attrs['department']} team" if attrs.get("department") else "",
            str(attrs.get("company") or ""), f"the {attrs['city']} office" if attrs.get("city") else ""]
    pool = [p for p in pool if p] or ["the team", "our partners", "the on-call group"]
    return rng.choice(pool)


def _topic(key: str, schema: dict, tool: dict | None, persona: dict, rng: random.Random, n: int = 2) -> list[str]:
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
    attrs = persona.get("attributes") or {}
    fallback = [w for a in ("department", "city") for w in plain_words(str(attrs.get(a) or ""))
                if w not in picked and w not in FILLER]
    while len(picked) < n:
        picked.append(fallback.pop(0) if fallback else rng.choice([m for m in MODIFIERS if m not in picked]))
    return picked


def _handle(persona: dict, rng: random.Random, org: bool) -> str:
    if org:
        company = str((persona.get("attributes") or {}).get("company") or "")
        head = company.split()[0] if company and rng.random() < 0.5 else rng.choice(
            ["acme", "northwind", "bluepeak", "lumen", "orbit", "tidewater", "kestrel", "granite"])
        return _slug(head, rng.choice(["data", "labs", "dev", "tech", "platform", "io", "eng", "cloud"]))
    first, last = person_names.person_name(persona, rng, "first"), person_names.person_name(persona, rng, "last")
    styles = [f"{first}{last}", f"{first[0]}{last}", f"{first}-{last}", f"{first}{rng.randint(1, 99)}"]
    return re.sub(r"[^a-z0-9-]", "", rng.choice(styles).lower())


def _repo(key: str, schema: dict, tool: dict | None, persona: dict, rng: random.Random) -> str:
    words = [w for w in _topic(key, schema, tool, persona, rng, 2) if w not in ("repository", "repo", "github")]
    head = words[0] if words else rng.choice(MODIFIERS)
    return _slug(head, rng.choice(["service", "api", "app", "web", "tools", "pipeline", "sdk", "infra", "docs", "cli"]))


def _path(key: str, schema: dict, tool: dict | None, persona: dict, rng: random.Random, kind: str) -> str:
    a, b = (_slug(w) for w in _topic(key, schema, tool, persona, rng, 2))
    ext = rng.choice(["py", "md", "ts", "json", "yaml", "go", "csv"])
    if kind == "dir":
        return f"{rng.choice(['src', 'docs', 'config', 'scripts', 'lib'])}/{a}"
    if kind == "file":
        return f"{a}_{b}.{ext}".replace("-", "_")
    return f"{rng.choice(['src', 'docs', 'config', 'scripts', 'lib'])}/{a}/{b}.{ext}".replace("-", "_")


def _spotify_kind(key: str, schema: dict) -> str:
    ws = split_words(key) + split_words(str(schema.get("description") or ""))[:15]
    return next((w for w in ws if w in SPOTIFY_KINDS), "track")


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


# one-word keys that name no thing on their own: verbs, adjectives, modifiers, catch-alls
AMBIGUOUS = frozenset(
    "q s n base head ref closes includes contains matches force draft public private recursive archived enabled "
    "sort order direction scope filter type kind mode value data input target source since until before after "
    "all latest raw full per from to with key fields expand include exclude format method context payload "
    "options params arguments selector spec config parent default".split()
)
# words that keep their own place in front of the description's noun ("base branch")
MODIFIER_KEYS = frozenset("base head target source parent default".split())
_NP_SKIP = frozenset("the a an this optional required filter specify specifies whether if only return returns "
                     "one or more comma separated of list by".split())
_NP_STOP = frozenset("to that which where who when in on for with from by is are will used as if this using "
                     "you your when e g eg and or be can should must".split())


def noun_phrase(description: str) -> str:
    """The first noun phrase of a description: leading fillers skipped, cut at the first
    preposition, verb or clause word ("The name of the branch where ..." -> "name of the branch")."""
    clause = re.split(r"[.;:()\n,]| - ", description.strip(), maxsplit=1)[0]
    ws = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]*", clause)]
    while ws and ws[0].lower() in _NP_SKIP:
        ws.pop(0)
    out: list[str] = []
    for i, w in enumerate(ws):
        low = w.lower()
        if low == "of" and out and i + 1 < len(ws):
            out.append(low)
            continue
        if low in _NP_STOP or len(out) >= 5:
            break
        out.append(w if w.isupper() and len(w) > 1 else low)
    while out and out[-1] in ("of", "the", "a", "an"):
        out.pop()
    return " ".join(out)


# one-word keys whose spoken label is fixed
SINGLE = {"since": "start time", "until": "end time", "before": "cut-off time", "after": "start time",
          "q": "search query"}


def meaning_key(key: str, schema: dict) -> str:
    """The key, with the description's first noun phrase added when the key alone names no thing
    (`closes` -> "closes issue number"), so the value is chosen by what the parameter holds."""
    ws = key_words(key, schema)  # an importer's rename (`query_ids`, titled "IDs") holds what the name means
    key = " ".join(ws) if ws != split_words(key) else key
    if len(ws) == 1 and (ws[0] in AMBIGUOUS or len(ws[0]) <= 2):
        return " ".join([ws[0], SINGLE.get(ws[0], ""), noun_phrase(str(schema.get("description") or ""))]).strip()
    return key


def kind_of(key: str, schema: dict) -> str:
    """What a string parameter holds, from its format, key words and description (first match wins)."""
    fmt = str(schema.get("format") or "")
    key = meaning_key(key, schema)
    ws = set(split_words(key))
    desc = str(schema.get("description") or "").lower()
    first = split_words(key)[0] if split_words(key) else ""
    rules: list[tuple[str, bool]] = [
        ("date", fmt == "date"), ("datetime", fmt == "date-time"), ("time", fmt == "time"),
        ("email", fmt == "email" or bool(ws & {"email", "mail"})),
        ("spotify_uri", bool(ws & {"uri", "uris"}) and "spotify" in desc),
        ("url", fmt in ("uri", "url", "iri") or bool(ws & {"url", "uri", "link", "href", "homepage", "website", "webhook", "callback"})),
        ("uuid", fmt == "uuid" or bool(ws & {"uuid", "guid"})),
        ("ipv4", fmt == "ipv4" or "ip" in ws), ("hostname", fmt == "hostname" or bool(ws & {"hostname", "domain"})),
        ("phone", bool(ws & {"phone", "mobile", "telephone", "fax"})),
        ("sha", bool(ws & {"sha", "hash", "digest", "revision"}) or ws == {"commit"} or {"commit", "id"} <= ws),
        ("color", bool(ws & {"color", "colour"})),
        ("timezone", bool(ws & {"timezone", "tz"}) or {"time", "zone"} <= ws),
        ("currency", "currency" in ws), ("country", bool(ws & {"country", "market"})),
        ("locale", "locale" in ws), ("language", bool(ws & {"language", "lang"})),
        ("date", bool(ws & {"date", "since", "until", "deadline", "due", "birthday"}) and "iso 8601" not in desc),
        ("datetime", bool(ws & {"since", "until", "before", "after", "timestamp"})),
        ("version", "version" in ws), ("mime", "mime" in ws or {"content", "type"} <= ws),
        ("handle_user", bool(ws & {"username", "login", "handle", "user", "users", "author", "assignee", "assignees",
                                  "reviewer", "reviewers"}) and ("username" in desc or "login" in desc or "handle" in desc or first in ("username", "login", "handle", "user"))),
        ("handle_org", bool(ws & {"owner", "org", "organization", "organisation", "namespace", "workspace"})),
        ("person", person_names.means_person(key, desc)),
        ("repo", bool(ws & {"repo", "repository", "repositories"})),
        ("branch", bool(ws & {"branch", "ref", "head", "base"})),
        ("dir", bool(ws & {"dir", "directory", "folder"})), ("file", bool(ws & {"filename"}) or {"file", "name"} <= ws),
        ("path", bool(ws & {"path", "file", "filepath"})),
        ("city", "city" in ws or (bool(ws & {"location", "origin", "destination", "source", "place", "area"})
                                  and "city" in split_words(desc))), ("postcode", bool(ws & {"zip", "postcode", "postal"})),
        ("address", bool(ws & {"address", "street", "location", "site", "office"})),
        ("company", bool(ws & {"company", "employer"})),
        ("query", bool(ws & {"q", "query", "search", "keyword", "keywords", "term", "terms"})),
        ("tag", bool(ws & {"tag", "tags", "label", "labels", "topic", "topics", "category", "genre", "genres"})),
        ("title", bool(ws & {"title", "subject", "summary", "headline", "caption"}) or ws == {"display", "name"}),
        ("body", bool(ws & {"body", "description", "comment", "message", "content", "note", "notes", "reason",
                            "details", "explanation", "text", "instructions", "feedback", "bio"})),
        ("identifier", bool(ws & {"id", "ids", "number", "code", "ref", "reference", "key", "sku", "slug"})),
    ]
    return next((kind for kind, hit in rules if hit), "phrase")


def _date(rng: random.Random) -> str:
    return (dt.date(2026, 1, 5) + dt.timedelta(days=rng.randint(0, 540))).isoformat()


def _sentence(key: str, schema: dict, persona: dict, tool: dict | None, rng: random.Random) -> str:
    a, b = _topic(key, schema, tool, persona, rng, 2)
    text = rng.choice(BODY).format(a=a, b=b, who=_who(persona, rng), when=rng.choice(WHEN))
    return text[:1].upper() + text[1:]


_EXAMPLE_LEAD = re.compile(r"(?:\be\.g\.|\bfor example|\bfor instance|\bsuch as)[,:]?\s+", re.IGNORECASE)
_QUOTED = re.compile(r"'([^'\n]{1,40})'|\"([^\"\n]{1,40})\"")
# kinds a description's own example serves better than a made-up phrase
_BY_EXAMPLE = frozenset({"phrase", "title", "tag", "address", "city", "company", "body", "identifier"})


def examples(description: str) -> list[str]:
    """The example values a description gives ("e.g. 'Cardiology', 'Orthopedics'", "e.g. Chicago, IL",
    "for example, Xbox, Playstation, PC"): what the parameter holds, in its author's words."""
    match = _EXAMPLE_LEAD.search(description)
    if not match:
        return []
    rest = description[match.end():]
    quoted = [a or b for a, b in _QUOTED.findall(rest.split("\n")[0])]
    if quoted:
        return [q for q in quoted if not re.search(r"[{}<>=`\d]", q)]  # an example id is the generator's to draw
    phrase = re.split(r"[.;)\n]|\s(?:for|to|in)\s", rest)[0].strip()
    if re.fullmatch(r"[A-Z][\w .'-]*, [A-Z]{2}", phrase):  # a city and its state
        return [phrase]
    items = [i.strip() for i in re.split(r",\s*|\s+or\s+", phrase) if i.strip()]
    return [i for i in items if 0 < len(i.split()) <= 4 and not re.search(r"[{}<>=`\d]", i)]  # no codes


def string_value(key: str, schema: dict, persona: dict, rng: random.Random, tool: dict | None = None) -> str:
    """A realistic value for string parameter `key`, by what `kind_of` says it holds; for a kind
    with no shape of its own, one of the examples its description gives when it gives some."""
    kind = kind_of(key, schema)
    if kind in _BY_EXAMPLE and (given := examples(str(schema.get("description") or ""))):
        return rng.choice(given)
    attrs = persona.get("attributes") or {}
    fake = faker_for(persona, rng)
    ws = split_words(meaning_key(key, schema))
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
        return f"spotify:{_spotify_kind(key, schema)}:{_base62(rng)}"
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
    if kind == "color":
        return fake.hex_color()
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
    if kind == "mime":
        return rng.choice(["application/json", "text/csv", "application/pdf", "text/plain", "image/png"])
    if kind in ("handle_user", "handle_org"):
        return _handle(persona, rng, org=kind == "handle_org" and ("user" not in ws or rng.random() < 0.5))
    if kind == "person":
        part = "first" if ws and ({"first", "given"} & set(ws)) else "last" if {"last", "family", "surname"} & set(ws) else "full"
        return person_names.person_name(persona, rng, part)
    if kind == "repo":
        return _repo(key, schema, tool, persona, rng)
    if kind == "branch":
        if "base" in ws:
            return rng.choice(["main", "develop", "release/2.4", "main"])
        return f"{rng.choice(['feature', 'fix', 'chore'])}/{_slug(*_topic(key, schema, tool, persona, rng, 2))}"
    if kind in ("dir", "file", "path"):
        return _path(key, schema, tool, persona, rng, kind)
    if kind == "city":
        return str(attrs.get("city") or fake.city())
    if kind == "postcode":
        return fake.postcode()
    if kind == "address":
        return fake.street_address().replace("\n", ", ")
    if kind == "company":
        return str(attrs.get("company") or fake.company())
    if kind == "query":
        return " ".join(_topic(key, schema, tool, persona, rng, rng.choice([2, 2, 3])))
    if kind == "tag":
        return _slug(_topic(key, schema, tool, persona, rng, 1)[0])
    if kind == "title":
        a, b = _topic(key, schema, tool, persona, rng, 2)
        place = attrs.get("city") or attrs.get("department")
        tail = f" for {place}" if place and rng.random() < 0.5 else ""
        return f"{rng.choice(VERBS)} {a} {b}{tail}"
    if kind == "body":
        return _sentence(key, schema, persona, tool, rng)
    if kind == "identifier":
        if {"number", "num", "no"} & set(ws) and not {"id", "code", "ref"} & set(ws) and not schema.get("pattern"):
            return str(rng.randint(1, 3000))
        return _identifier(key, schema, rng)
    # anything else: a short phrase of the parameter's own head noun with a modifier of the persona's world
    head = [w for w in split_words(key) if w not in FILLER] or meaning_words(key, schema)[:1] or ["entry"]
    mods = [*MODIFIERS, *(str(attrs[a]).split()[0].lower() for a in ("city", "department") if attrs.get(a))]
    return f"{rng.choice(mods)} {' '.join(head[-2:])}"
