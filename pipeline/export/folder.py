"""The one writer of dataset folders: `utcgen generate`'s export, `utcgen eval build`, `utcgen eval run`.

Every file is replaced atomically (`files.write_atomic`), so an interrupted write leaves the old
file or the new one. A config's rows go to `data/<config>/train-00000-of-00001.parquet`, the
layout a Hugging Face dataset repository uses and `datasets.load_dataset(folder, config)` reads
(a run's export streams its rows into several such shards: `shards.ShardWriter`)
through the card's `configs:` block; other shards left in that folder by an earlier write are
removed, since a config's files are globbed. JSON files are written indented, with NaN and
infinity turned into null (they are not JSON).

The writer deletes only what it wrote itself: every file is listed in the folder's manifest
(`.utcgen/manifest.json`) before it is written, and a stale shard is removed only when the
manifest lists it; a shard someone else put there is left in place with a warning. Every text
it writes (JSON, card, the string cells of parquet rows) passes through `redaction.redact`, so
no key reaches a file that `utcgen publish` uploads.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..core.files import STATE_DIR, write_atomic
from ..core.redaction import Redactor, redact, snapshot

SHARD = "train-00000-of-00001.parquet"
MANIFEST = f"{STATE_DIR}/manifest.json"

log = logging.getLogger(__name__)


def redacted(value: Any, redactor: Redactor | None = None) -> Any:
    """`value` with every string in it (keys of mappings too) redacted."""
    redactor = redactor or snapshot()
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, Mapping):
        return {redactor(str(k)): redacted(v, redactor) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redacted(v, redactor) for v in value]
    return value


def finite(value: Any) -> Any:
    """NaN/inf are not JSON; a stray one (e.g. a cost a provider could not price) becomes null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def write_parquet(path: Path, rows: list[dict[str, Any]], schema: pa.Schema, *, built_as: pa.Schema | None = None) -> None:
    """Rows as one parquet file of `schema`, atomically. `built_as` is a schema the rows are read in
    first, then cast to `schema` (for types `from_pylist` cannot build directly).

    An empty table becomes a file with the schema and no row groups (`pq.write_table` would write
    one zero-row row group, which `datasets` rejects: it sizes its read batches from the first)."""
    table = pa.Table.from_pylist(redacted(rows), schema=built_as or schema)
    if built_as is not None:
        table = table.cast(schema)

    def write(tmp: Path) -> None:
        if table.num_rows:
            pq.write_table(table, tmp)
        else:
            pq.ParquetWriter(tmp, table.schema).close()

    write_atomic(path, write)


class DatasetFolder:
    """A folder laid out as a Hugging Face dataset repository."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._written: set[str] | None = None

    def written(self) -> set[str]:
        """Paths (relative to the root, POSIX) this writer has written into the folder, over every run."""
        if self._written is None:
            try:
                data = json.loads((self.root / MANIFEST).read_text(encoding="utf-8"))
                files = data.get("files") if isinstance(data, dict) else None
                self._written = {f for f in files or [] if isinstance(f, str)}
            except (OSError, ValueError):
                self._written = set()
        return self._written

    def claim(self, path: Path) -> None:
        """List `path` in the manifest before it is written: a kill in between leaves a claim on a file
        that may not exist, never a file of ours that is not claimed."""
        rel = path.relative_to(self.root).as_posix()
        written = self.written()
        if rel not in written:
            written.add(rel)
            write_atomic(self.root / MANIFEST, json.dumps({"files": sorted(written)}, indent=2) + "\n")

    def config_path(self, config: str) -> Path:
        return self.root / "data" / config / SHARD

    def write_config(self, config: str, rows: list[dict[str, Any]], schema: pa.Schema, *,
                     built_as: pa.Schema | None = None) -> Path:
        """One config's rows as its single shard; stale shards of the config are removed."""
        path = self.config_path(config)
        self.claim(path)
        write_parquet(path, rows, schema, built_as=built_as)
        self.remove_stale(config, {path})
        return path

    def remove_stale(self, config: str, keep: set[Path]) -> None:
        """Removes the config's shards other than `keep` that utcgen wrote; warns about any other."""
        for shard in (self.root / "data" / config).glob("*.parquet"):
            if shard in keep:
                continue
            if shard.relative_to(self.root).as_posix() in self.written():
                shard.unlink(missing_ok=True)
            else:
                log.warning("%s: not written by utcgen, left in place; `datasets` reads it as part of config %r",
                            shard, config)

    def write_json(self, name: str, data: Any) -> Path:
        path = self.root / name
        self.claim(path)
        write_atomic(path, redact(json.dumps(finite(data), indent=2, ensure_ascii=False)) + "\n")
        return path

    def write_text(self, name: str, text: str | bytes) -> Path:
        """A card, a summary, a plot: any other file of the folder."""
        path = self.root / name
        self.claim(path)
        write_atomic(path, redact(text) if isinstance(text, str) else text)
        return path
