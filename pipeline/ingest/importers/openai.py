"""OpenAI function tools: chat style ``{"type": "function", "function": {...}}`` or the flat
responses style ``{"type": "function", "name": ..., "parameters": ...}``."""

from __future__ import annotations

from typing import Any

from ..common import Candidate, Extracted, Note, json_type_name, not_object

_FN_KEYS = {"name", "description", "parameters", "strict"}


def extract(items: list[Any], lines: list[int | None]) -> Extracted:
    out: list[Candidate] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            out.append(not_object(i, item, lines[i]))
            continue
        fn: Any = item
        field_map: dict[str, str] = {}
        problems: list[Note] = []
        if "type" in item and item["type"] != "function":
            problems.append(("type", f"only 'function' tools can be imported, got {item['type']!r}"))
        if "function" in item:
            fn = item["function"]
            field_map = {k: f"function.{k}" for k in ("name", "description", "parameters")}
            if not isinstance(fn, dict):
                problems.append(("function", f"expected an object, got a {json_type_name(fn)}"))
                fn = {}
        # OpenAI's function spec is closed: a stray key (say MCP's inputSchema under a
        # forced format) would otherwise vanish silently with the arguments it describes.
        known = _FN_KEYS | ({"type", "function"} if fn is item else set())
        prefix = "function." if fn is not item else ""
        problems += [(f"{prefix}{k}", "unknown field in an OpenAI function") for k in fn if k not in known]
        data = {k: fn[k] for k in ("name", "description", "parameters") if k in fn}
        out.append(Candidate(i, data, lines[i], problems=problems, field_map=field_map))
    return Extracted(out)
