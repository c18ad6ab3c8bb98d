"""The ONNX embedding backends against sentence-transformers on the same texts: the shipped catalog's
tools as the index embeds them."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import numpy as np
import pytest

from utcgen.pipeline.core.files import TMP_PREFIX
from utcgen.pipeline.ingest.reader import load_catalog
from utcgen.pipeline.retrieval.embeddings import Embedder, default_cache_dir
from utcgen.pipeline.retrieval.model import index_text
from utcgen.pipeline.settings.config import RunConfig

pytestmark = pytest.mark.slow  # exports the model once (a few seconds)


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return [index_text(t) for t in load_catalog("catalog/tools")]


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


def _stderr_of(script: str, arg: str, terminal: bool) -> str:
    """What `script` writes to stderr, a pseudo-terminal's or a pipe's."""
    env = {k: v for k, v in os.environ.items() if k != "TQDM_DISABLE"}
    if not terminal:
        done = subprocess.run([sys.executable, "-c", script, arg], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stderr
    parent, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a bar needs columns to draw in
    proc = subprocess.Popen([sys.executable, "-c", script, arg], env=env, stdout=subprocess.DEVNULL, stderr=child)
    os.close(child)
    out = b""
    while True:
        try:
            chunk = os.read(parent, 65536)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        out += chunk
    os.close(parent)
    assert proc.wait(timeout=300) == 0, out.decode(errors="replace")
    return out.decode(errors="replace")


@pytest.mark.parametrize(("off", "terminal"), [(False, True), (True, True), (False, False)])
def test_the_sentence_transformers_bar_only_on_a_terminal_and_never_under_no_progress(off: bool, terminal: bool) -> None:
    """In a process of its own: tqdm is imported before TQDM_DISABLE is set, as in the CLI, so tqdm's
    own reading of it at import cannot be what silences the bar. A pipe or a file gets no bar."""
    script = ("import os, sys\nimport tqdm\n"
              "if sys.argv[1] == 'off':\n    os.environ['TQDM_DISABLE'] = '1'\n"
              "from utcgen.pipeline.retrieval.embeddings import Embedder\n"
              "Embedder(cache_dir=None).encode(['one text', 'another text'], show_progress=True)\n")
    err = _stderr_of(script, "off" if off else "on", terminal)
    assert ("Batches" in err) is (terminal and not off)
