"""The local side of publishing: the exact repo tree a dataset folder uploads, checked to load.

`validate_dataset_folder` reads the card's `configs:` block the way `datasets` does, resolves every
config's data files among the files that would be uploaded, reads each parquet footer (a truncated
file, or a zero-row row group that `datasets` cannot load, is refused), and checks stats.json's
counts against the rows found. Nothing here touches the network.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow.parquet as pq
import yaml
from huggingface_hub import DatasetCard
from pyarrow import ArrowException

from ..core.errors import InputError

logger = logging.getLogger(__name__)

# Same rule `datasets` applies to split names in card YAML.
_SPLIT_RE = re.compile(r"^\w+(\.\w+)*$")


@dataclass
class _Plan:
    """The validated local side of a publish: which files go up and what they contain."""

    folder: Path
    files: list[str]  # repo-relative POSIX paths, sorted
    rows: dict[str, int] = field(default_factory=dict)  # config name -> rows in its parquet files


def _is_skipped(rel: PurePosixPath) -> bool:
    """Hidden files, editor/temp droppings and caches never belong in the repo."""
    return any(part.startswith((".", "~", "__")) or part.endswith("~") for part in rel.parts)


def collect_upload_files(folder: Path) -> list[str]:
    """The exact repo tree to upload: README.md, stats.json, data/**/*.parquet, plots/*.png."""
    files: list[str] = []
    for name in ("README.md", "stats.json"):
        if (folder / name).is_file():
            files.append(name)
    candidates = [*(folder / "data").rglob("*.parquet"), *(folder / "plots").glob("*.png")]
    for path in candidates:
        rel = PurePosixPath(path.relative_to(folder).as_posix())
        if path.is_file() and not path.is_symlink() and not _is_skipped(rel):
            files.append(str(rel))
    return sorted(set(files))


def _config_patterns(config: Any, index: int) -> tuple[str, list[str]]:
    """Return (config_name, data_files glob patterns), enforcing the shapes `datasets` accepts."""
    if not isinstance(config, dict):
        raise InputError(f"README.md: configs[{index}] must be a mapping, got {type(config).__name__}")
    name = config.get("config_name")
    if not isinstance(name, str) or not name:
        raise InputError(f"README.md: configs[{index}] has no config_name")
    data_files = config.get("data_files")
    if data_files is None:
        raise InputError(f"README.md: config {name!r} declares no data_files")
    items = [data_files] if isinstance(data_files, str) else data_files
    if not isinstance(items, list) or not items:
        raise InputError(f"README.md: config {name!r}: data_files must be a string or a non-empty list")
    patterns: list[str] = []
    for item in items:
        if isinstance(item, str):
            patterns.append(item)
            continue
        if not (isinstance(item, dict) and set(item) == {"split", "path"}):
            raise InputError(f"README.md: config {name!r}: each data_files entry must be a glob or {{split, path}}")
        split, path = item["split"], item["path"]
        if not isinstance(split, str) or not _SPLIT_RE.match(split):
            raise InputError(f"README.md: config {name!r}: invalid split name {split!r}")
        paths = [path] if isinstance(path, str) else path
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
            raise InputError(f"README.md: config {name!r}: split {split!r} path must be a glob or list of globs")
        patterns.extend(paths)
    return name, patterns


def _match(folder: Path, pattern: str, uploadable: set[str]) -> list[str]:
    """Files a data_files glob selects among those we would upload (paths are repo-relative)."""
    pure = PurePosixPath(pattern)
    if not pattern or pure.is_absolute() or ".." in pure.parts:
        raise InputError(f"README.md: data_files pattern {pattern!r} must be relative to the dataset folder")
    on_disk = {p.relative_to(folder).as_posix() for p in folder.glob(pattern) if p.is_file()}
    selected = sorted(on_disk & uploadable)
    if on_disk and not selected:
        raise InputError(
            f"README.md: data_files pattern {pattern!r} matches only files that are not uploaded "
            "(only data/**/*.parquet, excluding hidden and temporary files)"
        )
    return selected


def _parquet_rows(path: Path) -> int:
    """Read the footer: catches truncated or non-parquet files before they reach the Hub, and
    zero-row row groups (what `pq.write_table` writes for an empty table), which datasets 5.2
    cannot load: it sizes read batches from a row group and fails on 0."""
    try:
        meta = pq.read_metadata(path)
    except (ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a readable parquet file ({exc})") from None
    if any(meta.row_group(i).num_rows == 0 for i in range(meta.num_row_groups)):
        raise InputError(
            f"{path}: has an empty row group, which `datasets` cannot load; write an empty config "
            "as a file with the schema and no row groups (pq.ParquetWriter(path, schema).close())"
        )
    return int(meta.num_rows)


def validate_dataset_folder(folder: Path) -> _Plan:
    """Check the folder is a loadable Hub dataset repo: card YAML, configs resolving to parquet, stats."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"dataset folder {folder} does not exist or is not a directory")
    files = collect_upload_files(folder)
    if "README.md" not in files:
        raise InputError(f"{folder}: no README.md dataset card (is this a utcgen output folder?)")
    parquet = [f for f in files if f.endswith(".parquet")]
    if not parquet:
        raise InputError(f"{folder}: no parquet files under data/: nothing to publish")

    readme = folder / "README.md"
    try:
        card = DatasetCard(readme.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"{readme}: not UTF-8 text ({exc.reason})") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{readme}: YAML front matter does not parse: {exc}") from None
    except (ValueError, TypeError) as exc:
        raise InputError(f"{readme}: invalid card metadata: {exc}") from None
    configs = card.data.get("configs")
    if not isinstance(configs, list) or not configs:
        raise InputError(f"{readme}: front matter must declare a non-empty `configs:` list")

    uploadable = set(parquet)
    rows: dict[str, int] = {}
    for index, config in enumerate(configs):
        name, patterns = _config_patterns(config, index)
        if name in rows:
            raise InputError(f"{readme}: config {name!r} is declared twice")
        matched: set[str] = set()
        for pattern in patterns:
            selected = _match(folder, pattern, uploadable)
            if not selected:
                raise InputError(f"{readme}: config {name!r}: data_files pattern {pattern!r} matches no parquet file")
            matched.update(selected)
        rows[name] = sum(_parquet_rows(folder / f) for f in sorted(matched))
        if rows[name] == 0:
            logger.warning(
                "config %r has 0 rows: it is published, but datasets 5.2 loads an empty config only "
                "with streaming=True (non-streaming raises 'corresponds to no data')",
                name,
            )

    if "stats.json" in files:
        try:
            stats = json.loads((folder / "stats.json").read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{folder / 'stats.json'}: not valid JSON ({exc})") from None
        if not isinstance(stats, dict):
            raise InputError(f"{folder / 'stats.json'}: expected a JSON object")
        _check_stats_counts(stats, rows, folder / "stats.json")
    return _Plan(folder=folder, files=files, rows=rows)


# stats.json `counts` key -> config it describes (as written by utcgen.pipeline.export.stats).
_STATS_COUNT_KEYS = {"accepted": "dialogues", "sft_rows": "sft", "preference_rows": "preference",
                     "rejected": "rejected"}


def _check_stats_counts(stats: dict[str, Any], rows: dict[str, int], path: Path) -> None:
    """stats.json and the parquet footers must agree: a mismatch means a stale or half-written
    export, and the card would then describe data that is not in the repo."""
    counts = stats.get("counts")
    if not isinstance(counts, dict):
        return
    for key, config in _STATS_COUNT_KEYS.items():
        expected = counts.get(key)
        if isinstance(expected, int) and config in rows and rows[config] != expected:
            raise InputError(
                f"{path}: counts.{key} is {expected} but config {config!r} has {rows[config]} rows "
                "in its parquet files: re-export the dataset"
            )


def default_commit_message(rows: dict[str, int]) -> str:
    """Title like 'Upload utcgen dataset: 3 dialogues, 7 sft rows, 1 rejected'. Counts are the
    parquet footers' (checked against stats.json), so the title cannot disagree with the data."""
    parts = []
    if "dialogues" in rows:
        parts.append(f"{rows['dialogues']} dialogues")
    if "sft" in rows:
        parts.append(f"{rows['sft']} sft rows")
    parts += [f"{n} {name}" for name, n in rows.items() if name not in ("dialogues", "sft")]
    return "Upload utcgen dataset: " + ", ".join(parts)


