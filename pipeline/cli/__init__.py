"""The `utcgen` command. Each sub-command lives in its own module and registers itself."""

from __future__ import annotations

import argparse
import importlib
import sys

from .. import __version__
from ..errors import UtcgenError

# Sub-command modules; each defines `register(subparsers)` and sets `func` on its parser.
COMMANDS = ["utcgen.pipeline.cli.audit", "utcgen.pipeline.cli.catalog", "utcgen.pipeline.cli.eval", "utcgen.pipeline.cli.generate", "utcgen.pipeline.cli.publish"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="utcgen", description=__doc__)
    parser.add_argument("--version", action="version", version=f"utcgen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UtcgenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted: finished work is kept; re-run the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
