"""Shared fixtures. Tests never touch the network: offline env vars are set before any import."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def embedder(tmp_path_factory):
    """One loaded model for the whole session, with its own fresh disk cache."""
    from utcgen.pipeline.retrieval.embeddings import Embedder

    return Embedder(cache_dir=tmp_path_factory.mktemp("embcache"))
