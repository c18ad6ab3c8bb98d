"""An evaluation run: every case of a benchmark against one model, resumably, then the report.

Cases run through the one runner (`runner.run_window`), at most `max_in_flight` at once. Each finished case is written at
once to `results/<case id>.json` (atomically): a re-run of the same command skips them, and
refuses a folder made with other settings (model, mode, proxy, voting, ...) unless
`allow_config_change`. A case whose model calls fail for good (an unusable request, a
generation error) gets `error` set and is counted, not scored; a fatal error (a server down,
a rejected key: `LLMFatalError`) stops the run with a clear message, and the finished cases
stay on disk. A resumed run skips the finished cases but runs the errored ones again (an error is
usually transient). Each result file holds its error-pattern counts. Then `report.write_run` writes metrics.json, dialogues.parquet and report.md.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from ..core.errors import InputError, UtcgenError
from ..core.records import Message, Usage
from ..llm.gateway import Gateway, LLMError, LLMFatalError, shutdown
from ..llm.replies import ReplyError
from ..runner import Checkpoint, Gateways, RunProgress, run_window
from . import report
from .cases import RESULTS_DIR, Case, CaseResult, read_cases
from .dynamic import evaluate_dynamic
from .models import ModelUnderTest, load_model, make_gateway
from .patterns import count_patterns
from .run_settings import EvalSettings
from .static import evaluate_static
from .voting import UserProxy

MANIFEST = "run.json"


def result_path(out: Path, case_id: str) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in case_id)
    return Path(out) / RESULTS_DIR / f"{safe}.json"


def checkpoint(out: Path, settings: EvalSettings, allow_config_change: bool = False) -> Checkpoint:
    """The run folder's checkpoint: `run.json` and `results/`; refuses a folder made with other settings."""
    out = Path(out)
    return Checkpoint(out / RESULTS_DIR, out / MANIFEST, kind="evaluate", settings=settings.model_dump(mode="json"),
                      fingerprint=settings.fingerprint(), allow_change=allow_config_change, label=out,
                      what="an evaluation")


def load_results(out: Path) -> dict[str, CaseResult]:
    results: dict[str, CaseResult] = {}
    folder = Path(out) / RESULTS_DIR
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            result = CaseResult.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # cannot happen with atomic writes; if it does, the case runs again
        results[result.case_id] = result
    return results


class _Cases:
    """An evaluation as the runner's work: the cases, keyed by id, in benchmark order. A case that ended
    in `error` (a transient failure, say) runs again on resume; only finished ones are kept."""

    def __init__(self, evaluator: Evaluator) -> None:
        self.cases = evaluator.cases
        self.out = evaluator.out
        self.target = len(self.cases)

    def load(self) -> dict[str, CaseResult]:
        wanted = {c.id for c in self.cases}
        return {k: v for k, v in load_results(self.out).items() if k in wanted and v.error is None}

    def plan(self, records: dict[str, CaseResult], in_flight: Collection[str], limit: int | None) -> list[str]:
        busy = set(in_flight)
        todo = [c.id for c in self.cases if c.id not in records and c.id not in busy]
        return todo if limit is None else todo[:limit]

    def complete(self, records: dict[str, CaseResult]) -> bool:
        return all(c.id in records for c in self.cases)

    def check(self, records: dict[str, CaseResult]) -> None:
        return None  # every case runs once per session: no stop rule

    def usage(self, record: CaseResult) -> Usage:
        return record.usage

    def tally(self, progress: RunProgress, record: CaseResult) -> None:
        progress.errors += record.error is not None
        progress.usage.add(record.usage)

    def key(self, record: CaseResult) -> str:
        return record.case_id

    def describe(self, records: dict[str, CaseResult]) -> str:
        return f"{len(records)} of {self.target} cases evaluated"

    def stuck(self) -> UtcgenError:
        return UtcgenError(f"{self.out / RESULTS_DIR}: cases are missing but none is left to run")


class Evaluator:
    """The model under test, the judge-side gateway and the run folder: what every case shares."""

    def __init__(self, settings: EvalSettings, out: Path, *, max_in_flight: int = 8,
                 allow_config_change: bool = False) -> None:
        self.settings, self.out = settings, Path(out)
        bench = Path(settings.benchmark)
        if not bench.is_dir():
            raise InputError(f"--benchmark {bench}: no such folder")
        cases = read_cases(bench)
        if not cases:
            raise InputError(f"--benchmark {bench}: the benchmark has no cases")
        self.cases = cases[: settings.limit] if settings.limit else cases
        if settings.mode == "dynamic" and any(c.answer is not None for c in self.cases):
            raise InputError(f"--mode dynamic: {bench} holds imported BFCL cases, single questions with no user "
                             "goal or hidden values for a user proxy to play; evaluate them with --mode static")
        self.by_id = {c.id: c for c in self.cases}
        if settings.votes is not None and (settings.votes[0] < 1 or settings.votes[1] < 1):
            raise InputError(f"--votes {settings.votes[0]},{settings.votes[1]}: both numbers must be at least 1")
        self.max_in_flight = max_in_flight
        self.model: ModelUnderTest = load_model(settings.model, api_base=settings.api_base,
                                                tool_format=settings.tool_format,
                                                max_new_tokens=settings.max_new_tokens, config=settings.config,
                                                max_in_flight=max_in_flight)
        try:
            roles: dict[str, str] = {}
            if settings.mode == "dynamic":
                roles["user"] = settings.user_model
                if settings.votes:
                    roles["voter"] = settings.voter_model or settings.user_model
            if settings.rubric_model:
                roles["rubric"] = settings.rubric_model
            self.judges: Gateway | None = make_gateway(roles, config=settings.config) if roles else None
            self.checkpoint = checkpoint(self.out, settings, allow_config_change)
        except BaseException:
            self.model.close()
            raise

    def gateways(self) -> list[Gateway]:
        return [g for g in (self.model.gateway, self.judges) if g is not None]

    async def run_case(self, case: Case) -> CaseResult:
        s = self.settings
        rubric = self.judges if s.rubric_model else None
        start = time.monotonic()
        proxy = None
        so_far: list[Message] = []
        try:
            if s.mode == "static":
                return await evaluate_static(case, self.model, rubric=rubric, messages=so_far)
            assert self.judges is not None
            proxy = UserProxy(self.judges, votes=s.votes, seed=s.seed)
            return await evaluate_dynamic(case, self.model, proxy, rubric=rubric, max_turns=s.max_turns,
                                          messages=so_far)
        except LLMFatalError:
            raise
        except (LLMError, ReplyError) as exc:  # the dialogue so far is kept for the report, not scored
            return CaseResult(case_id=case.id, model=self.model.name, mode=s.mode, messages=so_far,
                              error=f"{type(exc).__name__}: {exc}"[:1000], usage=proxy.usage if proxy else Usage(),
                              elapsed_s=round(time.monotonic() - start, 3))

    async def run(self, on_progress: Callable[[RunProgress], None] | None = None) -> list[CaseResult]:
        """Every case not yet in results/, at most `max_in_flight` at once; returns the results of all cases."""
        work = _Cases(self)
        progress = RunProgress(target=len(self.cases))
        local = (lambda: [self.model.usage]) if self.model.gateway is None else None  # hf: counted by the model
        try:
            finished = await run_window(work, self._run_and_save, window=self.max_in_flight,
                                        meter=Gateways(*self.gateways(), extra=local), progress=progress,
                                        on_progress=on_progress)
        except LLMFatalError as exc:
            raise UtcgenError(f"{exc}\nThe evaluation stopped: {progress.done} of {progress.target} cases are in "
                              f"{self.out / RESULTS_DIR}; re-run the same command to resume.") from exc
        return [finished[c.id] for c in self.cases if c.id in finished]

    async def _run_and_save(self, case_id: str) -> CaseResult:
        case = self.by_id[case_id]
        result = await self.run_case(case)
        result.patterns = count_patterns(case, result)  # on disk too, not only in the report
        await asyncio.to_thread(self.checkpoint.save, result_path(self.out, case.id), result)
        return result

    def report(self, results: list[CaseResult], wall_time_s: float) -> Any:
        by_id = {r.case_id: r for r in results}
        cases = [c for c in self.cases if c.id in by_id]
        settings = self.settings.model_dump(mode="json")
        return report.write_run(self.out, cases, [by_id[c.id] for c in cases], model=self.settings.model,
                                mode=self.settings.mode, wall_time_s=wall_time_s, settings=settings)

    def close(self) -> None:
        self.model.close()
        if self.judges is not None:
            self.judges.close()


async def run_evaluation(settings: EvalSettings, out: Path, *, max_in_flight: int = 8, allow_config_change: bool = False,
                   on_progress: Callable[[RunProgress], None] | None = None) -> Any:
    """The library entry point of `utcgen eval run` and the `evaluate-model` flow: runs, then reports."""
    start = time.monotonic()
    evaluator = Evaluator(settings, out, max_in_flight=max_in_flight, allow_config_change=allow_config_change)
    try:
        results = await evaluator.run(on_progress)
        return evaluator.report(results, round(time.monotonic() - start, 2))
    finally:
        evaluator.close()
        await shutdown()
