"""The `utcgen` command. Each sub-command lives in its own module and registers itself."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .. import __version__
from ..core.errors import UtcgenError, os_error
from ..core.redaction import install_log_filter, redact

# Sub-command modules; each defines `register(subparsers)` and sets `func` on its parser.
COMMANDS = ["utcgen.pipeline.cli.audit", "utcgen.pipeline.cli.catalog", "utcgen.pipeline.cli.eval", "utcgen.pipeline.cli.generate", "utcgen.pipeline.cli.prompts", "utcgen.pipeline.cli.publish", "utcgen.pipeline.cli.view"]


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
    """Runs one command. Every failure a user can cause or meet is one redacted line on stderr and
    an exit status: 2 for input, 1 for the environment (a full disk), 130 for Ctrl-C, 141 when
    the reader of stdout went away (`utcgen audit --json | head`)."""
    args = build_parser().parse_args(argv)
    install_log_filter()
    try:
        return int(args.func(args) or 0)
    except UtcgenError as exc:
        return _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        print("interrupted: finished work is kept; re-run the same command to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except RecursionError:
        return _fail("an input document nests too deeply to read (a schema or catalog built to be deep?); "
                     "flatten it", 2)
    except OSError as exc:
        fault = os_error(exc, exc.filename if isinstance(exc.filename, str) else None)
        return _fail(str(fault), fault.exit_code)


def _fail(message: str, code: int) -> int:
    try:
        print(f"error: {redact(message)}", file=sys.stderr)
    except BrokenPipeError:
        pass
    return code


def _silence_stdout() -> None:
    """The reader closed the pipe: point stdout at /dev/null so the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
