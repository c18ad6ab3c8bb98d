"""Shared fixtures. Tests never touch the network: offline env vars are set before any import."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import SHARED_EMBEDDINGS_ENV, fresh_cache
from tests.support.runs import scenario_lines_run
from tests.support.simulator import API_KEY_ENV, recording_gateway
from utcgen.pipeline.core.records import DECISION_STYLES
from utcgen.pipeline.retrieval.embeddings import Embedder
from utcgen.pipeline.scenarios import get, names


@pytest.fixture(scope="session", autouse=True)
def shared_embeddings(tmp_path_factory):
    """One embedding cache for the session's CLI runs (`tests.support.cli.fresh_cache` links it in)."""
    path = tmp_path_factory.mktemp("cli-embeddings")
    os.environ[SHARED_EMBEDDINGS_ENV] = str(path)
    yield path
    os.environ.pop(SHARED_EMBEDDINGS_ENV, None)


@pytest.fixture(scope="session")
def embedder(tmp_path_factory):
    """One loaded model for the whole session, with its own fresh disk cache."""
    return Embedder(cache_dir=tmp_path_factory.mktemp("embcache"))


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """For runs against the HTTP simulator: a fresh cache folder (returned; `fresh_cache`), the simulator's
    dummy key set, and no environment override of models or endpoint."""
    cache = fresh_cache(tmp_path)
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(cache))
    monkeypatch.setenv(API_KEY_ENV, "sk-simulator-dummy")
    monkeypatch.delenv("UTCGEN_MODEL", raising=False)
    monkeypatch.delenv("UTCGEN_API_BASE", raising=False)
    return cache


@pytest.fixture
def simulated_gateway() -> Iterator[None]:
    """For a test whose calls a simulator server answers (`tests.support.simulator.simulator_responder`):
    `Gateway.chat` records each typed request under its prompt, for this test only."""
    with recording_gateway():
        yield


@pytest.fixture(scope="session")
def scenario_run(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> dict[str, Any]:
    """One offline run for the whole session, exported: 48 dialogues, every scenario type and decision style
    mixed, on three lines of business. Modules that read such a run share it (and must not write into it):
    {"out", "catalog", "every" (every attempt), "accepted", "calls" (what the offline provider was asked)}."""
    return scenario_lines_run(tmp_path_factory.mktemp("scenario-run"), embedder, {
        "num_dialogues": 48, "seed": 3, "scenarios": {name: 1.0 for name in names() if not get(name).chained},
        "decision_styles": dict.fromkeys(DECISION_STYLES, 1.0)})

# Fixtures that start something heavy: a test using one is slow (`make test-fast` leaves it out) wherever it is.
SLOW_FIXTURES = {"prefect_api": "starts a Prefect server"}
E2E = Path(__file__).resolve().parent / "e2e"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/e2e (console script, subprocesses, Prefect, dask, wheel, training) is slow, and so
    is any test that asks for a heavy fixture."""
    for item in items:
        if item.path.resolve().is_relative_to(E2E) or any(name in SLOW_FIXTURES for name in getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
