"""One config's rows written as they arrive, in parquet shards of bounded size.

A run of a million dialogues cannot hold its rows in memory, nor put them in one file the Hub
serves well. Rows are buffered `group_rows` at a time, each group written as a row group of
the open shard, and a shard is closed once the Arrow data written to it reaches `shard_bytes`
(what `datasets`' own `push_to_hub` bounds its shards by). Shards are staged as temporary files
beside their final place (`data/<config>/`, under the temporary prefix, which `*.parquet` does
not match) and named `train-0000i-of-0000N.parquet` only when N is known, at `finish`; each
rename is atomic, and until then the folder holds its previous files. Stale shards of the
config are then removed when the folder's manifest says utcgen wrote them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..core.files import temporary_file
from .folder import DatasetFolder, redacted

GROUP_ROWS = 128  # rows per row group: what the writer holds in memory at once, as Python rows
SHARD_BYTES = 500 * 1024 * 1024  # Arrow bytes per shard, as `datasets.push_to_hub` defaults to


def shard_name(index: int, count: int) -> str:
    """The Hub's name for shard `index` of `count` of the train split."""
    return f"train-{index:05d}-of-{count:05d}.parquet"


class ShardWriter:
    """Streams one config's rows into shards; `finish` names them and returns their paths."""

    def __init__(self, folder: DatasetFolder, config: str, schema: pa.Schema, *, built_as: pa.Schema | None = None,
                 shard_bytes: int = SHARD_BYTES, group_rows: int = GROUP_ROWS) -> None:
        self.folder, self.config, self.schema, self.built_as = folder, config, schema, built_as
        self.dir = folder.root / "data" / config
        self.shard_bytes, self.group_rows = max(1, shard_bytes), max(1, group_rows)
        self.rows = 0
        self.arrow_bytes = 0  # of every row written: the split's size once loaded
        self._buffer: list[dict[str, Any]] = []
        self._staged: list[Path] = []
        self._writer: pq.ParquetWriter | None = None
        self._in_shard = 0  # Arrow bytes written to the open shard

    def add(self, row: dict[str, Any]) -> None:
        self._buffer.append(row)
        if len(self._buffer) >= self.group_rows:
            self._flush()

    def _flush(self) -> None:
        if not self._buffer:
            return
        table = pa.Table.from_pylist(redacted(self._buffer), schema=self.built_as or self.schema)
        if self.built_as is not None:
            table = table.cast(self.schema)
        self._buffer = []
        if self._writer is None:
            self._writer = pq.ParquetWriter(self._stage(), self.schema)
        self._writer.write_table(table)
        self.rows += table.num_rows
        self.arrow_bytes += table.nbytes
        self._in_shard += table.nbytes
        if self._in_shard >= self.shard_bytes:
            self._close_shard()

    def _stage(self) -> Path:
        fd, path = temporary_file(self.dir)
        os.close(fd)
        self._staged.append(path)
        return path

    def _close_shard(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
            with open(self._staged[-1], "rb+") as fh:
                os.fsync(fh.fileno())
        self._in_shard = 0

    def flush_all(self) -> None:
        """Writes what is buffered and closes the open shard: every row is staged on disk."""
        self._flush()
        self._close_shard()

    def finish(self) -> list[Path]:
        """Names the staged shards (an empty config: one file with the schema and no row groups, which
        `datasets` loads) and removes stale ones; returns the shards in order."""
        self.flush_all()
        if not self._staged:  # no rows: `pq.write_table` would write a zero-row group `datasets` rejects
            pq.ParquetWriter(self._stage(), self.schema).close()
        count = len(self._staged)
        paths = [self.dir / shard_name(i, count) for i in range(count)]
        for staged, path in zip(self._staged, paths):
            self.folder.claim(path)
            staged.chmod(0o644)
            os.replace(staged, path)
        self._staged = []
        self.folder.remove_stale(self.config, set(paths))
        return paths

    def abort(self) -> None:
        """Drops the staged shards (the folder keeps its previous files)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        for staged in self._staged:
            staged.unlink(missing_ok=True)
        self._staged = []
