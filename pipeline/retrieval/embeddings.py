"""Sentence embeddings from the locally packaged MiniLM model, with a content-addressed disk cache.

The cache is a folder of append-only shards: each batch of newly computed vectors is
written to its own `.npz` file with an atomic rename, so a crash or kill never
corrupts earlier shards and a re-run never re-embeds a text it has seen.
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..core.files import write_atomic
from ..core.progress import Progress, is_terminal
from .model import BACKENDS, DIMENSION, model_id, model_path, openvino_versions

_MAX_SHARDS = 64


def default_cache_dir() -> Path:
    return Path(os.environ.get("UTCGEN_CACHE_DIR", Path.home() / ".cache" / "utcgen")) / "embeddings"


def _short_hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def _bars_off() -> bool:
    """Whether TQDM_DISABLE (`--no-progress`) is set: read at each call, since tqdm reads it only when
    first imported, which may be before the CLI set it."""
    return os.environ.get("TQDM_DISABLE", "") not in ("", "0")


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class EmbeddingCache:
    """Maps text hashes to unit vectors, persisted as shards under `root/<model>`."""

    def __init__(self, root: Path | None, model: str) -> None:
        self.dir = None if root is None else Path(root) / _short_hash(model)
        self._rows: dict[bytes, np.ndarray] = {}
        if self.dir is not None and self.dir.is_dir():
            self._load()

    def _load(self) -> None:
        assert self.dir is not None
        shards = sorted(self.dir.glob("shard-*.npz"))
        for shard in shards:
            try:
                with np.load(shard) as data:
                    keys, vecs = data["keys"], data["vectors"]
            except (OSError, ValueError, KeyError):
                continue  # an unreadable shard only costs recomputation
            for key, vec in zip(keys, vecs):
                self._rows[key.tobytes()] = vec
        if len(shards) > _MAX_SHARDS:
            self._compact(shards)

    def _compact(self, shards: list[Path]) -> None:
        self._write(list(self._rows), np.stack(list(self._rows.values())))
        for shard in shards:
            shard.unlink(missing_ok=True)

    def _write(self, keys: list[bytes], vectors: np.ndarray) -> None:
        assert self.dir is not None
        self.dir.mkdir(parents=True, exist_ok=True)
        key_arr = np.frombuffer(b"".join(keys), dtype="V16")
        buffer = io.BytesIO()
        np.savez(buffer, keys=key_arr, vectors=vectors.astype(np.float32))
        write_atomic(self.dir / f"shard-{uuid.uuid4().hex}.npz", buffer.getvalue())

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, key: bytes) -> np.ndarray | None:
        return self._rows.get(key)

    def put_many(self, keys: list[bytes], vectors: np.ndarray) -> None:
        for key, vec in zip(keys, vectors):
            self._rows[key] = vec
        if self.dir is not None and keys:
            self._write(keys, vectors)


class Embedder:
    """Encodes texts to L2-normalised float32 vectors; the model loads on first use."""

    # 32 measured fastest on a 2-core CPU (≈17% over 128): smaller batches pad less and stay in cache.
    def __init__(self, cache_dir: Path | str | None = "default", batch_size: int = 32, backend: str = "torch") -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown embedding backend {backend!r}: one of {', '.join(BACKENDS)}")
        self.backend = backend
        # fp32 ONNX gives torch's vectors to ~1e-6, not bit for bit: each backend keeps its own cache
        self.model_id = model_id() + ("" if backend == "torch" else f"+{backend}")
        if backend == "openvino-int8":  # its quantised model depends on the quantiser's version too
            self.model_id += f"({openvino_versions()})"
        root = default_cache_dir() if cache_dir == "default" else cache_dir
        self.cache = EmbeddingCache(None if root is None else Path(root), self.model_id)
        self.batch_size = batch_size
        self._model: Any = None
        self._loading, self._running = threading.Lock(), threading.Lock()
        self.computed = 0  # texts actually run through the model (the rest came from cache)

    def load(self) -> None:
        """Load the model now, not on the first text the disk cache lacks (a server loads before it serves)."""
        self._load_model()

    def _load_model(self) -> Any:
        if self._model is not None:
            return self._model
        with self._loading:  # threads (a threaded server, a pool) must not each load the model
            if self._model is None:
                self._model = self._new_model()
        return self._model

    def _new_model(self) -> Any:
        path = model_path()
        if self.backend == "torch":
            from sentence_transformers import SentenceTransformer  # lazy: torch, seconds; other backends skip it

            return SentenceTransformer(str(path), device="cpu")
        if self.backend == "openvino-int8":
            from .openvino import OpenVinoEncoder  # lazy: the openvino extra, optional

            return OpenVinoEncoder(path, default_cache_dir().parent / "openvino" / _short_hash(self.model_id))
        from .onnx import OnnxEncoder  # lazy: ONNX Runtime (and its quantiser), only for the onnx backends

        cache = default_cache_dir().parent / "onnx" / _short_hash(model_id())
        return OnnxEncoder(path, cache, quantised=self.backend == "onnx-int8")

    def _run(self, texts: list[str], show_progress: bool) -> np.ndarray:
        model = self._load_model()
        with self._running:  # the model already uses every core: callers in threads take turns
            if self.backend != "torch":
                return model.encode(texts, batch_size=self.batch_size)
            return model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=show_progress and not _bars_off() and is_terminal(sys.stderr))

    def encode(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        keys = [text_key(t) for t in texts]
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        missing: dict[bytes, list[int]] = {}
        for i, key in enumerate(keys):
            vec = self.cache.get(key)
            if vec is None:
                missing.setdefault(key, []).append(i)
            else:
                out[i] = vec
        if missing:
            todo = list(missing)
            first = [missing[k][0] for k in todo]
            chunk = 8192  # persist progress in chunks so a kill loses little work
            # sentence-transformers draws its own bar (on a terminal only); the other backends are counted
            # a chunk at a time
            with self._progress(len(todo), show_progress and self.backend != "torch") as bar:
                for start in range(0, len(todo), chunk):
                    part = todo[start : start + chunk]
                    vecs = self._run([texts[i] for i in first[start : start + chunk]], show_progress).astype(np.float32)
                    self.cache.put_many(part, vecs)
                    for key, vec in zip(part, vecs):
                        out[missing[key]] = vec
                    bar.advance(len(part))
            self.computed += len(todo)
        return out

    def _progress(self, total: int, show: bool) -> Progress:
        """Texts embedded (`core.progress`) when `show`, and not under TQDM_DISABLE (`_bars_off`); else a
        display that shows nothing."""
        return Progress(total, name=f"embedding ({self.backend})", counted="texts", desc=f"embedding ({self.backend})",
                        unit="text", enabled=show and not _bars_off())
