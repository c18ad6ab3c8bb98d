"""Chain pairs: a tool whose result can feed a required parameter of another ("list -> get", "search ->
book", "find the id -> update"), planned from the catalog alone, for multi-call tasks.

A consumer's parameter can be fed when it names something the user would not know offhand: a reference
(`playlist_id`, `ids`, `issue_number`, `sha`, a camelCase `albumId`) or a named thing (`owner`, `repo`,
`branch`), never a free value (enum, boolean, date, query, message...). The thing it names (its
*entity*) is the key's words before the id word, else the entity its description names (`id`: "The
Spotify ID of the album"), else the consumer's name without its verbs. A producer feeds it:

* `schema`: a field of the producer's output schema (nested objects and arrays walked: `items[].id`,
  `owner.login`) of a compatible type whose name is the parameter's own (`playlist_id`, score 1.0; a bare
  `id` is no more than an id word), or is its id word
  (`id`, `number`...) inside an object about its entity, known by the object's title, its key, or for
  the top-level object without a title the producer's name (0.9), or for a named parameter is a label
  (`login`, `name`, `slug`, ...) of an object about it (0.8, less down the label list);
* without an output schema, `name`: the producer looks things up (list, search, find, get...) and its
  name holds the entity; `embedding`: only its description does. Either is kept when the sentence
  embeddings of the producer's description and the parameter's text are close enough (the cosine is
  the score).

No pair is kept when the producer was told the value (it requires the parameter, or a reference to the
same thing by the same word: `get-an-album(id)` gives no album id), nor from a tool to itself; without
a schema, neither when the producer's name says another kind of the thing (`list_purchase_orders` and
`sales_order_id`) or names it only as what its listed things belong to (`list_issue_types` and
`issue_number`). Pairs come sorted by producer, consumer and parameter, the best source kept for each.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..core.records import Tool
from ..core.text import DESCRIPTION_FILLER, ID_WORDS, LABELS, STOP, content_words, key_words, split_words, spoken, without_codes

Evidence = Literal["schema", "name", "embedding"]
Embed = Callable[[Sequence[str]], np.ndarray]

# Short forms of entities.
ABBREVIATIONS = {"repo": "repository", "repos": "repository", "org": "organization", "orgs": "organization",
                 "pr": "pull", "doc": "document", "msg": "message", "cat": "category", "dept": "department"}
# Single-word keys that hold a value the user gives, not a thing another call finds.
FREE_VALUES = frozenset(
    "q query search keyword keywords text message body title description content comment note notes reason "
    "summary subject date time start end from to since until amount price cost total quantity email phone "
    "limit offset page count size per sort order direction filter format type kind status state mode language "
    "locale market country currency city address location timezone name label value password path url "
    "position volume device level priority severity category tag tags color".split()
)
# Verbs of a producer that looks things up, and verbs in general (left out of a name's entity words).
LOOKUP_VERBS = frozenset("list search find lookup look query get fetch retrieve browse show".split())
VERBS = LOOKUP_VERBS | frozenset(
    "create update delete remove add set check make book save follow unfollow upload download transfer pause "
    "skip seek toggle replace reorder change start stop cancel approve reject submit send open close assign "
    "move edit modify post put patch run trigger request generate merge fork star unstar mark read write "
    "calculate compute convert estimate validate verify schedule reserve register log track record".split()
)
# Words of titles, keys and descriptions that name no entity.
_GENERIC = STOP | (DESCRIPTION_FILLER - {"user", "users"}) | frozenset(
    "id ids identifier identifiers unique list comma separated maximum minimum example eg string value values "
    "object objects simplified full base public private response result results item items data paging page "
    "cursor entry entries record records element elements info information details detail several multiple "
    "current saved top new".split()
)
_COLLECTIONS = frozenset("items data results values entries records elements content list".split())
SCHEMA_EXACT, SCHEMA_ID, SCHEMA_LABEL = 1.0, 0.9, 0.8
# The cosine a name match needs, and the higher one a description-only match needs. Measured: a name
# match's right pairs run from 0.25 (GitHub's search_issues and issue_read) to 0.67, the wrong ones on the
# shipped catalog (a customer's order status and a customer id) from 0.26 to 0.30.
NAME_COSINE, DESCRIPTION_COSINE = 0.3, 0.5


class ChainPair(BaseModel):
    """`producer`'s result can give `consumer` its required `parameter`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    producer: str
    consumer: str
    parameter: str
    source_path: str | None  # the producer's output field (`items[].id`); None without an output schema
    evidence: Evidence
    score: float


@dataclass(frozen=True)
class _Ref:
    """A required parameter another call could feed: what it names, and how."""

    key: str
    entity: frozenset[str]  # words, normalised (`_norm`)
    id_word: str | None  # the reference's word as an output says it (`id`); None for a named parameter
    types: frozenset[str]
    text: str  # what the embedding compares: the key in words and its description


@dataclass(frozen=True)
class _Leaf:
    path: str
    name: str
    types: frozenset[str]
    context: frozenset[str]  # what the enclosing objects are about (`_norm` words)


def _types(schema: Any) -> frozenset[str]:
    t = schema.get("type") if isinstance(schema, dict) else None
    names = [t] if isinstance(t, str) else t if isinstance(t, list) else []
    return frozenset(n for n in names if isinstance(n, str) and n != "null")


def _compatible(param: frozenset[str], leaf: frozenset[str]) -> bool:
    numbers = {"integer", "number"}
    return (not param or not leaf or bool(param & leaf) or bool(param & numbers and leaf & numbers)
            or ("array" in param and bool(leaf & {"string", "integer"})))


@lru_cache(maxsize=1 << 16)
def _words(text: str) -> tuple[str, ...]:
    """`split_words`, once per name, key or description (a catalog's pairs ask of the same ones again and again)."""
    return tuple(split_words(text))


@lru_cache(maxsize=1 << 16)
def _described(text: str) -> frozenset[str]:
    """The normalised content words of a description, once per text."""
    return frozenset(_norm(w) for w in content_words(text))


@lru_cache(maxsize=1 << 16)
def _norm(word: str) -> str:
    """A word in its singular, short forms written out ("repos" -> "repository", "issues" -> "issue"): the
    words of names, keys and titles compared."""
    word = ABBREVIATIONS.get(word, word)
    if len(word) > 3 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return ABBREVIATIONS.get(word, word)


def _entity(words: Sequence[str]) -> frozenset[str]:
    return frozenset(_norm(w) for w in words
                     if w not in _GENERIC and len(w) > 1 and not w.isdigit())


def _unverbed(words: Sequence[str]) -> list[str]:
    """`words` without the verbs they open with ("get", "list"): a tool's name says its act first."""
    words = list(words)
    while words and words[0] in VERBS:
        words = words[1:]
    return words


def _name_entity(tool: Tool) -> frozenset[str]:
    return _entity(_unverbed(_words(tool.name)))


def _reference(tool: Tool, key: str) -> _Ref | None:
    """The required parameter `key` of `tool` as a reference, or None when it holds a free value."""
    schema = tool.properties.get(key)
    schema = schema if isinstance(schema, dict) else {}
    types = _types(schema)
    if ("enum" in schema or "const" in schema or types & {"boolean", "object"}
            or schema.get("format") in ("date", "date-time", "time", "email", "uri", "url")):
        return None
    words = key_words(key, schema)
    description = schema.get("description") if isinstance(schema.get("description"), str) else ""
    text = f"{spoken(key)}: {description}" if description else spoken(key)
    if words and words[-1] in ID_WORDS:
        own = _entity([w for w in words[:-1] if w not in ROLES])
        if words[-1] in _BARE and (not own or "string" in types):
            return None
        said = without_codes(f"{schema.get('title') or ''} {description}")  # example ids are no words
        entity = own or _entity(_unverbed(content_words(said))) or _name_entity(tool)
        return _Ref(key, entity, ID_WORDS[words[-1]], types, text) if entity else None
    if len(words) == 1 and words[0] not in FREE_VALUES and types <= {"string"}:
        return _Ref(key, _entity(words), None, types, text)
    return None


def is_reference(tool: Tool, key: str) -> bool:
    """Whether `tool`'s parameter `key` names something another call could find (an id, a named thing),
    not a free value the user gives."""
    return _reference(tool, key) is not None


def _leaves(schema: Any, producer: Tool) -> Iterator[_Leaf]:
    """Every scalar field of an output schema (or array of scalars), with what its objects are about."""
    def walk(node: Any, path: str, context: frozenset[str], top: bool) -> Iterator[_Leaf]:
        if not isinstance(node, dict):
            return
        for alternative in (node.get("anyOf") or []) + (node.get("oneOf") or []):
            yield from walk(alternative, path, context, top)
        if isinstance(node.get("items"), dict):
            yield from walk(node["items"], f"{path}[]", context, top)
        props = node.get("properties")
        if not isinstance(props, dict):
            return
        title = node["title"] if isinstance(node.get("title"), str) else ""
        here = context | _entity(_words(title))
        if top and not title:
            here |= _name_entity(producer)
        for key, sub in props.items():
            sub_path = f"{path}.{key}" if path else str(key)
            if not isinstance(sub, dict):
                continue
            inner, below = sub, sub_path
            while isinstance(inner.get("items"), dict):
                inner, below = inner["items"], f"{below}[]"
            if isinstance(inner.get("properties"), dict) or inner.get("anyOf") or inner.get("oneOf"):
                nested_top = top and str(key) in _COLLECTIONS
                yield from walk(inner, below, (here if nested_top else frozenset()) | _entity(_words(str(key))),
                                nested_top)
            elif not _types(inner) & {"object"}:
                yield _Leaf(below, str(key), _types(inner), here)

    yield from walk(schema, "", frozenset(), True)


def _schema_score(ref: _Ref, leaf: _Leaf) -> float | None:
    """How surely `leaf` gives `ref` (see the module doc), None when it does not."""
    if not _compatible(ref.types, leaf.types):
        return None
    words = _words(leaf.name)
    if words == _words(ref.key) and (len(words) > 1 or ref.id_word is None):
        return SCHEMA_EXACT
    if not words:
        return None
    if ref.id_word is not None:
        if ID_WORDS.get(words[-1]) != ref.id_word:
            return None
        own = _entity(words[:-1])
        return SCHEMA_ID if (own or leaf.context) & ref.entity else None
    if words[0] in LABELS and len(words) == 1 and ref.entity & leaf.context:
        return round(SCHEMA_LABEL - 0.01 * LABELS.index(words[0]), 2)
    return None


def _schema_pairs(tools: Sequence[Tool], refs: dict[str, list[_Ref]]) -> list[ChainPair]:
    by_entity: dict[str, list[tuple[str, _Ref]]] = defaultdict(list)
    for consumer, its in refs.items():
        for ref in its:
            for word in ref.entity:
                by_entity[word].append((consumer, ref))
    pairs: list[ChainPair] = []
    for producer in tools:
        if not isinstance(producer.output_schema, dict):
            continue
        for leaf in _leaves(producer.output_schema, producer):
            seen: set[tuple[str, str]] = set()
            for word in sorted(leaf.context | _entity(_words(leaf.name))):
                for consumer, ref in by_entity.get(word, []):
                    if consumer == producer.name or (consumer, ref.key) in seen or _told(ref, producer, refs):
                        continue
                    seen.add((consumer, ref.key))
                    if (score := _schema_score(ref, leaf)) is not None:
                        pairs.append(ChainPair(producer=producer.name, consumer=consumer, parameter=ref.key,
                                               source_path=leaf.path, evidence="schema", score=score))
    return pairs


def _looks_up(tool: Tool) -> bool:
    first = [*_words(tool.name)[:1], *content_words(tool.description)[:1]]
    return any(_norm(w) in LOOKUP_VERBS for w in first)


def _named_candidates(tools: Sequence[Tool], refs: dict[str, list[_Ref]]) -> list[tuple[Tool, str, _Ref, Evidence]]:
    """(producer, consumer, parameter, evidence) for producers without an output schema, before the
    embeddings confirm them."""
    producers = [t for t in tools if t.output_schema is None and _looks_up(t)]
    by_name: dict[str, list[Tool]] = defaultdict(list)
    by_description: dict[str, list[Tool]] = defaultdict(list)
    for tool in producers:
        named = _name_entity(tool)
        for word in named:
            by_name[word].append(tool)
        for word in _entity(content_words(tool.description)) - named:
            by_description[word].append(tool)
    out: list[tuple[Tool, str, _Ref, Evidence]] = []
    for consumer, its in refs.items():
        for ref in its:
            if ref.id_word is None:
                continue
            found: dict[str, tuple[Tool, Evidence]] = {}
            lookups: tuple[tuple[dict[str, list[Tool]], Evidence], ...] = (
                (by_name, "name"), (by_description, "embedding"))
            for index, evidence in lookups:
                for word in sorted(ref.entity):
                    for tool in index.get(word, []):
                        found.setdefault(tool.name, (tool, evidence))
            for name, (tool, evidence) in sorted(found.items()):
                if not (name == consumer or _told(ref, tool, refs) or _other_kind(ref, consumer, tool)
                        or _modifier_only(ref, tool)):
                    out.append((tool, consumer, ref, evidence))
    return out


def _told(ref: _Ref, producer: Tool, refs: dict[str, list[_Ref]]) -> bool:
    """Whether the producer is given what it would feed: the parameter itself, or a reference to the
    same thing by the same word (`issue_read` needs an issue's number, so gives none)."""
    return ref.key in producer.required or any(
        own.id_word == ref.id_word and own.entity & ref.entity for own in refs.get(producer.name, []))


def _modifier_only(ref: _Ref, producer: Tool) -> bool:
    """Whether the parameter's thing only says which things the producer lists: `list_issue_types`
    lists types (of issues), not the issues `update_issue_type` takes; `list_pull_requests` lists what a
    `pullNumber` numbers."""
    words = _unverbed(_words(producer.name))
    plural = next((i for i, w in enumerate(words) if i > 0 and _norm(w) != w and w.endswith("s")), None)
    if plural is None or not ref.entity or not ref.entity <= {_norm(w) for w in words[:plural]}:
        return False
    said = {_norm(w) for w in _words(ref.key)}
    return _norm(words[plural]) not in said | {_IMPLIED[w] for w in said if w in _IMPLIED}


_IMPLIED = {"pull": "request"}  # a key word that says the next one too (`pullNumber`: a pull request's)


# Reference words that need a thing before them (`issue_number`; a bare `number` is how many).
_BARE = frozenset({"number", "key", "keys"})
# Words before a thing that say its role in a call, not its kind (`hiring_manager_employee_id` is an
# employee's id).
ROLES = frozenset(
    "manager primary secondary parent child source target destination origin new old original duplicate "
    "related requester approver owner assignee reporter hiring recipient sender pickup delivery default "
    "main base other first second".split()
)


@lru_cache(maxsize=1 << 16)
def _kind(words: tuple[str, ...], head: str) -> frozenset[str]:
    """The words that say which kind of `head` the words name ("sales" of "sales order", "code scanning"
    of "code scanning alert"), roles left out."""
    stems = [_norm(w) for w in _unverbed(words) if w not in _GENERIC]
    at = stems.index(head) if head in stems else 0
    return frozenset(stems[:at]) - ROLES


def _other_kind(ref: _Ref, consumer: str, producer: Tool) -> bool:
    """Whether the producer gives another kind of the parameter's thing: a purchase order's list no
    `sales_order_id`, a customer's orders no `work_order_id` (unless its description says work orders)."""
    words = key_words(ref.key)[:-1]
    entity = [w for w in words if w not in _GENERIC]
    if not entity:
        return False
    head = _norm(entity[-1])
    # a key naming the thing alone (`alertNumber`) takes its kind from the consumer's name, its act left out
    wanted = _kind(tuple(words), head) or (_kind(_words(consumer)[1:], head) if len(entity) == 1 else frozenset())
    offered = _kind(_words(producer.name), head)
    if not wanted or wanted <= offered or (offered and offered <= wanted):
        return False
    return bool(offered) or not wanted <= _described(producer.description)


def _embedding_pairs(tools: Sequence[Tool], refs: dict[str, list[_Ref]], embed: Embed) -> list[ChainPair]:
    candidates = _named_candidates(tools, refs)
    if not candidates:
        return []
    texts = sorted({t.description for t, *_ in candidates} | {ref.text for _, _, ref, _ in candidates})
    row = {text: i for i, text in enumerate(texts)}
    vectors = np.asarray(embed(texts), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    pairs: list[ChainPair] = []
    for tool, consumer, ref, evidence in candidates:
        cosine = round(float(vectors[row[tool.description]] @ vectors[row[ref.text]]), 3)
        if cosine >= (NAME_COSINE if evidence == "name" else DESCRIPTION_COSINE):
            pairs.append(ChainPair(producer=tool.name, consumer=consumer, parameter=ref.key, source_path=None,
                                   evidence=evidence, score=cosine))
    return pairs


def plan_chains(tools: Sequence[Tool], embed: Embed | None = None) -> list[ChainPair]:
    """Every chain pair of the catalog (see the module doc); without `embed`, only those an output schema
    shows."""
    refs = {t.name: [r for key in t.required if (r := _reference(t, key)) is not None] for t in tools}
    refs = {name: its for name, its in refs.items() if its}
    pairs = _schema_pairs(tools, refs)
    if embed is not None:
        pairs += _embedding_pairs(tools, refs, embed)
    best: dict[tuple[str, str, str], ChainPair] = {}
    for pair in pairs:
        key = (pair.producer, pair.consumer, pair.parameter)
        rank = (pair.evidence == "schema", pair.score, -len(pair.source_path or ""))
        if key not in best or rank > (best[key].evidence == "schema", best[key].score,
                                      -len(best[key].source_path or "")):
            best[key] = pair
    return [best[key] for key in sorted(best)]
