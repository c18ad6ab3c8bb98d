"""Generation throughput over real HTTP: Engine -> Gateway -> litellm -> simulator with latency.

Usage: python bench/bench_generate.py [--latency 0.3] [--in-flight 1 32] [--dialogues 3 128]
                                      [--profile]

Every role is played by ScriptedOpenAIServer + the simulator responder (the offline
policies behind a socket), in a child process so its work does not share our GIL, with a
fixed latency per call counted from the request line; the policies run in a process of their
own, so that, as at a remote provider, their CPU does not delay the server's reading of the next
request (`reply_ms`: how far its replies ran over the latency). The simulator measures nearness
with hashed word stems, not MiniLM (`lexical_embed`): it must answer within the latency on the
same two cores as the engine. For each in-flight bound k (LLM calls; seed jobs at the default of
2k, or `--jobs`) it times `Engine.run` only (engine init and model load are excluded) and reports:

- dialogues/s: accepted dialogues / wall time;
- calls/dialogue: LLM calls charged to the dataset's dialogues (accepted and rejected
  attempts, from usage) / accepted dialogues;
- efficiency: achieved dialogues/s / (k / (calls/dialogue x latency)), i.e. 1.0 when
  every slot is busy with a useful call all the time;
- overhead ms/call: slot time not spent inside the server, per request (at k = 1, the
  client's turnaround between calls: the client, prompt building, validation, journal);
- cpu ms/call: the engine process's CPU per request, without the simulator's request recorder
  (it hashes and spools every prompt so the server can answer it; measured and left out);
- utilisation: every call the run made (including speculative jobs past the N-th
  acceptance) x latency / (k x wall): how busy the slots were, useful or not.

Then (unless `--no-faults`) one more run at the largest k against a server that injects
10% 429 (Retry-After 0.5 s), 5% 500, 5% replies slower than the 3 s timeout and 5% malformed
bodies: its throughput, retries by reason and the adaptive (AIMD) limit's trace of changes.

Writes bench/out/generate.json. `--profile` runs cProfile over the largest-k run and
prints where the engine process spends its CPU time.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import multiprocessing as mp
import os
import pstats
import sys
import tempfile
import time
import warnings
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

WARM_UP_TOOL = "bench_warm_up"
DEFAULT_DIALOGUES = {1: 3}  # at 1 in flight a dialogue takes ~10 x latency; keep it short
# Dialogues are chains of ~16 dependent calls, so a run needs ceil(N / k) chain lengths at
# least: N = 40 at k = 32 caps efficiency near 40 / 64 whatever the overheads. 16 waves of
# 32 make the run's start and end a small part of it (about 80 s at 0.3 s per call).
DEFAULT_DIALOGUES_PARALLEL = 512


# --------------------------------------------------------------------------- server process


FAULT_TIMEOUT = 3.0  # the client timeout of the faults run; its slow replies take 1 s longer


def _random_faults(seed: int = 11) -> Any:
    """10% 429 (Retry-After 0.5 s), 5% 500, 5% slower than FAULT_TIMEOUT, 5% malformed; warm-up spared."""
    import random
    import threading

    from tests.support.openai_server import Malformed, RateLimited, ServerError, Slow

    rng, lock = random.Random(seed), threading.Lock()

    def decide(request: Any) -> Any:
        if _is_warm_up(request):
            return None
        with lock:
            x = rng.random()
        return (RateLimited(0.5) if x < 0.10 else ServerError(500) if x < 0.15 else
                Slow(FAULT_TIMEOUT + 1.0) if x < 0.20 else Malformed if x < 0.25 else None)

    return decide


def lexical_embed(texts: Any) -> Any:
    """Unit vectors of hashed word stems: the simulator's stand-in for MiniLM in the offline policies'
    nearness. Those embed everything the user has said, several drafts a turn (about 50 ms of CPU a
    call on 2 cores); the server would then need more CPU than the machine has to answer 32 calls in
    300 ms, and the benchmark would time the simulator, not the engine. Same shapes, other wording."""
    import hashlib

    import numpy as np

    from utcgen.pipeline.core.text import stems

    out = np.zeros((len(texts), 384), dtype=np.float32)
    for row, text in enumerate(texts):
        for s in stems(text):
            out[row, int.from_bytes(hashlib.blake2b(s.encode(), digest_size=4).digest(), "little") % 384] += 1.0
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def _responder_setup() -> None:
    from utcgen.pipeline.retrieval import nearness

    nearness.default_embed = lexical_embed  # type: ignore[assignment]  # (lexical_embed says why)
    gc.collect()
    gc.freeze()  # the policies' tables live as long as the process: its collector need not walk them


def _respond(request: Any) -> Any:
    from tests.support.simulator import simulator_responder

    return simulator_responder(request)


def _serve(latency: float, conn: Connection, faults: bool = False) -> None:
    """Child process: run the simulator server until told to stop, then send back its traffic.

    The policies answer in a process of their own. A remote provider's compute does not hold up its
    intake of requests; in one process it would: one thread per connection shares the GIL with the
    policies' work (about 5 ms of CPU a call), and a request line waited on it before it was read."""
    from concurrent.futures import ProcessPoolExecutor

    from tests.support.openai_server import ScriptedOpenAIServer
    from tests.support.simulator import peak_overlap

    policies = ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"), initializer=_responder_setup)
    policies.submit(gc.collect).result()  # started and set up before the first request

    def responder(request: Any) -> Any:
        return policies.submit(_respond, request).result()

    with policies, ScriptedOpenAIServer(responder, latency=latency,
                                        faults=_random_faults() if faults else None) as srv:
        conn.send(srv.base_url)
        conn.recv()  # "stop"
        exchanges = [e for e in srv.exchanges if not _is_warm_up(e.request)]
        stats = {
            "requests": sum(not _is_warm_up(r) for r in srv.requests),
            "status_counts": {str(k): v for k, v in srv.status_counts.items()},
            "responder_errors": [repr(e) for e in srv.responder_errors[:3]],
            "peak_concurrency": peak_overlap((e.request.received_at, e.responded_at) for e in exchanges),
            "busy_s": round(sum(e.responded_at - e.request.received_at for e in exchanges), 3),
            "reply_ms": _quantiles([1000 * (e.responded_at - e.request.received_at) for e in exchanges]),
            "cpu_s": round(time.process_time() + policies.submit(time.process_time).result(), 3),
            "concurrency_by_decile": _deciles([(e.request.received_at, e.responded_at) for e in exchanges]),
        }
    conn.send(stats)


def _is_warm_up(request: Any) -> bool:
    from tests.support.simulator import decoded

    found = decoded(request)
    return found is not None and (found[1].get("tool") or {}).get("name") == WARM_UP_TOOL


def _quantiles(values: list[float]) -> dict[str, float]:
    """Median, 90th and 99th percentile and maximum: how far the simulator's replies run over its latency."""
    if not values:
        return {}
    ordered = sorted(values)
    at = {"p50": 0.5, "p90": 0.9, "p99": 0.99}
    out = {name: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1) for name, q in at.items()}
    return {**out, "max": round(ordered[-1], 1)}


def _deciles(spans: list[tuple[float, float]]) -> list[float]:
    """Mean number of requests being served in each tenth of the busy period."""
    if not spans:
        return []
    start, end = min(s for s, _ in spans), max(e for _, e in spans)
    width = (end - start) / 10 or 1.0
    busy = [0.0] * 10
    for s, e in spans:
        for i in range(10):
            lo, hi = start + i * width, start + (i + 1) * width
            busy[i] += max(0.0, min(e, hi) - max(s, lo))
    return [round(b / width, 1) for b in busy]


class SimulatorProcess:
    """The simulator server in a child process (spawned: no inherited torch or event-loop state)."""

    def __init__(self, latency: float, faults: bool = False) -> None:
        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe()
        # not a daemon: it starts the policies' process; `stop` (or the exit of this one) ends it
        self._proc = ctx.Process(target=_serve, args=(latency, child, faults))
        self._proc.start()
        if not self._conn.poll(60):
            raise RuntimeError("simulator server did not start within 60 s")
        self.base_url: str = self._conn.recv()

    def stop(self) -> dict[str, Any]:
        self._conn.send("stop")
        stats = self._conn.recv() if self._conn.poll(30) else {}
        self._proc.join(10)
        if self._proc.is_alive():
            self._proc.terminate()
        return stats


# --------------------------------------------------------------------------- one measurement


def run_one(in_flight: int, dialogues: int, latency: float, embedder: Any, work: Path,
            profile: bool, faults: bool = False, jobs: int | None = None) -> dict[str, Any]:
    """Generates `dialogues` accepted dialogues with `in_flight` calls (and `jobs` seed jobs, None: the
    config's default) in flight; returns the figures."""
    from tests.support import simulator
    from tests.support.simulator import SPOOL_ENV, simulator_config
    from utcgen.pipeline.core.records import Usage
    from utcgen.pipeline.llm.gateway import shutdown
    from utcgen.pipeline.settings.config import load_config
    from utcgen.pipeline.synthesis.journal import select
    from utcgen.pipeline.synthesis.run import Engine

    simulator.install()  # the engine records its requests for the simulator process to answer
    tag = f"{in_flight}{'-faults' if faults else ''}"
    # the engine records every typed request here; the simulator process reads them by prompt
    os.environ[SPOOL_ENV] = str(work / f"requests-{tag}.jsonl")
    server = SimulatorProcess(latency, faults)
    try:
        # the simulator stands in for a remote provider, whose first limit is the maximum; the low
        # start (then slow start) that a server on this machine gets would time the ramp, not the engine
        llm = {"max_in_flight": in_flight, "start_in_flight": in_flight, "timeout": max(30.0, 20 * latency)}
        if faults:
            llm.update(timeout=FAULT_TIMEOUT, max_retries=12, backoff_base=0.1, backoff_max=2.0)
        raw = simulator_config(server.base_url, num_dialogues=dialogues, out=str(work / f"out-{tag}"),
                               synthesis={"max_jobs_in_flight": jobs}, llm=llm)
        path = work / f"run-{tag}.yaml"
        path.write_text(yaml.safe_dump(raw), encoding="utf-8")
        config = load_config(path)
        init_started = time.perf_counter()
        engine = Engine(config, embedder=embedder)  # not timed: catalog load, embeddings, index
        init_s = time.perf_counter() - init_started
        profiler = cProfile.Profile() if profile else None

        async def measured() -> tuple[dict, float, float]:
            await warm_up(config)  # not timed: litellm's first call imports modules, opens the pool
            simulator.recorder_cpu_s[0] = 0.0
            cpu_started, started = time.process_time(), time.perf_counter()
            if profiler:
                profiler.enable()
            records = await engine.run()
            if profiler:
                profiler.disable()
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
            await shutdown()
            return records, wall, cpu

        try:
            records, wall, cpu = asyncio.run(measured())
            recorder = simulator.recorder_cpu_s[0]  # the simulator's bookkeeping, not utcgen's work
            run_calls, retries = engine.gateway.usage.calls, engine.gateway.retries
            retry_reasons, limits = dict(engine.gateway.retry_reasons), engine.gateway.limits.report()
        finally:
            engine.close()
    finally:
        server_stats = server.stop()

    accepted, rejected, complete = select(records, dialogues)
    if not complete:
        raise RuntimeError(f"run at {in_flight} in flight ended with {len(accepted)}/{dialogues} accepted")
    usage = Usage()
    for d in accepted + rejected:
        usage.add(d.generation.usage)
    per_dialogue = usage.calls / len(accepted)
    throughput = len(accepted) / wall
    ideal = in_flight / (per_dialogue * latency)
    result = {
        "in_flight": in_flight,
        "jobs_in_flight": config.jobs_in_flight(),
        "faults": faults,
        "dialogues": len(accepted),
        "rejected_attempts": len(rejected),
        "jobs_run": len(records),
        "engine_init_s": round(init_s, 2),
        "wall_s": round(wall, 3),
        "dialogues_per_s": round(throughput, 4),
        "calls_per_dialogue": round(per_dialogue, 2),
        "calls_total": run_calls,
        "retries": retries,
        "retry_reasons": retry_reasons,
        "limits": limits,
        "ideal_dialogues_per_s": round(ideal, 4),
        "efficiency": round(throughput / ideal, 3),
        "utilisation": round(run_calls * latency / (in_flight * wall), 3),
        "overhead_ms_per_call": round(1000 * (in_flight * wall - server_stats.get("busy_s", 0.0))
                                      / max(1, server_stats.get("requests", run_calls)), 1),
        "engine_cpu_s": round(cpu - recorder, 3),
        "engine_cpu_ms_per_call": round(1000 * (cpu - recorder) / max(1, server_stats.get("requests", run_calls)), 2),
        "recorder_cpu_s": round(recorder, 3),
        "server": server_stats,
    }
    if profiler:
        result["profile"] = _profile_text(profiler)
    return result


async def warm_up(config: Any) -> None:
    """One throwaway call through a separate gateway (its usage is not the run's); the server
    leaves it out of its figures."""
    from utcgen.pipeline.core.records import Persona, Tool
    from utcgen.pipeline.llm.gateway import Gateway
    from utcgen.pipeline.llm.registry import ModelRegistry
    from utcgen.pipeline.llm.requests import GoalRequest

    gateway = Gateway(ModelRegistry.from_config(config))
    try:
        request = GoalRequest(tool=Tool(name=WARM_UP_TOOL, description="Warms up."), persona=Persona(id="w", text="w"))
        await gateway.chat(request, [{"role": "user", "content": "warm up"}])
    finally:
        gateway.close()


def _profile_text(profiler: cProfile.Profile, top: int = 25) -> str:
    """Own CPU time grouped by package (ours vs litellm, openai, httpx...), then the hottest functions."""
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    by_package: dict[str, float] = {}
    for (filename, _, _), (_, _, own, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        by_package[_package(filename)] = by_package.get(_package(filename), 0.0) + own
    total = sum(by_package.values()) or 1.0
    out.write("own time by package:\n")
    for name, seconds in sorted(by_package.items(), key=lambda kv: -kv[1])[:15]:
        out.write(f"  {seconds:7.2f}s {100 * seconds / total:5.1f}%  {name}\n")
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    return out.getvalue()


def _package(filename: str) -> str:
    if "site-packages/" in filename:
        return filename.split("site-packages/", 1)[1].split("/", 1)[0]
    path = Path(filename)
    if ROOT in path.parents:
        return "utcgen: " + str(path.relative_to(ROOT).parts[0])
    if filename.startswith("~") or filename.startswith("<"):
        return "builtins (C: I/O wait, json, isinstance...)"
    return "stdlib: " + path.stem


# --------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.3, help="seconds the simulator takes per call")
    parser.add_argument("--in-flight", type=int, nargs="+", default=[1, 32], help="LLM calls (and jobs) in flight")
    parser.add_argument("--dialogues", type=int, nargs="+",
                        help="accepted dialogues per setting: one value for all, or one per --in-flight "
                             f"(default: {DEFAULT_DIALOGUES[1]} at 1, {DEFAULT_DIALOGUES_PARALLEL} otherwise)")
    parser.add_argument("--jobs", type=int, help="seed jobs in flight (default: the config's, 2 x calls in flight)")
    parser.add_argument("--profile", action="store_true", help="cProfile the largest in-flight run")
    parser.add_argument("--no-faults", action="store_true", help="skip the run under injected faults")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "generate.json")
    args = parser.parse_args(argv)
    if args.dialogues and len(args.dialogues) not in (1, len(args.in_flight)):
        parser.error("--dialogues takes one value or one per --in-flight value")
    counts = [args.dialogues[0] if args.dialogues and len(args.dialogues) == 1 else
              args.dialogues[i] if args.dialogues else DEFAULT_DIALOGUES.get(k, DEFAULT_DIALOGUES_PARALLEL)
              for i, k in enumerate(args.in_flight)]

    from utcgen.pipeline.retrieval.embeddings import Embedder

    # litellm leaves a provider coroutine unawaited when a job it serves is cancelled at the end.
    warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)

    with tempfile.TemporaryDirectory(prefix="utcgen-bench-") as tmp:
        work = Path(tmp)
        os.environ["UTCGEN_CACHE_DIR"] = str(work / "cache")  # the LLM cache is off; this keeps it so
        for name in ("UTCGEN_MODEL", "UTCGEN_API_BASE"):  # they would override the simulator config
            os.environ.pop(name, None)
        embedder = Embedder()  # shared, with the user embedding cache: init is excluded from timing
        biggest = max(args.in_flight)
        results = []
        for k, n in zip(args.in_flight, counts):
            print(f"running {n} dialogues at {k} in flight, latency {args.latency}s ...", file=sys.stderr)
            results.append(run_one(k, n, args.latency, embedder, work, args.profile and k == biggest, jobs=args.jobs))
            print(f"  engine init {results[-1]['engine_init_s']}s (not timed), run {results[-1]['wall_s']}s",
                  file=sys.stderr)
        if not args.no_faults:
            n = counts[args.in_flight.index(biggest)]
            print(f"running {n} dialogues at {biggest} in flight under injected faults ...", file=sys.stderr)
            results.append(run_one(biggest, n, args.latency, embedder, work, False, faults=True, jobs=args.jobs))

    print(f"\nlatency {args.latency}s per LLM call (simulator in a child process)\n")
    header = f"{'in flight':>9} {'dialogues':>9} {'wall s':>8} {'dlg/s':>8} {'calls/dlg':>9} " \
             f"{'ideal dlg/s':>11} {'efficiency':>10} {'utilisation':>11} {'peak conc':>9} {'cpu ms/call':>11} " \
             f"{'overhead ms/call':>16}"
    print(header)
    print("-" * len(header))
    for r in results:
        print(f"{str(r['in_flight']) + ('F' if r['faults'] else ''):>9} {r['dialogues']:>9} {r['wall_s']:>8.2f} {r['dialogues_per_s']:>8.3f} "
              f"{r['calls_per_dialogue']:>9.1f} {r['ideal_dialogues_per_s']:>11.3f} {r['efficiency']:>10.2f} "
              f"{r['utilisation']:>11.2f} {r['server'].get('peak_concurrency', '?'):>9} "
              f"{r['engine_cpu_ms_per_call']:>11.1f} {r['overhead_ms_per_call']:>16.1f}")
    for r in results:
        if r["faults"]:
            print(f"\nF: under injected faults (10% 429, 5% 500, 5% timeouts, 5% malformed): "
                  f"{r['retries']} retries {r['retry_reasons']}")
            for lim in r["limits"]:
                trace = " ".join(f"{t:.1f}s:{n}" for t, n, _ in lim["trace"][:40])
                print(f"AIMD limit of {lim['endpoint']}: final {lim['limit']}, range {lim['low']}-{lim['peak']} "
                      f"of {lim['maximum']}, {lim['decreases']} decreases, {lim['increases']} increases\n"
                      f"  trace (time:limit, first 40 changes): {trace}")
    for r in results:
        if "profile" in r:
            print(f"\ncProfile of the {r['in_flight']}-in-flight run (the profiler roughly doubles per-call CPU, "
                  f"so this run's figures above are not the benchmark's):\n{r['profile']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {"latency_s": args.latency, "results": [{k: v for k, v in r.items() if k != "profile"}
                                                     for r in results]}
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
