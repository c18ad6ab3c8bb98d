"""The one way utcgen writes a file: atomically.

Write to a temporary file in the target folder, flush and fsync it, then rename it over
the target. A reader, a crash or a `kill -9` sees the old file or the new one, never half
of one, and `datasets` globbing `*.parquet` never sees the temporary name.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

TMP_PREFIX = ".utcgen-tmp-"
TMP_SUFFIX = ".part"


def write_atomic(path: Path, data: str | bytes | Callable[[Path], None]) -> None:
    """Replace `path` with `data`: text, bytes, or a function that writes the given temp path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=TMP_PREFIX, suffix=TMP_SUFFIX, dir=path.parent)
    tmp = Path(name)
    try:
        if callable(data):
            os.close(fd)
            fd = -1
            data(tmp)
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        else:
            with os.fdopen(fd, "wb") as fh:
                fd = -1
                fh.write(data.encode("utf-8") if isinstance(data, str) else data)
                fh.flush()
                os.fsync(fh.fileno())
        tmp.chmod(0o644)  # mkstemp makes 0600 files; what utcgen writes is meant to be shared
        os.replace(tmp, path)
    finally:
        if fd >= 0:
            os.close(fd)
        tmp.unlink(missing_ok=True)


def remove_stale_temporaries(folder: Path) -> None:
    """Temp files left by a write that a kill interrupted: the data they held is redone."""
    for stale in Path(folder).glob(f"{TMP_PREFIX}*{TMP_SUFFIX}"):
        stale.unlink(missing_ok=True)
