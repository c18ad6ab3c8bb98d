"""`utcgen catalog validate|stats`: check a tool catalog before spending anything on it."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from utcgen.pipeline.errors import InputError
from utcgen.pipeline.catalog.formats import FORMATS

if TYPE_CHECKING:
    from utcgen.pipeline.catalog.reader import Catalog


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "catalog",
        help="validate a tool catalog or summarise it",
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


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="catalog file (.json/.jsonl/.yaml/.yml) or directory")
    parser.add_argument(
        "--format", choices=FORMATS, default=None, help="skip detection: read every file as this format"
    )


def _read(args: argparse.Namespace) -> Catalog:
    """The catalog, or an InputError whose first line says how many problems follow."""
    from utcgen.pipeline.catalog.reader import read_catalog

    try:
        return read_catalog(args.file, format=args.format)
    except InputError as exc:
        count = len(exc.problems)
        if count == 1:
            raise
        header = f"{count} problems in catalog {args.file}:"
        raise InputError([header, *exc.problems]) from None


def _validate(args: argparse.Namespace) -> int:
    catalog = _read(args)
    count = len(catalog.tools)
    print(f"OK: {count} tool{'s' if count != 1 else ''} from {args.file} ({', '.join(catalog.formats)})")
    return 0


def _stats(args: argparse.Namespace) -> int:
    from utcgen.pipeline.retrieval.stats import catalog_stats

    stats = catalog_stats(_read(args).tools)
    print(stats.model_dump_json(indent=2) if args.json else stats.to_text())
    return 0
