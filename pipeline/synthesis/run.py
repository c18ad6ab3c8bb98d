"""A generation run: the engine that turns seed jobs into journaled records, and the export.

Job j synthesises the seed tool `order[j mod |catalog|]` (a seeded permutation), with up
to `max_attempts` attempts. Which jobs run is decided by `schedule`, where they are kept
by `journal`; the dataset is the first N accepted dialogues by job number, so the result
does not depend on scheduling, concurrency or how many times the run was interrupted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .. import __version__
from ..config import RunConfig
from ..errors import InputError, UtcgenError
from ..export.run_info import RunInfo
from ..records import Dialogue, Usage
from .journal import JobRecord, Journal, select
from .schedule import check_fruitless, pending

log = logging.getLogger("utcgen.synthesis")


def held_out_tools(path: str | Path) -> set[str]:
    """The held-out tool names of a benchmark's split.json (the file `utcgen eval build` writes)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read the split: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not a split.json (invalid JSON: {exc})") from None
    names = data.get("held_out_tools") if isinstance(data, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InputError(f"{path}: not a split.json: field 'held_out_tools' must be a list of tool names "
                         "(make one with `utcgen eval build`)")
    return set(names)


def without_held_out(tools: list[Any], split: str | Path, catalog: str) -> list[Any]:
    """`tools` minus the split's held-out tools; a split that names none of them came from another catalog."""
    held = held_out_tools(split)
    kept = [t for t in tools if t.name not in held]
    if held and len(kept) == len(tools):
        raise InputError(f"{split}: none of its {len(held)} held-out tools is in the catalog {catalog}; "
                         "was the benchmark built from another catalog?")
    return kept


class Progress(BaseModel):
    """What a progress display shows; updated after every job and every LLM call."""

    target: int
    accepted: int = 0
    rejected: int = 0
    jobs_done: int = 0
    resumed_jobs: int = 0
    usage: Usage = Usage()  # of the journaled jobs
    spent: Usage = Usage()  # every call made so far, resumed runs' journaled jobs and jobs in flight included
    calls_in_flight: int = 0
    jobs_in_flight: int = 0
    retries: int = 0


BUDGET_MARGIN = 1.25  # jobs vary: plan each job in flight at 1.25 times the average so far


class BudgetExceeded(UtcgenError):
    """The run stopped before its spend would pass `budget` (`--max-cost`, `--max-tokens`)."""

    exit_code = 3


def over_budget(config: RunConfig, usage: Usage, extra_cost: float = 0.0, extra_tokens: float = 0.0) -> str | None:
    """Which limit `usage` plus the extra expected spend would pass, in words; None when within budget."""
    b = config.budget
    if b.max_cost_usd is not None and usage.cost_usd + extra_cost > b.max_cost_usd + 1e-12:
        return f"--max-cost ${b.max_cost_usd:g}"
    if b.max_tokens is not None and usage.total_tokens + extra_tokens > b.max_tokens:
        return f"--max-tokens {b.max_tokens:,}"
    return None


def _spend(records: dict[int, JobRecord]) -> Usage:
    return Usage.total(d.generation.usage for r in records.values() for d in r.dialogues)


class Engine:
    """Holds what every job shares: catalog, index, personas, gateway, journal."""

    def __init__(self, config: RunConfig, embedder: Any = None, allow_config_change: bool = False) -> None:
        from ..catalog.reader import load_catalog
        from ..llm.gateway import Gateway
        from ..llm.probe import probe_servers
        from ..llm.registry import ModelRegistry, check_models
        from ..retrieval.embeddings import Embedder
        from ..retrieval.index import ToolIndex
        from ..retrieval.personas import PersonaSampler, load_personas

        models = ModelRegistry.from_config(config)
        if problems := check_models(models) or probe_servers(models):
            raise InputError(problems)
        self.config = config
        self.out = Path(config.out)
        self.tools = load_catalog(config.catalog)
        self.excluded = 0  # held-out tools of config.exclude_split removed from the catalog
        if config.exclude_split:
            kept = without_held_out(self.tools, config.exclude_split, config.catalog)
            self.excluded = len(self.tools) - len(kept)
            self.tools = kept
            log.info("%s: %d held-out tools removed from the catalog, %d left", config.exclude_split,
                     self.excluded, len(kept))
        if len(self.tools) < 2:
            raise InputError(f"{config.catalog}: a catalog needs at least 2 tools to have distractors")
        self.personas = load_personas(config.personas, field=config.persona_field)
        self.journal = Journal(self.out, config, allow_config_change)
        self.embedder = embedder or Embedder()
        self.index = ToolIndex(self.tools, self.embedder)
        self.sampler = PersonaSampler(self.personas, self.embedder, k=config.synthesis.persona_top_k,
                                      seed=config.seed)
        self.gateway = Gateway(models)
        self.order = list(range(len(self.tools)))
        random.Random(f"{config.seed}:order").shuffle(self.order)

    def seed_for(self, job: int, attempt: int):
        from . import scenarios
        from .attempt import Seed, shuffled_pool

        tool = self.tools[self.order[job % len(self.tools)]]
        cycle = job // len(self.tools)
        persona = self.sampler.sample(tool, self.index.vector(tool), attempt=cycle * 100 + attempt)
        distractors = [n.tool for n in self.index.distractors(tool, self.config.synthesis.k_distractors)]
        rng = random.Random(f"{self.config.seed}:{job}:{attempt}:pool")
        # the scenario and decision style are drawn per job from streams of their own: no other draw moves
        scenario = scenarios.draw_scenario(self.config.seed, job, self.config.scenarios)
        candidates = scenarios.pool(scenario, tool, shuffled_pool(tool, distractors, rng))
        return Seed(job=job, attempt=attempt, tool=tool, persona=persona, distractors=distractors,
                    candidates=candidates, seed=self.config.seed,
                    persona_fit=self.sampler.fit(persona, tool, self.index.vector(tool)), scenario=scenario,
                    decision_style=scenarios.draw_style(self.config.seed, job, self.config.decision_styles))

    async def run_job(self, job: int) -> JobRecord:
        """All attempts of one seed job, journaled as soon as it finishes."""
        from .attempt import synthesize

        start = time.monotonic()
        attempts: list[Dialogue] = []
        for attempt in range(1, self.config.synthesis.max_attempts + 1):
            dialogue = await synthesize(self.seed_for(job, attempt), self.config, self.gateway)
            attempts.append(dialogue)
            if dialogue.accepted:
                break
        record = JobRecord(job=job, seed_tool=attempts[0].seed_tool.name, accepted=attempts[-1].accepted,
                           dialogues=attempts, elapsed_s=round(time.monotonic() - start, 3),
                           finished_at=round(time.time(), 3))
        await asyncio.to_thread(self.journal.write, record)  # fsync off the event loop
        return record

    async def run(self, on_progress: Callable[[Progress], None] | None = None) -> dict[int, JobRecord]:
        """Runs jobs in order, a bounded number at once, until the first N accepted are known.

        With a budget, no job starts when the spend so far plus the expected spend of the jobs
        in flight and of the new one would pass it, and the jobs in flight are cancelled (not
        journaled) when the calls already made reach it: `BudgetExceeded` is raised either way.
        """
        n, cfg = self.config.num_dialogues, self.config
        records = self.journal.load()
        progress = Progress(target=n, resumed_jobs=len(records))
        for rec in records.values():
            _tally(progress, rec)
        prior = _spend(records)  # journaled before this process started
        journaled_here = Usage()  # of the jobs this process journaled
        budgeted = cfg.budget.max_cost_usd is not None or cfg.budget.max_tokens is not None
        stop = asyncio.Event()
        stop_reason: list[str] = []
        window = cfg.synthesis.max_jobs_in_flight
        active: dict[asyncio.Task, int] = {}

        def spent() -> Usage:
            return Usage.total([prior, self.gateway.usage])

        def on_call(gateway: Any) -> None:
            progress.spent = spent()
            progress.calls_in_flight = gateway.in_flight()
            progress.retries = gateway.retries
            progress.jobs_in_flight = len(active)
            if budgeted and not stop.is_set():
                used = self.gateway.usage
                per_call = 1 / max(1, used.calls - used.cached_calls)
                calls = gateway.in_flight()  # their cost is not known yet: expect the average
                if limit := over_budget(cfg, progress.spent, used.cost_usd * per_call * calls,
                                        used.total_tokens * per_call * calls):
                    stop_reason.append(limit)
                    stop.set()
                    for task in active:  # no job starts another call: cancelled at its next await
                        task.cancel()
            if on_progress:
                on_progress(progress)

        def per_job() -> tuple[float, float] | None:
            """Expected (cost, tokens) of one job, from the journaled ones."""
            if not records:
                return None
            total = _spend(records)
            return total.cost_usd / len(records), total.total_tokens / len(records)

        def affordable(new_jobs: int) -> bool:
            if not budgeted:
                return True
            if (expected := per_job()) is None:  # one job first, to learn what a job costs
                return not active and over_budget(cfg, spent()) is None
            in_flight = Usage.total([self.gateway.usage]).model_copy()
            # spend of the jobs in flight so far: this process's spend minus what it journaled
            so_far_cost = max(0.0, in_flight.cost_usd - journaled_here.cost_usd)
            so_far_tokens = max(0, in_flight.total_tokens - journaled_here.total_tokens)
            jobs = (len(active) + new_jobs) * BUDGET_MARGIN
            extra_cost = max(0.0, jobs * expected[0] - so_far_cost)
            extra_tokens = max(0.0, jobs * expected[1] - so_far_tokens)
            return over_budget(cfg, spent(), extra_cost, extra_tokens) is None

        self.gateway.on_call = on_call
        if on_progress:
            on_progress(progress)
        stopper = asyncio.ensure_future(stop.wait())
        try:
            while not select(records, n)[2]:
                check_fruitless(records, cfg.synthesis.stop_after_same_rejections)
                for job in pending(records, n, in_flight=active.values(), limit=window - len(active)):
                    if not affordable(1):
                        break
                    active[asyncio.ensure_future(self.run_job(job))] = job
                if not active:
                    if budgeted:
                        raise self._budget_error(records, over_budget(cfg, spent(), *(per_job() or (0, 0))) or
                                                 "the budget", spent())
                    raise UtcgenError(f"{self.journal.dir}: the journal says the run is short of {n} accepted "
                                      "dialogues but no job is left to run; delete the inconsistent job files")
                done, _ = await asyncio.wait([*active, stopper], return_when=asyncio.FIRST_COMPLETED)
                if stop.is_set():
                    break
                for task in done:
                    if task is stopper:
                        continue
                    active.pop(task)
                    record = task.result()
                    records[record.job] = record
                    for d in record.dialogues:
                        journaled_here.add(d.generation.usage)
                    _tally(progress, record)
                    progress.jobs_in_flight = len(active)
                    if on_progress:
                        on_progress(progress)
            if stop.is_set() and not select(records, n)[2]:
                raise self._budget_error(records, stop_reason[0], spent())
        finally:
            self.gateway.on_call = None
            stopper.cancel()
            for task in active:
                task.cancel()
            if active:
                await asyncio.gather(*active, return_exceptions=True)
        return records

    def _budget_error(self, records: dict[int, JobRecord], limit: str, spent: Usage) -> BudgetExceeded:
        accepted = len(select(records, self.config.num_dialogues)[0])
        return BudgetExceeded(
            f"budget reached: the next jobs would pass {limit}. Spent so far (resumed runs included): "
            f"{spent.calls} calls, {spent.total_tokens:,} tokens, ${spent.cost_usd:.4f}; "
            f"{accepted} of {self.config.num_dialogues} dialogues accepted. Finished jobs are journaled; jobs in "
            "flight were cancelled and will be redone. Re-run the same command with a higher --max-cost / "
            "--max-tokens (or budget: in the config) to go on.")

    def llm_report(self, records: dict[int, JobRecord] | None = None) -> dict[str, Any]:
        """Spend over every journaled job, the budget, retries and the adaptive limits: stats.json's `llm`."""
        records = self.journal.load() if records is None else records
        budget = self.config.budget.model_dump()
        return {
            "spend": _spend(records).report(),
            "budget": budget if any(v is not None for v in budget.values()) else None,
            "retries": self.gateway.retries,
            "retry_reasons": dict(self.gateway.retry_reasons),
            "limits": self.gateway.limits.report(),
        }

    def export(self, records: dict[int, JobRecord] | None = None, wall_time_s: float | None = None):
        records = self.journal.load() if records is None else records
        return export_run(self.config, records, wall_time_s, llm=self.llm_report(records))

    def close(self) -> None:
        self.gateway.close()


def export_run(config: RunConfig, records: dict[int, JobRecord], wall_time_s: float | None = None,
               llm: dict[str, Any] | None = None):
    """Writes the dataset repository from journal records: the same records always give the same files."""
    from ..export.dataset import export_dataset

    accepted, rejected, _ = select(records, config.num_dialogues)
    llm = llm or {"spend": _spend(records).report(), "budget": None, "retries": 0, "retry_reasons": {},
                  "limits": []}
    return export_dataset(accepted + rejected, Path(config.out),
                          run_info(config, accepted + rejected, wall_time_s, llm))


def run_info(config: RunConfig, dialogues: list[Dialogue], wall_time_s: float | None,
             llm: dict[str, Any] | None = None) -> RunInfo:
    return RunInfo(llm=llm,
        config=config.model_dump(mode="json"), catalog=config.catalog, requested=config.num_dialogues,
        seed=config.seed, models=config.models.model_dump(), backend=config.backend(),
        usage=Usage.total(d.generation.usage for d in dialogues), wall_time_s=wall_time_s,
        utcgen_version=__version__,
    )


def _tally(progress: Progress, record: JobRecord) -> None:
    progress.jobs_done += 1
    progress.accepted += record.accepted
    progress.rejected += sum(not d.accepted for d in record.dialogues)
    for d in record.dialogues:
        progress.usage.add(d.generation.usage)
