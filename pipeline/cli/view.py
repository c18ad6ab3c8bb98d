"""`utcgen view DIR`: one static HTML page to browse a folder's dialogues (export.view)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.errors import InputError
from ..export.view import write_view


def run(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    if not folder.is_dir():
        raise InputError(f"{folder}: {'not a folder' if folder.exists() else 'no such folder'}")
    page, shown = write_view(folder, args.out)
    print(f"{shown} dialogues -> {page}", file=sys.stderr)
    print(page)
    return 0


