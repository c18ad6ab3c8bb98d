"""How a parameter is called aloud: the label a user, an assistant or a wrong turn says for a key
("purchase order number" for `po_number`), and the verb that agrees with it ("the IDs are").

Kept here, outside the offline backend, because the export's wrong turns and the evaluation's
user proxy say values in sentences as the offline roles do, and a label must mean one thing
wherever it is said.

Labels (`label`): the schema's `title` when it has one (importers put a spoken label there for
keys they renamed); else the key's words with abbreviations spelled out, a long key turned round
("code for the cost center"). A key that is one bare word naming no thing on its own (a verb
such as `closes`, an adjective such as `draft`, a modifier such as `base`, a letter such as `q`:
AMBIGUOUS and one- or two-letter keys) takes the first noun phrase of its description instead
("search query" for `q`); a modifier key keeps its own word in front ("base branch"). A key
numbered at its end is said with an ordinal ("first side" for `side1`).
`copula(label)` gives "is" or "are" for the label's head noun.
"""

from __future__ import annotations

import re

from ..core.text import said_as_written

# one-word keys that name no thing on their own: verbs, adjectives, modifiers, catch-alls
AMBIGUOUS = frozenset(
    "q s n base head ref closes includes contains matches force draft public private recursive archived enabled "
    "sort order direction scope filter type kind mode value data input target source since until before after "
    "all latest raw full per from to with key fields expand include exclude format method context payload "
    "options params arguments selector spec config parent default".split()
)
# words that keep their own place in front of the description's noun ("base branch")
MODIFIER_KEYS = frozenset("base head target source parent default".split())
_PHRASE_LEAD = frozenset("the a an this optional required filter specify specifies whether if only return returns "
                     "one or more comma separated of list by".split())
_PHRASE_BREAKS = frozenset("to that which where who when in on for with from by is are will used as if this using "
                     "you your when e g eg and or be can should must".split())


def noun_phrase(description: str) -> str:
    """The first noun phrase of a description: leading fillers skipped, cut at the first
    preposition, verb or clause word ("The name of the branch where ..." -> "name of the branch")."""
    clause = re.split(r"[.;:()\n,]| - ", description.strip(), maxsplit=1)[0]
    clause = re.sub(r"\b([A-Za-z]+)/([A-Za-z]+)\b", r"\1-or-\2", clause)  # 'user/org' is one choice: 'user or org'
    ws = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]*", clause)]
    while ws and ws[0].lower() in _PHRASE_LEAD:
        ws.pop(0)
    out: list[str] = []
    for i, w in enumerate(ws):
        low = w.lower()
        if low == "of" and out and i + 1 < len(ws):
            out.append(low)
            continue
        if low in _PHRASE_BREAKS or len(out) >= 5:
            break
        out.append(w if said_as_written(w) else low)  # 'the Spotify ID', 'the GitHub user', 'the SKU'
    while out and out[-1] in ("of", "the", "a", "an"):
        out.pop()
    return " ".join(out).replace("-or-", " or ")


# one-word keys whose spoken label is fixed
SINGLE = {"since": "start time", "until": "end time", "before": "cut-off time", "after": "start time",
          "q": "search query"}


def spoken_key(key: str) -> str:
    """`po_number` -> `po number`: how people say a parameter name."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).replace("_", " ").replace("-", " ").lower().strip()


# abbreviations in parameter names, said in full
SPELLED = {"po": "purchase order", "db": "database", "gl": "ledger", "sku": "stock item", "qty": "quantity", "num": "number",
           "no": "number", "amt": "amount", "dept": "department", "emp": "employee", "mgr": "manager",
           "ref": "reference", "desc": "description", "addr": "address", "org": "organisation", "id": "ID",
           "ids": "IDs", "uom": "unit of measure", "eta": "arrival time", "sla": "service level", "dob": "birth date",
           "iban": "IBAN", "vat": "VAT", "url": "link", "msg": "message", "func": "function", "loc": "location", "tz": "time zone",
           "ms": "in milliseconds", "kg": "in kilograms", "km": "in kilometres", "cm": "in centimetres", "pct": "percentage",
           "hrs": "hours", "usd": "in US dollars", "eur": "in euros", "lbs": "in pounds", "max": "maximum",
           "min": "minimum", "avg": "average", "pos": "position", "cc": "cost center", "fx": "exchange",
           "rep": "representative", "rfq": "quote request", "hr": "HR"}


# first words that qualify the rest of a key, which then reads in speaking order ('previous end date')
_LEADING_MODIFIERS = frozenset("new old current previous next total maximum minimum start end first last default "
                               "primary main original updated final initial expected annual average estimated "
                               "actual monthly daily yearly".split())
# a key holding one of these already reads in speaking order ('date of birth', 'maintainer can modify')
KEEP_ORDER = frozenset("of for in on to by per at with from into than can could is are has have was should must "
                       "will may allow allows include includes use uses".split())


# keys whose word says little of what they hold, though their values are what the word says (a 'content'
# is a text): the label reads their description ('the emoji reaction type is confused')
_SAYS_LITTLE = frozenset({"content"})


_OPERATION_VERBS = frozenset("get list create update delete search find fetch retrieve remove add check save".split())


_ORDINALS = {"1": "first", "2": "second", "3": "third", "4": "fourth", "5": "fifth"}


def label(key: str, schema: dict | None = None) -> str:
    """How people refer to a parameter (rules in the module docstring): never the raw key."""
    title = re.sub(r"\s*\([^)]*\)", "", str((schema or {}).get("title") or "")).strip()  # '(single, album, ...)'
    if title and title.split()[0].lower() in _OPERATION_VERBS:
        title = ""  # an operation's title copied onto its parameter ("Get an Episode" on an `id`)
    if title:
        return " ".join(w if said_as_written(w) else
                        {"id": "ID", "ids": "IDs", "url": "URL"}.get(w.lower(), w.lower()) for w in title.split())
    ws = spoken_key(key).split()
    if not ws:
        return "value"
    numbered = re.fullmatch(r"([a-z]+)([1-5])", ws[-1])
    if numbered:  # `side1`, `array2`: the first side, the second array
        ws = [_ORDINALS[numbered[2]], *ws[:-1], numbered[1]]
    description = str((schema or {}).get("description") or "")
    if len(ws) == 1 and ws[0] in SINGLE:
        return SINGLE[ws[0]]
    if len(ws) == 1 and description and (ws[0] in AMBIGUOUS or ws[0] in _SAYS_LITTLE
                                         or (len(ws[0]) <= 2 and ws[0] not in SPELLED)):
        phrase = noun_phrase(description)
        if phrase and ws[0] in MODIFIER_KEYS and phrase.split()[0] != ws[0]:  # not 'base triangle' for 'the base of the triangle'
            head = phrase.split()[-1]
            return f"{ws[0]} {head}" if head != ws[0] else phrase
        if phrase:
            return phrase
    if len(ws) > 2 and SPELLED.get(ws[-1], "").startswith("in "):  # a unit stays last: 'weight earth in kilograms'
        return f"{label('_'.join(ws[:-1]))} {SPELLED[ws[-1]]}"
    spoken = " ".join(SPELLED.get(w, w) for w in ws).split()
    if ws[0] in ("from", "to") and len(spoken) >= 2:
        return f"{' '.join(spoken[1:])} it {'comes from' if ws[0] == 'from' else 'goes to'}"
    if len(ws) >= 3 and len(spoken) >= 2 and not KEEP_ORDER.intersection(ws) and not numbered \
            and spoken[0] not in _LEADING_MODIFIERS:  # 'new base salary', never 'salary for the new base'
        return f"{spoken[-1]} for the {' '.join(spoken[:-1])}"
    return " ".join(spoken)


_SINGULAR_S = frozenset("alias canvas news series species gas bias atlas lens chassis physics analytics status "
                        "address process class access business basis".split())


def is_plural(spoken: str) -> bool:
    """Whether a label names several things, by its head noun: "IDs", "ids", "KPIs", "tags" and
    "start dates" are plural; "VAT", "status" and "code for the cost centers" are not."""
    head = re.split(r" (?:for|of|it|in|on|to) ", spoken.strip(), maxsplit=1)[0].split()
    if not head:
        return False
    w = head[-1]
    low = w.lower()
    if w.endswith(("Ds", "Is")) or low in ("ids", "people", "children", "criteria", "media"):
        return True
    if w.isupper():  # an abbreviation: "VAT", "SKU"
        return False
    return (len(low) > 3 and low.endswith("s") and not low.endswith(("ss", "us", "is", "ics"))
            and low not in _SINGULAR_S)


def copula(spoken: str) -> str:
    """'are' for a plural label, 'is' otherwise: "the IDs are", "the base branch is"."""
    return "are" if is_plural(spoken) else "is"
