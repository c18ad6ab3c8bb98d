"""Errors raised at the library's boundaries, each carrying where the problem is."""

from __future__ import annotations


class UtcgenError(Exception):
    """Base class: anything the CLI reports as a clean message with a non-zero status."""

    exit_code = 1


class InputError(UtcgenError):
    """Bad user input (catalog, personas, config): reported with exit status 2."""

    exit_code = 2

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))
