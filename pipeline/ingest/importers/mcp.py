"""MCP tools (a ``tools/list`` result): ``inputSchema`` is the parameters schema; MCP-only
fields (annotations, outputSchema, title) are not arguments and are left out."""

from __future__ import annotations

from typing import Any

from ..common import Candidate, Extracted, Note, not_object


def extract(items: list[Any], lines: list[int | None]) -> Extracted:
    out: list[Candidate] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            out.append(not_object(i, item, lines[i]))
            continue
        data = {k: item[k] for k in ("name", "description") if k in item}
        problems: list[Note] = []
        if "inputSchema" in item:
            data["parameters"] = item["inputSchema"]
        else:
            problems.append(("inputSchema", "missing"))
        out.append(Candidate(i, data, lines[i], problems=problems, field_map={"parameters": "inputSchema"}))
    return Extracted(out)
