"""The `utcgen` command: its flags are `parsers.build_parser`; the command `utcgen NAME` is carried out by
`NAME.py`'s `run(args)`, imported once the line is parsed, so `--help` and each command load only what
they use.

May import: core, dialogue, scenarios, ingest, settings, retrieval, runner, llm, validators, export, synthesis, evaluation, api.
"""

from __future__ import annotations

import importlib
import os
import sys

from ..core.errors import UtcgenError, os_error
from ..core.redaction import install_log_filter, redact
from .checks import quiet_progress_bars
from .parsers import build_parser

__all__ = ["build_parser", "main"]


def main(argv: list[str] | None = None) -> int:
    """Runs one command. Every failure a user can cause or meet is one redacted line on stderr and
    an exit status: 2 for input, 1 for the environment (a full disk), 130 for Ctrl-C, 141 when
    the reader of stdout went away (`utcgen audit --json | head`)."""
    args = build_parser().parse_args(argv)
    install_log_filter()
    if getattr(args, "no_progress", False):  # before the command's modules load: libraries read it on import
        quiet_progress_bars()
    try:
        command = importlib.import_module(f"{__name__}.{args.command}")  # lazy: only this command's modules
        return int(command.run(args) or 0)
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
