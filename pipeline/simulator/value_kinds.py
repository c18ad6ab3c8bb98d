"""What a string parameter holds, read from its format, key words and description (`string_kind`),
and the example values a description gives: how the offline value generator picks a value's shape.
"""

from __future__ import annotations

import re

from ..core.text import key_words, split_words
from ..dialogue import person_names
from ..dialogue.parameter_labels import AMBIGUOUS, SINGLE, SPELLED, noun_phrase

# abbreviated keys whose spelled-out word says what they hold (`parameter_labels.SPELLED`)
_SHORT_FOR = frozenset({"loc", "func", "addr", "desc", "qty", "amt", "dept", "msg"})


def meaning_key(key: str, schema: dict) -> str:
    """The key, with the description's first noun phrase added when the key alone names no thing
    (`closes` -> "closes issue number"), so the value is chosen by what the parameter holds."""
    ws = key_words(key, schema)  # an importer's rename (`query_ids`, titled "IDs") holds what the name means
    key = " ".join(ws) if ws != split_words(key) else key
    if len(ws) == 1 and ws[0] in _SHORT_FOR:  # 'loc': a location, not a grocery of the shop's description
        return SPELLED[ws[0]]
    if len(ws) == 1 and (ws[0] in AMBIGUOUS or len(ws[0]) <= 2):
        return " ".join([ws[0], SINGLE.get(ws[0], ""), noun_phrase(str(schema.get("description") or ""))]).strip()
    return key


def string_kind(key: str, schema: dict) -> str:
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
        ("dimensions", bool(ws & {"size", "dimensions"}) and bool(re.search(r"\bwidth\b.*\bheight\b|\bw\s*x\s*h\b", desc))),
        ("timezone", bool(ws & {"timezone", "tz"}) or {"time", "zone"} <= ws),
        ("currency", "currency" in ws), ("country", bool(ws & {"country", "market"})),
        ("locale", "locale" in ws), ("language", bool(ws & {"language", "lang"})),
        ("date", bool(ws & {"date", "since", "until", "deadline", "due", "birthday"}) and "iso 8601" not in desc),
        ("datetime", bool(ws & {"since", "until", "before", "after", "timestamp"})),
        ("time", "time" in ws and not ws & {"zone", "frame", "period", "unit", "units", "type", "range"}),
        ("version", "version" in ws), ("mime", "mime" in ws or {"content", "type"} <= ws),
        ("handle_user", bool(ws & {"username", "login", "handle", "user", "users", "author", "assignee", "assignees",
                                  "reviewer", "reviewers"}) and ("username" in desc or "login" in desc or "handle" in desc or first in ("username", "login", "handle", "user"))),
        ("handle_org", bool(ws & {"owner", "org", "organization", "organisation", "namespace", "workspace"})),
        ("person", person_names.means_person(key, desc)),
        ("repo", bool(ws & {"repo", "repository", "repositories"}) or  # a `name` described as 'Repository name'
         ("name" in ws and bool(re.search(r"\brepo(?:sitory)? name\b|\bname of the (?:new )?repo(?:sitory)?\b", desc)))),
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
                            "details", "explanation", "text", "instructions", "feedback", "bio", "rationale", "justification"})),
        ("identifier", bool(ws & {"id", "ids", "number", "code", "ref", "reference", "key", "sku", "slug"})),
    ]
    return next((kind for kind, hit in rules if hit), "phrase")


_EXAMPLE_LEAD = re.compile(r"(?:\be\.g\.|\bfor example|\bfor instance|\bsuch as)[,:]?\s+", re.IGNORECASE)


_QUOTED = re.compile(r"'([^'\n]{1,40})'|\"([^\"\n]{1,40})\"")
# an example that only shows a value's shape: 'PRRT_kwDOxxx', 'abc...', '<owner>', 'YOUR_TOKEN', 'foo'
_PLACEHOLDER = re.compile(r"[xX]{3,}|\.\.\.|…|[{}<>=`\d]|\byour[_ -]|^(?:foo|bar|baz|example)$", re.IGNORECASE)


def examples(description: str) -> list[str]:
    """The example values a description gives ("e.g. 'Cardiology', 'Orthopedics'", "e.g. Chicago, IL",
    "for example, Xbox, Playstation, PC"): what the parameter holds, in its author's words."""
    match = _EXAMPLE_LEAD.search(description)
    if not match:
        return []
    rest = description[match.end():]
    # quotes count only when the examples open with one: in "(e.g. ci.yaml) for 'get_workflow' method" the
    # quoted word is another parameter's option, not an example
    quoted = [a or b for a, b in _QUOTED.findall(rest.split("\n")[0])] if rest[:1] in "'\"" else []
    if quoted:
        return [q for q in quoted if not _PLACEHOLDER.search(q)]  # an example id is the generator's to draw
    if _PLACEHOLDER.search(rest.split(maxsplit=1)[0] if rest.strip() else ""):
        return []  # 'e.g. abc...': a shape, not a value
    phrase = re.split(r"\.(?=\s|$)|[;)\n]|\s(?:for|to|in)\s", rest)[0].strip()  # a file's '.': 'ci.yaml'
    if re.fullmatch(r"[A-Z][\w .'-]*, [A-Z]{2}", phrase):  # a city and its state
        return [phrase]
    items = [i.strip() for i in re.split(r",\s*|\s+or\s+", phrase) if i.strip()]
    return [i for i in items if 0 < len(i.split()) <= 4 and not _PLACEHOLDER.search(i)
            and i.lower().rstrip(".") not in ("etc", "and so on")]  # no codes, no placeholders, no 'etc.'


# a marked option: **track**, `open`, 'closed' or "draft"
_MARKED = r"(?:\*\*([\w-]{1,24})\*\*|`([\w-]{1,24})`|'([\w-]{1,24})'|\"([\w-]{1,24})\")"
_MARKED_LIST = re.compile(rf"{_MARKED}(?:\s*(?:,|/|\bor\b|,\s*or\b)\s*{_MARKED})+")
_SAID_LIST = re.compile(r"\b(?:one of|either|can be|must be|possible values(?: are)?|valid values(?: are)?|"
                        r"allowed values(?: are)?|options(?: are)?)[:\s]+([a-z][\w-]*(?:\s*(?:,|/|\bor\b|,\s*or\b)\s*"
                        r"[a-z][\w-]*)+)", re.IGNORECASE)


def options(description: str) -> list[str]:
    """The values a description lists for a free-text parameter ("**track**, **context** or **off**",
    "either open or closed", "one of `asc`, `desc`"): an enum its schema does not declare."""
    first = description.split("\n")[0]
    marked = _MARKED_LIST.search(first)
    if marked and not re.search(r"\b(?:filters?|fields?)\b", first[:marked.start()], re.IGNORECASE):
        found = [next(g for g in m if g) for m in re.findall(_MARKED, marked.group(0))]
        return list(dict.fromkeys(found))
    said = _SAID_LIST.search(first)
    if said:
        found = [w for w in re.split(r"\s*(?:,\s*or|,|/|\bor\b)\s*", said.group(1)) if w]
        return list(dict.fromkeys(found)) if 2 <= len(found) <= 8 else []
    listed = _BULLETED.search(description)  # "Options are:\n- 'add' - add a sub-issue\n- 'remove' - ..."
    if listed:
        found = [next(g for g in m if g) for m in re.findall(rf"^\s*[-*]\s+{_MARKED}", listed.group(1), re.MULTILINE)]
        return list(dict.fromkeys(found)) if 2 <= len(found) <= 8 else []
    return []


_BULLETED = re.compile(r"\b(?:options|one of|possible values|valid values|allowed values)(?: are)?\s*:[ \t]*\n"
                       r"((?:[ \t]*[-*][ \t]+.*(?:\n|$))+)", re.IGNORECASE)
