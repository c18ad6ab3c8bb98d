"""The openvino-int8 embedding backend against sentence-transformers: on the shipped catalog (its
calibration texts) and on tools it never saw (public tool formats of the test fixtures), quantised
once into a fresh cache and reused from there."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.paths import FIXTURES
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.core.files import TMP_PREFIX
from utcgen.pipeline.ingest.reader import load_catalog
from utcgen.pipeline.retrieval.embeddings import Embedder, default_cache_dir
from utcgen.pipeline.retrieval.model import index_text
from utcgen.pipeline.settings.config import RunConfig

pytestmark = pytest.mark.slow  # exports and quantises the model once (about 20 s)

UNSEEN = [FIXTURES / "bfcl" / "BFCL_v4_multiple.json", FIXTURES / "bfcl" / "BFCL_v4_parallel.json",
          *(FIXTURES / "catalogs" / name for name in ("bfcl_functions.jsonl", "mcp_tools_list.json", "music_app_tools.json",
                                                     "openai_tools.json", "petclinic_openapi.yaml", "store_openapi.yaml"))]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("openvino-cache")


@pytest.fixture(scope="module")
def shipped_texts() -> list[str]:
    return [index_text(t) for t in load_catalog("catalog/tools")]


@pytest.fixture(scope="module")
def unseen_texts() -> list[str]:
    return [index_text(t) for path in UNSEEN for t in load_catalog(str(path))]


@pytest.fixture(scope="module")
def quantised(cache: Path, shipped_texts: list[str], unseen_texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The backend's vectors of both text sets, from a cache it quantised the model into."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("UTCGEN_CACHE_DIR", str(cache))
        embedder = Embedder(backend="openvino-int8")
        return embedder.encode(shipped_texts), embedder.encode(unseen_texts)


def neighbours(vectors: np.ndarray, k: int = 5) -> list[set[int]]:
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -2)
    return [set(row) for row in np.argsort(-sims, axis=1)[:, :k]]


def test_openvino_int8_is_close_to_torch_and_keeps_most_neighbours(
        quantised: tuple[np.ndarray, np.ndarray], shipped_texts: list[str], unseen_texts: list[str]) -> None:
    for vectors, texts in zip(quantised, (shipped_texts, unseen_texts)):
        reference = Embedder(cache_dir=None).encode(texts)
        assert vectors.shape == reference.shape and vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        cosines = (vectors * reference).sum(axis=1)
        assert cosines.min() > 0.97 and cosines.mean() > 0.99, (cosines.min(), cosines.mean())
        recall = np.mean([len(a & b) / 5 for a, b in zip(neighbours(vectors), neighbours(reference))])
        assert recall > 0.85, recall


def test_the_model_is_quantised_once_and_has_its_own_caches(
        cache: Path, quantised: tuple[np.ndarray, np.ndarray], unseen_texts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(cache))
    [model] = (cache / "openvino").glob("*/int8/model.xml")
    stamp = model.stat().st_mtime_ns
    again = Embedder(backend="openvino-int8")
    vectors = again.encode([*unseen_texts, "a text no run has embedded"])
    assert again.computed == 1 and model.stat().st_mtime_ns == stamp  # the rest came from the vector cache
    assert np.array_equal(vectors[:-1], quantised[1])
    assert "openvino==" in again.model_id and "nncf==" in again.model_id
    assert again.cache.dir not in (Embedder().cache.dir, Embedder(backend="onnx-int8").cache.dir)
    assert str(default_cache_dir()).startswith(str(cache))
    assert not list((cache / "openvino").glob(f"*/{TMP_PREFIX}*")) and not list(model.parent.glob("*.onnx"))
    # the model itself, not the vector cache: a text's vector does not depend on the batch it came in
    model = Embedder(cache_dir=None, backend="openvino-int8")._load_model()
    assert np.allclose(model.encode(unseen_texts[:7]), quantised[1][:7], atol=1e-6)
    assert np.allclose(model.encode(unseen_texts[5:6]), quantised[1][5:6], atol=1e-6)


def test_the_backend_without_its_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    real = importlib.metadata.version

    def version(name: str) -> str:
        if name == "nncf":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    with pytest.raises(InputError, match=r"openvino-int8 needs the openvino extra, and nncf is not installed: "
                                         r"pip install 'utcgen\[openvino\]'"):
        Embedder(backend="openvino-int8")
    assert RunConfig.model_validate({"embeddings": "openvino-int8"}).embeddings == "openvino-int8"
