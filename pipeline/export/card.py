"""README.md, the dataset card: YAML front matter for the Hub, then a description of the data.

The text is the template `card.md.j2`. Its numbers come from stats.json's content, so
the card and stats.json cannot disagree, and its column tables from the row models'
field descriptions (`column_types.columns`), so a column is documented where it is defined.
"""

from __future__ import annotations

import inspect
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml
from datasets import Features
from jinja2 import FunctionLoader
from jinja2.sandbox import SandboxedEnvironment

from ..settings.templates import jinja_environment
from .column_types import columns
from .plots import PLOT_TITLES
from .rows import CONFIG_ROWS, CONFIGS, DEFAULT_CONFIG, schema
from .run_info import RunInfo
from .wrong_answers import ANSWER_PATTERN_DOCS
from .wrong_turns import PATTERN_DOCS

TEMPLATE = "card.md.j2"
SUMMARY_TEMPLATE = "summary.md.j2"  # included by the card
TAGS = ["tool-calling", "function-calling", "synthetic", "multi-turn", "disambiguation", "sft", "dpo", "diaforge"]


def _size_category(n: int) -> str:
    for bound, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
    ):
        if n < bound:
            return label
    return "10M<n<100M"


def rows_per_config(stats: dict[str, Any]) -> dict[str, int]:
    """Rows of each config as stats.json counts them."""
    counts = stats["counts"]
    return {"dialogues": counts["accepted"], "sft": counts["sft_rows"],
            "preference": counts.get("preference_rows", 0), "rejected": counts["rejected"]}


def features_yaml(config: str) -> list[dict[str, Any]]:
    """A config's features as the card's `dataset_info` declares them (what `datasets` reads from a card)."""
    return Features.from_arrow_schema(schema(config))._to_yaml_list()


def split_bytes(path: Path) -> int:
    """The bytes of a parquet split once loaded as an Arrow table: what `datasets` records as the
    split's `num_bytes` (and sums into `dataset_size`)."""
    shard = pq.ParquetFile(path)  # a row group at a time: a shard may be larger than memory allows
    return sum(shard.read_row_group(i).nbytes for i in range(shard.num_row_groups))


def _dataset_info(name: str, rows: int, file_bytes: int | None, num_bytes: int | None) -> dict[str, Any]:
    """One config's `dataset_info`: features, and the split's rows and sizes when known.

    `datasets` keys its local cache on these, not on the data files, so without them
    a folder re-exported after a resume would load the rows of its first load. It reads
    `splits` only when each entry has name, num_examples and num_bytes (else it warns, on
    every load, that the card is malformed), so the split is declared only with its size.
    """
    info: dict[str, Any] = {"config_name": name, "features": features_yaml(name)}
    if num_bytes is not None:
        info["splits"] = [{"name": "train", "num_bytes": num_bytes, "num_examples": rows}]
    if file_bytes is not None:
        info["download_size"] = file_bytes
    if num_bytes is not None:
        info["dataset_size"] = num_bytes
    return info


def front_matter(stats: dict[str, Any], run: RunInfo, file_bytes: dict[str, int] | None = None,
                 num_bytes: dict[str, int] | None = None) -> dict[str, Any]:
    """The card's YAML metadata; `configs:` is what tells `datasets` where each config's files are,
    `dataset_info:` the features of each (the `sft` messages and tools are `Json`, decoded on load),
    with `file_bytes` (parquet bytes per config) its download size and with `num_bytes` (Arrow bytes
    per config, `split_bytes`) its split."""
    rows = rows_per_config(stats)
    file_bytes, num_bytes = file_bytes or {}, num_bytes or {}
    return {
        "pretty_name": run.pretty_name,
        "license": run.license,
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": TAGS,
        "size_categories": [_size_category(max(rows_per_config(stats).values()))],
        "configs": [
            {
                "config_name": name,
                "data_files": [{"split": "train", "path": f"data/{name}/*.parquet"}],
                **({"default": True} if name == DEFAULT_CONFIG else {}),
            }
            for name in CONFIGS
        ],
        "dataset_info": [_dataset_info(name, rows[name], file_bytes.get(name), num_bytes.get(name)) for name in CONFIGS],
    }


def config_docs() -> list[dict[str, Any]]:
    """Per config, default first: its description and the columns it documents.

    A config whose row model extends another's documents only the columns it adds.
    """
    out = []
    for name in sorted(CONFIGS, key=lambda n: n != DEFAULT_CONFIG):
        model = CONFIG_ROWS[name]
        extends = next((n for n, m in CONFIG_ROWS.items() if m is not model and issubclass(model, m)), None)
        inherited = set(CONFIG_ROWS[extends].model_fields) if extends else set()
        out.append(
            {
                "name": name,
                "default": name == DEFAULT_CONFIG,
                "summary": inspect.cleandoc(model.__doc__ or ""),
                "extends": extends,
                "columns": [c for c in columns(model) if c.name.split(".")[0].split("[")[0] not in inherited],
            }
        )
    return out


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _rate(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:.1%}"


@lru_cache(maxsize=1)
def _templates() -> SandboxedEnvironment:
    """The card's templates (package data beside this module), in the Jinja set-up prompts use too."""
    env = jinja_environment(
        FunctionLoader(lambda name: files(__name__.rpartition(".")[0]).joinpath(name).read_text(encoding="utf-8")))
    env.filters.update(cell=_cell, rate=_rate)
    return env


def render_summary(stats: dict[str, Any]) -> str:
    """The counts and validator pass-rate tables of the card, alone (for run reports elsewhere)."""
    return _templates().get_template(SUMMARY_TEMPLATE).render(stats=stats)


def render_dataset_card(
    stats: dict[str, Any], run: RunInfo, plots: list[str], file_bytes: dict[str, int] | None = None,
    num_bytes: dict[str, int] | None = None,
) -> str:
    """README.md for an exported folder whose stats.json is `stats`, whose plots/ holds `plots`
    and whose parquet files per config weigh `file_bytes` (`num_bytes` once loaded)."""
    ks = stats["run"]["distractor_counts"]
    k_text = f"k={ks[0]}" if len(ks) == 1 else ("k=" + "/".join(map(str, ks)) if ks else "k (5 in the paper)")
    return _templates().get_template(TEMPLATE).render(
        front_matter=yaml.safe_dump(front_matter(stats, run, file_bytes, num_bytes), sort_keys=False,
                                    allow_unicode=True).rstrip(),
        run=run,
        stats=stats,
        k_text=k_text,
        plots=[(name, PLOT_TITLES.get(name, name)) for name in plots],
        configs=config_docs(),
        repo=run.repo_id or "path/to/this/folder",
        empty=[name for name, n in rows_per_config(stats).items() if n == 0],
        pattern_docs={**PATTERN_DOCS, **ANSWER_PATTERN_DOCS},
    )
