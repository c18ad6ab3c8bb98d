"""`utcgen view DIR`: one static HTML page to browse a folder's dialogues (export.view)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.errors import InputError


def run(args: argparse.Namespace) -> int:
    from ..export.view import write_view

    folder = Path(args.dir)
    if not folder.is_dir():
        raise InputError(f"{folder}: {'not a folder' if folder.exists() else 'no such folder'}")
    page, shown = write_view(folder, args.out)
    print(f"{shown} dialogues -> {page}", file=sys.stderr)
    print(page)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("view", help="write one HTML page to browse a folder's dialogues",
                              description=__doc__)
    p.add_argument("dir", help="an output folder (data/dialogues, data/rejected parquet; or journal/)")
    p.add_argument("--out", metavar="FILE", help="the page to write (default: DIR.html beside the folder)")
    p.set_defaults(func=run)
