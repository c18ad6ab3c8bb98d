"""The arguments of one OpenAPI operation, settled from its path and query parameters and its body fields.

A name used by more than one of path, query and body is one argument when they agree on the
type (descriptions, examples, formats may differ): the parameter's description is kept (else
the body's), examples are pooled, and the parameter's other keywords win (a warning says which
differed). When they disagree on the type, each is kept under a name saying where it comes
from, ``path_<name>``, ``query_<name>`` or ``body_<name>``, with a warning.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from ...core.text import spoken
from ..common import Note, type_names

_LABEL = {"path": "path parameter", "query": "query parameter", "body": "request body field"}
# Keywords that describe a value rather than constrain it: agreeing arguments may differ in them.
_ANNOTATIONS = frozenset(
    {"description", "examples", "title", "default", "format", "deprecated", "readOnly", "writeOnly", "$comment"}
)


@dataclass
class Arg:
    """One argument source: a path/query parameter or a body field, before names are settled."""

    loc: str  # "path", "query" or "body"
    name: Any  # a string, unless a YAML body schema has a bare number as a key (validation says so)
    schema: Any
    required: bool
    at: str  # where in the document, for messages


def _core_types(schema: Any) -> frozenset[str] | None:
    """The declared types apart from null; None when the schema declares none (any value)."""
    if not isinstance(schema, dict):
        return None
    types = frozenset(type_names(schema)) - {"null"}
    return types or None


def _compatible(a: Any, b: Any) -> bool:
    ta, tb = _core_types(a), _core_types(b)
    return ta is None or tb is None or ta == tb or {ta, tb} == {frozenset({"integer"}), frozenset({"number"})}


def _merge(group: list[Arg]) -> tuple[dict[str, Any], list[str]]:
    """One schema for agreeing arguments (earlier ones win) and the keywords that disagreed."""
    merged: dict[str, Any] = {}
    differ: list[str] = []
    examples: list[Any] = []
    for arg in group:
        schema = arg.schema if isinstance(arg.schema, dict) else {}
        for key, value in schema.items():
            if key == "examples" and isinstance(value, list):
                examples += [v for v in value if v not in examples]
            elif key not in merged:
                merged[key] = value
            elif key == "type":
                if _core_types(merged) != _core_types(schema) and "type" not in differ:
                    differ.append("type")
            elif key not in _ANNOTATIONS and merged[key] != value and key not in differ:
                differ.append(key)
    if examples:
        merged["examples"] = examples
    return merged, differ


def _titled(schema: Any, name: str) -> Any:
    """`schema` with the original name, as words, for its `title` (unless it has one): the
    renamed key (`query_ids`) is for the call, the title ("IDs") for anyone speaking of it."""
    if not isinstance(schema, dict) or (isinstance(schema.get("title"), str) and schema["title"].strip()):
        return schema
    return {"title": spoken(name, title=True), **schema}


def settle(
    args: list[Arg], problems: list[Note], warnings: list[Note]
) -> tuple[dict[str, Any], list[str]]:
    """Properties and required names from the argument sources (see the module doc)."""
    groups: dict[str, list[Arg]] = {}
    for arg in args:
        groups.setdefault(arg.name, []).append(arg)
    props: dict[str, Any] = {}
    required: list[str] = []
    for name, group in groups.items():
        if len(group) == 1:
            props[name] = group[0].schema
            if group[0].required:
                required.append(name)
            continue
        first, later = group[0], group[1:]
        if all(_compatible(a.schema, b.schema) for a, b in itertools.combinations(group, 2)):
            props[name], differ = _merge(group)
            if any(a.required for a in group):
                required.append(name)
            if differ:
                warnings.append((
                    later[-1].at,
                    f"merged with the {_LABEL[first.loc]} {name!r}; they differ in {', '.join(differ)}: "
                    f"kept the {_LABEL[first.loc]}'s",
                ))
            continue
        renamed: list[str] = []
        for arg in group:
            new = f"{arg.loc}_{name}"
            if new in groups or new in props:
                problems.append((
                    arg.at, f"the {_LABEL[arg.loc]} {name!r} disagrees on type with another argument of that "
                            f"name and cannot be renamed to {new!r}: that name is taken",
                ))
                continue
            props[new] = _titled(arg.schema, name)
            renamed.append(new)
            if arg.required:
                required.append(new)
        kinds = " and ".join(
            f"the {_LABEL[a.loc]} ({'/'.join(sorted(_core_types(a.schema) or {'any'}))})" for a in group
        )
        warnings.append((
            later[-1].at,
            f"{kinds} share the name {name!r} but disagree on type: kept each under its own name, "
            + " and ".join(repr(n) for n in renamed),
        ))
    return props, required
