"""A fault soak: `utcgen generate` against a flaky local endpoint finishes in one invocation.

Usage: python bench/bench_faults.py [--dialogues 40] [--seed 3] [--retries 2 6]

Starts the project's OpenAI-compatible test server on 127.0.0.1 answering as a faithful model
(the simulator: what the offline backend would say, over HTTP), once without faults and then,
for each `max_retries`, with a random mix of faults over all requests: 10% 429, 5% 500, 5%
replies slower than the timeout, 5% malformed bodies, 5% empty content, 5% JSON of the wrong
shape ('"just a string"', '[1, 2, 3]', ...). Each run is one `utcgen generate` invocation
(in this process, so the simulator sees each call's typed request). Checks exactly N accepted,
no malformed turn in the accepted dialogues (a goal or turn that is empty or is itself JSON, an
assistant parse error), and reports the wall time against the fault-free run, the retries and
failed calls from stats.json, and how many accepted dialogues equal the fault-free run's.
Writes bench/out/faults.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHARES = {"rate_limited": 0.10, "server_error": 0.05, "slow": 0.05, "malformed": 0.05, "empty": 0.05,
          "wrong_shape": 0.05}
TIMEOUT_S = 2.0


def malformed_turns(dialogue: Any) -> list[str]:
    """What in an accepted dialogue is not a real turn: an empty goal or user turn, a goal or turn
    whose whole text is JSON (a bare string, a list, null, an object), an assistant parse error."""
    bad = []
    texts = [("goal", dialogue.goal)] + [(m.role, m.content) for m in dialogue.messages]
    for role, text in texts:
        if role == "assistant" and not text.strip():
            continue  # a turn that only calls a tool
        if not text.strip():
            bad.append(f"{role}: empty")
            continue
        try:
            json.loads(text)
        except ValueError:
            continue
        bad.append(f"{role}: {text[:60]!r}")
    bad += [f"assistant parse error: {m.parse_error[:60]}" for m in dialogue.messages if m.parse_error]
    return bad


def soak(root: Path, n: int, seed: int, max_retries: int, faults: bool, dialogue_seed: int = 0) -> dict[str, Any]:
    """One `utcgen generate` of `n` dialogues against the simulator (with the fault mix if `faults`)."""
    import yaml

    from tests.support.fault_mix import FaultMix
    from tests.support.openai_server import ScriptedOpenAIServer
    from tests.support.simulator import install, simulator_config, simulator_responder
    from utcgen.pipeline.cli import main
    from utcgen.pipeline.synthesis.journal import JobRecord, select

    install()  # the in-process run records its requests for the simulator to answer
    # The simulator weighs its user's words with the embedding model: load it before the clock starts, as a
    # served model is loaded before it takes calls, so no call waits on the load past the timeout
    from utcgen.pipeline.retrieval.nearness import warm
    warm()  # not an embedding of a text: one the disk cache holds would never load the model
    root.mkdir(parents=True, exist_ok=True)
    mix = FaultMix(seed=seed, slow_delay=TIMEOUT_S + 1.5, **SHARES) if faults else None
    out = root / (f"faults-r{max_retries}" if faults else "clean")
    with ScriptedOpenAIServer(simulator_responder, latency=0.01, faults=mix) as srv:
        raw = simulator_config(srv.base_url, llm={"timeout": TIMEOUT_S, "max_retries": max_retries,
                                                  "backoff_base": 0.05, "backoff_max": 1.0})
        config = root / f"{out.name}.yaml"
        config.write_text(yaml.safe_dump(raw))
        start = time.monotonic()
        code = main(["generate", "--config", str(config), "--out", str(out), "--num-dialogues", str(n),
                     "--seed", str(dialogue_seed), "--no-progress"])
        wall = time.monotonic() - start
        statuses = dict(srv.status_counts)
        requests = len(srv.requests)
    records = {r.job: r for r in (JobRecord.model_validate_json(p.read_text())
                                  for p in sorted((out / "journal").glob("job-*.json")))}
    accepted, _, _ = select(records, n)
    stats = json.loads((out / "stats.json").read_text()) if (out / "stats.json").exists() else {}
    llm = stats.get("llm") or {}
    return {
        "max_retries": max_retries, "faults": dict(mix.fired) if mix else {}, "exit_code": code,
        "accepted": len(accepted), "wall_s": round(wall, 2), "requests": requests,
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "retries": llm.get("retries"), "retry_reasons": llm.get("retry_reasons"),
        "calls_failed": llm.get("calls_failed"),
        "malformed_turns": [f"{d.id}: {b}" for d in accepted for b in malformed_turns(d)],
        "dialogues": {(d.generation.attempt, d.seed_tool.name, d.goal): [m.content for m in d.messages]
                      for d in accepted},
    }


def compare(clean: dict[str, Any], faulty: dict[str, Any]) -> int:
    """How many of the faulty run's accepted dialogues equal one of the fault-free run's, word for word."""
    return sum(clean["dialogues"].get(key) == turns for key, turns in faulty["dialogues"].items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=40)
    parser.add_argument("--seed", type=int, default=3, help="seed of the fault draws")
    parser.add_argument("--retries", type=int, nargs="+", default=[2, 6], help="llm.max_retries values to soak")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with tempfile.TemporaryDirectory(prefix="utcgen-faults-") as tmp:
        os.environ["UTCGEN_CACHE_DIR"] = str(Path(tmp) / "cache")
        soak(Path(tmp) / "warm-up", 1, args.seed, 2, faults=False)  # loads the embedding model and litellm once
        clean = soak(Path(tmp), args.dialogues, args.seed, 2, faults=False)
        runs = [soak(Path(tmp), args.dialogues, args.seed, r, faults=True) for r in args.retries]
    ok = clean["exit_code"] == 0 and clean["accepted"] == args.dialogues
    print(f"fault-free: exit {clean['exit_code']}, {clean['accepted']} accepted in {clean['wall_s']}s, "
          f"{clean['requests']} requests")
    for run in runs:
        run["slowdown"] = round(run["wall_s"] / max(clean["wall_s"], 1e-9), 2)
        run["same_as_fault_free"] = compare(clean, run)
        ok &= run["exit_code"] == 0 and run["accepted"] == args.dialogues and not run["malformed_turns"]
        print(f"max_retries {run['max_retries']}: exit {run['exit_code']}, {run['accepted']} of {args.dialogues} "
              f"accepted in one invocation, {len(run['malformed_turns'])} malformed turns, {run['wall_s']}s "
              f"({run['slowdown']}x the fault-free run), {run['requests']} requests, faults {run['faults']}, "
              f"retries {run['retries']}, calls failed through their retries {run['calls_failed']}, "
              f"{run['same_as_fault_free']} of {run['accepted']} dialogues word for word as without faults")
    for run in [clean, *runs]:
        run.pop("dialogues")
    report = {"dialogues": args.dialogues, "seed": args.seed, "shares": SHARES, "timeout_s": TIMEOUT_S,
              "fault_free": clean, "faulty": runs, "ok": ok}
    folder = ROOT / "bench" / "out"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "faults.json").write_text(json.dumps(report, indent=2))
    print(f"{'ok' if ok else 'FAILED'}: bench/out/faults.json")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
