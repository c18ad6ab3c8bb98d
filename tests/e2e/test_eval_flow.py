"""The `evaluate-model` Prefect flow on a temporary Prefect server: a run, then a resumed run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.eval_bench import benchmark

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def prefect_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    from prefect.settings import PREFECT_HOME, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    mp = pytest.MonkeyPatch()
    mp.setenv("UTCGEN_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    mp.delenv("UTCGEN_MODEL", raising=False)
    try:
        with temporary_settings({PREFECT_HOME: tmp_path_factory.mktemp("prefect-home")}), \
                prefect_test_harness(server_startup_timeout=180):
            yield
    finally:
        mp.undo()


def test_evaluate_model_flow_writes_the_report_and_resumes(prefect_api: None, tmp_path: Path) -> None:
    from utcgen.flows.evaluate_model import evaluate_model

    out = tmp_path / "run"
    result = evaluate_model(benchmark=str(benchmark(tmp_path)), model="utcgen-offline/default", out=str(out),
                            mode="dynamic", votes=[2, 3], max_turns=6, limit=3)
    assert Path(result["report"]).is_file()
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["counts"]["scored"] == 3 and metrics["settings"]["votes"] == [2, 3]
    first = {p.name: p.stat().st_mtime_ns for p in (out / "results").glob("*.json")}
    again = evaluate_model(benchmark=str(benchmark(tmp_path)), model="utcgen-offline/default", out=str(out),
                           mode="dynamic", votes=[2, 3], max_turns=6, limit=3)
    assert again["report"] == result["report"]
    assert {p.name: p.stat().st_mtime_ns for p in (out / "results").glob("*.json")} == first  # nothing redone
