"""Text checks for shortcuts and leaks in a dialogue: pure functions on strings and schemas.

Shared by the rule validators (which turn them into verdicts) and by the offline
backend (whose user and assistant avoid them, and whose critic refuses them), so both
sides hold one definition of each problem. Words, stop words and stems come from the one
text normaliser (`text`):

* name leaks (`name_hits`): a tool's name written as the identifier or read aloud as its
  words in order, or one of its distinctive name tokens (in an answer to a question, a token
  that is also a plain word of the tool's description is a word of the need, not of the name:
  `description_stems`);
* name tokens: words of a tool's name (split on `_`, `-` and camelCase, lower-cased,
  stemmed); a seed tool's *distinctive* tokens are those no distractor's name has,
  stop words and a few words every tool name uses (get, list, ...) left out;
* recitation: a run of RECITE_N or more consecutive words shared with a tool
  description, holding at least RECITE_CONTENT content (non stop) words;
* parameter keys: an identifier-like key (`fiscal_year`, `fiscalYear`, `line2`) written
  as is, or the words of a multi-word key that are not everyday speech (`distinctive_key_words`
  has the rule and the data it was decided from);
* implausible values: a value that its parameter's name says cannot be right (a year
  far from today, a date outside PLAUSIBLE_DATES, a month 13, a phone number without
  digits, a surname of two unrelated words, a negative amount, ...);
* invented values: a number of 3+ digits, an ISO date, an e-mail address or a code with
  digits that a user says although the text it was given does not hold it (digits said
  with other separators, "1,250.50" for 1250.5 or "04/03/2026" for 2026-03-04, count as
  given; short numbers such as the parts of a time of day are not checked).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

import jsonschema

from ..core.records import Message
from ..core.text import STOP, identifier_re, phrase_re, split_words, spoken, stem
from .person_names import looks_like_person_name, means_person
from .said import user_turns

RECITE_N = 6
RECITE_CONTENT = 3
REPEAT_N = 8  # words in a run two assistant turns may not share (a re-asked question or option list)
PLAUSIBLE_YEARS = (2015, 2032)
PLAUSIBLE_DATES = (dt.date(2015, 1, 1), dt.date(2032, 12, 31))
BIRTH_DATES = (dt.date(1900, 1, 1), dt.date(2025, 12, 31))  # a person's date of birth: never in the future
BIRTH_WORDS = frozenset({"birth", "birthday", "birthdate", "dob", "born"})

# words that many tool names carry: saying them picks out nothing
GENERIC = set(
    "get list create update delete search find view show check add remove set fetch lookup retrieve read "
    "write make run do by for all info details detail data record records item items".split()
)
# short words that are ordinary English (or said as words, like "API"), not abbreviations;
# max..rep were met as words of parameter keys in real catalogs (see distinctive_key_words)
COMMON_SHORT = set("id ids day end due new old top tax fee pay job map key log net raw sum age bay way cap "
                   "vat pin url ip tag lot bin box row gap run api max min pet get set app law win now rep "
                   "fax zip web car bus sea air gas oil art era add use".split())
NAME_PARTICLES = {"van", "von", "de", "der", "den", "da", "di", "del", "della", "la", "le", "du", "dos",
                  "das", "al", "el", "bin", "ibn", "ter", "st", "mac", "o"}


def name_tokens(name: str) -> set[str]:
    """Stems of a tool name's words, stop and generic words left out."""
    return {stem(w) for w in split_words(name) if w not in STOP and w not in GENERIC and len(w) > 1}


def distinctive_name_tokens(seed: str, others: list[str]) -> set[str]:
    """Stems of the seed's name that no other name has: the words that alone would give it away."""
    shared = set().union(*(name_tokens(o) for o in others)) if others else set()
    return name_tokens(seed) - shared


def distinctive_name_words(seed: str, others: list[str]) -> list[str]:
    """The words of the seed's name whose stems no other name has (`distinctive_name_tokens`), as
    the name writes them: what a prompt tells the user never to open with."""
    distinctive = distinctive_name_tokens(seed, others)
    return list(dict.fromkeys(w for w in split_words(seed) if w not in STOP and stem(w) in distinctive))


def names_written(text: str, names: list[str]) -> list[str]:
    """The names of `names` that `text` writes as identifiers (case-insensitive, whole identifier)."""
    return [n for n in names if identifier_re(n).search(text)]


def full_name_hit(text: str, name: str) -> str | None:
    """`name` when `text` writes it as the identifier; else its words read aloud in order
    ("create purchase order" for createPurchaseOrder) when there are two or more; else None."""
    if names_written(text, [name]):
        return name
    words = spoken(name)
    if len(words.split()) >= 2 and phrase_re(words).search(spoken(text)):
        return words
    return None


def description_stems(description: str) -> frozenset[str]:
    """Stems of the words of a description: a name token among them is a word people use for what
    the tool does ('albums' for a tool that checks saved albums), which a user may say when asked."""
    return frozenset(stem(w) for w in split_words(description) if w not in STOP)


def name_hits(text: str, seed: str, others: list[str], allowed: frozenset[str] = frozenset()) -> list[str]:
    """Words of `text` that are the seed's name itself or one of its distinctive name tokens, but
    for the token stems in `allowed` (the name itself always counts)."""
    hits: list[str] = []
    full = full_name_hit(text, seed)
    if full:
        hits.append(full)
    distinctive = distinctive_name_tokens(seed, others) - allowed
    for w in split_words(text):
        if w not in STOP and len(w) > 1 and stem(w) in distinctive and w not in hits:
            hits.append(w)
    return hits


def name_leaks(text: str, seed: str, others: list[str], selecting: bool = True,
               allowed: frozenset[str] = frozenset()) -> list[str]:
    """What of the seed tool's name `text` gives away. While the tool is still being selected:
    the name itself or any distinctive name token not in `allowed` (`name_hits`); afterwards the
    tool is known, so only the full name counts (as the identifier or read aloud)."""
    hits = name_hits(text, seed, others, allowed)
    return hits if selecting else [h for h in hits if h == seed or " " in h]


def user_name_leaks(messages: Sequence[Message], seed: str, others: list[str],
                    description: str = "") -> dict[int, str]:
    """index in `messages` -> the first name leak of that user turn (`name_leaks`), the selection
    phase being the user turns before the first argument-filling assistant turn. The opening
    request may use no distinctive name token; an answer to the assistant may use one that is a
    plain word of the seed's `description` (`description_stems`): the request starts under-specified,
    and the user says what they need, in the words people use for it, once asked."""
    selecting = {i for i, _ in user_turns(messages, "argument_filling")}
    plain = description_stems(description)
    out: dict[int, str] = {}
    for n, (i, text) in enumerate(user_turns(messages)):
        if hits := name_leaks(text, seed, others, selecting=i in selecting, allowed=plain if n else frozenset()):
            out[i] = hits[0]
    return out


def recited(text: str, description: str, n: int = RECITE_N, content: int = RECITE_CONTENT) -> str | None:
    """The first run of >= n consecutive words `text` shares with `description` (with enough content words)."""
    said, source = split_words(text), split_words(description)
    if len(said) < n or len(source) < n:
        return None
    grams = {tuple(source[i:i + n]) for i in range(len(source) - n + 1)}
    for i in range(len(said) - n + 1):
        gram = tuple(said[i:i + n])
        if gram in grams and sum(w not in STOP for w in gram) >= content:
            j = i + n  # extend to the longest shared run for the report
            while j < len(said) and " ".join(said[i:j + 1]) in " ".join(source):
                j += 1
            return " ".join(said[i:j])
    return None


def identifier_like(key: str) -> bool:
    """Whether `key` is written as an identifier (`fiscal_year`, `costCenter`, `line2`, `cost-center-code`)
    rather than as ordinary writing: one hyphen between two lower-case words (`e-mail`, `check-in`,
    `follow-up`) is how English writes those words."""
    if re.fullmatch(r"[a-z]+-[a-z]+", key):
        return False
    return "_" in key or "-" in key or bool(re.search(r"[a-z][A-Z]|[A-Za-z]\d", key))


def abbreviation(word: str) -> bool:
    """A word of two or three letters that is not ordinary English (`po`, `gl`, `sha`, `db`); single
    letters are names of things (`x`, `point b`), not abbreviations."""
    return 2 <= len(word) <= 3 and word.isalpha() and word not in COMMON_SHORT and word not in STOP


def distinctive_key_words(key: str, description: str = "") -> str | None:
    """The key's words when saying them in order would read the schema aloud; None when they are
    plain speech a user may say.

    The rule, decided from every parameter key (752) of the shipped catalog, the test fixtures and
    real GitHub MCP, Spotify OpenAPI and BFCL catalogs:

    * one word (`email`, `quantity`) is plain speech;
    * two words are plain speech ("phone number", "user name", "start date", "API key") unless
      one is an abbreviation (`abbreviation`: "po number", "gl account", "db name"), and so are
      two words the key's description writes as one hyphenated word ("add-ons"); so is "X of Y"
      without an abbreviation ("number of successes", "date of birth"). The short
      words met in real keys that are ordinary words (max, min, pet, app, law, rep, ...) are in
      COMMON_SHORT; the abbreviations (po, rfq, sha, db, gl, cve, av, ev, kg, km) are not;
    * three or more words are a schema's wording ("cost center code", "from cost center") unless
      the key's own description says them as a phrase and they hold at most three content words
      and no abbreviation ("check in date", "expected close date"): the words
      the catalog's author wrote as prose are words a user may say too.
    """
    ws = split_words(key)
    if len(ws) < 2:
        return None
    phrase = " ".join(ws)
    if len(ws) == 2 and re.search(rf"\b{re.escape(ws[0])}-{re.escape(ws[1])}\b", description, re.IGNORECASE):
        return None  # the description writes them as one hyphenated word ("Add-ons for the concert")
    if any(abbreviation(w) for w in ws):
        return phrase
    if len(ws) == 2 or (len(ws) == 3 and ws[1] == "of"):
        return None  # "phone number"; "number of guests", "date of birth"
    content = [w for w in ws if w not in STOP]
    said = " ".join(split_words(description))
    if len(content) <= 3 and phrase_re(phrase).search(said):
        return None
    return phrase


def key_hits(text: str, keys: list[str], descriptions: Mapping[str, str] | None = None) -> list[str]:
    """Parameter keys that `text` writes as identifiers or whose distinctive words it says in order,
    within one clause ("the cost center it comes from, cost center it goes to" says no `from_cost_center`).
    `descriptions` (key -> the parameter's description) lets a key whose description says its words
    as prose be said too (`distinctive_key_words`)."""
    low = " | ".join(" ".join(split_words(clause)) for clause in re.split(r"[,.;:!?()\[\]\n]", text))
    out = []
    for key in keys:
        if identifier_like(key) and identifier_re(key).search(text):
            out.append(key)
            continue
        spoken = distinctive_key_words(key, (descriptions or {}).get(key, ""))
        if spoken and phrase_re(spoken).search(low):
            out.append(key)
    return out


def word_runs(text: str, n: int = REPEAT_N) -> set[tuple[str, ...]]:
    """Every run of `n` consecutive words of `text` (`split_words`: case and punctuation ignored)."""
    words = split_words(text)
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def normal_question(text: str) -> str:
    """A question reduced to its words, so two wordings that differ only in case and punctuation match."""
    return spoken(text)


# ---- plausibility of values ----------------------------------------------------------------------

# words of a key that make its number a whole one, whatever the schema's type says
WHOLE_WORDS = frozenset(
    "id ids number num no count page pages limit per offset index idx quantity qty seats nights guests attendees "
    "headcount units rank position top results items year month day days week weeks age level port floor retries "
    "attempts depth size k n skip take first last".split()
)
# head words of a key whose value is an identifier-like token (a handle, a slug, a path, an address), never a phrase
SHAPED = frozenset(
    "owner user username login org organization organisation handle repo repository branch ref path filepath "
    "filename file dir directory folder url uri link href email sha hash uuid guid id ids slug sku".split()
)
# head words of a key whose value is a search made of words about the tool or parameter
SEARCH = frozenset("q query search keyword keywords term terms".split())
_PHRASE = re.compile(r"[^\W\d_]+(?:[ ,'’-]+[^\W\d_]+)+")
_PHONE = re.compile(r"^\+?[0-9][0-9 ().\-]{5,20}[0-9]$")
_YEAR_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


def _parse_date(value: str) -> dt.date | None:
    m = _DATE.match(value)
    if not m:
        return None
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def schema_fault(value: Any, schema: dict) -> str | None:
    """The first way `value` breaks its schema (enum, bounds, pattern, length, type, format), or None."""
    if not schema:
        return None
    try:
        validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
        error = next(iter(validator.iter_errors(value)), None)
    except (jsonschema.SchemaError, re.error, TypeError):
        return None
    if error is not None:
        return f"breaks its schema: {error.message}"
    if schema.get("format") in ("uri", "url") and isinstance(value, str) and not re.match(r"^[a-z][a-z0-9+.-]*://[^\s/]+", value):
        return f"'{value}' is not a URL"
    return None


def _item_schema(schema: dict) -> dict:
    """An array's item schema, carrying the array's description when the items have none."""
    items = dict(schema.get("items") or {})
    if schema.get("description") and not items.get("description"):
        items["description"] = schema["description"]
    return items


def _stems(text: str) -> set[str]:
    """Stems of content words, identifiers split and whole ("GitHub" gives git, hub and github)."""
    ws = split_words(text) + re.findall(r"[a-z0-9]+", text.lower())
    return {stem(w) for w in ws if w not in STOP and len(w) > 2}


def _text_fault(key: str, text: str, schema: dict, context: str) -> str | None:
    """A string value that is not about its parameter: a person's name for a thing, a phrase of
    words for an identifier-like key, a search sharing no word with what it searches."""
    ws = split_words(key)
    description = str(schema.get("description") or "")
    if looks_like_person_name(text) and not means_person(key, description) and "phone" not in ws:
        return f"'{text}' is a person's name, but '{key}' is not about a person"
    head = ws[-2] if len(ws) >= 2 and ws[-1] == "name" else ws[-1] if ws else ""
    if head in SHAPED and " " in text and (_PHRASE.fullmatch(text) or len(text.split()) >= 4) and not (means_person(key, description) and looks_like_person_name(text)):
        article = "an" if head[:1] in "aeiou" else "a"
        return f"'{text}' is a phrase of words, not {article} {head} ('{key}' takes a token without spaces)"
    if head in SEARCH or ws == ["q"]:
        about, said = _stems(f"{key} {description} {context}"), _stems(text)
        if len(about) >= 3 and said and not re.search(r"\d", text) and not said & about:
            return f"search '{text}' shares no word with the parameter or its tool"
    return None


def implausible(key: str, value: Any, schema: dict | None = None, context: str = "") -> str | None:
    """Why `value` cannot be right for parameter `key`, or None when nothing is wrong with it.
    `context` (the tool's name and description) lets a search be checked against its tool."""
    schema = schema or {}
    ws = split_words(key)
    if fault := schema_fault(value, schema):
        return fault
    if isinstance(value, list):
        return next((r for v in value if (r := implausible(key.removesuffix("s"), v, _item_schema(schema), context))), None)
    if isinstance(value, bool) or value is None or isinstance(value, dict):
        return None
    if isinstance(value, int | float):
        if isinstance(value, float) and not value.is_integer() and (schema.get("type") == "integer" or WHOLE_WORDS & set(ws)):
            return f"{' '.join(ws)} {value} is not a whole number (a count, number or id)"
        if "year" in ws and not (PLAUSIBLE_YEARS[0] <= value <= PLAUSIBLE_YEARS[1]):
            return f"year {value} is outside {PLAUSIBLE_YEARS[0]}-{PLAUSIBLE_YEARS[1]}"
        if "month" in ws and not (1 <= value <= 12):
            return f"month {value} does not exist"
        if any(w in ws for w in ("amount", "price", "cost", "total", "budget", "salary", "quantity", "count",
                                 "days", "hours", "nights", "headcount", "seats", "units")) and value < 0 \
                and not any(w in ws for w in ("delta", "change", "adjustment", "difference", "variance")):
            return f"{' '.join(ws)} {value} is negative"
        if any(w in ws for w in ("percent", "percentage", "pct")) and not (0 <= value <= 100):
            return f"percentage {value} is outside 0-100"
        if any(w in ws for w in ("quantity", "headcount", "seats", "units", "nights", "guests", "attendees")) and value > 10000:
            return f"{' '.join(ws)} {value} is unrealistically large"
        return None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text:
        return "empty value"
    fmt = schema.get("format")
    if fmt in ("date", "date-time") or (("date" in ws or BIRTH_WORDS & set(ws)) and _DATE.match(text)):
        d = _parse_date(text)
        if d is None:
            return f"'{text}' is not a real date"
        low, high = BIRTH_DATES if BIRTH_WORDS & set(ws) else PLAUSIBLE_DATES
        if not (low <= d <= high):
            return f"date {text} is outside {low} to {high}"
    if m := _YEAR_MONTH.match(text):
        year, month = int(m[1]), int(m[2])
        if not (PLAUSIBLE_YEARS[0] <= year <= PLAUSIBLE_YEARS[1]) or not 1 <= month <= 12:
            return f"'{text}' is not a plausible year-month"
    if "year" in ws and re.fullmatch(r"(FY)?\d{4}", text, re.IGNORECASE):
        year = int(text[-4:])
        if not (PLAUSIBLE_YEARS[0] <= year <= PLAUSIBLE_YEARS[1]):
            return f"year {text} is outside {PLAUSIBLE_YEARS[0]}-{PLAUSIBLE_YEARS[1]}"
    if (any(w in ws for w in ("phone", "mobile", "telephone", "fax")) and "id" not in ws
            and (not _PHONE.match(text) or sum(c.isdigit() for c in text) < 7)):
            return f"'{text}' is not a phone number"
    if ((fmt == "email" or "email" in ws)
            and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", text, re.IGNORECASE)):
            return f"'{text}' is not an email address"
    if "name" in ws and any(w in ws for w in ("first", "last", "given", "family", "surname")):
        parts = text.split()
        if not re.fullmatch(r"[^\W\d_][^\W\d_'’ .\-]*(?:[ '’.\-]+[^\W\d_]+)*\.?", text):
            return f"'{text}' is not a person's name"
        plain = [p for p in parts if p.lower() not in NAME_PARTICLES]
        if len(plain) > 1 and not any(p.lower() in NAME_PARTICLES for p in parts) and "-" not in text:
            return f"'{text}' is two names, not one {' '.join(ws)}"
    return _text_fault(key, text, schema, context)


def shared_values(args: dict[str, Any], schemas: dict[str, dict]) -> dict[str, list[str]]:
    """String value -> the 2+ parameters of `args` given that same value (parameters whose
    schema fixes the value, by enum or const, left out: a shared word there is the catalog's)."""
    by_value: dict[str, list[str]] = {}
    for k, v in args.items():
        schema = schemas.get(k) or {}
        if isinstance(v, str) and v.strip() and not schema.get("enum") and "const" not in schema:
            by_value.setdefault(v.strip().lower(), []).append(k)
    return {v: ks for v, ks in by_value.items() if len(ks) >= 2}


VALUE_LIKE = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+|\b\d{4}-\d{2}-\d{2}\b|\b[A-Za-z]*-?\d[\w-]*\b")


def _value_digits(text: str) -> str:
    return re.sub(r"[^0-9a-z@.]", "", text.lower())


def invented_values(text: str, allowed: str) -> list[str]:
    """Value-like tokens of `text` (3+ digits, dates, e-mails, codes) that `allowed` does not contain."""
    known = _value_digits(allowed)
    plain = allowed.lower()
    out = []
    for token in VALUE_LIKE.findall(text):
        digits = re.sub(r"\D", "", token)
        if "@" not in token and len(digits) < 3:
            continue
        if token.lower() in plain or _value_digits(token) in known:
            continue
        # a number said with separators ("1,250") or a date said in parts is fine if its digits are known
        if digits and all(part in known for part in re.findall(r"\d{3,}", token)):
            continue
        out.append(token)
    return out
