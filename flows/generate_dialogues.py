"""Prefect flow `generate-dialogues`: seed jobs in waves of batch tasks, then the dataset export.

The journal under `<out>/journal/` is the only state that matters: every finished seed job
is a file there, a batch task skips the jobs it finds, and the dataset is always the first
N accepted dialogues by job number. So a retried task, a re-run flow or a larger
`num_dialogues` resumes without duplicates, and the local and Dask runners give the same
dataset whatever order the batches ran in.
"""

from __future__ import annotations

import json
import math
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Literal

from prefect import flow, get_run_logger, task, unmapped
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from utcgen.flows._runtime import run_batch
from utcgen.pipeline.config import ROLES, RunConfig, load_config
from utcgen.pipeline.synthesis.run import JobRecord, Journal, check_fruitless, export_run, select
from utcgen.pipeline.errors import InputError, UtcgenError
from utcgen.pipeline.llm.gateway import check_models

DEFAULT_BATCH_SIZE = 8
ARTIFACT_KEY = "utcgen-dataset-summary"
LOCAL_THREADS = 4  # batch tasks in flight with the local runner; they share one event loop


def build_config(config: str | None = None, catalog: str | None = None, num_dialogues: int | None = None,
                 out: str | None = None, seed: int | None = None, models: dict[str, str] | None = None,
                 model: str | None = None) -> RunConfig:
    """load_config with the flow's overrides; `model` sets every role, then `models` per role."""
    cfg = load_config(config, {"catalog": catalog, "num_dialogues": num_dialogues, "out": out, "seed": seed})
    if model or models:
        unknown = sorted(set(models or {}) - set(ROLES))
        if unknown:
            raise InputError(f"models: unknown role(s) {', '.join(unknown)}; roles are {', '.join(ROLES)}")
        roles = cfg.models.model_dump()
        if model:
            roles = {role: model for role in roles}
        roles.update(models or {})
        cfg = RunConfig.model_validate({**cfg.model_dump(), "models": roles})
    return cfg


def plan_wave(records: dict[int, JobRecord], n: int, batch_size: int, parallelism: int) -> list[list[int]]:
    """Batches of the lowest job numbers not yet journaled, enough to reach n accepted at the
    acceptance rate seen so far (gaps left by failed batches come first, being lowest)."""
    accepted = sum(r.accepted for r in records.values())
    rate = accepted / len(records) if records else 1.0
    count = max(1, math.ceil((n - accepted) / max(rate, 0.1)))
    jobs: list[int] = []
    job = 0
    while len(jobs) < count:
        if job not in records:
            jobs.append(job)
        job += 1
    size = max(1, min(batch_size, math.ceil(len(jobs) / max(parallelism, 1))))
    return [jobs[i:i + size] for i in range(0, len(jobs), size)]


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
    summary = export_run(run_config, Journal(Path(run_config.out), run_config).load(), wall_time_s)
    return {"out_dir": str(summary.out_dir), "accepted": summary.accepted, "rejected": summary.rejected,
            "sft_rows": summary.sft_rows, "stats_path": str(summary.stats_path)}


def _task_runner(kind: str, dask_address: str | None, dask_workers: int) -> TaskRunner:
    if kind == "local":
        return ThreadPoolTaskRunner(max_workers=LOCAL_THREADS)
    if kind != "dask":
        raise InputError(f"task_runner must be 'local' or 'dask', not {kind!r}")
    from prefect_dask import DaskTaskRunner

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
    from prefect.context import FlowRunContext
    from prefect.settings import PREFECT_API_URL, temporary_settings

    if PREFECT_API_URL.value():
        return
    ctx = FlowRunContext.get()
    url = str(getattr(getattr(ctx, "client", None), "api_url", "") or "")
    if url.startswith("http"):
        stack.enter_context(temporary_settings({PREFECT_API_URL: url.rstrip("/")}))


def summary_markdown(stats: dict[str, Any], out_dir: str, waves: int, jobs: int, task_runner: str) -> str:
    """The run summary shown as a Prefect artifact: counts, validator pass rates, tokens, cost."""
    counts, usage = stats.get("counts", {}), stats.get("usage", {})
    lines = [
        "# utcgen dataset", "",
        f"Folder: `{out_dir}`  ", f"Task runner: {task_runner}, {waves} wave(s), {jobs} seed jobs journaled", "",
        "| requested | accepted | rejected attempts | SFT rows | acceptance rate |", "|---|---|---|---|---|",
        f"| {counts.get('requested')} | {counts.get('accepted')} | {counts.get('rejected')} | "
        f"{counts.get('sft_rows')} | {_pct(stats.get('acceptance_rate'))} |", "",
        "## Validators", "", "| stage | kind | evaluated | passed | pass rate |", "|---|---|---|---|---|",
    ]
    for name, stage in stats.get("validators", {}).get("stages", {}).items():
        lines.append(f"| {name} | {stage.get('kind')} | {stage.get('evaluated')} | {stage.get('passed')} | "
                     f"{_pct(stage.get('pass_rate'))} |")
    lines += [
        "", "## Usage", "", "| LLM calls | cached | prompt tokens | completion tokens | cost (USD) |",
        "|---|---|---|---|---|",
        f"| {usage.get('calls')} | {usage.get('cached_calls')} | {usage.get('prompt_tokens')} | "
        f"{usage.get('completion_tokens')} | {usage.get('cost_usd', 0):.4f} |",
    ]
    return "\n".join(lines) + "\n"


def _pct(rate: float | None) -> str:
    return "n/a" if rate is None else f"{100 * rate:.1f}%"


@flow(name="generate-dialogues", log_prints=False)
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
) -> dict[str, Any]:
    """Generate validated dialogues into a dataset folder; re-running resumes from the journal.

    `config` is a YAML run configuration (default configs/default.yaml); `catalog`,
    `num_dialogues`, `out` and `seed` override it; `model` sets every role's litellm model and
    `models` single roles. `task_runner="dask"` runs batches on a local Dask cluster of
    `dask_workers` processes, or on the scheduler at `dask_address`.
    """
    from prefect.artifacts import create_markdown_artifact

    logger = get_run_logger()
    start = time.monotonic()
    cfg = build_config(config, catalog, num_dialogues, out, seed, models, model)
    if problems := check_models(cfg):  # before any task: a missing key would fail every one of them
        raise InputError(problems)
    if batch_size < 1:
        raise InputError("batch_size must be at least 1")
    n, out_dir = cfg.num_dialogues, Path(cfg.out)
    journal = Journal(out_dir, cfg)  # refuses an --out made with another configuration
    records = journal.load()
    logger.info("%d dialogues -> %s (backend %s, catalog %s, runner %s); %d jobs already journaled",
                n, out_dir, cfg.backend(), cfg.catalog, task_runner, len(records))
    payload = cfg.model_dump(mode="json")
    parallelism = dask_workers if task_runner == "dask" else 1
    waves = 0
    with ExitStack() as stack:
        runner: TaskRunner | None = None
        while not select(records, n)[2]:
            check_fruitless(records)
            if runner is None:  # started only when there is work: a finished run needs no cluster
                runner = _task_runner(task_runner, dask_address, dask_workers)
                if task_runner == "dask":
                    _api_url_for_remote_tasks(stack)
                stack.enter_context(runner)
            batches = plan_wave(records, n, batch_size, parallelism)
            waves += 1
            logger.info("wave %d: %d jobs in %d batch(es), from job %d", waves, sum(map(len, batches)),
                        len(batches), batches[0][0])
            futures = runner.map(synthesise_batch, {"config": unmapped(payload), "jobs": batches})
            futures.wait()
            failed = [f for f in futures if not f.state.is_completed()]
            records = journal.load()
            accepted = select(records, n)[0]
            logger.info("wave %d done: %d/%d accepted in the leading jobs, %d jobs journaled", waves,
                        len(accepted), n, len(records))
            if failed:
                failed[0].result()  # raises the batch's error; finished jobs stay journaled
    wall = round(time.monotonic() - start, 2)
    summary = export_dataset_task(payload, wall)
    stats = json.loads(Path(summary["stats_path"]).read_text(encoding="utf-8"))
    usage = stats.get("usage", {})
    create_markdown_artifact(
        markdown=summary_markdown(stats, summary["out_dir"], waves, len(records), task_runner),
        key=ARTIFACT_KEY,
        description=f"utcgen: {summary['accepted']} dialogues in {summary['out_dir']}",
    )
    logger.info("done: %d accepted, %d rejected attempts, %d SFT rows, %s tokens, $%.4f in %.1fs -> %s",
                summary["accepted"], summary["rejected"], summary["sft_rows"], usage.get("total_tokens"),
                usage.get("cost_usd", 0.0), time.monotonic() - start, summary["out_dir"])
    return {**summary, "waves": waves, "jobs": len(records), "tokens": usage.get("total_tokens"),
            "cost_usd": usage.get("cost_usd"), "wall_time_s": wall}


if __name__ == "__main__":
    generate_dialogues()
