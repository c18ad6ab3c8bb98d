"""Export a run as a Hugging Face dataset repository: parquet configs, stats, plots, card.

The output folder can be pushed as-is (`huggingface_hub.upload_folder`) or loaded
locally with `datasets.load_dataset(<folder>, "<config>")`; the card's YAML
`configs:` block is what tells `datasets` where each config's files are.
`load_split` loads one config, empty ones included.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from datasets import Dataset, Features, load_dataset
from pydantic import BaseModel, ConfigDict

from ..core.records import Dialogue
from .card import render_dataset_card, split_bytes
from .column_types import storage_row, storage_schema
from .flatten import dialogue_row, rejected_row
from .folder import SHARD, DatasetFolder, finite
from .lengths import Lengths
from .plots import render_plots
from .preference import preference_rows
from .quality import StreamedQuality
from .rows import CONFIGS, DEFAULT_SFT_FORMAT, schema
from .run_info import RunInfo
from .shards import SHARD_BYTES, ShardWriter
from .slicing import slice_dialogue
from .stats import StatsBuilder
from .wrong_answers import ANSWER_PATTERNS
from .wrong_turns import PATTERNS

ATTEMPTS_KEPT = 16  # rejected attempts per seed tool held for the preference config's run_attempt pattern

__all__ = ["SHARD", "DatasetSummary", "export_dataset", "finite", "load_split"]


class DatasetSummary(BaseModel):
    """What `export_dataset` wrote: counts for logs, paths for the caller."""

    model_config = ConfigDict(extra="forbid")

    out_dir: Path
    requested: int | None
    accepted: int
    rejected: int
    sft_rows: int
    preference_rows: int
    dialogues_path: Path  # the first shard of each config
    sft_path: Path
    preference_path: Path
    rejected_path: Path
    shards: dict[str, list[Path]]  # every shard of each config, in order
    stats_path: Path
    card_path: Path
    plot_paths: list[Path]


def _export_setting(run: RunInfo, key: str, default: Any) -> Any:
    """A setting of the run config's `export:` section (RunConfig.export), else `default`."""
    section = (run.config or {}).get("export") or {}
    value = section.get(key)
    return default if value is None else value


def export_dataset(
    dialogues: Iterable[Dialogue],
    out_dir: Path,
    run: RunInfo,
    *,
    sft_format: str | None = None,
    tokenizer: str | None = None,
    shard_bytes: int | None = None,
) -> DatasetSummary:
    """Write the dataset repository for one run into `out_dir` and say what was written.

    `dialogues` are read once, in order, and not kept: each one's rows go to its configs' shard
    writers (`shards.ShardWriter`, shards of `shard_bytes` Arrow bytes, default the run config's
    `export.shard_mb`) and its figures to the statistics, so the memory an export needs does not
    grow with the run. `sft_format` (`chat` or `json`) and `tokenizer` (a local tokenizer folder
    for the length statistics) default to the run config's `export:` section.

    Every file is replaced atomically by the one dataset-folder writer (`folder.DatasetFolder`),
    so an interrupted export never leaves a half-written file; files may then come from two runs,
    which stats.json counts (written after the parquet) let `utcgen publish` detect.
    """
    out_dir = Path(out_dir)
    sft_format = str(sft_format or _export_setting(run, "sft_format", DEFAULT_SFT_FORMAT))
    tokenizer = tokenizer or _export_setting(run, "tokenizer", None)
    if shard_bytes is None:
        shard_bytes = int(float(_export_setting(run, "shard_mb", SHARD_BYTES / 2**20)) * 2**20)
    folder = DatasetFolder(out_dir)
    writers = {name: ShardWriter(folder, name, schema(name), built_as=storage_schema(schema(name)),
                                 shard_bytes=shard_bytes) for name in CONFIGS}
    stats_builder, lengths = StatsBuilder(), Lengths(str(tokenizer) if tokenizer else None)
    wording = StreamedQuality(int(_export_setting(run, "fluency_turns", 0)))
    try:
        patterns = _write_rows(dialogues, writers, stats_builder, lengths, sft_format, wording)
        for writer in writers.values():  # every config fully staged before any is renamed into place
            writer.flush_all()
    except BaseException:
        for writer in writers.values():
            writer.abort()
        raise
    shards = {name: writer.finish() for name, writer in writers.items()}

    # the patterns after a tool result are counted only in a run that made some: a run without results reads as before
    after = ANSWER_PATTERNS if any(patterns[p] for p in ANSWER_PATTERNS) else ()
    stats = stats_builder.result(writers["sft"].rows, run, preference={p: patterns[p] for p in (*PATTERNS, *after)})
    stats["sft_format"] = sft_format
    stats["lengths"] = lengths.result()
    stats["quality"] = wording.result()
    stats = finite(stats)
    stats_path = folder.write_json("stats.json", stats)
    plot_paths = [folder.write_text(f"plots/{name}", png) for name, png in render_plots(stats).items()]
    card_path = _write_card(folder, stats, run, plot_paths, shards)

    return DatasetSummary(
        out_dir=out_dir,
        requested=run.requested,
        accepted=stats_builder.accepted,
        rejected=stats_builder.rejected,
        sft_rows=writers["sft"].rows,
        preference_rows=writers["preference"].rows,
        dialogues_path=shards["dialogues"][0],
        sft_path=shards["sft"][0],
        preference_path=shards["preference"][0],
        rejected_path=shards["rejected"][0],
        shards=shards,
        stats_path=stats_path,
        card_path=card_path,
        plot_paths=plot_paths,
    )


def _write_rows(dialogues: Iterable[Dialogue], writers: dict[str, ShardWriter], stats_builder: StatsBuilder,
                lengths: Lengths, sft_format: str, wording: StreamedQuality) -> Counter[str]:
    """Streams each dialogue's rows into its configs' writers and its figures into the statistics,
    keeping no dialogue but a seed tool's latest rejected attempts (the preference config's
    run_attempt pattern) and `wording`'s sample of turns; returns how many preference rows each pattern gave."""
    patterns: Counter[str] = Counter()
    # a seed tool's latest rejected attempts: a job's attempts come before its accepted dialogue
    attempts: dict[str, deque[Dialogue]] = defaultdict(lambda: deque(maxlen=ATTEMPTS_KEPT))
    for d in dialogues:
        stats_builder.add(d)
        if not d.accepted:
            writers["rejected"].add(storage_row(rejected_row(d)))
            attempts[d.seed_tool.name].append(d)
            continue
        writers["dialogues"].add(storage_row(dialogue_row(d)))
        wording.add(d)
        turns = slice_dialogue(d, sft_format)
        lengths.add_dialogue(turns)
        for turn in turns:
            writers["sft"].add(storage_row(turn))
        for pair in preference_rows([d], attempts.pop(d.seed_tool.name, ()), sft_format):
            patterns[pair.pattern] += 1
            writers["preference"].add(storage_row(pair))
    return patterns


def _write_card(folder: DatasetFolder, stats: dict[str, Any], run: RunInfo, plot_paths: list[Path],
                shards: dict[str, list[Path]]) -> Path:
    """README.md, written last: the card states each config's size on disk and in memory, read from
    the shards as renamed into place."""
    file_bytes = {name: sum(p.stat().st_size for p in paths) for name, paths in shards.items()}
    num_bytes = {name: sum(split_bytes(p) for p in paths) for name, paths in shards.items()}
    return folder.write_text("README.md", render_dataset_card(stats, run, [p.name for p in plot_paths], file_bytes, num_bytes))


def load_split(out_dir: Path, name: str, cache_dir: Path | None = None) -> Any:
    """The train split of one config of an exported folder as a `datasets.Dataset`, empty configs included.

    `datasets` 5.2 refuses to build a split with no rows ("Instruction 'train'
    corresponds to no data"), so a config whose shards hold no rows is built
    from the parquet schema instead: same columns and features, zero rows.
    """
    if name not in CONFIGS:
        raise ValueError(f"unknown config {name!r}; expected one of {', '.join(CONFIGS)}")
    shards = sorted((Path(out_dir) / "data" / name).glob("*.parquet"))
    if not shards:
        raise FileNotFoundError(f"{out_dir}: no parquet files for config {name!r}")
    if sum(pq.ParquetFile(s).metadata.num_rows for s in shards) == 0:
        schema = pq.read_schema(shards[0])
        return Dataset.from_dict({n: [] for n in schema.names}, features=Features.from_arrow_schema(schema))
    return load_dataset(
        str(out_dir), name, split="train", cache_dir=str(cache_dir) if cache_dir is not None else None
    )
