"""Tool-catalog formats: detect which one a parsed file is in, and hand it to its importer.

The importers (utcgen.pipeline.ingest.importers: native, openai, mcp, openapi, bfcl) turn
parsed documents into dicts shaped like our `Tool` (name, description, parameters,
line_of_business, tags), saying what they cannot reshape (problems) and what they had to
change or leave out (warnings). They do not validate the result (utcgen.pipeline.ingest.checks
does, uniformly for every format) and import nothing beyond the standard library so the CLI
can use `FORMATS` cheaply.

Format detection (`detect_format`) looks at the parsed top level, then at each item:

* a mapping with an ``openapi`` key is an OpenAPI 3.x document (``swagger`` 2.0 is refused);
* ``{"tools": [...]}``, a JSON-RPC ``{"result": {"tools": [...]}}`` envelope, a plain list
  (or the lines of a JSONL file) are lists of items; a lone mapping is a one-item list;
* an item with ``"type": "function"`` is OpenAI (chat ``{"function": {...}}`` or flat
  responses style) and so is one with ``strict``; one with ``inputSchema`` is MCP; one with
  ``line_of_business`` or ``tags`` is native; a BFCL test entry
  (``{"id", "question", "function": [...]}``) is BFCL. These markers are decisive;
* an item whose ``parameters`` use BFCL's type names anywhere (``dict``, ``float``,
  ``tuple``, ``any``, ...) but has no marker hints BFCL: the file is BFCL unless another
  item carries a marker, in which case those type names are reported as unknown types;
* any other item (plain ``name``/``description``/``parameters``) fits native, OpenAI and BFCL
  alike and takes the format of its neighbours; a list of only such items is native;
* markers of two different formats in one file are an error: split it or force a format;
* a file that fits none of them (a mapping without ``tools``, a list in which no item has a
  tool's ``name``, ``description``, ``parameters`` or ``function``, such as a BFCL answer file) is reported once, ``format not recognised``, with
  one line per format tried saying why it did not fit: reading it as a catalog anyway would
  give one problem per item, thousands for a real data file.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .common import Extracted, json_type_name
from .importers import bfcl, mcp, native, openai, openapi

__all__ = ["FORMATS", "FormatError", "detect_format", "extract", "not_recognised", "unwrap_items"]

FORMATS: tuple[str, ...] = ("native", "openai", "mcp", "openapi", "bfcl")

_LIST_IMPORTERS = {"native": native.extract, "openai": openai.extract, "mcp": mcp.extract, "bfcl": bfcl.extract}


class FormatError(Exception):
    """The file's top level matches no supported format (reported as one problem)."""


def _item_signal(item: Any) -> tuple[str, bool] | None:
    """(format, strong): BFCL type names alone are a weak hint that a marked item overrides."""
    if not isinstance(item, dict):
        return None
    if item.get("type") == "function" or "strict" in item:
        return "openai", True
    if "inputSchema" in item:
        return "mcp", True
    if bfcl.is_entry(item):
        return "bfcl", True
    if "line_of_business" in item or "tags" in item:
        return "native", True
    if isinstance(item.get("parameters"), dict) and bfcl.uses_bfcl_types(item["parameters"]):
        return "bfcl", False
    return None


def unwrap_items(data: Any) -> list[Any] | None:
    """The item list of a non-OpenAPI document, or None if the top level is not one."""
    if isinstance(data, list):
        return data
    if not isinstance(data, dict):
        return None
    if "tools" in data:
        return data["tools"] if isinstance(data["tools"], list) else None
    result = data.get("result")
    if "jsonrpc" in data and isinstance(result, dict) and isinstance(result.get("tools"), list):
        return result["tools"]
    if "name" in data or "function" in data or "inputSchema" in data:
        return [data]
    return None


_EXPECTED = (
    "expected a list of tools, {\"tools\": [...]}, an MCP tools/list result "
    "or an OpenAPI 3.x document"
)


def detect_format(data: Any) -> str:
    """Name the format of a parsed catalog file; raise FormatError if there is none."""
    if isinstance(data, dict) and "openapi" in data:
        return "openapi"
    if isinstance(data, dict) and "swagger" in data:
        raise FormatError("unknown format: Swagger 2.0 is not supported; convert it to OpenAPI 3.x")
    items = unwrap_items(data)
    if items is None:
        if isinstance(data, dict) and "tools" in data:
            raise FormatError(f"unknown format: 'tools' is a {json_type_name(data['tools'])}, not a list")
        raise FormatError(not_recognised(data, None))
    strong: dict[str, int] = {}
    weak: dict[str, int] = {}
    for i, item in enumerate(items):
        signal = _item_signal(item)
        if signal is not None:
            (strong if signal[1] else weak).setdefault(signal[0], i)
    if len(strong) > 1:
        found = ", ".join(f"tool #{i} looks {fmt}" for fmt, i in strong.items())
        raise FormatError(
            f"unknown format: items disagree ({found}); split the file or pass a format"
        )
    if not strong and not weak and items and not any(_tool_like(i) for i in items):
        raise FormatError(not_recognised(data, items))
    return next(iter(strong), next(iter(weak), "native"))


_TOOL_KEYS = ("name", "description", "parameters", "function")


def _tool_like(item: Any) -> bool:
    """Whether an item looks like a tool at all, broken or not (a mapping with a tool's key)."""
    return isinstance(item, dict) and any(k in item for k in _TOOL_KEYS)


def _shape(data: Any, items: list[Any] | None) -> str:
    """What the file holds instead, in a few words."""
    if items is None:
        if isinstance(data, dict):
            keys = [str(k) for k in data][:6]
            more = ", ..." if len(data) > len(keys) else ""
            return f"the top level is a mapping with keys {', '.join(keys)}{more}" if keys else "the top level is an empty mapping"
        return f"the top level is a {json_type_name(data)}"
    kinds = Counter(json_type_name(i) for i in items)
    if kinds.get("mapping", 0) * 2 < len(items):
        return f"its {len(items)} items are mostly {kinds.most_common(1)[0][0]}s, not tool objects"
    keys = Counter(str(k) for i in items if isinstance(i, dict) for k in i)
    common = ", ".join(k for k, _ in keys.most_common(6))
    return f"none of its {len(items)} items has a 'name' or 'description'; their keys include {common}"


def not_recognised(data: Any, items: list[Any] | None) -> str:
    """The one report for a file in no supported format: each format tried, and why it did not fit."""
    top = "mapping" if isinstance(data, dict) else json_type_name(data)
    tried = [
        ("openapi", "no 'openapi' (or 'swagger') key at the top level" if top == "mapping"
         else f"an OpenAPI document is a mapping; the top level is a {top}"),
        ("mcp", "no 'tools' list and no item with an 'inputSchema'" if items is None
         else "no item has an 'inputSchema'"),
        ("openai", "no 'tools' list" if items is None else "no item has \"type\": \"function\" or a 'function' object"),
        ("bfcl", "no 'tools' list" if items is None
         else "no item is a test entry ('question' and 'function') or uses BFCL type names"),
        ("native", f"a list of tools with 'name' and 'description' is expected; {_shape(data, items)}"),
    ]
    return "format not recognised; tried:\n" + "\n".join(f"  {fmt}: {why}" for fmt, why in tried)


def extract(data: Any, fmt: str, lines: list[int | None] | None = None) -> Extracted:
    """Reshape a parsed document of format `fmt` into candidates, with file-level problems
    and warnings. `lines` gives the source line of each top-level item (JSONL)."""
    if fmt == "openapi":
        if isinstance(data, list):
            return Extracted(problems=["an OpenAPI document is one mapping; it cannot be split into JSONL lines"])
        return openapi.extract(data)
    items = unwrap_items(data)
    if items is None:
        return Extracted(problems=[f"not a {fmt} catalog: {_EXPECTED}"])
    line_of: list[int | None] = list(lines) if lines is not None else [None] * len(items)
    return _LIST_IMPORTERS[fmt](items, line_of)
