"""How a whole offline run grows with N: wall time, peak memory, journal and dataset sizes.

Usage: python bench/bench_scale.py [--n 200 1600] [--repeat 1]
Runs `utcgen generate --num-dialogues N --no-progress` into a fresh temporary folder for
each N (a child process, so each figure is the peak resident memory of that run alone, read
from `wait4`'s rusage), and writes bench/out/scale.json. The memory the run needs should not
grow with N: the runner keeps job summaries and the export streams the journal into shards.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def one_run(n: int) -> dict[str, float]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    with tempfile.TemporaryDirectory(prefix="utcgen-scale-") as tmp:
        out = Path(tmp) / "out"
        start = time.perf_counter()
        proc = subprocess.Popen([str(BIN / "utcgen"), "generate", "--num-dialogues", str(n), "--out", str(out),
                                 "--no-progress"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if status != 0:
            raise SystemExit(f"utcgen generate --num-dialogues {n} failed: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
        shards = sorted(p.name for p in (out / "data" / "sft").glob("*.parquet"))
        return {"wall_s": wall, "peak_rss_mb": usage.ru_maxrss / 1024, "jobs": len(list((out / "journal").glob("job-*.json"))),
                "journal_mb": folder_bytes(out / "journal") / 2**20, "data_mb": folder_bytes(out / "data") / 2**20,
                "sft_shards": len(shards)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="+", default=[200, 1600])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    figures: dict[str, dict[str, float]] = {}
    for n in args.n:
        runs = [one_run(n) for _ in range(args.repeat)]
        figures[str(n)] = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        print(n, json.dumps(figures[str(n)]), flush=True)
    sizes = sorted(figures, key=int)
    if len(sizes) > 1:
        figures["ratio_peak_rss"] = {"of": f"{sizes[-1]}/{sizes[0]}",
                                     "value": figures[sizes[-1]]["peak_rss_mb"] / figures[sizes[0]]["peak_rss_mb"]}
    out = Path(__file__).parent / "out"
    out.mkdir(exist_ok=True)
    (out / "scale.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
