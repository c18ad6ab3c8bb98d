"""Errors raised at the library's boundaries, each carrying where the problem is."""

from __future__ import annotations

import errno


class UtcgenError(Exception):
    """Base class: anything the CLI reports as a clean message with a non-zero status."""

    exit_code = 1


class InputError(UtcgenError):
    """Bad user input (catalog, personas, config): reported with exit status 2."""

    exit_code = 2

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


class EnvironmentFault(UtcgenError):
    """The machine, not the input: a full disk, an I/O error (exit status 1). Finished work is kept."""

    exit_code = 1


# Deepest nesting accepted in a user's JSON/YAML document (a schema, a catalog): far beyond any real
# tool schema, far below Python's recursion limit, so a document built to be deep is refused in words.
MAX_NESTING = 64


def nesting_depth(value: object, limit: int = MAX_NESTING) -> int:
    """How deeply dicts and lists nest in `value` (a scalar is 0), counted without recursion and
    stopping once past `limit`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, (dict, list)):
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def check_nesting(value: object, where: str, limit: int = MAX_NESTING) -> None:
    """Raise an InputError naming `where` (file, tool, field) when `value` nests deeper than `limit`."""
    if nesting_depth(value, limit) > limit:
        raise InputError(f"{where}: nested more than {limit} levels deep; flatten it (utcgen accepts at most {limit})")


# What a user's path can do wrong (exit 2); any other OSError is the machine's or the network's (exit 1).
_INPUT_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.ENOTDIR, errno.EISDIR,
                 errno.ENAMETOOLONG, errno.ELOOP, errno.EEXIST, errno.EINVAL}
_SPACE_ERRNOS = {errno.ENOSPC, errno.EDQUOT}


def os_error(exc: OSError, where: str | None = None) -> UtcgenError:
    """An OSError as a one-line error naming `where` (a flag and path, or a file): permissions, a
    read-only file system or a bad path are the input's (exit 2); a full disk, an I/O fault or a
    network failure the environment's (exit 1)."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    prefix = f"{where}: " if where else ""
    if exc.errno in _SPACE_ERRNOS:
        return EnvironmentFault(f"{prefix}{reason}: free some space, then re-run the same command; "
                                "finished work is kept")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return InputError(f"{prefix}{reason} (check its permissions, or choose another path)")
    if exc.errno in _INPUT_ERRNOS:
        return InputError(f"{prefix}{reason}")
    return EnvironmentFault(f"{prefix}{reason}")
