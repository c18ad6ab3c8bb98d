"""The ONNX embedding backends against sentence-transformers on the same texts: the shipped catalog's
tools as the index embeds them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from utcgen.pipeline.core.files import TMP_PREFIX
from utcgen.pipeline.ingest.reader import load_catalog
from utcgen.pipeline.retrieval.embeddings import Embedder, default_cache_dir
from utcgen.pipeline.retrieval.index import tool_text
from utcgen.pipeline.settings.config import RunConfig

pytestmark = pytest.mark.slow  # exports the model once (a few seconds)


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return [tool_text(t) for t in load_catalog("catalog/tools")]


@pytest.fixture(scope="module")
def reference(texts: list[str]) -> np.ndarray:
    return Embedder(cache_dir=None).encode(texts)


def neighbours(vectors: np.ndarray, k: int = 5) -> list[set[int]]:
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -2)
    return [set(row) for row in np.argsort(-sims, axis=1)[:, :k]]


def test_onnx_fp32_gives_the_same_vectors(texts: list[str], reference: np.ndarray) -> None:
    vectors = Embedder(cache_dir=None, backend="onnx").encode(texts)
    assert vectors.shape == reference.shape and vectors.dtype == np.float32
    assert np.abs(vectors - reference).max() < 1e-4
    assert neighbours(vectors) == neighbours(reference)


def test_onnx_int8_is_close_and_keeps_most_neighbours(texts: list[str], reference: np.ndarray) -> None:
    vectors = Embedder(cache_dir=None, backend="onnx-int8").encode(texts)
    cosines = (vectors * reference).sum(axis=1)
    assert cosines.min() > 0.95 and cosines.mean() > 0.98
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    recall = np.mean([len(a & b) / 5 for a, b in zip(neighbours(vectors), neighbours(reference))])
    assert recall > 0.85, recall


def test_the_export_is_made_once_and_each_backend_has_its_own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path))
    Embedder(backend="onnx").encode(["warm"])
    [exported] = (tmp_path / "onnx").glob("*/model.onnx")
    stamp = exported.stat().st_mtime_ns
    torch_run, onnx_run = Embedder(), Embedder(backend="onnx")
    onnx_run.encode(["warm", "new"])
    assert exported.stat().st_mtime_ns == stamp and onnx_run.computed == 1  # "warm" came from its cache
    assert torch_run.cache.dir != onnx_run.cache.dir and str(default_cache_dir()).startswith(str(tmp_path))
    assert not list((tmp_path / "onnx").glob(f"*/{TMP_PREFIX}*"))


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown embedding backend 'gpu'"):
        Embedder(backend="gpu")
    with pytest.raises(ValueError, match="embeddings"):
        RunConfig.model_validate({"embeddings": "gpu"})


def test_every_backend_shows_its_progress_when_asked(texts: list[str], capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """sentence-transformers draws its own bar; the ONNX and OpenVINO backends count the texts they embed
    (a catalog of many thousand tools takes minutes), and `--no-progress` (TQDM_DISABLE) silences them."""
    monkeypatch.delenv("TQDM_DISABLE", raising=False)  # an in-process `--no-progress` of an earlier test sets it
    Embedder(cache_dir=None, backend="onnx").encode(texts[:50], show_progress=True)
    err = capsys.readouterr().err
    assert "embedding (onnx)" in err and "50/50" in err
    Embedder(cache_dir=None, backend="onnx").encode(texts[:50])
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("TQDM_DISABLE", "1")
    Embedder(cache_dir=None, backend="onnx").encode(texts[:50], show_progress=True)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("off", [False, True])
def test_no_progress_silences_the_sentence_transformers_bar(off: bool) -> None:
    """In a process of its own: tqdm is imported before TQDM_DISABLE is set, as in the CLI, so tqdm's
    own reading of it at import cannot be what silences the bar."""
    script = ("import os, sys\nimport tqdm\n"
              "if sys.argv[1] == 'off':\n    os.environ['TQDM_DISABLE'] = '1'\n"
              "from utcgen.pipeline.retrieval.embeddings import Embedder\n"
              "Embedder(cache_dir=None).encode(['one text', 'another text'], show_progress=True)\n")
    env = {k: v for k, v in os.environ.items() if k != "TQDM_DISABLE"}
    done = subprocess.run([sys.executable, "-c", script, "off" if off else "on"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert ("Batches" in done.stderr) is not off
