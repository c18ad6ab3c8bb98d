"""Load a tool catalog from files in any supported format, validated as a whole.

Every stage trusts the tools it is given, so a catalog is checked completely before any
of it is used: `load_catalog` either returns every tool or raises one InputError listing
every problem found, each as ``FILE: tool #N 'name': field: message``. ``#N`` counts from
0 in the file's own order (operations in document order for OpenAPI); JSONL problems also
give the line, OpenAPI ones the operation (``GET /pets``). Fields are named as in the
source format (``inputSchema`` for MCP, ``function.parameters`` for OpenAI).

What an importer had to change or leave out to import a tool (a BFCL enum rewritten, an
OpenAPI body whose media type cannot be arguments...) is a warning, in the same shape:
`read_catalog` returns them on the `Catalog`, `load_catalog` logs each on the
``utcgen.catalog`` logger.

Which format a file is in is decided per file; see utcgen.pipeline.catalog.formats for the rules.
Reading and parsing the files is utcgen.pipeline.catalog.parsing, the checks each tool passes
utcgen.pipeline.catalog.checks; this module puts them together and words every problem.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from pydantic import ValidationError

from ..errors import InputError
from ..records import Tool
from .checks import check_tool
from .common import Candidate
from .formats import FORMATS
from .parsing import catalog_files, read_file

__all__ = ["Catalog", "CatalogFile", "load_catalog", "read_catalog"]

log = logging.getLogger("utcgen.catalog")


@dataclass(frozen=True)
class CatalogFile:
    """One file that went into a catalog: where, in which format, how many tools."""

    path: str
    format: str
    tools: int


@dataclass(frozen=True)
class Catalog:
    """A loaded catalog: the tools in file order, the files they came from, and one line per
    change an importer made to get them (``FILE: tool #N 'name' (where): field: what``)."""

    tools: list[Tool]
    files: list[CatalogFile]
    warnings: list[str] = field(default_factory=list)

    @property
    def formats(self) -> list[str]:
        """The formats of the files, each once, in the order first met."""
        return list(dict.fromkeys(f.format for f in self.files))


def load_catalog(path: str | os.PathLike[str], format: str | None = None) -> list[Tool]:
    """All tools of a catalog file or directory; raises InputError listing every problem.

    Warnings (see `read_catalog`) go to the ``utcgen.catalog`` logger, one record each.
    """
    catalog = read_catalog(path, format)
    for warning in catalog.warnings:
        log.warning("catalog warning: %s", warning)
    return catalog.tools


def read_catalog(path: str | os.PathLike[str], format: str | None = None) -> Catalog:
    """Like load_catalog, also saying which files (and formats) the tools came from.

    `path` is a .json/.jsonl/.yaml/.yml file or a directory whose such files (not hidden,
    not in subdirectories) are read in name order. `format` forces one of FORMATS for
    every file instead of detecting it per file.
    """
    if format is not None and format not in FORMATS:
        raise InputError(f"unknown format {format!r} (expected one of: {', '.join(FORMATS)})")
    problems: list[str] = []
    warnings: list[str] = []
    found: list[tuple[str, Candidate]] = []
    files: list[CatalogFile] = []
    for shown, file in catalog_files(path):
        fmt, extracted = read_file(file, shown, format)
        candidates = extracted.candidates
        problems += extracted.problems
        warnings += extracted.warnings
        if fmt is not None:
            files.append(CatalogFile(shown, fmt, len(candidates)))
        for cand in candidates:
            warnings += [_problem(shown, cand, f, m) for f, m in cand.warnings]
            problems += [_problem(shown, cand, f, m) for f, m in cand.problems]
            problems += [_problem(shown, cand, _source_field(cand, f), m) for f, m in check_tool(cand.data)]
            found.append((shown, cand))
    problems += _duplicates(found)
    if problems:
        raise InputError(problems)
    tools: list[Tool] = []
    for shown, cand in found:
        try:
            tools.append(Tool.model_validate(cand.data))
        except ValidationError as exc:  # our checks should have caught it; say where anyway
            problems += [
                _problem(shown, cand, ".".join(map(str, e["loc"])), e["msg"]) for e in exc.errors()
            ]
    if problems:
        raise InputError(problems)
    return Catalog(tools, files, warnings)


# --------------------------------------------------------------------------- problem messages


def _problem(shown: str, cand: Candidate, field: str, message: str) -> str:
    return f"{_where(shown, cand)}: {field}: {message}" if field else f"{_where(shown, cand)}: {message}"


def _where(shown: str, cand: Candidate) -> str:
    label = f"{shown}: tool #{cand.index}"
    if cand.name is not None:
        label += f" {cand.name!r}"
    extras = [x for x in (f"line {cand.line}" if cand.line else None, cand.origin) if x]
    return label + (f" ({', '.join(extras)})" if extras else "")


def _source_field(cand: Candidate, field: str) -> str:
    for ours, theirs in cand.field_map.items():
        if field == ours or field.startswith((ours + ".", ours + "[")):
            return theirs + field[len(ours):]
    return field


def _duplicates(found: list[tuple[str, Candidate]]) -> list[str]:
    """One problem per repeated name, naming where it was first defined."""
    first: dict[str, tuple[str, Candidate]] = {}
    problems: list[str] = []
    for shown, cand in found:
        name = cand.name
        if name is None:
            continue
        if name in first:
            other_file, other = first[name]
            problems.append(_problem(shown, cand, "name", f"already used by {_where(other_file, other)}"))
        else:
            first[name] = (shown, cand)
    return problems
