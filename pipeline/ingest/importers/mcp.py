"""MCP tools (a ``tools/list`` result): ``inputSchema`` is the parameters schema and ``outputSchema``
(what a call's structured content holds) the output schema; the other MCP-only fields (annotations,
title, icons) say nothing a tool record keeps and are left out."""

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
        if item.get("outputSchema") is not None:
            data["output_schema"] = item["outputSchema"]
        out.append(Candidate(i, data, lines[i], problems=problems,
                             field_map={"parameters": "inputSchema", "output_schema": "outputSchema"}))
    return Extracted(out)
