"""A generation run: the engine that turns seed jobs into journaled records, and the export.

Job j synthesises the seed tool `order[j mod |catalog|]` (a seeded permutation), with up
to `max_attempts` attempts. Which jobs run is decided by `schedule`, where they are kept
by `journal`; the dataset is the first N accepted dialogues by job number, so the result
does not depend on scheduling, concurrency or how many times the run was interrupted.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import random
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .. import __version__, scenarios
from ..core.errors import InputError
from ..core.records import DEFAULT_SCENARIO, Dialogue, Usage
from ..core.resources import shipped
from ..export.dataset import export_dataset
from ..export.run_info import RunInfo
from ..ingest.reader import load_catalog
from ..llm.gateway import Gateway
from ..llm.limits import PRIORITY, QueuePlace
from ..llm.probe import probe_servers
from ..llm.registry import ModelRegistry, check_models
from ..retrieval.embeddings import Embedder
from ..retrieval.index import ToolIndex
from ..retrieval.personas import PersonaSampler, load_personas
from ..runner import Budget, Gateways, RunProgress, run_window
from ..settings.config import RunConfig
from ..settings.templates import prompts_from
from .attempt import Seed, shuffled_pool, synthesize
from .chain import Chains
from .draw import draw_scenario, draw_style
from .journal import CallCounters, JobRecord, Journal, in_job_order, selected
from .schedule import AcceptanceRule, JobSummary, SeedJobs, job_usage, summaries
from .sizes import prompt_sized

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


def _spend(records: Mapping[int, JobRecord | JobSummary]) -> Usage:
    return Usage.total(job_usage(r) for r in records.values())


HEDGE_CHECK_S = 0.5  # how often a job with attempts left looks whether the run reached its tail
# A catalog this large shows a bar while its tools are embedded (about 7 s with openvino-int8, 25 s
# with torch, more on a first run): below it, the run's own start line is enough.
INDEX_PROGRESS_FROM = 5_000


def _leading(done: Mapping[int, Dialogue], last: int) -> list[Dialogue] | None:
    """A job's attempts 1, 2, ... up to the first accepted one, once they are all known; or all `last`
    when none was accepted. None while an earlier attempt is still running."""
    attempts = []
    for number in range(1, last + 1):
        if number not in done:
            return None
        attempts.append(done[number])
        if done[number].accepted:
            break
    return attempts


class Engine:
    """Holds what every job shares: catalog, index, personas, gateway, journal."""

    def __init__(self, config: RunConfig, embedder: Any = None, allow_config_change: bool = False) -> None:
        models = ModelRegistry.from_config(config)
        if problems := check_models(models) or probe_servers(models):
            raise InputError(problems)
        self.config = config
        self.out = config.located(config.out)
        self.tools = load_catalog(str(config.located(config.catalog)), skip_invalid=config.skip_invalid)
        self.excluded = 0  # held-out tools of config.exclude_split removed from the catalog
        if config.exclude_split:
            kept = without_held_out(self.tools, config.located(config.exclude_split), config.catalog)
            self.excluded = len(self.tools) - len(kept)
            self.tools = kept
            log.info("%s: %d held-out tools removed from the catalog, %d left", config.exclude_split,
                     self.excluded, len(kept))
        self.tools = prompt_sized(self.tools, config.synthesis.max_description_chars,
                                  config.synthesis.max_schema_chars)
        if len(self.tools) < 2:
            raise InputError(f"{config.catalog}: a catalog needs at least 2 tools to have distractors")
        self.personas = load_personas(str(config.located(config.personas)), field=config.persona_field)
        self.journal = Journal(self.out, config, allow_config_change)
        if embedder is None or embedder.backend != config.embeddings:
            embedder = Embedder(backend=config.embeddings)
        self.embedder: Embedder = embedder
        self.index = ToolIndex(self.tools, self.embedder, exact_up_to=config.synthesis.exact_search_up_to,
                               show_progress=len(self.tools) >= INDEX_PROGRESS_FROM)
        # a persona composed for a tool no pooled persona fits stands in only for our own pool:
        # a user who brings personas gets theirs
        ours = config.located(config.personas).resolve() == shipped("catalog", "personas.jsonl").resolve()
        self.sampler = PersonaSampler(self.personas, self.embedder, k=config.synthesis.persona_top_k,
                                      seed=config.seed, compose_missing=ours)
        self.gateway = Gateway(models)
        self._billed = Usage()  # of the jobs this process journaled: the gateway's usage minus it was thrown away
        self._work: SeedJobs | None = None  # the running work (`run`): its tail starts hedged attempts
        self.worker_jobs: dict[int | None, int] = {}  # after a run with workers: jobs each process ran
        self.order = list(range(len(self.tools)))
        random.Random(f"{config.seed}:order").shuffle(self.order)
        self.chains = Chains(self.tools, self.index)

    def seed_for(self, job: int, attempt: int):
        tool = self.tools[self.order[job % len(self.tools)]]
        cycle = job // len(self.tools)
        k = self.config.synthesis.k_distractors
        # the scenario and decision style are drawn per job from streams of their own: no other draw moves
        scenario = draw_scenario(self.config.seed, job, self.config.scenarios)
        chain = None
        if scenarios.get(scenario).chained:  # the task's two steps, drawn per job; a tool in no pair plays the default
            planned = self.chains.plan(tool, k, random.Random(f"{self.config.seed}:{job}:chain"))
            tool, chain = planned if planned is not None else (tool, None)
            scenario = scenario if chain is not None else DEFAULT_SCENARIO
        # a task of two steps is the second step's: its user is drawn for that tool
        distractors = [n.tool for n in self.index.distractors(tool, k)]
        vector = self.index.vector(tool)
        neighbours = np.stack([self.index.vector(d) for d in distractors]) if distractors else None
        persona = self.sampler.sample(tool, vector, attempt=cycle * 100 + attempt, neighbours=neighbours)
        rng = random.Random(f"{self.config.seed}:{job}:{attempt}:pool")
        candidates = scenarios.get(scenario).pool(tool, shuffled_pool(tool, distractors, rng))
        return Seed(job=job, attempt=attempt, tool=tool, persona=persona, distractors=distractors,
                    candidates=candidates, seed=self.config.seed,
                    persona_fit=self.sampler.fit(persona, tool, vector),
                    role_fit=self.sampler.role_fit(persona, tool, vector, neighbours), scenario=scenario,
                    decision_style=draw_style(self.config.seed, job, self.config.decision_styles), chain=chain)

    async def run_job(self, job: int) -> JobRecord:
        """All attempts of one seed job, up to the first accepted, journaled as soon as it finishes.

        Attempts are independent draws (each has its own seed), so the record is the same whether they
        run one after another or at once. They run one after another while calls wait for slots; when
        the run reaches its tail (every job it expects to need has started, and the last ones are chains of
        rejected attempts) a job with a rejected attempt starts its other attempts without waiting for the
        current one's verdict, and drops the attempts past the first accepted one (`synthesis.speculate`).
        Each attempt queues for call slots by its `QueuePlace`."""

        start = time.monotonic()
        last = self.config.synthesis.max_attempts
        done: dict[int, Dialogue] = {}
        running: dict[asyncio.Future[Dialogue], int] = {}
        started = 0
        try:
            while (attempts := _leading(done, last)) is None:
                # a job whose attempt was rejected is likely to see its next ones rejected too: in the
                # tail it starts them all at once
                while started < last and (not running or (done and self._hedging())) \
                        and not any(d.accepted for d in done.values()):
                    started += 1
                    running[asyncio.ensure_future(self._attempt(job, started))] = started
                # a job that may hedge (a rejected attempt, attempts unstarted) looks again every HEDGE_CHECK_S
                wait = HEDGE_CHECK_S if done and started < last and self._speculates() else None
                finished, _ = await asyncio.wait(running, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    done[running.pop(task)] = task.result()
        finally:
            for task in running:  # attempts past the first accepted one (or the job was cancelled)
                task.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)
        record = JobRecord(job=job, seed_tool=attempts[0].seed_tool.name, accepted=attempts[-1].accepted,
                           dialogues=attempts, elapsed_s=round(time.monotonic() - start, 3),
                           finished_at=round(time.time(), 3))
        await asyncio.to_thread(self._journal, record)  # fsync off the event loop
        return record

    async def _attempt(self, job: int, attempt: int) -> Dialogue:
        PRIORITY.set(QueuePlace(job))  # this task's context: its calls and its validators' count here
        # the config's prompts (`prompts_dir` over the shipped ones), for this attempt's task alone: the
        # engines of other configurations sharing the process (a Dask worker) keep theirs
        with prompts_from(self.config.prompts_folder()):
            return await synthesize(self.seed_for(job, attempt), self.config, self.gateway)

    def _journal(self, record: JobRecord) -> None:
        self.journal.write(record)
        self._billed.add(job_usage(record))
        self.journal.write_counters(self.counters())

    def counters(self) -> CallCounters:
        """This process's gateway counters (`Journal.counters` sums every process's)."""
        g = self.gateway
        return CallCounters(retries=g.retries, retry_reasons=dict(g.retry_reasons), gave_up=g.gave_up,
                            discarded=g.usage.minus(self._billed))

    def work(self, light: bool = False) -> SeedJobs:
        s = self.config.synthesis
        return SeedJobs(self.journal, self.config.num_dialogues, s.stop_after_same_rejections, AcceptanceRule.of(self.config),
                        light=light, speculate=self._speculates())

    def _speculates(self) -> bool:
        """`synthesis.speculate`, never for the offline backend (its calls are CPU, not waiting)."""
        return self.config.synthesis.speculate and self.config.backend() != "offline"

    def _hedging(self) -> bool:
        """Whether a job starts its next attempt before its current one is judged: in the run's tail."""
        return self._work is not None and self._work.tail and self._speculates()

    async def run(self, on_progress: Callable[[RunProgress], None] | None = None,
                  light: bool = False) -> Mapping[int, JobRecord | JobSummary]:
        """Runs jobs in order, at most `config.jobs_in_flight()` at once, until the first N
        accepted are known (`runner.run_window`: the budget and the fruitless-run stop hold).
        Returns every finished job: its record, or with `light` its summary (memory that stays small
        whatever the run's size; the export then reads the journal). `pool.run_pooled` runs the same
        window with the jobs in worker processes."""
        async def run_light(job: int) -> JobSummary:
            return JobSummary.of(await self.run_job(job))

        self._work = self.work(light)
        gc.collect()
        gc.freeze()  # the catalog, index, personas and model live all run: the collector need not walk them
        try:
            return await run_window(self._work, run_light if light else self.run_job,
                                    window=self.config.jobs_in_flight(),
                                    budget=Budget.of(self.config.budget), meter=Gateways(self.gateway),
                                    on_progress=on_progress)
        finally:
            gc.unfreeze()

    def llm_report(self, records: Mapping[int, JobRecord | JobSummary] | None = None) -> dict[str, Any]:
        """Spend over every journaled job, the budget, retries and the adaptive limits: stats.json's `llm`."""
        records = summaries(self.journal) if records is None else records
        budget = self.config.budget.model_dump()
        self.journal.write_counters(self.counters())
        counted = self.journal.counters()  # every session's and worker's, this one's included
        return {
            "spend": _spend(records).report(),
            "budget": budget if any(v is not None for v in budget.values()) else None,
            "retries": counted.retries,
            "retry_reasons": dict(sorted(counted.retry_reasons.items())),
            "calls_failed": counted.gave_up,
            "discarded": counted.discarded.report(),  # calls of work thrown away, in no record
            "limits": self.gateway.limits.report(),
        }

    def export(self, records: Mapping[int, JobRecord | JobSummary] | None = None, wall_time_s: float | None = None):
        """Writes the dataset folder: from `records` when they are full records, else streamed from the journal."""
        full = records is not None and all(isinstance(r, JobRecord) for r in records.values())
        source: Mapping[int, JobRecord] | Journal = records if full else self.journal  # type: ignore[assignment]
        return export_run(self.config, source, wall_time_s, llm=self.llm_report(records))

    def close(self) -> None:
        self.gateway.close()


def export_run(config: RunConfig, records: Mapping[int, JobRecord] | Journal, wall_time_s: float | None = None,
               llm: dict[str, Any] | None = None):
    """Writes the dataset repository from journal records: the same records always give the same files.
    Given the journal, its jobs are read one at a time as the export streams them. The sft rows' system
    prompt and the recorded prompt versions are the config's (`prompts_dir` over the shipped ones)."""
    with prompts_from(config.prompts_folder()):
        return _export_run(config, records, wall_time_s, llm)


def _export_run(config: RunConfig, records: Mapping[int, JobRecord] | Journal, wall_time_s: float | None,
                llm: dict[str, Any] | None):
    ordered = records.in_order() if isinstance(records, Journal) else in_job_order(records)
    if llm is None:
        spent = _spend(summaries(records) if isinstance(records, Journal) else records)
        llm = {"spend": spent.report(), "budget": None, "retries": 0, "retry_reasons": {}, "limits": []}
    return export_dataset(selected(ordered, config.num_dialogues), config.located(config.out),
                          run_info(config, [], wall_time_s, llm, usage=None))


def run_info(config: RunConfig, dialogues: list[Dialogue], wall_time_s: float | None,
             llm: dict[str, Any] | None = None, usage: Usage | Literal["sum"] | None = "sum") -> RunInfo:
    """The export's run facts; `usage` None leaves the sum over the exported dialogues to the export."""
    return RunInfo(llm=llm,
        config=config.model_dump(mode="json", exclude={"workdir"}), catalog=config.catalog, requested=config.num_dialogues,
        seed=config.seed, models=config.models.names(), backend=config.backend(),
        usage=Usage.total(d.generation.usage for d in dialogues) if usage == "sum" else usage, wall_time_s=wall_time_s,
        utcgen_version=__version__,
    )
