"""`utcgen catalog validate|stats|convert`: check a tool catalog before spending anything on
it, or turn it into a native file to edit. What an importer had to change or leave out
is printed on stderr, one ``warning:`` line each."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..catalog.formats import FORMATS
from ..errors import InputError

if TYPE_CHECKING:
    from ..catalog.reader import Catalog


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "catalog",
        help="validate a tool catalog, summarise it or convert it to the native format",
        description="Tool catalogs: native, OpenAI, MCP, OpenAPI 3.x or BFCL; a file or a directory.",
    )
    sub = parser.add_subparsers(dest="catalog_command", required=True)

    validate = sub.add_parser(
        "validate", help="check every tool; list all problems (exit status 2) or say OK"
    )
    _common(validate)
    validate.set_defaults(func=_validate)

    stats = sub.add_parser("stats", help="summarise a catalog (tools, parameters, lines of business)")
    _common(stats)
    stats.add_argument("--json", action="store_true", help="print the statistics as JSON")
    stats.set_defaults(func=_stats)

    convert = sub.add_parser(
        "convert",
        help="write a catalog in any supported format as a native catalog file, to edit",
        description="Read a catalog (any supported format) and write its tools as a native catalog: "
                    "a JSON list, JSONL or YAML, chosen by the suffix of --out. The file is replaced "
                    "atomically; reading it back gives the same tools.",
    )
    _common(convert)
    convert.add_argument(
        "--out", required=True, metavar="FILE", help="native catalog to write (.json, .jsonl, .yaml or .yml)"
    )
    convert.set_defaults(func=_convert)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="catalog file (.json/.jsonl/.yaml/.yml) or directory")
    parser.add_argument(
        "--format", choices=FORMATS, default=None, help="skip detection: read every file as this format"
    )


def _read(args: argparse.Namespace) -> Catalog:
    """The catalog (its warnings printed on stderr), or an InputError whose first line says
    how many problems follow."""
    from ..catalog.reader import read_catalog

    try:
        catalog = read_catalog(args.file, format=args.format)
    except InputError as exc:
        count = len(exc.problems)
        if count == 1:
            raise
        header = f"{count} problems in catalog {args.file}:"
        raise InputError([header, *exc.problems]) from None
    for warning in catalog.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return catalog


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def _summary(catalog: Catalog, source: str) -> str:
    return f"{_plural(len(catalog.tools), 'tool')} from {source} ({', '.join(catalog.formats)})"


def _warned(catalog: Catalog) -> str:
    return f"; {_plural(len(catalog.warnings), 'warning')}" if catalog.warnings else ""


def _validate(args: argparse.Namespace) -> int:
    catalog = _read(args)
    print(f"OK: {_summary(catalog, args.file)}{_warned(catalog)}")
    return 0


def _stats(args: argparse.Namespace) -> int:
    from ..retrieval.stats import catalog_stats

    stats = catalog_stats(_read(args).tools)
    print(stats.model_dump_json(indent=2) if args.json else stats.to_text())
    return 0


def _convert(args: argparse.Namespace) -> int:
    from ..catalog.writer import check_native_path, write_native

    check_native_path(args.out)  # before reading: a wrong suffix needs no catalog
    catalog = _read(args)
    write_native(catalog.tools, args.out)
    print(f"wrote {_summary(catalog, args.file)} to {args.out} (native){_warned(catalog)}")
    return 0
