"""The Python API, `from utcgen import generate, evaluate, audit`: the calls the `utcgen` command makes.

Each function takes what the matching command takes, as keyword arguments, and returns data
instead of printing it: `generate` the dataset folder as a `datasets.DatasetDict`, `evaluate`
the run's report (`.metrics`), `audit` the audit's figures. The command-line modules parse flags,
call these (or `run_generation`, which `generate` wraps) and print; no step lives twice.

They run their event loop themselves, in a worker thread when the caller already runs one (a
notebook), so they are plain blocking calls everywhere.

May import: core, dialogue, scenarios, ingest, settings, retrieval, runner, llm, validators, export, synthesis, evaluation.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Literal, TypeVar

from datasets import DatasetDict
from pydantic import ValidationError

from .core.errors import InputError
from .evaluation.report import RunReport
from .evaluation.run import EvalSettings, run_evaluation
from .export.audit import audit_folder
from .export.dataset import DatasetSummary, load_split
from .export.fluency import TURNS as FLUENCY_TURNS
from .export.rows import CONFIGS
from .llm.gateway import shutdown
from .runner import RunStopped
from .runner.outdir import claimed
from .settings.config import RunConfig, load_config
from .settings.models import ROLES
from .synthesis.pool import run_pooled
from .synthesis.run import Engine

T = TypeVar("T")


def blocking(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine `make()` to the end: here, or in a worker thread when this thread's loop is running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def build_config(config: str | Path | RunConfig | None = None, *, model: str | None = None,
                 **overrides: Any) -> RunConfig:
    """A run configuration: a YAML file (default: the shipped one) or a `RunConfig`, then `overrides`
    (top-level keys of the YAML file; a section given replaces the file's section; None leaves a key alone)."""
    if isinstance(config, RunConfig):
        raw = config.model_dump()
        raw.update({k: v for k, v in overrides.items() if v is not None})
        if model:
            raw["models"] = dict.fromkeys(ROLES, model)
        try:
            return RunConfig.model_validate(raw)
        except ValueError as exc:
            raise InputError(f"generate: invalid settings: {exc}") from None
    return load_config(config, overrides, model=model)


def run_generation(config: RunConfig, *, force: bool = False, allow_config_change: bool = False,
                   on_progress: Callable[[Any], None] | None = None,
                   on_engine: Callable[[Any], None] | None = None, workers: int = 1) -> DatasetSummary:
    """Generate into `config.out` with its run lock held, resuming what a former run there left, and export
    the folder: the path of `utcgen generate` and `generate`. A run stopped early (budget, failures) still
    exports its finished jobs, then raises. `on_engine` sees the engine once it is built. `workers` > 1 runs
    the jobs in that many processes (`synthesis.pool`); this process keeps the lock and exports, once."""
    if workers < 1:
        raise InputError(f"workers must be at least 1 (1 = this process alone), not {workers}")

    async def run(engine: Engine) -> Any:
        try:
            if workers > 1:
                return await run_pooled(engine, on_progress, workers)
            return await engine.run(on_progress, light=True)  # job summaries: the export streams the journal
        finally:
            await shutdown()

    with claimed(config.out, force=force, command="utcgen generate"):
        engine = Engine(config, allow_config_change=allow_config_change)
        try:
            if on_engine is not None:
                on_engine(engine)
            try:
                records = blocking(lambda: run(engine))
            except RunStopped:
                engine.journal.touch()
                engine.export(wall_time_s=engine.journal.wall_time_s())
                raise
            engine.journal.touch()
            return engine.export(records, wall_time_s=engine.journal.wall_time_s())
        finally:
            engine.close()


def load_folder(out: str | Path, cache_dir: str | Path | None = None) -> DatasetDict:
    """Every config of a dataset folder as one `datasets.DatasetDict` (empty configs included)."""
    cache = Path(cache_dir) if cache_dir is not None else None
    return DatasetDict({name: load_split(Path(out), name, cache) for name in CONFIGS})


def generate(num_dialogues: int | None = None, out: str | Path | None = None, seed: int | None = None,
             config: str | Path | RunConfig | None = None, *, model: str | None = None, force: bool = False,
             allow_config_change: bool = False, cache_dir: str | Path | None = None, workers: int = 1,
             **overrides: Any) -> DatasetDict:
    """Generate validated dialogues into the dataset folder `out` and return its configs.

    `config` is a YAML run configuration (default: the shipped one) or a `RunConfig`; keyword
    overrides are its top-level keys (`catalog`, `personas`, `scenarios`, `decision_styles`, `llm`,
    ...). `model` sets the litellm model of every role (default: the offline backend, no network).
    Calling it again on the same `out` resumes, as `utcgen generate` does. `workers` > 1 runs the jobs in
    that many processes, as `utcgen generate --workers` does (same dataset).

    >>> from utcgen import generate
    >>> ds = generate(num_dialogues=3, out="out/demo", seed=7)                      # doctest: +SKIP
    >>> sorted(ds)                                                                   # doctest: +SKIP
    ['dialogues', 'preference', 'rejected', 'sft']
    >>> ds["sft"][0]["completion"][0]["role"]                                        # doctest: +SKIP
    'assistant'
    """
    settings = build_config(config, model=model, num_dialogues=num_dialogues,
                            out=str(out) if out is not None else None, seed=seed, **overrides)
    summary = run_generation(settings, force=force, allow_config_change=allow_config_change, workers=workers)
    return load_folder(summary.out_dir, cache_dir)


def evaluate(benchmark: str | Path, model: str, mode: Literal["static", "dynamic"] = "static", out: str | Path | None = None, *,
             max_in_flight: int = 8, allow_config_change: bool = False,
             on_progress: Callable[[Any], None] | None = None, **settings: Any) -> RunReport:
    """Evaluate `model` on a benchmark folder (`utcgen eval build`), `static` or `dynamic`; return the report.

    `out` is the run folder (metrics.json, report.md, per-case results; default: a new temporary
    folder); re-running on the same `out` resumes. Other keywords are `EvalSettings` fields
    (`api_base`, `tool_format`, `user_model`, `votes`, `rubric_model`, `max_turns`, `limit`, `seed`, ...).

    >>> from utcgen import evaluate
    >>> report = evaluate(benchmark="out/bench", model="reference/oracle", mode="static")  # doctest: +SKIP
    >>> report.metrics["acc"].value                                                      # doctest: +SKIP
    1.0
    """
    try:
        spec = EvalSettings(benchmark=str(benchmark), model=model, mode=mode, **settings)
    except ValidationError as exc:
        raise InputError(f"evaluate: invalid settings: {exc}") from None
    folder = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="utcgen-eval-"))
    return blocking(lambda: run_evaluation(spec, folder, max_in_flight=max_in_flight,
                                           allow_config_change=allow_config_change, on_progress=on_progress))


def audit(folder: str | Path, fluency_turns: int = FLUENCY_TURNS) -> dict[str, Any]:
    """Every rule validator's pass rate over every dialogue of `folder` (no early stop), acceptance, turns
    and the data-quality figures beside their targets: what `utcgen audit --json` prints. Fluency is scored
    on at most `fluency_turns` turns per role (0: not measured; without the `fluency` extra it is not
    measured either, and the figures say why).

    >>> from utcgen import audit
    >>> figures = audit("out/demo")                                # doctest: +SKIP
    >>> figures["validators"]["toolargs"]["pass_rate"]             # doctest: +SKIP
    1.0
    """
    return audit_folder(folder, fluency_turns=fluency_turns)[0]
