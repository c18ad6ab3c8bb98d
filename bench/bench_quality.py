"""Data-quality figures of offline output, per catalog: one markdown table row each.

Usage: python bench/bench_quality.py [CATALOG ...] [--num-dialogues 40] [--seed 1] [--out DIR]
Default catalog: the shipped one. For each catalog, `utcgen generate` runs offline into
DIR/<catalog name> (default: a temporary folder), then the figures of `utcgen audit`'s
Quality section are computed on it. Prints a markdown table and writes bench/out/quality.json.
A catalog that fails to generate gets a row with its error, and the others still run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from utcgen.pipeline.cli import main as cli
from utcgen.pipeline.export.quality import COUNTS, TARGETS, quality
from utcgen.pipeline.export.reading import load_dialogues

COLUMNS = list(TARGETS)


def _cell(figure: dict[str, Any]) -> str:
    value = figure["value"]
    text = "-" if value is None else (f"{value:.0%}" if isinstance(value, float) else str(value))
    return text + ("" if figure["met"] is not False else " ✗")


def measure(catalog: str | None, out: Path, num: int, seed: int) -> dict[str, Any]:
    name = Path(catalog).name if catalog else "shipped"
    folder = out / name.split(".")[0]
    args = ["generate", "--out", str(folder), "--num-dialogues", str(num), "--seed", str(seed), "--no-progress"]
    args += ["--catalog", catalog] if catalog else []
    started = time.perf_counter()
    log = io.StringIO()
    with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        status = cli(args)
    if status != 0:
        return {"catalog": name, "error": log.getvalue().strip().splitlines()[-1:] or [f"exit status {status}"]}
    dialogues, _ = load_dialogues(folder)
    return {"catalog": name, "seconds": round(time.perf_counter() - started, 1), "folder": str(folder),
            "quality": quality(dialogues)}


def table(rows: list[dict[str, Any]]) -> str:
    head = ["catalog", *COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
             "| target | " + " | ".join(f"{TARGETS[c][0]} {TARGETS[c][1]:g}" if c in COUNTS else f"{TARGETS[c][0]} {TARGETS[c][1]:.0%}"
                                 for c in COLUMNS) + " |"]
    for r in rows:
        cells = [_cell(r["quality"][c]) for c in COLUMNS] if "quality" in r else [f"error: {' '.join(r['error'])}"]
        lines.append("| " + " | ".join([r["catalog"], *cells]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("catalogs", nargs="*", help="catalog files or folders (default: the shipped catalog)")
    parser.add_argument("--num-dialogues", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", help="folder for the generated output (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        rows = [measure(c, out, args.num_dialogues, args.seed) for c in (args.catalogs or [None])]
    print(table(rows))
    target = Path(__file__).resolve().parent / "out" / "quality.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps({"num_dialogues": args.num_dialogues, "seed": args.seed, "rows": rows}, indent=2))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
