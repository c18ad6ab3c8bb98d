"""Prefect flow `evaluate-model`: one model on one benchmark, static or dynamic, then the report.

Everything lives in the library (`utcgen.pipeline.evaluation.run`): the flow only takes the
parameters, runs the evaluation as one task and publishes the report as an artifact. A re-run
with the same parameters resumes from the run folder's results/ (finished cases are skipped).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, Literal

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from ..pipeline.evaluation.run import EvalSettings, run_evaluation
from ..pipeline.settings.models import OFFLINE_MODEL

ARTIFACT_KEY = "utcgen-evaluation-report"


@task(name="evaluate-cases", cache_policy=NO_CACHE, persist_result=False)
def evaluate_cases(settings: dict[str, Any], out: str, max_in_flight: int, allow_config_change: bool) -> dict[str, Any]:
    """Evaluate every case not yet in `out`/results and write the report; returns where it is."""
    logger = get_run_logger()
    last = [-1]

    def on_progress(p) -> None:
        if p.done != last[0]:
            last[0] = p.done
            logger.info("%d/%d cases (%d errors), %d calls, %d tokens, $%.4f", p.done, p.target, p.errors,
                        p.spent.calls, p.spent.total_tokens, p.spent.cost_usd)

    start = time.monotonic()
    asyncio.run(run_evaluation(EvalSettings.model_validate(settings), Path(out), max_in_flight=max_in_flight,
                         allow_config_change=allow_config_change, on_progress=on_progress))
    return {"out": out, "report": str(Path(out) / "report.md"), "metrics": str(Path(out) / "metrics.json"),
            "wall_time_s": round(time.monotonic() - start, 2)}


@flow(name="evaluate-model", log_prints=False)
def evaluate_model(
    benchmark: str,
    model: str,
    out: str,
    mode: Literal["static", "dynamic"] = "static",
    api_base: str | None = None,
    tool_format: Literal["json", "native"] | None = None,
    user_model: str = OFFLINE_MODEL,
    voter_model: str | None = None,
    votes: list[int] | None = None,
    voting: bool = True,
    rubric_model: str | None = OFFLINE_MODEL,
    max_turns: int = 10,
    limit: int | None = None,
    max_in_flight: int = 8,
    max_new_tokens: int = 256,
    seed: int = 0,
    allow_config_change: bool = False,
) -> dict[str, Any]:
    """Evaluate `model` (litellm string, reference/<policy> or hf:PATH) on the benchmark folder into `out`.

    Parameters mirror `utcgen eval run`: `votes` is [n, m] (default [3, 3]), `voting=False` takes one
    proxy draft per turn, `rubric_model=None` skips ConvRel."""
    settings = EvalSettings(benchmark=benchmark, model=model, mode=mode, api_base=api_base, tool_format=tool_format,
                            user_model=user_model, voter_model=voter_model,
                            votes=(tuple(votes) if votes else (3, 3)) if voting else None,  # type: ignore[arg-type]
                            rubric_model=rubric_model, max_turns=max_turns, max_new_tokens=max_new_tokens,
                            seed=seed, limit=limit)
    get_run_logger().info("%s (%s) on %s -> %s", model, mode, benchmark, out)
    result = evaluate_cases(settings.model_dump(mode="json"), out, max_in_flight, allow_config_change)
    report = Path(result["report"])
    if report.is_file():
        create_markdown_artifact(markdown=report.read_text(encoding="utf-8"), key=ARTIFACT_KEY,
                                 description=f"utcgen eval: {model} ({mode}) on {benchmark}")
    return result

