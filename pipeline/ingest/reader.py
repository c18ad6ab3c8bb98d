"""Load a tool catalog from files in any supported format, validated as a whole.

Every stage trusts the tools it is given, so a catalog is checked completely before any
of it is used: `load_catalog` either returns every tool or raises one InputError listing
every problem found, each as ``FILE: tool #N 'name': field: message``. ``#N`` counts from
0 in the file's own order (operations in document order for OpenAPI); JSONL problems also
give the line, OpenAPI ones the operation (``GET /pets``). Fields are named as in the
source format (``inputSchema`` for MCP, ``function.parameters`` for OpenAI). The error ends
with a hint when `skip_invalid` would leave a usable catalog.

With `skip_invalid` a real document with a few broken tools is still usable: each tool with
a problem (and each file-level problem, such as a file in no known format) is left out and
listed on `Catalog.skipped`; the rest load as long as at least MIN_TOOLS remain.

What an importer had to change or leave out to import a tool (a BFCL enum rewritten, an
OpenAPI body whose media type cannot be arguments...) is a warning, in the same shape:
`read_catalog` returns them on the `Catalog`, `load_catalog` logs them on the
``utcgen.catalog`` logger, summarised by kind (utcgen.pipeline.ingest.report) unless that
logger is enabled for DEBUG, when it logs each.

Which format a file is in is decided per file; see utcgen.pipeline.ingest.formats for the rules.
Reading and parsing the files is utcgen.pipeline.ingest.parsing, the checks each tool passes
utcgen.pipeline.ingest.checks; this module puts them together and words every problem.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from pydantic import ValidationError

from ..core.errors import InputError
from ..core.records import Tool
from .checks import check_tool
from .common import Candidate
from .formats import FORMATS
from .parsing import catalog_files, read_file
from .report import Notice, Skipped, skipped_lines, warning_lines

__all__ = ["MIN_TOOLS", "Catalog", "CatalogError", "CatalogFile", "load_catalog", "read_catalog"]

log = logging.getLogger("utcgen.catalog")

MIN_TOOLS = 2  # a seed tool needs at least one other tool to be confused with


@dataclass(frozen=True)
class CatalogFile:
    """One file that went into a catalog: where, in which format, how many tools."""

    path: str
    format: str
    tools: int


@dataclass(frozen=True)
class Catalog:
    """A loaded catalog: the tools in file order, the files they came from, one notice per
    change an importer made to get them, and (with skip_invalid) what was left out."""

    tools: list[Tool]
    files: list[CatalogFile]
    notices: list[Notice] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        """One line per warning: ``FILE: tool #N 'name' (where): field: what``."""
        return [str(n) for n in self.notices]

    @property
    def formats(self) -> list[str]:
        """The formats of the files, each once, in the order first met."""
        return list(dict.fromkeys(f.format for f in self.files))


class CatalogError(InputError):
    """Problems that stop a catalog from loading: `problems` one line each, then `hint` (if
    any) saying how to go on."""

    def __init__(self, problems: list[str], hint: str | None = None) -> None:
        super().__init__(problems + ([hint] if hint else []))
        self.problems = list(problems)
        self.hint = hint


def load_catalog(path: str | os.PathLike[str], format: str | None = None,
                 skip_invalid: bool = False) -> list[Tool]:
    """All tools of a catalog file or directory; raises InputError listing every problem.

    Warnings and skipped tools (see `read_catalog`) go to the ``utcgen.catalog`` logger:
    summarised, or one record each when that logger is enabled for DEBUG.
    """
    catalog = read_catalog(path, format, skip_invalid=skip_invalid)
    every = log.isEnabledFor(logging.DEBUG)
    for line in skipped_lines(catalog.skipped, len(catalog.tools), verbose=every):
        log.warning("catalog: %s", line.strip() if line.startswith("  ") else line)
    for line in warning_lines(catalog.notices, verbose=every):
        log.warning("catalog warning: %s", line.strip() if line.startswith("  ") else line)
    return catalog.tools


def read_catalog(path: str | os.PathLike[str], format: str | None = None,
                 skip_invalid: bool = False) -> Catalog:
    """Like load_catalog, also saying which files (and formats) the tools came from.

    `path` is a .json/.jsonl/.yaml/.yml file or a directory whose such files (not hidden,
    not in subdirectories) are read in name order. `format` forces one of FORMATS for
    every file instead of detecting it per file. `skip_invalid` leaves out each tool with a
    problem instead of refusing the catalog (see the module doc).
    """
    if format is not None and format not in FORMATS:
        raise InputError(f"unknown format {format!r} (expected one of: {', '.join(FORMATS)})")
    entries: list[Skipped] = []  # file-level problems and every tool, in file order
    notices: list[Notice] = []
    found: list[tuple[str, Candidate, Skipped]] = []
    files: list[CatalogFile] = []
    for shown, file in catalog_files(path):
        fmt, extracted = read_file(file, format)
        entries += [Skipped(shown, None, [Notice(shown, None, "", p)]) for p in extracted.problems]
        notices += [Notice(shown, None, "", w) for w in extracted.warnings]
        if fmt is not None:
            files.append(CatalogFile(shown, fmt, len(extracted.candidates)))
        for cand in extracted.candidates:
            where = _where(cand)
            notices += [Notice(shown, where, f, m) for f, m in cand.warnings]
            entry = Skipped(shown, where, [Notice(shown, where, f, m) for f, m in cand.problems])
            checked = check_tool(cand.data)
            if dropped := _drop_optional(cand, checked):
                notices += [Notice(shown, where, f, f"{m}; the tool is imported without it") for f, m in dropped]
                checked = [p for p in checked if p not in dropped]
            entry.problems += [Notice(shown, where, _source_field(cand, f), m) for f, m in checked]
            found.append((shown, cand, entry))
            entries.append(entry)
    _duplicates(found)
    tools: list[Tool] = []
    for _, cand, entry in found:
        if entry.problems:
            continue
        try:
            tools.append(Tool.model_validate(cand.data))
        except ValidationError as exc:  # our checks should have caught it; say where anyway
            entry.problems += [
                Notice(entry.file, entry.where, ".".join(map(str, e["loc"])), e["msg"]) for e in exc.errors()
            ]
    broken = [entry for entry in entries if entry.problems]
    if broken and not skip_invalid:
        raise CatalogError([str(n) for s in broken for n in s.problems], _hint(broken, len(tools)))
    if broken and len(tools) < MIN_TOOLS:
        lines = skipped_lines(broken, len(tools), verbose=True)
        raise InputError([
            f"{os.fspath(path)}: only {len(tools)} usable tool{'s' if len(tools) != 1 else ''} left after "
            f"skipping the broken ones; a catalog needs at least {MIN_TOOLS}",
            *lines,
        ])
    return Catalog(tools, files, notices, broken)


def _hint(broken: list[Skipped], usable: int) -> str | None:
    """How to go on, when skipping the broken tools would leave a usable catalog."""
    tools = sum(s.where is not None for s in broken)
    if usable < MIN_TOOLS or not tools:
        return None
    return (f"{tools} tool{'s' if tools != 1 else ''} cannot be imported; --skip-invalid "
            f"(skip_invalid: true in a config) leaves {'it' if tools == 1 else 'them'} out and keeps "
            f"the other {usable}")


# --------------------------------------------------------------------------- problem messages


def _where(cand: Candidate) -> str:
    label = f"tool #{cand.index}"
    if cand.name is not None:
        label += f" {cand.name!r}"
    extras = [x for x in (f"line {cand.line}" if cand.line else None, cand.origin) if x]
    return label + (f" ({', '.join(extras)})" if extras else "")


def _drop_optional(cand: Candidate, problems: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The problems with fields the importer may leave out (`Candidate.optional`), those fields removed."""
    found = [(f, m) for f, m in problems if any(f == o or f.startswith((o + ".", o + "[")) for o in cand.optional)]
    for name in {o for o in cand.optional for f, _ in found if f == o or f.startswith((o + ".", o + "["))}:
        cand.data.pop(name, None)
    return found


def _source_field(cand: Candidate, field: str) -> str:
    for ours, theirs in cand.field_map.items():
        if field == ours or field.startswith((ours + ".", ours + "[")):
            return theirs + field[len(ours):]
    return field


def _duplicates(found: list[tuple[str, Candidate, Skipped]]) -> None:
    """A problem on each tool whose name an earlier one already used, naming where."""
    first: dict[str, tuple[str, str]] = {}
    for shown, cand, entry in found:
        name = cand.name
        if name is None:
            continue
        if name in first:
            other_file, other = first[name]
            entry.problems.append(Notice(shown, entry.where, "name", f"already used by {other_file}: {other}"))
        else:
            first[name] = (shown, entry.where or "")
