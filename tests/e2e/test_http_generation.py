"""Whole generation runs over real HTTP: Engine and CLI -> litellm -> ScriptedOpenAIServer simulator.

The simulator answers every role as the offline backend would; a fault plan layered on
top breaks specific dialogues (unparseable reply, missing thought, wrong tool, failing
judge) and injects transport faults (429 + Retry-After, 5xx, a non-JSON 200, a reply
slower than the timeout). The run must absorb the transport faults by retrying, reject
exactly the broken dialogues for the right reason, and still deliver N accepted ones.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest
import yaml

from tests.support.openai_server import (
    ChatRequest,
    FaultPlan,
    Malformed,
    RateLimited,
    Reply,
    ScriptedOpenAIServer,
    ServerError,
    Slow,
)
from tests.support.paths import REPO
from tests.support.simulator import (
    SPOOL_ENV,
    FaultLog,
    decoded,
    for_job,
    merged,
    peak_overlap,
    recording_command,
    role_is,
    simulator_config,
    simulator_responder,
    spool_env,
)
from utcgen.pipeline.settings.config import load_config
from utcgen.pipeline.synthesis.journal import JobRecord, select
from utcgen.pipeline.synthesis.run import Engine

pytestmark = pytest.mark.slow  # real servers, a full engine, a subprocess

N = 4
TIMEOUT = 1.5
RETRY_AFTER = 1.0


def write_config(path: Path, base_url: str, out: Path, **overrides: Any) -> Path:
    raw = merged(simulator_config(
        base_url, num_dialogues=N, out=str(out),
        synthesis={"max_jobs_in_flight": 4, "speculate": False},  # every request accounted for, none cancelled
        llm={"timeout": TIMEOUT, "backoff_base": 0.1, "backoff_max": 0.5, "max_in_flight": 8},
    ), overrides)
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def job_predicate(engine: Engine, job: int, **kwargs: Any):
    seed = engine.seed_for(job, 1)
    return for_job(seed.tool.name, [c.name for c in seed.candidates], **kwargs)


def content_faults(engine: Engine, plan: FaultPlan) -> dict[int, str]:
    """Breaks the first attempt of jobs 0-3, one way each; returns job -> wrong tool (job 2)."""
    first_selection = {"role": "assistant", "phase": "tool_selection", "turn": 1}
    # Job 0: the assistant's first turn is not JSON, every time it is re-asked (reply_retries=2).
    plan.when(job_predicate(engine, 0, **first_selection),
              Reply('Sure! {"thought": "which queue do they mean", "content": "Which one'), times=3)
    # Job 1: a well-formed reply without the private thought.
    plan.when(job_predicate(engine, 1, **first_selection),
              Reply(json.dumps({"content": "Which of these tasks do you need?", "tool_calls": []})))
    # Job 2: the assistant commits to a distractor at once.
    wrong = engine.seed_for(2, 1).distractors[0].name
    plan.when(job_predicate(engine, 2, **first_selection),
              Reply(json.dumps({"thought": f"Clearly {wrong}.", "content": "",
                                "tool_calls": [{"name": wrong, "arguments": {}}]})))
    # Job 3: the relevancy judge's endpoint refuses the request (not retryable).
    plan.when(job_predicate(engine, 3, role="relevancy"), ServerError(400, "scripted: context too long"))
    return {2: wrong}


def transport_faults(plan: FaultPlan) -> None:
    """Retryable faults on whichever requests of a role come first."""
    plan.when(role_is("critic"), RateLimited(RETRY_AFTER))
    plan.when(role_is("goal"), ServerError(500), times=2)
    plan.when(role_is("user"), ServerError(503))
    plan.when(role_is("relevancy"), Malformed)
    plan.when(role_is("slots"), Slow(TIMEOUT + 1.5))


def retried(requests: list[ChatRequest], index: int) -> ChatRequest | None:
    """The first later request carrying exactly the same call (body and state) as `index`."""
    failed = requests[index]
    return next((r for r in requests[index + 1:] if r.body == failed.body
                 and decoded(r) == decoded(failed)), None)


def verdict(record: JobRecord, attempt: int, validator: str) -> dict[str, Any]:
    d = record.dialogues[attempt]
    return next(v.model_dump() for v in d.validation if v.validator == validator)


def test_generation_over_http_survives_faults_and_rejects_the_broken(simulated_gateway: None,
        tmp_path: Path, clean_env: Path, embedder: Any) -> None:
    import datasets

    plan = FaultPlan()
    log = FaultLog(plan)
    out = tmp_path / "out"
    with ScriptedOpenAIServer(simulator_responder, latency=0.02, faults=log) as srv:
        config = load_config(write_config(tmp_path / "run.yaml", srv.base_url, out))
        assert config.backend() == "litellm" and not config.llm.cache
        engine = Engine(config, embedder=embedder)
        try:
            wrong = content_faults(engine, plan)
            transport_faults(plan)
            records = asyncio.run(engine.run())
            summary = engine.export(records)
            retries, calls = engine.gateway.retries, engine.gateway.usage.calls
        finally:
            engine.close()
        requests, exchanges, statuses = srv.requests, srv.exchanges, srv.status_counts
        responder_errors = srv.responder_errors

    assert responder_errors == []
    accepted, rejected, complete = select(records, N)
    assert complete and len(accepted) == N and summary.accepted == N

    # Every transport fault fired and its call was sent again, unchanged.
    assert statuses[429] == 1 and statuses[500] == 2 and statuses[503] == 1
    transient = log.transient()
    assert {type(log.fired[i]) for i in transient} == {RateLimited, ServerError, Malformed, Slow}
    for index in transient:
        assert retried(requests, index) is not None, f"{log.fired[index]} on request {index} never retried"
    assert retries == len(transient)
    [refused] = [i for i, f in log.items() if isinstance(f, ServerError) and f.status == 400]
    assert retried(requests, refused) is None  # a 4xx is final
    limited = log.of_type(RateLimited)[0]
    answered = next(e for e in exchanges if e.request.index == limited)
    assert retried(requests, limited).received_at - answered.responded_at >= RETRY_AFTER

    # Each broken first attempt was rejected for its own reason; the second attempt made it.
    for job in range(4):
        assert records[job].accepted and len(records[job].dialogues) >= 2, job
        assert not records[job].dialogues[0].accepted
    reasons = {job: records[job].dialogues[0].rejection_reason or "" for job in range(4)}
    assert reasons[0].startswith("format:") and "could not be parsed" in reasons[0]
    assert verdict(records[0], 0, "format")["details"]["rule"] == "parse_error"
    assert reasons[1].startswith("format:") and "has no thought" in reasons[1]
    assert verdict(records[1], 0, "format")["details"]["rule"] == "no_thought"
    seed_tool = records[2].seed_tool
    assert reasons[2] == f"selection: wrong tool selected: '{wrong[2]}' instead of '{seed_tool}'"
    assert reasons[3].startswith("relevancy:") and "BadRequestError" in reasons[3]
    assert verdict(records[3], 0, "relevancy")["details"]["error"] == "llm"
    broken = {records[job].dialogues[0].id: reasons[job] for job in range(4)}
    assert broken.items() <= {d.id: d.rejection_reason for d in rejected}.items()

    # Every call went over HTTP with its state; nothing came from the offline provider.
    assert all(decoded(r) is not None and r.model == "sim" for r in requests)
    assert {d.generation.backend for d in accepted} == {"litellm"}
    billed = sum(d.generation.usage.calls for r in records.values() for d in r.dialogues)
    assert billed == calls  # every successful call is charged to exactly one dialogue
    assert calls == len(requests) - len(transient) - 1  # failed attempts (and the 400) are not

    # The exported repository loads with `datasets`.
    hf = tmp_path / "hf"
    sft = datasets.load_dataset(str(out), "sft", cache_dir=str(hf))["train"]
    assert len(sft) == summary.sft_rows > 0
    assert {row["dialogue_id"] for row in sft} == {d.id for d in accepted}
    completion = sft[0]["completion"][0]  # chat format: the thought as reasoning_content
    assert completion["role"] == "assistant" and {"content", "reasoning_content"} <= set(completion)
    exported = datasets.load_dataset(str(out), "rejected", cache_dir=str(hf))["train"]
    exported_reasons = dict(zip(exported["id"], exported["rejection_reason"]))
    assert broken.items() <= exported_reasons.items()


def _contents(records: dict[int, JobRecord]) -> dict[int, list[Any]]:
    """Each job's attempts as data, without the fields that say when they ran."""
    return {job: [d.model_dump(mode="json", exclude={"created_at", "generation"}) for d in r.dialogues]
            for job, r in records.items()}


def test_speculation_changes_when_attempts_run_never_what_the_dataset_holds(simulated_gateway: None, tmp_path: Path, embedder: Any) -> None:
    """Job 1's assistant never writes JSON, so its five attempts are all rejected: in the run's tail
    it starts its later attempts early. Spare jobs past the prefix start too. The records are those of
    a run without speculation, and every call made is either in a record or counted as discarded."""
    runs, overlapping = {}, {}
    with ScriptedOpenAIServer(simulator_responder, latency=0.05, faults=FaultPlan()) as srv:  # one api_base: one fingerprint
        for speculate in (False, True):
            out = tmp_path / f"out-{speculate}"
            config = load_config(write_config(tmp_path / f"run-{speculate}.yaml", srv.base_url, out,
                                              synthesis={"max_jobs_in_flight": 4, "speculate": speculate}))
            engine = Engine(config, embedder=embedder)
            first_request = len(srv.requests)
            job_1 = job_predicate(engine, 1)
            try:
                if not speculate:
                    srv.faults.when(job_predicate(engine, 1, role="assistant"),  # type: ignore[union-attr]
                                    Reply("no JSON here"), times=10_000)
                records = asyncio.run(engine.run())
                summary = engine.export(records)
                calls = engine.gateway.usage.calls
            finally:
                engine.close()
            stats = json.loads(summary.stats_path.read_text())
            billed = sum(d.generation.usage.calls for r in records.values() for d in r.dialogues)
            assert billed + stats["llm"]["discarded"]["calls"] == calls
            accepted, _, complete = select(records, N)
            assert complete and not records[1].accepted and len(records[1].dialogues) == 5
            runs[speculate] = (_contents(records), [d.id for d in accepted])
            # job 1's calls at the server: a goal call opens each attempt; one attempt makes one call at a time
            mine = [e for e in srv.exchanges if e.request.index >= first_request and job_1(e.request)]
            assert [decoded(e.request)[0] for e in mine].count("goal") == 5  # type: ignore[index]
            overlapping[speculate] = peak_overlap((e.request.received_at, e.responded_at) for e in mine)
    # several attempts of the job talking at once: only with speculation
    assert overlapping[False] == 1 and overlapping[True] > 1, overlapping
    (plain, plain_ids), (hedged, hedged_ids) = runs[False], runs[True]
    assert hedged_ids == plain_ids
    assert {job: hedged[job] for job in plain} == plain  # the jobs both ran are the same, attempt by attempt


def test_cli_generate_against_the_simulator(tmp_path: Path, clean_env: Path) -> None:
    plan = FaultPlan().when(role_is("user"), ServerError(502), times=2).when(role_is("goal"), RateLimited(0.2))
    out = tmp_path / "out"
    with ScriptedOpenAIServer(simulator_responder, latency=0.01, faults=plan) as srv:
        config = write_config(tmp_path / "run.yaml", srv.base_url, out)
        env = {**os.environ, "UTCGEN_CACHE_DIR": str(clean_env), "HF_HUB_OFFLINE": "1",
               "LITELLM_LOCAL_MODEL_COST_MAP": "True", "TOKENIZERS_PARALLELISM": "false",
               "PYTHONWARNINGS": "always", **spool_env(tmp_path / "requests.jsonl")}
        # the CLI as a user runs it, with the simulator's request recorder installed in its process
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(SPOOL_ENV, str(tmp_path / "requests.jsonl"))
            result = subprocess.run(
                recording_command("generate", "--config", str(config), "--out", str(out), "--no-progress"),
                cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        requests, statuses = srv.requests, srv.status_counts

    assert result.returncode == 0, result.stderr[-3000:]
    assert f"done: {N} accepted" in result.stderr
    assert "backend litellm" in result.stderr
    # A clean exit: litellm's callbacks drained and its connections closed before the loop ends.
    assert "Task was destroyed" not in result.stderr and "unclosed" not in result.stderr, result.stderr[-3000:]
    assert statuses[502] == 2 and statuses[429] == 1 and statuses[200] > 0
    assert requests and all(decoded(r) is not None for r in requests)
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert stats["counts"]["accepted"] == N
    run = json.loads((out / "journal" / "run.json").read_text(encoding="utf-8"))
    assert set(run["config"]["models"].values()) == {"openai/sim"}


# --------------------------------------------------------------------------- runs that must stop


def test_a_server_that_stays_down_stops_the_run_and_the_rerun_finishes(simulated_gateway: None,
        tmp_path: Path, clean_env: Path, embedder: Any) -> None:
    from utcgen.pipeline.llm.gateway import LLMFatalError

    out = tmp_path / "out"
    # abort_after_failures 1: the first call out of retries counts as the endpoint being down
    overrides = {"synthesis": {"max_jobs_in_flight": 1}, "llm": {"max_retries": 1, "abort_after_failures": 1}}
    plan = FaultPlan()
    with ScriptedOpenAIServer(simulator_responder, latency=0.01, faults=plan) as srv:
        config = load_config(write_config(tmp_path / "run.yaml", srv.base_url, out, **overrides))
        engine = Engine(config, embedder=embedder)
        try:
            plan.when(job_predicate(engine, 2), ServerError(503), times=None)  # every call of job 2, every try
            gave_up = r"ServiceUnavailable.*\(scripted\)\. Gave up after 2 tries.*re-running the same command"
            with pytest.raises(LLMFatalError, match=gave_up):
                asyncio.run(engine.run())
            kept = {job: engine.journal.path(job).read_bytes() for job in engine.journal.load()}
        finally:
            engine.close()
    assert sorted(kept) == [0, 1]  # finished jobs kept; job 2 is not journaled as a rejection

    with ScriptedOpenAIServer(simulator_responder, latency=0.01) as srv:
        config = load_config(write_config(tmp_path / "run.yaml", srv.base_url, out, **overrides))
        # The restarted server listens on another port: a changed api_base, resumed into on purpose.
        engine = Engine(config, embedder=embedder, allow_config_change=True)
        try:
            records = asyncio.run(engine.run())
            redone = [r for r in srv.requests if job_predicate(engine, 0)(r) or job_predicate(engine, 1)(r)]
            again = {job: engine.journal.path(job).read_bytes() for job in kept}
        finally:
            engine.close()
    accepted, _, complete = select(records, N)
    assert complete and len(accepted) == N
    assert records[2].accepted and all("503" not in (d.rejection_reason or "") for d in records[2].dialogues)
    assert redone == [] and again == kept


def test_a_rejected_key_stops_the_run_at_the_first_call(simulated_gateway: None, tmp_path: Path, clean_env: Path, embedder: Any) -> None:
    from utcgen.pipeline.llm.gateway import LLMFatalError

    out = tmp_path / "out"
    with ScriptedOpenAIServer(simulator_responder, faults=FaultPlan.always(ServerError(401, "bad key"))) as srv:
        config = load_config(write_config(tmp_path / "run.yaml", srv.base_url, out))
        engine = Engine(config, embedder=embedder)
        try:
            with pytest.raises(LLMFatalError, match="bad key.*credentials"):
                asyncio.run(engine.run())
            journaled = engine.journal.load()
        finally:
            engine.close()
        statuses = [e.status for e in srv.exchanges]  # chat calls only, not the probe's GET /models
    assert journaled == {}
    assert set(statuses) == {401} and len(statuses) <= config.synthesis.max_jobs_in_flight  # no retries
