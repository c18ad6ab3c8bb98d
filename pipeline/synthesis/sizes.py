"""Tools cut down to a size a prompt can carry (`synthesis.max_description_chars`, `max_schema_chars`).

Every prompt, judge and dataset row shows a tool as its spec JSON, so one tool with a 1 MB
description would make each of them about 250k tokens. A generation run therefore uses the
tools as `prompt_sized` returns them: the description cut at its limit, and a parameter schema
whose JSON is over its limit shrunk while it stays a valid schema with the same parameter names,
types and required list (long descriptions cut first, then long lists of values, then the largest parameters
reduced to their type). The run's records hold the tools as the prompts showed them. Each cut
tool is named in one warning.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ..core.records import Tool

log = logging.getLogger("utcgen.synthesis")

CUT = " [...]"  # marks a cut text


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def _cut_text(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:max(0, limit - len(CUT))].rstrip() + CUT


_PROSE = ("description", "title", "$comment")  # texts that may be cut; values (enum, pattern, ...) never are


def _cut_strings(schema: Any, limit: int) -> Any:
    """Every prose text in `schema` (descriptions, titles) at most `limit` characters; keys and values kept."""
    if isinstance(schema, list):
        return [_cut_strings(v, limit) for v in schema]
    if isinstance(schema, dict):
        return {k: _cut_text(v, limit) if k in _PROSE and isinstance(v, str) else _cut_strings(v, limit)
                for k, v in schema.items()}
    return schema


def _cut_lists(schema: Any, most: int) -> Any:
    """Lists of values (enum, examples) at most `most` long; lists of schemas (anyOf, ...) kept whole."""
    if isinstance(schema, list):
        values = [_cut_lists(v, most) for v in schema]
        return values if any(isinstance(v, dict) for v in values) else values[:most]
    if isinstance(schema, dict):
        return {k: v if k == "required" else _cut_lists(v, most) for k, v in schema.items()}
    return schema


def _typed(schema: Any) -> dict[str, Any]:
    """A parameter reduced to its type (and a short description)."""
    if not isinstance(schema, dict):
        return {}
    out = {k: schema[k] for k in ("type",) if k in schema}
    if isinstance(schema.get("description"), str):
        out["description"] = _cut_text(schema["description"], 80)
    return out


def shrink_schema(parameters: dict[str, Any], limit: int) -> dict[str, Any]:
    """`parameters` with its JSON at most about `limit` characters (see the module docstring)."""
    if _size(parameters) <= limit:
        return parameters
    schema: dict[str, Any] = parameters
    for strings in (400, 200, 100, 40):
        schema = _cut_strings(schema, strings)
        if _size(schema) <= limit:
            return schema
    for most in (20, 5):
        schema = _cut_lists(schema, most)
        if _size(schema) <= limit:
            return schema
    properties = dict(schema.get("properties") or {})
    for name in sorted(properties, key=lambda n: -_size(properties[n])):
        properties[name] = _typed(properties[name])
        schema = {**schema, "properties": properties}
        if _size(schema) <= limit:
            return schema
    return {k: v for k, v in schema.items() if k in ("type", "properties", "required")}


def prompt_sized(tools: list[Tool], max_description: int, max_schema: int) -> list[Tool]:
    """The tools as prompts show them: each over a limit cut (one warning per tool), the rest as they are."""
    out = []
    for tool in tools:
        cut: list[str] = []
        update: dict[str, Any] = {}
        if len(tool.description) > max_description:
            update["description"] = _cut_text(tool.description, max_description)
            cut.append(f"description {len(tool.description):,} characters cut to {max_description:,}")
        if (size := _size(tool.parameters)) > max_schema:
            update["parameters"] = shrink_schema(tool.parameters, max_schema)
            cut.append(f"parameter schema {size:,} characters of JSON shrunk to {_size(update['parameters']):,}")
        if cut:
            log.warning("tool '%s' is too large for prompts: %s (synthesis.max_description_chars, "
                        "max_schema_chars); the dataset records it as the prompts show it", tool.name, "; ".join(cut))
            tool = tool.model_copy(update=update)
        out.append(tool)
    return out
