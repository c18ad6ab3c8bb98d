"""Which seed jobs to run next, and when a generation run stops: `utcgen generate` and the flows.

The dataset is the first N accepted dialogues by job number (`journal.select`), so the
jobs worth running are the lowest-numbered ones not yet journaled, and only as many as
are likely to be needed: the shortest prefix of job numbers whose finished jobs plus the
expected yield of its unfinished ones reaches N. The yield is the acceptance rate seen
so far (1.0 before any job ends, never taken below `MIN_RATE`). A gap left by a failed
or killed job is the lowest unfinished number, so it is always redone first.

`SeedJobs` hands this to the runner (`runner.run_window` for `Engine.run`, `runner.run_waves`
for an orchestrator that runs batches of jobs elsewhere: Prefect tasks, Dask workers), which
adds the budget. Nothing here knows how a job is run.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ...validators.base import Judge
from ...validators.cascade import stage as cascade_stage
from ..core.errors import UtcgenError
from ..core.records import Dialogue, Usage
from ..runner import RunProgress, RunStopped
from .journal import JobRecord, Journal

MIN_RATE = 0.1  # a run accepting fewer than 1 in 10 still plans as if 1 in 10
MAX_FRUITLESS_JOBS = 20  # default of synthesis.stop_after_same_rejections


def pending(records: Mapping[int, Job], n: int, in_flight: Collection[int] = (), limit: int | None = None,
            spare: bool = False, ledger: Ledger | None = None) -> list[int]:
    """The next jobs to start, lowest first: unfinished, not in flight, inside the prefix
    expected to yield `n` accepted dialogues; at most `limit` of them. With `spare` (the end of a
    run) the prefix reaches two standard deviations further, so the jobs that stand in for the ones
    still in flight that fail start now, not after they fail. `ledger`: the run's totals of `records`."""
    ledger = ledger or Ledger.of(records)
    if min(ledger.leading(records), n) >= n:
        return []
    rate = max(MIN_RATE, ledger.accepted / ledger.jobs) if ledger.jobs else 1.0
    busy = set(in_flight)
    margin = 2 * math.sqrt(len(busy) * rate * (1 - rate)) if spare else 0.0
    # jobs below the ledger's prefix have all finished: the walk starts after them
    expected, jobs, job = float(ledger.prefix_accepted), [], ledger.prefix
    while expected < n + margin - 1e-9 and (limit is None or len(jobs) < limit):  # 1e-9: ten 0.1s make 1
        if job in records:
            expected += records[job].accepted
        else:
            expected += rate
            if job not in busy:
                jobs.append(job)
        job += 1
    return jobs


# Rule codes of the validators (details["rule"]) -> reason category.
_RULE_CATEGORY = {
    "parse_error": "unparseable reply", "no_thought": "format violation", "no_reply": "format violation",
    "no_phase": "format violation", "multiple_calls": "format violation", "call_name": "format violation",
    "call_arguments": "format violation", "user_empty": "format violation", "user_tool_calls": "format violation",
    "empty": "format violation", "first_not_user": "format violation", "alternation": "format violation",
    "last_not_assistant": "format violation",
    "no_final_call": "no final tool call", "no_call": "no final tool call",
    "wrong_tool": "wrong tool selected", "not_candidate": "wrong tool selected", "hallucinated": "wrong tool selected",
    "earlier_distractor": "premature tool call", "earlier_unknown": "premature tool call",
    "value_mismatch": "wrong argument value", "missing_key": "wrong argument set", "extra_key": "wrong argument set",
    "schema": "schema violation", "llm_error": "model call failed",
}


def rejection_category(dialogue: Dialogue) -> tuple[str, str]:
    """(stage, category) of a rejected dialogue, from its first failing verdict: a small fixed set
    of categories (unparseable reply, wrong tool selected, wrong argument value, schema violation,
    judge: off-topic, ...), so that failures group by kind, not by their wording."""
    failed = next((v for v in dialogue.validation if not v.passed), None)
    if failed is None:
        stage = (dialogue.rejection_reason or "?").split(":", 1)[0]
        return stage, "unknown"
    stage, reason, details = failed.validator, failed.reason.lower(), failed.details
    if isinstance(judge := cascade_stage(stage), Judge):
        if details.get("error") == "llm":
            return stage, "judge: model call failed"
        if details.get("error") == "unparseable":
            return stage, "judge: unparseable reply"
        return stage, f"judge: {judge.rejects_as}"
    if (rule := details.get("rule")) in _RULE_CATEGORY:
        return stage, _RULE_CATEGORY[rule]
    if stage == "selection":  # the loop's own check: the committing call named another tool
        return stage, "wrong tool selected"
    if stage == "synthesis":
        if reason.startswith("unusable model reply"):
            return stage, "schema violation" if "failed their schema" in reason else "unparseable reply"
        return stage, "model call refused"
    return stage, "other"


class JobSummary(BaseModel):
    """What planning and the stop rules need of a finished job, without its dialogues: a run keeps
    these in memory (a few hundred bytes a job), never the records (about 150 KB a job)."""

    job: int
    seed_tool: str
    accepted: bool
    attempts: int
    finished_at: float | None = None
    usage: Usage
    rejections: list[tuple[str, str]]  # (stage, category) of each rejected attempt, in order
    final_reason: str | None = None  # the last attempt's rejection reason

    @classmethod
    def of(cls, record: JobRecord | JobSummary) -> JobSummary:
        if isinstance(record, JobSummary):
            return record
        return cls(job=record.job, seed_tool=record.seed_tool, accepted=record.accepted,
                   attempts=len(record.dialogues), finished_at=record.finished_at,
                   usage=Usage.total(d.generation.usage for d in record.dialogues),
                   rejections=rejections_of(record),
                   final_reason=record.final.rejection_reason)


Job = JobRecord | JobSummary


def rejections_of(record: Job) -> list[tuple[str, str]]:
    """(stage, category) of each rejected attempt of a job, in order."""
    if isinstance(record, JobSummary):
        return record.rejections
    return [rejection_category(d) for d in record.dialogues if not d.accepted]


def job_usage(record: Job) -> Usage:
    return record.usage if isinstance(record, JobSummary) else Usage.total(d.generation.usage for d in record.dialogues)


def attempts_in(record: Job) -> int:
    return record.attempts if isinstance(record, JobSummary) else len(record.dialogues)


class Ledger:
    """Running totals of a run's finished jobs, each counted once as it finishes, so that planning and
    the stop rules cost O(1) a finished job, not a pass over every record (at 20,000 jobs those passes
    took 30 ms a finished job; at a million, days of CPU). Records only ever grow during a run."""

    def __init__(self, stop_after: int = MAX_FRUITLESS_JOBS) -> None:
        self.jobs = self.accepted = self.attempts = 0
        self.prefix = self.prefix_accepted = 0  # jobs 0 .. prefix-1 have all finished, with this many accepted
        self.recent: deque[Job] = deque(maxlen=max(1, stop_after))  # the last to finish, oldest first
        self._counted = bytearray()  # job -> 1 once counted

    @classmethod
    def of(cls, records: Mapping[int, Job], stop_after: int = MAX_FRUITLESS_JOBS) -> Ledger:
        """The totals of `records`, fed in order of completion (journaled jobs without a completion time
        first, in job order)."""
        ledger = cls(stop_after)
        for record in sorted(records.values(), key=lambda r: (r.finished_at or 0.0, r.job)):
            ledger.add(record)
        return ledger

    def add(self, record: Job) -> None:
        job = record.job
        if job >= len(self._counted):
            self._counted.extend(bytes(job + 1 - len(self._counted) + 4096))
        elif self._counted[job]:
            return
        self._counted[job] = 1
        self.jobs += 1
        self.accepted += record.accepted
        self.attempts += attempts_in(record)
        self.recent.append(record)

    def leading(self, records: Mapping[int, Job]) -> int:
        """Accepted dialogues of jobs 0, 1, ... up to the first gap in `records` (`leading_accepted`)."""
        while self.prefix in records:
            self.prefix_accepted += records[self.prefix].accepted
            self.prefix += 1
        return self.prefix_accepted


def summaries(journal: Journal) -> dict[int, JobSummary]:
    """Every finished job's summary, the records read one at a time."""
    return {s.job: s for s in (JobSummary.of(r) for r in journal.each())}


def leading_accepted(records: Mapping[int, Job], n: int) -> int:
    """Accepted dialogues of jobs 0, 1, ... up to the first gap, counted up to n (`select`'s count)."""
    return min(Ledger().leading(records), n)


def check_fruitless(records: Mapping[int, Job], stop_after: int = MAX_FRUITLESS_JOBS,
                    ledger: Ledger | None = None) -> None:
    """Stops a run that is burning calls for nothing (e.g. a model that never follows the format).

    It stops when the last `stop_after` jobs to finish (in order of completion; journaled jobs
    without a completion time count in job order, first) were all rejected, their final attempts
    for the same reason category. 0 = never. The message groups every rejected attempt of the
    run by stage and category."""
    if stop_after <= 0 or len(records) < stop_after:
        return
    recent = list((ledger or Ledger.of(records, stop_after)).recent)[-stop_after:]
    if any(r.accepted for r in recent):
        return
    categories = {rejections_of(r)[-1] for r in recent}
    if len(categories) != 1:
        return
    (stage, category), = categories
    counts = Counter(c for r in records.values() for c in rejections_of(r))
    top = "; ".join(f"{count}x {s} / {c}" for (s, c), count in counts.most_common(5))
    last = recent[-1]
    reason = last.final_reason if isinstance(last, JobSummary) else last.final.rejection_reason
    example = " ".join((reason or "").split())[:200]
    raise RunStopped(
        f"stopped: the last {stop_after} seed jobs to finish were all rejected at stage '{stage}' for the same "
        f"reason ({category}); the model or prompts are failing the same way every time. Rejected attempts so "
        f"far by stage / reason: {top}. Latest: {example}. Finished jobs are kept; fix the cause and re-run the "
        "same command, or set synthesis.stop_after_same_rejections (0 = never stop)."
    )


class AcceptanceStop(RunStopped):
    """The run accepts too few of its attempts to reach its target in reasonable time."""


@dataclass(frozen=True)
class AcceptanceRule:
    """When a run is stopped for accepting too little, whatever its rejection reasons
    (`synthesis.stop_min_attempts`, `synthesis.stop_min_acceptance`; see `check_acceptance`)."""

    min_attempts: int = 50
    min_acceptance: float = 0.02
    slots: int = 1  # jobs in flight at once: the first judgement waits for 5 attempts per slot

    @classmethod
    def of(cls, config: Any) -> AcceptanceRule:
        s = config.synthesis
        return cls(s.stop_min_attempts, s.stop_min_acceptance, config.jobs_in_flight())

    @property
    def first(self) -> int:
        """Attempts after which a run with none accepted stops."""
        return max(self.min_attempts, 5 * self.slots)


def attempts_of(records: Mapping[int, Job]) -> tuple[int, int]:
    """(attempts, accepted attempts) of the finished jobs."""
    return sum(attempts_in(r) for r in records.values()), sum(r.accepted for r in records.values())


def check_acceptance(records: Mapping[int, Job], target: int, rule: AcceptanceRule | None = None,
                     ledger: Ledger | None = None) -> None:
    """Stops a run that cannot reach its target, whatever the mix of rejection reasons.

    Counted over the finished jobs of the whole run (resumed sessions included), in attempts
    (each job makes up to `synthesis.max_attempts`): once there are `rule.first` attempts
    (`stop_min_attempts`, at least 5 per job slot) and none was accepted, the run stops; from
    twice that many, it stops when fewer than `min_acceptance` of them were accepted, i.e. when
    the N dialogues would need more than 1/min_acceptance attempts each. `min_acceptance` 0 = never."""
    rule = rule or AcceptanceRule()
    if rule.min_acceptance <= 0:
        return
    attempts, accepted = (ledger.attempts, ledger.accepted) if ledger else attempts_of(records)
    if accepted >= target or attempts < rule.first:
        return
    rate = accepted / attempts
    if accepted and (attempts < 2 * rule.first or rate >= rule.min_acceptance):
        return
    counts = Counter(c for r in records.values() for c in rejections_of(r))
    top = "; ".join(f"{count}x {s} / {c}" for (s, c), count in counts.most_common(5))
    if accepted:
        what = (f"only {accepted} of {attempts} attempts were accepted ({rate:.1%}, below "
                f"synthesis.stop_min_acceptance {rule.min_acceptance:g}): {target} dialogues would need about "
                f"{round(target / rate):,} attempts")
    else:
        what = f"none of {attempts} attempts was accepted"
    raise AcceptanceStop(
        f"stopped: {what}. Rejected attempts by stage / reason: {top}. The run cannot reach its target: the "
        "catalog (e.g. a schema no value satisfies), the model or the prompts fail too often. "
        f"{accepted} accepted dialogues are exported; fix the cause, or set synthesis.stop_min_acceptance "
        "(0 = never stop) and re-run the same command to go on.")


def acceptance_note(progress: RunProgress) -> str | None:
    """A warning for the progress display when the run accepts very few attempts (None otherwise)."""
    attempts = progress.accepted + progress.rejected
    if attempts < 20:
        return None
    rate = progress.accepted / attempts
    if rate >= 0.05:
        return None
    return f"low acceptance: {progress.accepted} of {attempts} attempts accepted ({rate:.0%})"


class SeedJobs:
    """A generation run as the runner's work (`runner.Work`): seed jobs, keyed by number, kept by the
    journal, planned by `pending`, complete when the leading jobs hold `target` accepted dialogues,
    stopped by `check_fruitless` and `check_acceptance`. The one description of a generation run for `Engine.run`
    (a window of jobs in flight) and the flows (waves of batches). With `light`, the records it loads
    are `JobSummary`s: what a run of any size holds in memory."""

    def __init__(self, journal: Journal, target: int, stop_after: int = MAX_FRUITLESS_JOBS,
                 acceptance: AcceptanceRule | None = None, light: bool = False, speculate: bool = False) -> None:
        self.journal, self.target, self.stop_after = journal, target, stop_after
        self.acceptance = acceptance or AcceptanceRule()
        self.light = light
        self.speculate = speculate  # in the tail, plan spare jobs past the expected prefix
        # Every job of the expected prefix has been started: the run's end, where the last jobs'
        # chains of attempts, not the call slots, decide when it finishes.
        self.tail = False
        self.ledger = Ledger(stop_after)

    def load(self) -> dict[int, Job]:
        records: dict[int, Job] = dict(summaries(self.journal)) if self.light else dict(self.journal.load())
        self.ledger = Ledger.of(records, self.stop_after)
        return records

    def _ledger(self, records: Mapping[int, Job]) -> Ledger:
        """The running totals, rebuilt if `records` is not the set they were fed (a caller's own dict)."""
        if self.ledger.jobs != len(records):
            self.ledger = Ledger.of(records, self.stop_after)
        return self.ledger

    def plan(self, records: Mapping[int, Job], in_flight: Collection[int], limit: int | None) -> list[int]:
        ledger = self._ledger(records)
        if not self.tail:  # once in the tail, one walk of the prefix per plan is enough
            jobs = pending(records, self.target, in_flight, limit, ledger=ledger)
            self.tail = limit is None or len(jobs) < limit
            if not (self.tail and self.speculate):
                return jobs
        return pending(records, self.target, in_flight, limit, spare=self.speculate, ledger=ledger)

    def complete(self, records: Mapping[int, Job]) -> bool:
        return self._ledger(records).leading(records) >= self.target

    def check(self, records: Mapping[int, Job]) -> None:
        ledger = self._ledger(records)
        if ledger.accepted >= self.target:
            return  # enough accepted already: the run only waits for the lower-numbered jobs, it is not fruitless
        check_fruitless(records, self.stop_after, ledger)
        check_acceptance(records, self.target, self.acceptance, ledger)

    def usage(self, record: Job) -> Usage:
        return job_usage(record)

    def tally(self, progress: RunProgress, record: Job) -> None:
        self.ledger.add(record)  # a finished job (or one loaded, already counted by `load`)
        attempts = attempts_in(record)
        progress.accepted += record.accepted
        progress.rejected += attempts - record.accepted
        progress.usage.add(self.usage(record))
        progress.note = acceptance_note(progress) or ""

    def key(self, record: Job) -> int:
        return record.job

    def describe(self, records: Mapping[int, Job]) -> str:
        return f"{min(self._ledger(records).leading(records), self.target)} of {self.target} dialogues accepted"

    def stuck(self) -> UtcgenError:
        return UtcgenError(f"{self.journal.dir}: the journal says the run is short of {self.target} accepted "
                           "dialogues but no job is left to run; delete the inconsistent job files to redo them")
