"""Write tools as a native catalog file, the format users edit by hand.

The layout follows the file's suffix: ``.json`` a JSON list, ``.jsonl`` one tool per
line, ``.yaml``/``.yml`` a YAML list. Every tool is written with all of its fields
(``line_of_business`` and ``tags`` included, which also marks the file as native), so
reading the file back gives the same tools; ``output_schema`` only when the tool has one, so a
catalog that says nothing of what calls return converts as it always did.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml

from ..core.errors import InputError
from ..core.files import write_atomic
from ..core.records import Tool
from .parsing import CATALOG_SUFFIXES


def check_native_path(path: str | os.PathLike[str]) -> Path:
    """`path` if its suffix says how to write it; InputError otherwise."""
    out = Path(path)
    if out.suffix.lower() not in CATALOG_SUFFIXES:
        raise InputError(
            f"{os.fspath(path)}: cannot tell how to write {out.suffix or 'a file without a suffix'!r}: "
            f"name it .json (a list), .jsonl (one tool per line) or .yaml/.yml"
        )
    return out


def native_text(tools: list[Tool], suffix: str) -> str:
    """The tools as a native catalog, laid out as `suffix` says."""
    items = [tool.model_dump(mode="json", exclude={"output_schema"} if tool.output_schema is None else None)
             for tool in tools]
    suffix = suffix.lower()
    if suffix == ".jsonl":
        return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
    if suffix in (".yaml", ".yml"):
        return yaml.safe_dump(items, sort_keys=False, allow_unicode=True, width=100)
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n"


def write_native(tools: list[Tool], path: str | os.PathLike[str]) -> Path:
    """Write `tools` atomically as a native catalog at `path` (.json, .jsonl, .yaml or .yml)."""
    out = check_native_path(path)
    write_atomic(out, native_text(tools, out.suffix))
    return out
