"""Tool-catalog formats: detect which one a parsed file is in, and hand it to its importer.

The importers (utcgen.pipeline.catalog.importers: native, openai, mcp, openapi, bfcl) turn
parsed documents into dicts shaped like our `Tool` (name, description, parameters,
line_of_business, tags), saying what they cannot reshape (problems) and what they had to
change or leave out (warnings). They do not validate the result (utcgen.pipeline.catalog.checks
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
* markers of two different formats in one file are an error: split it or force a format.
"""

from __future__ import annotations

from typing import Any

from .common import Extracted, kind_of
from .importers import bfcl, mcp, native, openai, openapi

__all__ = ["FORMATS", "FormatError", "detect_format", "extract", "unwrap_items"]

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
            raise FormatError(f"unknown format: 'tools' is a {kind_of(data['tools'])}, not a list")
        raise FormatError(f"unknown format: top level is a {kind_of(data)}; {_EXPECTED}")
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
    return next(iter(strong), next(iter(weak), "native"))


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
