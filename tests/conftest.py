"""Shared fixtures. Tests never touch the network: offline env vars are set before any import."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def embedder(tmp_path_factory):
    """One loaded model for the whole session, with its own fresh disk cache."""
    from utcgen.pipeline.retrieval.embeddings import Embedder

    return Embedder(cache_dir=tmp_path_factory.mktemp("embcache"))


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """For runs against the HTTP simulator: a fresh cache folder (returned), the simulator's
    dummy key set, and no environment override of models or endpoint."""
    from tests.support.simulator import API_KEY_ENV

    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(API_KEY_ENV, "sk-simulator-dummy")
    monkeypatch.delenv("UTCGEN_MODEL", raising=False)
    monkeypatch.delenv("UTCGEN_API_BASE", raising=False)
    return tmp_path / "cache"
