"""A large export is written in several parquet shards, named as the Hub names them, and read back whole.

The export takes its dialogues as a stream (a generator here: it can be read only once) and
cuts each config into shards of bounded Arrow size; `datasets.load_dataset(folder, config)`,
the publisher's checks and the card must see every row, and a re-export with fewer shards
must leave none of the old ones behind.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import yaml

from tests.support.factories import make_dialogue
from utcgen.pipeline.export.dataset import export_dataset, load_split
from utcgen.pipeline.export.hub import validate_dataset_folder
from utcgen.pipeline.export.run_info import RunInfo
from utcgen.pipeline.export.shards import shard_name

RUN = RunInfo(backend="offline", models={"user": "utcgen-offline/default"}, seed=0, requested=300)


def stream(n: int) -> Iterator:
    for i in range(n):
        yield make_dialogue(id=f"d{i:03d}", fail_at="toolargs" if i % 4 == 3 else None)


def test_shard_names() -> None:
    assert shard_name(0, 3) == "train-00000-of-00003.parquet"
    assert shard_name(11, 12) == "train-00011-of-00012.parquet"


def test_a_streamed_export_is_cut_into_hub_named_shards_that_load_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = export_dataset(stream(300), out, RUN, shard_bytes=20_000)  # a shard per row group
    sft = sorted(p.name for p in (out / "data" / "sft").glob("*.parquet"))
    assert len(sft) >= 3
    assert sft == [shard_name(i, len(sft)) for i in range(len(sft))]
    assert summary.shards["sft"] == [out / "data" / "sft" / name for name in sft]
    assert (summary.accepted, summary.rejected) == (225, 75)

    rows = {name: sum(pq.ParquetFile(p).metadata.num_rows for p in paths) for name, paths in summary.shards.items()}
    assert rows["dialogues"] == 225 and rows["rejected"] == 75 and rows["sft"] == summary.sft_rows > 225
    assert len(summary.shards["dialogues"]) == 2 and len(summary.shards["rejected"]) == 1
    assert validate_dataset_folder(out).rows == rows  # the card's globs and stats.json agree with the shards
    loaded = load_split(out, "dialogues", cache_dir=tmp_path / "hf")
    assert loaded["id"] == [f"d{i:03d}" for i in range(300) if i % 4 != 3]  # every shard, in order
    assert load_split(out, "sft", cache_dir=tmp_path / "hf").num_rows == summary.sft_rows

    card = (out / "README.md").read_text()
    info = yaml.safe_load(card.split("---")[1])
    sft_info = next(i for i in info["dataset_info"] if i["config_name"] == "sft")
    assert sft_info["download_size"] == sum(p.stat().st_size for p in summary.shards["sft"])

    again = export_dataset(stream(4), out, RUN)  # fewer rows: one shard each, the old ones removed
    assert sorted(p.name for p in (out / "data" / "sft").glob("*.parquet")) == [shard_name(0, 1)]
    assert again.shards["sft"] == [out / "data" / "sft" / shard_name(0, 1)]
    assert not [p for p in out.rglob("*") if p.suffix == ".part"]
