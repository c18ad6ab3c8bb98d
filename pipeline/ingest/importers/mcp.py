"""MCP tools (a ``tools/list`` result): ``inputSchema`` is the parameters schema and ``outputSchema``
(what a call's structured content holds) the output schema, its local ``$ref`` inlined (each named
schema titled by its name, a recursive one cut at the repeat, ``$defs`` dropped) and cut the way an
OpenAPI response is (`openapi_schema.fit_output`): a real server's can be 60 kB. The other MCP-only
fields (annotations, title, icons) say nothing a tool record keeps and are left out."""

from __future__ import annotations

from typing import Any

from ..common import Candidate, Extracted, Note, RefError, not_object
from .openapi_schema import fit_output, resolve_refs


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
        warnings: list[Note] = []
        if item.get("outputSchema") is not None:
            try:
                data["output_schema"] = _output(item["outputSchema"])
            except RefError as exc:
                warnings.append(("outputSchema", f"{exc}: the output schema is left out"))
        out.append(Candidate(i, data, lines[i], problems=problems, warnings=warnings,
                             field_map={"parameters": "inputSchema", "output_schema": "outputSchema"}))
    return Extracted(out)


def _output(schema: Any) -> Any:
    """An `outputSchema` inlined and cut (see the module doc); anything but a mapping as it is, for the checks."""
    if not isinstance(schema, dict):
        return schema
    inlined = resolve_refs(schema, schema, titled=True)
    if not isinstance(inlined, dict):
        return inlined
    return fit_output({k: v for k, v in inlined.items() if k not in ("$defs", "definitions")})
