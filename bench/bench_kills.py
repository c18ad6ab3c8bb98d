"""Twenty `kill -9` during one run, each followed by a resume: nothing lost, nothing changed.

Usage: python bench/bench_kills.py [--kills 20] [--dialogues 150] [--seed 5]

Runs `utcgen generate` (offline backend) once without interruption into one folder, then
the same command into another folder, killing it with SIGKILL at random moments (after a
random number of newly journaled jobs, or a random delay) `--kills` times, resuming each
time with the same command, and finally letting it finish. Checks that the two datasets
hold the same record ids in the same order and the same contents (every field except the
creation timestamp), that no job file is left half-written, and prints the figures.
Writes bench/out/kills.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
UTCGEN = str(Path(sys.executable).parent / "utcgen")


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(UTCGEN_CACHE_DIR=str(cache), HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True",
               TOKENIZERS_PARALLELISM="false")
    env.pop("UTCGEN_MODEL", None)
    env.pop("UTCGEN_API_BASE", None)
    return env


def _cmd(out: Path, n: int, seed: int) -> list[str]:
    return [UTCGEN, "generate", "--out", str(out), "--no-progress", "--num-dialogues", str(n), "--seed", str(seed)]


def _records(out: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    rows = pq.read_table(out / "data" / "dialogues" / "train-00000-of-00001.parquet").to_pylist()
    for row in rows:
        gen = row.get("generation")
        if isinstance(gen, str):
            gen = json.loads(gen)
        if isinstance(gen, dict):
            gen.pop("created_at", None)
            row["generation"] = json.dumps(gen, sort_keys=True)
    return rows


def _jobs(out: Path) -> int:
    return len(list((out / "journal").glob("job-*.json")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--dialogues", type=int, default=150)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "kills.json")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory(prefix="utcgen-kills-") as tmp:
        work = Path(tmp)
        env = _env(work / "cache")
        started = time.monotonic()
        clean = subprocess.run(_cmd(work / "clean", args.dialogues, args.seed), cwd=ROOT, env=env,
                               capture_output=True, text=True)
        clean_s = time.monotonic() - started
        if clean.returncode != 0:
            print(clean.stderr[-3000:], file=sys.stderr)
            return 1
        print(f"uninterrupted run: {clean_s:.1f}s, {_jobs(work / 'clean')} jobs", file=sys.stderr)

        out = work / "killed"
        kills, resumes, finished_early = [], 0, 0
        started = time.monotonic()
        while len(kills) < args.kills:
            before = _jobs(out) if out.exists() else 0
            proc = subprocess.Popen(_cmd(out, args.dialogues, args.seed), cwd=ROOT, env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            resumes += 1
            # kill after 1-8 newly journaled jobs, or at a random moment of start-up
            target = before + rng.randint(1, 8)
            by_time = rng.random() < 0.25
            deadline = time.monotonic() + (rng.uniform(1.0, 8.0) if by_time else 600)
            while proc.poll() is None and time.monotonic() < deadline and (by_time or _jobs(out) < target):
                time.sleep(0.01)
            if proc.poll() is not None:  # it finished first: nothing left to interrupt
                err = proc.stderr.read().decode()
                if proc.returncode != 0:
                    print(err[-3000:], file=sys.stderr)
                    return 1
                finished_early += 1
                break
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            proc.stderr.close()
            kills.append({"after_jobs": _jobs(out), "by_time": by_time})
            print(f"kill {len(kills)}: {_jobs(out)} jobs journaled", file=sys.stderr)
        final = subprocess.run(_cmd(out, args.dialogues, args.seed), cwd=ROOT, env=env, capture_output=True,
                               text=True)
        killed_s = time.monotonic() - started
        if final.returncode != 0:
            print(final.stderr[-3000:], file=sys.stderr)
            return 1

        a, b = _records(work / "clean"), _records(out)
        same_ids = [r["id"] for r in a] == [r["id"] for r in b]
        same_contents = a == b
        # which columns differ, and in how many records: a mismatch must say where it is
        differing: dict[str, int] = {}
        for ra, rb in zip(a, b):
            for key in sorted(set(ra) | set(rb)):
                if ra.get(key) != rb.get(key):
                    differing[key] = differing.get(key, 0) + 1
                    if key == "generation":  # say which part of it
                        ga, gb = json.loads(ra[key]), json.loads(rb[key])
                        for sub in sorted(set(ga) | set(gb)):
                            if ga.get(sub) != gb.get(sub):
                                name = f"generation.{sub}"
                                differing[name] = differing.get(name, 0) + 1
                                print(f"{ra['id']} {name}: {ga.get(sub)} != {gb.get(sub)}", file=sys.stderr)
        leftovers = list((out / "journal").glob(".*.tmp"))
        result = {
            "dialogues": args.dialogues, "seed": args.seed, "kills": len(kills), "runs": resumes + 1,
            "finished_before_all_kills": bool(finished_early), "records": len(b),
            "unique_ids": len({r["id"] for r in b}), "same_ids_in_order": same_ids,
            "same_contents": same_contents, "differing_columns": differing, "temporary_files_left": len(leftovers),
            "uninterrupted_s": round(clean_s, 1), "with_kills_s": round(killed_s, 1), "kill_points": kills,
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    ok = same_ids and same_contents and not leftovers and result["unique_ids"] == args.dialogues
    print(json.dumps({k: v for k, v in result.items() if k != "kill_points"}, indent=2))
    print("OK: identical to the uninterrupted run" if ok else "MISMATCH", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
