"""`utcgen catalog validate|stats|convert`: check a tool catalog before spending anything on
it, or turn it into a native file to edit.

What an importer had to change or leave out is printed on stderr, summarised by kind with a
few examples (``--verbose``: one ``warning:`` line each). ``--skip-invalid`` leaves broken
tools out, lists them on stderr and goes on while at least two usable tools remain."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..core.errors import InputError
from ..ingest.reader import CatalogError, read_catalog
from ..ingest.report import skipped_lines, warning_lines
from ..ingest.writer import check_native_path, write_native
from ..retrieval.embeddings import Embedder
from ..retrieval.stats import catalog_stats

if TYPE_CHECKING:
    from ..ingest.reader import Catalog


def _read(args: argparse.Namespace) -> Catalog:
    """The catalog (its warnings printed on stderr), or an InputError whose first line says
    how many problems follow."""
    try:
        catalog = read_catalog(args.file, format=args.format, skip_invalid=args.skip_invalid)
    except CatalogError as exc:
        count = len(exc.problems)
        if count == 1 and not exc.hint:
            raise
        header = [f"{count} problems in catalog {args.file}:"] if count > 1 else []
        raise InputError([*header, *exc.problems, *([exc.hint] if exc.hint else [])]) from None
    for line in skipped_lines(catalog.skipped, len(catalog.tools), verbose=args.verbose):
        print(f"skipped: {line.strip()}" if line.startswith("  ") else line, file=sys.stderr)
    for line in warning_lines(catalog.notices, verbose=args.verbose):
        print(f"warning: {line.strip()}" if line.startswith("  ") else f"warning: {line}", file=sys.stderr)
    return catalog


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def _summary(catalog: Catalog, source: str) -> str:
    return f"{_plural(len(catalog.tools), 'tool')} from {source} ({', '.join(catalog.formats)})"


def _warned(catalog: Catalog) -> str:
    """What the one-line summary adds: how many tools were skipped and how many warnings there were."""
    tools = sum(s.where is not None for s in catalog.skipped)
    files = len(catalog.skipped) - tools
    out = f"; {_plural(tools, 'broken tool')} skipped" if tools else ""
    out += f"; {_plural(files, 'file-level problem')} skipped" if files else ""
    return out + (f"; {_plural(len(catalog.notices), 'warning')}" if catalog.notices else "")


def run(args: argparse.Namespace) -> int:
    """`utcgen catalog validate|stats|convert`."""
    return {"validate": _validate, "stats": _stats, "convert": _convert}[args.catalog_command](args)


def _validate(args: argparse.Namespace) -> int:
    catalog = _read(args)
    print(f"OK: {_summary(catalog, args.file)}{_warned(catalog)}")
    return 0


def _stats(args: argparse.Namespace) -> int:
    tools = _read(args).tools
    stats = catalog_stats(tools, embedder=Embedder(backend=args.embeddings))
    print(stats.model_dump_json(indent=2) if args.json else stats.to_text())
    return 0


def _convert(args: argparse.Namespace) -> int:
    check_native_path(args.out)  # before reading: a wrong suffix needs no catalog
    catalog = _read(args)
    write_native(catalog.tools, args.out)
    print(f"wrote {_summary(catalog, args.file)} to {args.out} (native){_warned(catalog)}")
    return 0
