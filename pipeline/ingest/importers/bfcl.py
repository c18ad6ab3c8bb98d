"""BFCL (Berkeley Function Calling Leaderboard) function docs and raw BFCL test files.

BFCL's function docs are shaped like OpenAI functions but spell types the way the Python,
Java and JavaScript docs they come from do (``dict``, ``float``, ``tuple``, ``any``,
``String``...); those become JSON Schema types (see `BFCL_TYPE_MAP`). Two more BFCL
conventions are not valid JSON Schema; each is rewritten, with a warning, instead of
rejecting the tool:

* a ``boolean`` whose ``enum`` lists strings (``["True", "False", "dontcare"]``) becomes a
  ``string`` with that enum, spelled as the doc spells it. Every value the doc allows stays
  allowed; dropping the enum instead would lose answers such as "dontcare". A boolean
  ``default`` becomes its string ("True"/"False") too.
* an ``enum`` on an ``array`` (BFCL means its elements) moves to ``items.enum``; if the
  items already have an enum, the array's is dropped.

Raw test files hold one case per line (``{"id": "simple_12", "question": [...], "function":
[...]}``) and repeat the same functions across cases. Identical definitions are kept once.
When two cases define the same name differently, the first definition is kept and each
later variant is skipped with a warning naming both cases (and lines) and what differs: a
test file is a bag of samples, not a catalog someone curated, so refusing the whole file
would leave the user nothing to do but edit thousands of lines by hand. (Within plain
function docs, two different definitions of one name stay an error: that is a catalog bug.)
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ..common import JSON_TYPES, Candidate, Extracted, Note, map_schema, not_object, type_names, walk_schema

BFCL_TYPE_MAP: dict[str, str | None] = {
    "dict": "object",
    "hashmap": "object",
    "float": "number",
    "double": "number",
    "int": "integer",
    "long": "integer",
    "short": "integer",
    "byte": "integer",
    "str": "string",
    "char": "string",
    "bool": "boolean",
    "tuple": "array",
    "list": "array",
    "arraylist": "array",
    "any": None,  # no constraint: the "type" keyword is dropped
}


def is_bfcl_type(name: str) -> bool:
    """A type name only BFCL uses (JSON Schema's own names are case-sensitive)."""
    return name not in JSON_TYPES and (name.lower() in BFCL_TYPE_MAP or name.lower() in JSON_TYPES)


def uses_bfcl_types(schema: Any) -> bool:
    return any(
        isinstance(node, dict) and any(is_bfcl_type(t) for t in type_names(node))
        for _, node in walk_schema(schema)
    )


def is_entry(item: dict[str, Any]) -> bool:
    """A BFCL test case (question plus the function docs offered with it)."""
    return "question" in item and isinstance(item.get("function"), (list, dict))


def extract(items: list[Any], lines: list[int | None]) -> Extracted:
    """BFCL function docs, or BFCL test cases whose `function` lists hold the docs."""
    out: list[Candidate] = []
    seen: set[str] = set()  # every definition met in a test case, kept or skipped
    kept: dict[str, tuple[Candidate, dict[str, Any]]] = {}  # name -> (candidate, raw doc)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            out.append(not_object(len(out), item, lines[i]))
            continue
        if not is_entry(item):
            out.append(_candidate(len(out), item, lines[i], None))
            continue
        fns = item["function"] if isinstance(item["function"], list) else [item["function"]]
        origin = f"entry {item['id']!r}" if "id" in item else f"entry #{i}"
        for fn in fns:
            if not isinstance(fn, dict):
                out.append(not_object(len(out), fn, lines[i]))
                continue
            key = json.dumps(fn, sort_keys=True, default=repr)
            if key in seen:
                continue
            seen.add(key)
            name = fn.get("name")
            if isinstance(name, str) and name in kept:
                first, raw = kept[name]
                where = origin + (f" (line {lines[i]})" if lines[i] else "")
                differs = " and ".join(repr(d) for d in _differences(raw, fn)) or "key order"
                first.warnings.append(
                    ("", f"{where} defines {name!r} differently ({differs} differ); "
                         "kept this definition, skipped that one")
                )
                continue
            cand = _candidate(len(out), fn, lines[i], origin)
            out.append(cand)
            if isinstance(name, str):
                kept[name] = (cand, fn)
    return Extracted(out)


def _candidate(index: int, fn: dict[str, Any], line: int | None, origin: str | None) -> Candidate:
    data = {k: copy.deepcopy(fn[k]) for k in ("name", "description", "parameters") if k in fn}
    cand = Candidate(index, data, line, origin=origin)
    if "parameters" in data:
        map_schema(data["parameters"], _fix_types)
        cand.warnings += _fix_enums(data["parameters"])
    return cand


def _fix_types(node: dict[str, Any]) -> None:
    t = node.get("type")
    names = [t] if isinstance(t, str) else t if isinstance(t, list) else None
    if names is None:
        return
    mapped: list[str] = []
    for name in names:
        if not isinstance(name, str) or name in JSON_TYPES:
            mapped.append(name)
        elif name.lower() in JSON_TYPES:
            mapped.append(name.lower())
        elif name.lower() in BFCL_TYPE_MAP:
            target = BFCL_TYPE_MAP[name.lower()]
            if target is None:  # "any" anywhere means unconstrained
                del node["type"]
                return
            mapped.append(target)
        else:
            mapped.append(name)  # left for validation to report
    node["type"] = mapped[0] if isinstance(t, str) else list(dict.fromkeys(mapped))


def _fix_enums(schema: Any) -> list[Note]:
    """Rewrite BFCL's enum conventions in place (see the module doc); one warning each."""
    warnings: list[Note] = []
    for path, node in walk_schema(schema):
        if not isinstance(node, dict) or not isinstance(node.get("enum"), list) or not node["enum"]:
            continue
        enum: list[Any] = node["enum"]
        types = type_names(node)
        if (
            "boolean" in types
            and any(isinstance(v, str) for v in enum)
            and all(isinstance(v, (str, bool)) or v is None for v in enum)
        ):
            node["enum"] = list(dict.fromkeys(str(v) if isinstance(v, bool) else v for v in enum))
            new_types = list(dict.fromkeys("string" if t == "boolean" else t for t in types))
            node["type"] = new_types[0] if isinstance(node["type"], str) else new_types
            if isinstance(node.get("default"), bool):
                node["default"] = str(node["default"])
            warnings.append(
                (f"{path}.type", f"a boolean with the string enum {enum!r} (BFCL style) is read as a string enum")
            )
        elif "array" in types and not any(isinstance(v, list) for v in enum):
            items = node.get("items")
            if items is None:
                node["items"] = {"enum": node.pop("enum")}
            elif isinstance(items, dict) and "enum" not in items:
                items["enum"] = node.pop("enum")
            elif isinstance(items, dict):
                del node["enum"]
                warnings.append((f"{path}.enum", "an enum on an array (BFCL style) is dropped: its items have their own enum"))
                continue
            else:
                continue  # tuple-style items: left for validation to report
            warnings.append((f"{path}.enum", "an enum on an array (BFCL style) is moved to items.enum"))
    return warnings


def _differences(a: Any, b: Any, path: str = "", limit: int = 3) -> list[str]:
    """Up to `limit` dotted paths where two parsed definitions differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        found: list[str] = []
        for key in list(dict.fromkeys([*a, *b])):
            if a.get(key, ...) != b.get(key, ...) or (key in a) != (key in b):
                found += _differences(a.get(key), b.get(key), f"{path}.{key}" if path else str(key), limit)
            if len(found) >= limit:
                break
        return found[:limit]
    return [] if a == b and type(a) is type(b) else [path or "the definition"]
