"""`utcgen eval compare`: several run folders side by side, one column per run.

Runs are only comparable on the same cases. The comparison reads each run's case ids from its
`dialogues.parquet` and says so, above the table and on stderr, when two runs cover different cases
(a `--limit` run beside a full one, two benchmarks): their intervals then describe different samples.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from jinja2 import FunctionLoader

from ..core.errors import InputError
from ..scenarios import names as scenario_names
from ..settings.templates import jinja_environment
from .patterns import PATTERNS
from .report import (
    DIALOGUES_FILE,
    LABELS,
    LOWER_IS_BETTER,
    METRICS_FILE,
    SCENARIO_LABELS,
    TEXT_METRICS,
    TOOL_METRICS,
    better_direction,
    markdown_table,
    metric_cell,
)
from .scenario_metrics import SCENARIO_KEYS

TEMPLATE = "compare.md.j2"
# the page's template (package data beside this module), in the Jinja set-up prompts use too
_TEMPLATES = jinja_environment(
    FunctionLoader(lambda name: files(__name__.rpartition(".")[0]).joinpath(name).read_text(encoding="utf-8")))


def read_metrics(folder: Path) -> dict[str, Any]:
    path = Path(folder) / METRICS_FILE
    if not path.is_file():
        raise InputError(f"{folder}: not an evaluation run folder (no {METRICS_FILE}); make one with `utcgen eval run`")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: unreadable metrics: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("metrics"), dict):
        raise InputError(f"{path}: no 'metrics' mapping (not written by `utcgen eval run`?)")
    return data


def case_ids(folder: Path) -> set[str] | None:
    """The ids of the cases a run reports on (dialogues.parquet), or None when the file is missing."""
    path = Path(folder) / DIALOGUES_FILE
    if not path.is_file():
        return None
    return {str(x) for x in pq.read_table(path, columns=["case_id"]).column("case_id").to_pylist()}


def coverage_warning(runs: list[Path]) -> str | None:
    """One sentence when the runs do not all cover the same cases, else None."""
    ids = [case_ids(r) for r in runs]
    known = [(r, s) for r, s in zip(runs, ids) if s is not None]
    if len(known) < 2 or all(s == known[0][1] for _, s in known):
        return None
    shared = set.intersection(*(s for _, s in known))
    sizes = " vs ".join(f"{len(s)} (`{Path(r).name}`)" for r, s in known)
    return (f"Warning: these runs cover different cases ({sizes}; {len(shared)} in common): their metrics "
            "describe different samples and are not directly comparable.")


def disjoint(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """True when both intervals are known and do not overlap."""
    if not a or not b or None in (a.get("low"), a.get("high"), b.get("low"), b.get("high")):
        return False
    return a["high"] < b["low"] or b["high"] < a["low"]


def _row(label: str, metrics: list[dict[str, Any] | None]) -> list[str]:
    base = metrics[0]
    return [label, *((metric_cell(m) if m else "–") + (" *" if i and disjoint(m, base) else "")
                     for i, m in enumerate(metrics))]


def compare(runs: list[Path]) -> str:
    """A markdown table of several runs side by side (one column per run, one row per metric); `*` marks
    a metric whose 95% interval does not overlap the first run's."""
    if not runs:
        raise InputError("compare: no run folders given")
    data = [read_metrics(Path(r)) for r in runs]
    header = ["metric", *(f"{d.get('model', '?')} ({d.get('mode', '?')})<br>`{Path(r).name}`"
                          for d, r in zip(data, runs))]
    rows = [_row(f"{LABELS[key]} ({'↓' if key in LOWER_IS_BETTER else '↑'})",
                 [d["metrics"].get(key) for d in data]) for key in (*TOOL_METRICS, *TEXT_METRICS)]
    categories = list(dict.fromkeys(c for d in data for c in (d.get("bfcl") or {})))
    for cat in categories:
        rows.append(_row(f"bfcl_acc {'(all)' if cat == 'all' else cat} (↑)", [(d.get("bfcl") or {}).get(cat)
                                                                              for d in data]))
    rows.append(["cases scored", *(str(d.get("counts", {}).get("scored", "?")) for d in data)])
    rows.append(["excluded", *(str(d.get("counts", {}).get("excluded", "?")) for d in data)])
    names = [n for n in scenario_names() if any(n in (d.get("scenarios") or {}) for d in data)]
    for name in names:
        for key in SCENARIO_KEYS:
            found = [((d.get("scenarios") or {}).get(name) or {}).get(key) for d in data]
            if any(found):
                rows.append(_row(f"{name}: {SCENARIO_LABELS.get(key, key)}{better_direction(key)}", found))
    for p in PATTERNS:
        rows.append([f"pattern: {p}", *(str(d.get("patterns", {}).get(p, "–")) for d in data)])
    return _TEMPLATES.get_template(TEMPLATE).render(warning=coverage_warning(runs), table=markdown_table(header, rows))
