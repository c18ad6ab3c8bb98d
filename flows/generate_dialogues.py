"""Prefect flow `generate-dialogues`: the library's waves of seed jobs as batch tasks, then the export.

Everything that decides what runs lives in the library (`utcgen.pipeline.runner.run_waves`
plans the waves of `...synthesis.schedule.SeedJobs` and stops them for the budget or a
fruitless run, `...synthesis.batch` runs a batch in a worker process, the journal keeps
every finished job); this module only maps batches onto Prefect tasks and reports. So a
retried task, a re-run flow or a larger `num_dialogues` resumes without duplicates, and the
local and Dask runners give the same dataset whatever order the batches ran in.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Literal

from prefect import flow, get_run_logger, task, unmapped
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext
from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from ..pipeline.core.errors import InputError, UtcgenError
from ..pipeline.export.card import render_summary
from ..pipeline.llm.registry import ModelRegistry, check_models
from ..pipeline.runner import Budget, RunStopped, run_waves
from ..pipeline.runner.outdir import claimed
from ..pipeline.settings.config import RunConfig, load_config
from ..pipeline.synthesis.batch import run_batch
from ..pipeline.synthesis.journal import JobRecord, Journal
from ..pipeline.synthesis.run import export_run
from ..pipeline.synthesis.schedule import AcceptanceRule, Job, SeedJobs, leading_accepted

DEFAULT_BATCH_SIZE = 8
ARTIFACT_KEY = "utcgen-dataset-summary"
LOCAL_THREADS = 4  # batch tasks in flight with the local runner; they share one event loop


@task(name="synthesise-batch", retries=2, retry_delay_seconds=1, cache_policy=NO_CACHE, persist_result=False)
def synthesise_batch(config: dict[str, Any], jobs: list[int]) -> dict[str, Any]:
    """Synthesise and journal the given seed jobs (those already journaled are skipped).

    Returns counts only. Raises when any job failed, after its siblings finished and were
    journaled, so Prefect's retry redoes just the failed ones."""
    logger = get_run_logger()
    run_config = RunConfig.model_validate(config)

    def on_job(record: JobRecord) -> None:
        verdict = "accepted" if record.accepted else "rejected"
        logger.info("job %d (%s): %s after %d attempt(s) in %.1fs", record.job, record.seed_tool, verdict,
                    len(record.dialogues), record.elapsed_s)

    start = time.monotonic()
    outcome = run_batch(run_config, jobs, on_job)
    if outcome.skipped:
        logger.info("jobs %s already journaled: skipped", outcome.skipped)
    if outcome.errors:
        first = next(iter(outcome.errors.items()))
        raise UtcgenError(f"{len(outcome.errors)} of {len(jobs)} jobs failed (job {first[0]}: {first[1]})")
    result = outcome.as_dict()
    result["elapsed_s"] = round(time.monotonic() - start, 3)
    return result


@task(name="export-dataset", cache_policy=NO_CACHE, persist_result=False)
def export_dataset_task(config: dict[str, Any], wall_time_s: float) -> dict[str, Any]:
    """Write the dataset folder from the journal (no engine needed in this process)."""
    run_config = RunConfig.model_validate(config)
    summary = export_run(run_config, Journal(run_config.located(run_config.out), run_config), wall_time_s)
    return {"out_dir": str(summary.out_dir), "accepted": summary.accepted, "rejected": summary.rejected,
            "sft_rows": summary.sft_rows, "preference_rows": summary.preference_rows,
            "stats_path": str(summary.stats_path)}


def _task_runner(kind: str, dask_address: str | None, dask_workers: int) -> TaskRunner:
    if kind == "local":
        return ThreadPoolTaskRunner(max_workers=LOCAL_THREADS)
    if kind != "dask":
        raise InputError(f"task_runner must be 'local' or 'dask', not {kind!r}")
    from prefect_dask.task_runners import DaskTaskRunner  # lazy: dask takes a second or more, only for a dask runner

    if dask_address:
        return DaskTaskRunner(address=dask_address)
    if dask_workers < 1:
        raise InputError("dask_workers must be at least 1")
    return DaskTaskRunner(cluster_kwargs={"n_workers": dask_workers, "processes": True, "threads_per_worker": 1,
                                          "dashboard_address": ":0"})


def _api_url_for_remote_tasks(stack: ExitStack) -> None:
    """Without PREFECT_API_URL the flow talks to a temporary local server. Dask workers get
    the flow's settings with their tasks, and would each start their own temporary server:
    point them at the flow's instead."""
    if PREFECT_API_URL.value():
        return
    ctx = FlowRunContext.get()
    url = str(getattr(getattr(ctx, "client", None), "api_url", "") or "")
    if url.startswith("http"):
        stack.enter_context(temporary_settings({PREFECT_API_URL: url.rstrip("/")}))


def summary_markdown(stats: dict[str, Any], out_dir: str, waves: int, jobs: int, task_runner: str) -> str:
    """The run summary shown as a Prefect artifact: how the flow ran, then the card's own tables."""
    usage = stats["usage"]
    return (f"# utcgen dataset\n\nFolder: `{out_dir}`  \nTask runner: {task_runner}, {waves} wave(s), "
            f"{jobs} seed jobs journaled  \nModel calls: {usage['calls']} ({usage['cached_calls']} cached), "
            f"{usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion tokens, "
            f"${usage['cost_usd']:.4f}\n\n{render_summary(stats)}")


def one_run_per_folder(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """The flow's process holds its output folder's run lock for the whole run (a second run on the
    folder is refused, naming the holder); its batch tasks, threads or Dask workers, run inside it."""

    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def locked(*args: Any, **kwargs: Any) -> dict[str, Any]:
        given = signature.bind(*args, **kwargs).arguments
        with claimed(load_config(given.get("config"), {"out": given.get("out")}).out, command="generate-dialogues flow"):
            return fn(*args, **kwargs)

    return locked


@flow(name="generate-dialogues", log_prints=False)
@one_run_per_folder
def generate_dialogues(
    config: str | None = None,
    catalog: str | None = None,
    num_dialogues: int | None = None,
    out: str | None = None,
    seed: int | None = None,
    models: dict[str, str] | None = None,
    model: str | None = None,
    task_runner: Literal["local", "dask"] = "local",
    dask_address: str | None = None,
    dask_workers: int = 2,
    batch_size: int = DEFAULT_BATCH_SIZE,
    max_cost: float | None = None,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """Generate validated dialogues into a dataset folder; re-running resumes from the journal.

    `config` is a YAML run configuration (default configs/default.yaml); `catalog`,
    `num_dialogues`, `out` and `seed` override it; `model` sets every role's litellm model and
    `models` single roles. `task_runner="dask"` runs batches on a local Dask cluster of
    `dask_workers` processes, or on the scheduler at `dask_address`. `max_cost` (US dollars) and
    `max_tokens` set the run's budget (over `budget:` in the config), as `utcgen generate
    --max-cost/--max-tokens` do: once the journal's spend would pass it no wave is planned, the
    finished jobs are exported and the flow fails with `BudgetExceeded` (or the low-acceptance stop), saying so.
    """
    logger = get_run_logger()
    start = time.monotonic()
    cfg = _flow_config(config, {"catalog": catalog, "num_dialogues": num_dialogues, "out": out, "seed": seed},
                       model, models, max_cost, max_tokens)
    if batch_size < 1:
        raise InputError("batch_size must be at least 1")
    n, out_dir = cfg.num_dialogues, Path(cfg.out)
    journal = Journal(out_dir, cfg)  # refuses an --out made with another configuration
    jobs_before = journal.count()
    logger.info("%d dialogues -> %s (backend %s, catalog %s, runner %s); %d jobs already journaled",
                n, out_dir, cfg.backend(), cfg.catalog, task_runner, jobs_before)
    payload = cfg.model_dump(mode="json")
    waves = _run_waves(cfg, journal, payload, task_runner, dask_address, dask_workers, batch_size)
    jobs_done = journal.count()
    journal.touch()
    wall = journal.wall_time_s()  # this run and the ones it resumed, overlaps counted once
    summary = export_dataset_task(payload, wall)
    stats = json.loads(Path(summary["stats_path"]).read_text(encoding="utf-8"))
    usage = stats.get("usage", {})
    create_markdown_artifact(
        markdown=summary_markdown(stats, summary["out_dir"], waves, jobs_done, task_runner),
        key=ARTIFACT_KEY,
        description=f"utcgen: {summary['accepted']} dialogues in {summary['out_dir']}",
    )
    logger.info("done: %d accepted, %d rejected attempts, %d SFT rows, %s tokens, $%.4f in %.1fs -> %s",
                summary["accepted"], summary["rejected"], summary["sft_rows"], usage.get("total_tokens"),
                usage.get("cost_usd", 0.0), time.monotonic() - start, summary["out_dir"])
    return {**summary, "waves": waves, "jobs": jobs_done, "tokens": usage.get("total_tokens"),
            "cost_usd": usage.get("cost_usd"), "wall_time_s": wall}


def _flow_config(config: str | None, overrides: dict[str, Any], model: str | None, models: dict[str, str] | None,
                 max_cost: float | None, max_tokens: int | None) -> RunConfig:
    """The run config with the flow's parameters over it, checked before any task starts: a missing
    key would fail every one of them."""
    cfg = load_config(config, overrides, model=model, models=models)
    cfg.workdir = cfg.workdir or os.getcwd()  # tasks on Dask workers started elsewhere read the same files
    if max_cost is not None:
        cfg.budget.max_cost_usd = max_cost
    if max_tokens is not None:
        cfg.budget.max_tokens = max_tokens
    if problems := check_models(ModelRegistry.from_config(cfg)):
        raise InputError(problems)
    return cfg


def _run_waves(cfg: RunConfig, journal: Journal, payload: dict[str, Any], task_runner: str,
               dask_address: str | None, dask_workers: int, batch_size: int) -> int:
    """Runs the library's waves of seed jobs as mapped batch tasks; returns the wave count. The task
    runner starts with the first wave (a finished run needs no cluster). A run stopped for its budget
    or low acceptance exports the finished jobs' dialogues, then fails."""
    logger = get_run_logger()
    n = cfg.num_dialogues
    with ExitStack() as stack:
        runner: TaskRunner | None = None

        def on_wave(wave: int, batches: list[list[int]], records: Mapping[int, Job]) -> None:
            logger.info("wave %d: %d jobs in %d batch(es), from job %d; %d/%d accepted in the leading jobs so far",
                        wave, sum(map(len, batches)), len(batches), batches[0][0],
                        leading_accepted(records, n), n)

        def run_wave(batches: list[list[int]]) -> None:
            nonlocal runner
            if runner is None:  # started only when there is work: a finished run needs no cluster
                runner = _task_runner(task_runner, dask_address, dask_workers)
                if task_runner == "dask":
                    _api_url_for_remote_tasks(stack)
                stack.enter_context(runner)
            futures = runner.map(synthesise_batch, {"config": unmapped(payload), "jobs": batches})  # pyright: ignore[reportArgumentType]
            futures.wait()
            failed = [f for f in futures if not f.state.is_completed()]
            if failed:
                failed[0].result()  # raises the batch's error; finished jobs stay journaled

        try:
            work = SeedJobs(journal, n, cfg.synthesis.stop_after_same_rejections, AcceptanceRule.of(cfg),
                            light=True)
            return run_waves(work, run_wave,
                             batch_size=batch_size, parallelism=dask_workers if task_runner == "dask" else 1,
                             budget=Budget.of(cfg.budget), on_wave=on_wave)
        except RunStopped as exc:  # budget or low acceptance: the folder gets the finished jobs' dialogues, then the flow fails
            logger.error("%s", exc)
            journal.touch()
            export_dataset_task(payload, journal.wall_time_s())
            raise

if __name__ == "__main__":
    generate_dialogues()
