"""The one scheduler: which seed jobs run next, for the engine and for the flows alike."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from utcgen.pipeline.core.errors import InputError, UtcgenError
from utcgen.pipeline.core.records import Dialogue, Usage
from utcgen.pipeline.runner import Budget, BudgetExceeded, batches, run_waves, run_window
from utcgen.pipeline.settings.config import load_config
from utcgen.pipeline.synthesis.journal import JobRecord
from utcgen.pipeline.synthesis.schedule import MAX_FRUITLESS_JOBS, SeedJobs, check_fruitless, pending


def _record(job: int, accepted: bool, reason: str | None = None, tokens: int = 0) -> JobRecord:
    final = Dialogue.model_construct(accepted=accepted, rejection_reason=reason,
                                     generation=SimpleNamespace(usage=Usage(calls=1, prompt_tokens=tokens)))
    return JobRecord.model_construct(job=job, seed_tool="t", accepted=accepted, dialogues=[final], elapsed_s=0.0)


def test_pending_starts_with_the_target_when_nothing_ran() -> None:
    assert pending({}, 6) == [0, 1, 2, 3, 4, 5]
    assert pending({}, 6, limit=2) == [0, 1]
    assert pending({}, 6, in_flight=[0, 2]) == [1, 3, 4, 5]


def test_pending_fills_gaps_first_and_plans_by_the_acceptance_rate() -> None:
    # 2 of 4 finished jobs accepted: the 2 still missing need about 4 jobs, the gap (job 1) first
    records = {0: _record(0, True), 2: _record(2, False), 3: _record(3, True), 4: _record(4, False)}
    assert pending(records, 4) == [1, 5, 6, 7]
    assert pending(records, 4, in_flight=[5]) == [1, 6, 7]
    assert pending(records, 4, limit=1) == [1]


def test_pending_is_empty_once_the_leading_jobs_hold_the_target() -> None:
    records = {job: _record(job, True) for job in range(3)}
    assert pending(records, 3) == []
    # enough accepted overall, but job 1 is missing: it is the only job left to run
    records = {0: _record(0, True), 2: _record(2, True), 3: _record(3, True)}
    assert pending(records, 3) == [1]


def test_pending_never_plans_below_the_minimum_rate() -> None:
    records = {job: _record(job, False) for job in range(5)}
    assert pending(records, 1) == list(range(5, 15))  # rate 0 is planned as 1 in 10


def test_batches_split_for_workers_and_bound_their_size() -> None:
    jobs = [0, 1, 2, 3, 4, 5]
    assert batches(jobs, 8, 1) == [jobs]
    assert batches(jobs, 2, 2) == [[0, 1], [2, 3], [4, 5]]
    assert batches(jobs, 8, 2) == [[0, 1, 2], [3, 4, 5]]
    assert batches([], 8, 2) == []


def test_check_fruitless_stops_a_run_that_never_accepts() -> None:
    records = {job: _record(job, False, "format: no thought") for job in range(MAX_FRUITLESS_JOBS)}
    with pytest.raises(UtcgenError, match=f"{MAX_FRUITLESS_JOBS}x format"):
        check_fruitless(records)
    records[3] = _record(3, True)
    check_fruitless(records)  # one acceptance: not fruitless


class _MemoryJournal:
    """The journal interface `run_waves` uses, in memory."""

    def __init__(self) -> None:
        self.records: dict[int, JobRecord] = {}

    def load(self) -> dict[int, JobRecord]:
        return dict(self.records)


def test_run_waves_runs_until_the_leading_jobs_hold_the_target_and_resumes_after_a_failure() -> None:
    journal = _MemoryJournal()
    waves: list[list[list[int]]] = []
    failed_once = False

    def run_wave(planned: list[list[int]]) -> None:
        nonlocal failed_once
        waves.append(planned)
        for batch in planned:
            for job in batch:
                if job == 1 and not failed_once:  # a batch that dies part-way: job 1 is never journaled
                    failed_once = True
                    continue
                journal.records[job] = _record(job, accepted=job % 3 != 2)

    count = run_waves(SeedJobs(journal, 4), run_wave, batch_size=2, parallelism=2)  # type: ignore[arg-type]
    assert count == len(waves) >= 2
    assert waves[0] == [[0, 1], [2, 3]]
    assert waves[1][0][0] == 1  # the gap is redone first
    leading = sorted(journal.records)
    assert [j for j in leading if journal.records[j].accepted][:4] == [0, 1, 3, 4]


def test_load_config_sets_every_role_then_single_roles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UTCGEN_MODEL", raising=False)
    cfg = load_config(None, {"num_dialogues": 3, "seed": 7}, model="openai/gpt-4o-mini",
                      models={"critic": "ollama/qwen3"})
    assert (cfg.num_dialogues, cfg.seed) == (3, 7)
    assert cfg.models.critic == "ollama/qwen3" and cfg.models.user == "openai/gpt-4o-mini"
    assert cfg.backend() == "litellm"
    assert load_config().backend() == "offline"
    monkeypatch.setenv("UTCGEN_MODEL", "openai/from-env")
    assert load_config().models.goal == "openai/from-env"
    assert load_config(model="openai/explicit").models.goal == "openai/explicit"
    with pytest.raises(InputError, match="unknown role"):
        load_config(models={"judge": "x/y"})


def test_wall_time_is_the_union_of_the_sessions_of_a_run(tmp_path) -> None:
    import json

    from utcgen.pipeline.synthesis.journal import Journal

    config = load_config(None)
    journal = Journal(tmp_path, config)
    assert journal.wall_time_s() == 0.0  # nothing written yet
    for name, started, last in [("a", 100.0, 130.0), ("b", 120.0, 150.0),  # overlapping workers
                                ("c", 400.0, 410.0),                        # a resume after a pause
                                ("d", 402.0, 405.0)]:                       # inside another
        (journal.dir / f"session-{name}.json").write_text(json.dumps({"started": started, "last": last}))
    assert journal.wall_time_s() == 60.0
    (journal.dir / "session-e.json").write_text("{broken")  # unreadable spans are skipped, never fatal
    assert journal.wall_time_s() == 60.0
    later = Journal(tmp_path, config)
    later.touch()
    assert len(list(journal.dir.glob("session-*.json"))) == 6


def test_run_waves_stops_planning_once_the_budget_would_be_passed() -> None:
    journal = _MemoryJournal()
    waves: list[list[int]] = []

    def run_wave(planned: list[list[int]]) -> None:
        waves.append([job for batch in planned for job in batch])
        for job in waves[-1]:
            journal.records[job] = _record(job, True, tokens=100)

    with pytest.raises(BudgetExceeded, match=r"would pass --max-tokens 350\. .*300 tokens.*3 of 10 dialogues") as exc:
        run_waves(SeedJobs(journal, 10), run_wave, batch_size=8, budget=Budget(max_tokens=350))  # type: ignore[arg-type]
    # one job first to learn what a job costs (100 tokens), then as many as fit at 1.25 x that: 2
    assert waves == [[0], [1, 2]] and exc.value.exit_code == 3
    # a resume with a higher budget goes on from the journal
    assert run_waves(SeedJobs(journal, 10), run_wave, batch_size=8, budget=Budget(max_tokens=10_000)) >= 1  # type: ignore[arg-type]
    assert sorted(journal.records) == list(range(10))


def test_run_window_holds_the_same_budget() -> None:
    journal = _MemoryJournal()
    started: list[int] = []

    async def run(job: int) -> JobRecord:
        started.append(job)
        await asyncio.sleep(0)
        journal.records[job] = record = _record(job, True, tokens=100)
        return record

    with pytest.raises(BudgetExceeded, match="--max-tokens 350"):
        asyncio.run(run_window(SeedJobs(journal, 10), run, window=8, budget=Budget(max_tokens=350)))  # type: ignore[arg-type]
    assert started == [0, 1, 2]


def test_the_running_ledger_plans_and_stops_as_a_pass_over_every_record_would() -> None:
    """SeedJobs keeps running totals fed one finished job at a time (O(1) a job, not a pass over every
    record); at every step of a run with gaps, out-of-order finishes and a same-reason streak, its plan,
    completeness and stop decision equal those computed from the records afresh."""
    import random

    from utcgen.pipeline.synthesis.schedule import Ledger, RunStopped, leading_accepted

    rng = random.Random(7)
    work = SeedJobs(_MemoryJournal(), target=60, stop_after=6)  # type: ignore[arg-type]
    records: dict = {}
    stops = 0
    order = list(range(120))
    rng.shuffle(order)  # finishes out of job order leave gaps that close later
    for step, job in enumerate(order):
        streak = 80 <= step < 86  # six in a row rejected for one reason: the same-reason stop
        record = _record(job, not streak and rng.random() < 0.6, "toolcall: wrong tool" if streak else "format: x")
        record.finished_at = float(step)
        records[job] = record
        work.tally(SimpleNamespace(accepted=0, rejected=0, usage=Usage(), note=""), record)  # as run_window does
        fresh = SeedJobs(_MemoryJournal(), target=60, stop_after=6)  # type: ignore[arg-type]
        assert work.plan(records, [], 8) == fresh.plan(records, [], 8) == pending(records, 60, limit=8)
        assert work.complete(records) == (leading_accepted(records, 60) >= 60)
        outcomes = []
        for judge in (work, fresh):
            try:
                judge.check(records)
                outcomes.append(None)
            except RunStopped as exc:
                outcomes.append(str(exc))
        assert outcomes[0] == outcomes[1]
        stops += outcomes[0] is not None
        assert work.ledger is not fresh.ledger and work.ledger.jobs == len(records)  # still the running one
    assert stops  # the streak was seen as one
    assert Ledger.of(records).accepted == work.ledger.accepted == sum(r.accepted for r in records.values())
