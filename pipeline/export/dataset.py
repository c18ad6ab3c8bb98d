"""Export a run as a Hugging Face dataset repository: parquet configs, stats, plots, card.

The output folder can be pushed as-is (`huggingface_hub.upload_folder`) or loaded
locally with `datasets.load_dataset(<folder>, "<config>")`; the card's YAML
`configs:` block is what tells `datasets` where each config's files are.
`load_split` loads one config, empty ones included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict

from ..records import Dialogue
from .card import render_card, split_bytes
from .column_types import storage_row, storage_schema
from .flatten import dialogue_row, rejected_row
from .folder import SHARD, DatasetFolder, finite
from .lengths import length_stats
from .plots import render_plots
from .preference import pattern_counts, preference_rows
from .rows import CONFIGS, DEFAULT_SFT_FORMAT, schema
from .run_info import RunInfo
from .slicing import slice_dialogues
from .stats import compute_stats

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
    dialogues_path: Path
    sft_path: Path
    preference_path: Path
    rejected_path: Path
    stats_path: Path
    card_path: Path
    plot_paths: list[Path]


def _export_setting(run: RunInfo, key: str, default: Any) -> Any:
    """A setting of the run config's `export:` section (RunConfig.export), else `default`."""
    section = (run.config or {}).get("export") or {}
    value = section.get(key)
    return default if value is None else value


def export_dataset(
    dialogues: list[Dialogue],
    out_dir: Path,
    run: RunInfo,
    *,
    sft_format: str | None = None,
    tokenizer: str | None = None,
) -> DatasetSummary:
    """Write the dataset repository for one run into `out_dir` and say what was written.

    `sft_format` (`chat` or `json`) and `tokenizer` (a local tokenizer folder for the
    length statistics) default to the run config's `export:` section.

    Files are written by the one dataset-folder writer (`folder.DatasetFolder`): each is replaced
    atomically, so an interrupted export never leaves a
    half-written file; files may then come from two runs, which stats.json
    counts (written after the parquet) let `utcgen publish` detect.
    """
    out_dir = Path(out_dir)
    sft_format = str(sft_format or _export_setting(run, "sft_format", DEFAULT_SFT_FORMAT))
    tokenizer = tokenizer or _export_setting(run, "tokenizer", None)
    accepted = [d for d in dialogues if d.accepted]
    rejected = [d for d in dialogues if not d.accepted]
    sft = slice_dialogues(accepted, sft_format)
    preference = preference_rows(accepted, rejected, sft_format)
    rows = {
        "dialogues": [dialogue_row(d) for d in accepted],
        "sft": sft,
        "preference": preference,
        "rejected": [rejected_row(d) for d in rejected],
    }

    folder = DatasetFolder(out_dir)
    paths = {name: folder.write_config(name, [storage_row(r) for r in rows[name]], schema(name),
                                       built_as=storage_schema(schema(name))) for name in CONFIGS}

    stats = compute_stats(accepted, rejected, len(sft), run, preference=pattern_counts(preference))
    stats["sft_format"] = sft_format
    stats["lengths"] = length_stats(sft, str(tokenizer) if tokenizer else None)
    stats = finite(stats)
    stats_path = folder.write_json("stats.json", stats)
    plot_paths = [folder.write_text(f"plots/{name}", png) for name, png in render_plots(stats).items()]
    file_bytes = {name: path.stat().st_size for name, path in paths.items()}
    num_bytes = {name: split_bytes(path) for name, path in paths.items()}
    card_path = folder.write_text("README.md", render_card(stats, run, [p.name for p in plot_paths], file_bytes, num_bytes))

    return DatasetSummary(
        out_dir=out_dir,
        requested=run.requested,
        accepted=len(accepted),
        rejected=len(rejected),
        sft_rows=len(sft),
        preference_rows=len(preference),
        dialogues_path=paths["dialogues"],
        sft_path=paths["sft"],
        preference_path=paths["preference"],
        rejected_path=paths["rejected"],
        stats_path=stats_path,
        card_path=card_path,
        plot_paths=plot_paths,
    )


def load_split(out_dir: Path, name: str, cache_dir: Path | None = None) -> Any:
    """The train split of one config of an exported folder as a `datasets.Dataset`, empty configs included.

    `datasets` 5.2 refuses to build a split with no rows ("Instruction 'train'
    corresponds to no data"), so a config whose shards hold no rows is built
    from the parquet schema instead: same columns and features, zero rows.
    """
    from datasets import Dataset, Features, load_dataset

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
