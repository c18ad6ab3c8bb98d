"""The one text normaliser: words, stop words and stems, shared by the shortcut rules, the
offline backend's roles and judges, the question planner and the evaluation.

* `split_words`: lower-cased runs of letters and digits, identifiers split on `_`, `-` and
  camelCase ("costCenter_ID" -> cost, center, id);
* `STOP`: function words that say nothing about a tool or a need; callers with a vocabulary of
  their own (a judge's, a simulated user's chatter) add to it, they do not replace it;
* `stem`: a crude stemmer, plural and verb endings off, then cut to `width` letters
  (approve ~ approval; create ~ created ~ creation at width 5);
* `content_words`: `split_words` without stop words and very short words;
* `TOKEN` / `word_tokens`: the evaluation's TTR and NGD token, a metric definition (lower-cased
  runs of letters and digits with inner apostrophes, hyphens or dots; "don't", "e-mail",
  "v1.2" are one token each). It does not split identifiers and must keep this exact form;
* `sentences`: a text cut into sentences (after `.`, `!` or `?` and a space, and at line breaks);
* `english` / `is_name` / `said_as_written`: whether the English lexicon knows a word, so a capitalised word it
  does not know ('Spotify', 'GitHub') is a name and keeps its capitals inside a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from lemminflect import getAllLemmas

STOP = frozenset(
    "a an the of for to and or in on by with is are be was were it its this that these those from as at "
    "i my me we our you your can could would should will may might must please need want hi hello some "
    "one all any use when which what who how do does did so about into not no yes there their them they "
    "he she his her have has had more most each per via other than then also just only if but up out "
    "over under new been being".split()
)
# words of a tool description that tell no tool from another ("optional", "returns", "based"): the
# base the offline roles' own lists of empty words extend
DESCRIPTION_FILLER = frozenset(
    "able accepts across against already also another based between both current either etc every exact "
    "first given including kind last like next none ones only optional optionally previous return "
    "returned returns single sort specific specifically still such that their them user users using way "
    "ways whether which whose within without yet".split()
)
TOKEN = re.compile(r"[a-z0-9]+(?:['’.\-][a-z0-9]+)*")

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
_SUFFIXES = (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


# a URL, a markdown link's target, a token holding a digit, an id in mixed case
_CODE = re.compile(r"https?://\S+|\]\([^)\s]*\)|\S*\d\S*|\S*[a-z]\S*[A-Z]\S*[A-Z]\S*")


def code_words(text: str) -> frozenset[str]:
    """Words (`split_words`) found only inside codes of `text` (URLs and link targets, tokens holding
    digits, ids in mixed case such as an example id '1301WleyT98MSx'): no one says them as words."""
    codes = {w for token in _CODE.findall(text) for w in split_words(token)}
    return frozenset(codes - set(split_words(_CODE.sub(" ", text))))


def codes(text: str) -> list[re.Match[str]]:
    """The codes of `text` (see `code_words`), each with its span."""
    return list(_CODE.finditer(text))


def without_codes(text: str) -> str:
    """`text` with its codes (`code_words`) blanked out."""
    return _CODE.sub(" ", text)


@lru_cache(maxsize=4096)
def identifier_re(name: str, ignore_case: bool = True) -> re.Pattern[str]:
    """`name` written as a whole identifier: no letter, digit or underscore on either side. Compiled
    once per name (the checks ask of the same names at every turn)."""
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", re.IGNORECASE if ignore_case else 0)


@lru_cache(maxsize=4096)
def phrase_re(phrase: str) -> re.Pattern[str]:
    """`phrase` as whole words (`\\b` on both ends), compiled once."""
    return re.compile(rf"\b{re.escape(phrase)}\b")


def split_words(text: str) -> list[str]:
    """Lower-case words of `text`, identifiers split on `_`, `-` and camelCase."""
    return _WORD.findall(_CAMEL.sub(" ", text).replace("_", " ").lower())


# where an OpenAPI argument lives: the importer renames two arguments sharing a name to
# `<where>_<name>` (`query_ids`, `body_ids`) and titles each by the name (ingest/importers/openapi_args.py)
RENAME_PREFIXES = frozenset({"path", "query", "body"})


def key_words(key: str, schema: object = None) -> list[str]:
    """The words of a parameter key (`split_words`), an importer's location prefix left out when the
    key was renamed (a titled schema): `query_ids` holds ids, and 'query' is where it goes."""
    words = split_words(key)
    titled = isinstance(schema, dict) and bool(schema.get("title"))
    return words[1:] if titled and len(words) > 1 and words[0] in RENAME_PREFIXES else words


# The words that make a key a reference, and the word each is said as in an output (ids -> id).
ID_WORDS = {"id": "id", "ids": "id", "uuid": "id", "uuids": "id", "key": "key", "keys": "key",
            "number": "number", "sha": "sha", "slug": "slug", "uri": "uri", "uris": "uri", "urn": "urn",
            "login": "login", "handle": "handle"}
# The fields that name an object, best first: what a named parameter (`owner`, `repo`) takes from it.
LABELS = ("login", "slug", "name", "handle", "username", "key", "id")


# Words written in capitals when a key is said as a title (`spoken(..., title=True)`).
ACRONYMS: dict[str, str] = {w: w.upper() for w in (
    "id", "url", "uri", "api", "ip", "uuid", "sku", "isbn", "utc", "html", "json", "xml", "csv", "pdf", "sms",
    "vat", "iban", "gps", "dns", "ssl", "sql", "http", "https", "os", "tv", "faq")}
ACRONYMS.update({w + "s": w.upper() + "s" for w in ("id", "url", "uri", "api", "ip", "uuid", "sku")})
_TITLE_PART = re.compile(r"[A-Za-z]+|\d+")


def spoken(identifier: str, *, title: bool = False) -> str:
    """An identifier as words read aloud: `costCenter_id` -> "cost center id". With `title`, as a
    schema title writes it (what an importer puts on a key it renamed): letters and digits apart,
    acronyms in capitals ("user ID" for `userId`, "IDs" for `ids`), and the identifier itself when
    it holds no word."""
    if not title:
        return " ".join(split_words(identifier))
    words = [w.lower() for w in _TITLE_PART.findall(_CAMEL.sub(" ", identifier))]
    return " ".join(ACRONYMS.get(w) or w for w in words) or identifier


@lru_cache(maxsize=1 << 16)  # the offline policies stem the same words millions of times a run
def stem(word: str, width: int = 6) -> str:
    """A crude stemmer: one plural or verb ending off, then at most `width` letters."""
    w = word.lower()
    for suffix, repl in _SUFFIXES:
        if len(w) > len(suffix) + 3 and w.endswith(suffix) and not w.endswith("ss"):
            w = w[: -len(suffix)] + repl
            break
    return w[:width]


def content_words(text: str, stop: Iterable[str] = STOP, min_len: int = 2) -> list[str]:
    """`split_words(text)` without the words of `stop` and words shorter than `min_len`, in order."""
    stop = stop if isinstance(stop, set | frozenset) else frozenset(stop)
    return [w for w in split_words(text) if w not in stop and len(w) >= min_len]


def stems(text: str, stop: Iterable[str] = STOP, min_len: int = 2, width: int = 6) -> list[str]:
    """The stems of `content_words(text)`, in order."""
    return [stem(w, width) for w in content_words(text, stop, min_len)]


def word_tokens(text: str) -> list[str]:
    """The evaluation's lower-cased word tokens (`TOKEN`)."""
    return TOKEN.findall(text.casefold())


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of `text`: split after `.`, `!` or `?` followed by space, and at line breaks; stripped,
    empty ones left out, and a piece without a letter or digit (an emoji, '...') kept with the sentence
    before it, since it says nothing alone."""
    out: list[str] = []
    for piece in (p.strip() for p in _SENTENCE_END.split(text)):
        if piece and out and not any(ch.isalnum() for ch in piece):
            out[-1] = f"{out[-1]} {piece}"
        elif piece:
            out.append(piece)
    return out


def english(word: str) -> bool:
    """Whether the lexicon (lemminflect's) knows the word: 'Image' is English, 'Spotify' a name."""
    return bool(getAllLemmas(word.lower()))


def is_name(word: str) -> bool:
    """A capitalised word the lexicon does not know: a product's or a place's name ('Spotify', 'Seattle')."""
    return word[:1].isupper() and not english(word)


def said_as_written(word: str) -> bool:
    """A word kept as written inside a sentence: an acronym ('ID'), a mixed-case word ('GitHub') or a
    product's name ('Spotify': capitalised, not in the lexicon); never a heading's common word ('Albums')."""
    return (word.isupper() and len(word) > 1) or bool(re.search(r"[A-Z].*[A-Z]", word)) or is_name(word)
