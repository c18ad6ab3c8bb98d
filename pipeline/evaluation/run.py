"""An evaluation run: every case of a benchmark against one model, resumably, then the report.

Cases run concurrently (at most `max_in_flight` at once). Each finished case is written at
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
import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .. import __version__
from ..errors import InputError, UtcgenError
from ..files import remove_stale_temporaries, write_atomic
from ..llm.gateway import Gateway, LLMError, LLMFatalError
from ..llm.replies import ReplyError
from ..records import Message, Usage
from .cases import RESULTS_DIR, Case, CaseResult, Mode, read_cases
from .dynamic import DEFAULT_MAX_TURNS, evaluate_dynamic
from .models import DEFAULT_MAX_NEW_TOKENS, ModelUnderTest, load_model, make_gateway
from .patterns import count_patterns
from .static import evaluate_static
from .voting import UserProxy

MANIFEST = "run.json"
# The prompts whose wording changes an evaluation's replies (what the model under test, the proxy,
# the voters and the rubric are shown); other prompt files may change without touching a run.
PROMPTS_USED = ("sft_system", "sft_system_chat", "user_tool_selection", "user_argument_filling", "eval_user_vote",
                "eval_conv_rel", "scenario_user_explicit", "scenario_user_underspecified", "scenario_user_unavailable",
                "scenario_user_infeasible", "scenario_user_fault")  # the scenario ones: the dynamic proxy of scenario cases
OFFLINE = "utcgen-offline/default"


class EvalSettings(BaseModel):
    """Everything that decides a run's results; a resumed run must have the same (see `fingerprint`)."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    model: str
    mode: Mode
    api_base: str | None = None
    tool_format: Literal["json", "native"] | None = None  # None: json for litellm models, native for hf:
    user_model: str = OFFLINE               # dynamic: the user proxy's generator
    voter_model: str | None = None          # dynamic: None = the user model
    votes: tuple[int, int] | None = (3, 3)  # dynamic: (drafts n, voters m); None = no voting
    rubric_model: str | None = OFFLINE      # ConvRel judge; None = no ConvRel
    max_turns: int = Field(DEFAULT_MAX_TURNS, ge=1)
    max_new_tokens: int = Field(DEFAULT_MAX_NEW_TOKENS, ge=1)
    seed: int = 0
    config: str | None = None               # YAML run config for the judge-side gateways (llm settings)
    limit: int | None = Field(None, ge=1)   # evaluate the first N cases only (may grow on resume)

    def fingerprint(self) -> str:
        data = self.model_dump(exclude={"limit", "benchmark"})
        if self.mode == "static":
            for key in ("user_model", "voter_model", "votes", "max_turns"):
                data.pop(key)
        from ..prompts import load_prompt

        data["prompt_versions"] = {name: load_prompt(name).version for name in PROMPTS_USED}
        return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


class EvalProgress(BaseModel):
    """What the progress bar shows; updated after every case and every model call."""

    total: int
    done: int = 0
    resumed: int = 0
    errors: int = 0
    usage: Usage = Usage()
    calls_in_flight: int = 0
    cases_in_flight: int = 0


def result_path(out: Path, case_id: str) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in case_id)
    return Path(out) / RESULTS_DIR / f"{safe}.json"


def check_manifest(out: Path, settings: EvalSettings, allow_config_change: bool) -> None:
    """Refuses to resume into a run folder made with other settings (see the module docstring)."""
    path = Path(out) / MANIFEST
    fingerprint = settings.fingerprint()
    previous: dict[str, Any] = {}
    if path.exists():
        try:
            previous = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"{path}: unreadable run manifest: {exc}") from exc
    if previous and previous.get("fingerprint") != fingerprint and not allow_config_change:
        old = previous.get("settings") or {}
        changed = [k for k in sorted(set(old) | set(settings.model_dump())) if k not in ("limit", "benchmark")
                   and old.get(k) != settings.model_dump(mode="json").get(k)]
        what = f" ({', '.join(changed[:5])})" if changed else " (prompt versions)"
        raise InputError(f"{out}: holds an evaluation made with other settings{what}; results of both would be "
                         "mixed. Use another --out, delete the folder, or pass --allow-config-change.")
    if previous.get("fingerprint") != fingerprint:
        write_atomic(path, json.dumps({"fingerprint": fingerprint, "utcgen_version": __version__,
                                       "settings": settings.model_dump(mode="json")}, indent=2))


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
            check_manifest(self.out, settings, allow_config_change)
            remove_stale_temporaries(self.out / RESULTS_DIR)
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

    async def run(self, on_progress: Callable[[EvalProgress], None] | None = None) -> list[CaseResult]:
        """Every case not yet in results/, a bounded number at once; returns the results of all cases."""
        done = load_results(self.out)
        wanted = {c.id for c in self.cases}
        # a case that ended in `error` (a transient failure, say) runs again; only finished ones are kept
        finished = {k: v for k, v in done.items() if k in wanted and v.error is None}
        progress = EvalProgress(total=len(self.cases), done=len(finished), resumed=len(finished),
                                errors=sum(r.error is not None for r in finished.values()))
        prior = Usage.total(r.usage for r in finished.values())
        todo = [c for c in self.cases if c.id not in finished]
        bound = asyncio.Semaphore(self.max_in_flight)
        active = 0

        def refresh(*_: Any) -> None:
            local = [self.model.usage] if self.model.gateway is None else []  # hf: counted by the model itself
            progress.usage = Usage.total([prior, *(g.usage for g in self.gateways()), *local])
            progress.calls_in_flight = sum(g.in_flight() for g in self.gateways())
            progress.cases_in_flight = active
            if on_progress:
                on_progress(progress)

        for g in self.gateways():
            g.on_call = refresh

        async def one(case: Case) -> CaseResult:
            nonlocal active
            async with bound:
                active += 1
                refresh()
                try:
                    result = await self.run_case(case)
                finally:
                    active -= 1
                result.patterns = count_patterns(case, result)  # on disk too, not only in the report
                await asyncio.to_thread(write_atomic, result_path(self.out, case.id), result.model_dump_json())
                finished[case.id] = result
                progress.done += 1
                progress.errors += result.error is not None
                refresh()
                return result

        refresh()
        tasks = [asyncio.ensure_future(one(c)) for c in todo]
        try:
            if tasks:
                await asyncio.gather(*tasks)
        except LLMFatalError as exc:
            raise UtcgenError(f"{exc}\nThe evaluation stopped: {progress.done} of {progress.total} cases are in "
                              f"{self.out / RESULTS_DIR}; re-run the same command to resume.") from exc
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for g in self.gateways():
                g.on_call = None
        return [finished[c.id] for c in self.cases if c.id in finished]

    def report(self, results: list[CaseResult], wall_time_s: float) -> Any:
        from . import report

        by_id = {r.case_id: r for r in results}
        cases = [c for c in self.cases if c.id in by_id]
        settings = self.settings.model_dump(mode="json")
        return report.write_run(self.out, cases, [by_id[c.id] for c in cases], model=self.settings.model,
                                mode=self.settings.mode, wall_time_s=wall_time_s, settings=settings)

    def close(self) -> None:
        self.model.close()
        if self.judges is not None:
            self.judges.close()


async def evaluate(settings: EvalSettings, out: Path, *, max_in_flight: int = 8, allow_config_change: bool = False,
                   on_progress: Callable[[EvalProgress], None] | None = None) -> Any:
    """The library entry point of `utcgen eval run` and the `evaluate-model` flow: runs, then reports."""
    from ..llm.gateway import shutdown

    start = time.monotonic()
    evaluator = Evaluator(settings, out, max_in_flight=max_in_flight, allow_config_change=allow_config_change)
    try:
        results = await evaluator.run(on_progress)
        return evaluator.report(results, round(time.monotonic() - start, 2))
    finally:
        evaluator.close()
        await shutdown()
