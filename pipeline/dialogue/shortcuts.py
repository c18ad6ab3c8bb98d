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
  has the rule and the data it was decided from).

Whether a value could be right, and whether the user made one up, is `values`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..core.records import Message
from ..core.text import STOP, identifier_re, phrase_re, split_words, spoken, stem
from .said import user_turns

RECITE_N = 6
RECITE_CONTENT = 3
REPEAT_N = 8  # words in a run two assistant turns may not share (a re-asked question or option list)

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
