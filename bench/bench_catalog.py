"""Catalog-scale benchmark: a synthetic 100,000-tool catalog through loading (read from a file
and checked), embedding, indexing, k=5 neighbours of every tool and the stats computation, with
peak memory.

Usage: python bench/bench_catalog.py [--tools 100000] [--k 5] [--embeddings openvino-int8] [--compare 2000]
Writes bench/out/catalog.json. The catalog path runs with `--embeddings` (the run config's
`embeddings`); first, on `--compare` of the same texts, every backend's encoding rate is measured
against plain sentence-transformers (fp32, torch) in the same minute, with each backend's cosine to
its vectors and recall@5 of their neighbours. The embedding cache is a fresh temporary folder, so the
first pass measures real encoding (the model files, exported and quantised once, stay in the user's
cache); a second pass measures a cached re-run. On the same vectors, the exact (flat) index and the
approximate (IVF) one the engine uses above `synthesis.exact_search_up_to` tools are built and
searched, and the IVF's recall@5 (the share of each tool's exact 5 neighbours it also returns) is
reported; its build is checked to give the same neighbours twice (a resumed run must draw the same
distractors). The machine's load average at the start and the end is recorded beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from utcgen.pipeline.core.records import Tool
from utcgen.pipeline.ingest.reader import load_catalog
from utcgen.pipeline.retrieval.embeddings import BACKENDS, Embedder
from utcgen.pipeline.retrieval.index import ToolIndex, build_index, neighbours
from utcgen.pipeline.retrieval.model import index_text
from utcgen.pipeline.retrieval.stats import catalog_stats

VERBS = ["get", "list", "create", "update", "approve", "reject", "cancel", "search", "export", "assign"]
OBJECTS = ["invoice", "purchase_order", "ticket", "expense_report", "leave_request", "shipment", "contract",
           "asset", "lead", "opportunity", "training_request", "supplier", "work_order", "refund", "budget"]
QUALIFIERS = ["internal", "external", "pending", "overdue", "regional", "archived", "draft", "priority", "bulk", ""]
TYPES = [{"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"},
         {"type": "string", "format": "date"}]


def synthetic_catalog(n: int, seed: int = 0) -> list[Tool]:
    rng = random.Random(seed)
    tools = []
    for i in range(n):
        verb, obj, qual = rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(QUALIFIERS)
        name = "_".join(p for p in (verb, qual, obj) if p) + f"_{i}"
        params = {f"{obj}_id" if j == 0 else f"field_{rng.randint(0, 30)}": rng.choice(TYPES)
                  for j in range(rng.randint(0, 6))}
        required = [k for k in params if rng.random() < 0.6]
        desc = (f"{verb.capitalize()} {qual + ' ' if qual else ''}{obj.replace('_', ' ')} records "
                f"for unit {rng.randint(1, 400)} in region {rng.choice(['EMEA', 'APAC', 'AMER'])}.")
        tools.append(Tool(name=name, description=desc,
                          parameters={"type": "object", "properties": params, "required": required}))
    return tools


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def approximate_vs_exact(index: ToolIndex, k: int) -> dict[str, float]:
    """Build and all-neighbours times of the flat and IVF indexes on the index's vectors, and recall@k."""
    out: dict[str, float] = {}
    found = {}
    for name, exact_up_to in (("exact", len(index)), ("ivf", 0)):
        t = time.perf_counter()
        built = build_index(index.vectors, exact_up_to)
        out[f"{name}_build_s"] = time.perf_counter() - t
        t = time.perf_counter()
        found[name] = neighbours(built, index.vectors, k)[1]
        out[f"{name}_knn_all_s"] = time.perf_counter() - t
    exact, approx = found["exact"], found["ivf"]
    hits = sum(len(set(a[a >= 0]) & set(e[e >= 0])) for a, e in zip(approx, exact))
    out[f"ivf_recall_at_{k}"] = hits / max(1, int((exact >= 0).sum()))
    again = neighbours(build_index(index.vectors, 0), index.vectors, k)[1]
    out["ivf_rebuild_identical"] = float(bool((again == approx).all()))
    return out


def backends_vs_torch(texts: list[str], k: int) -> dict[str, float]:
    """Texts per second of each backend over plain sentence-transformers on the same texts, measured
    back to back (torch between the others, so a change of load shows), with cosines and recall@k."""
    import numpy as np

    out: dict[str, float] = {}
    vectors, rates = {}, {}
    for backend in ("torch", *[b for b in BACKENDS if b != "torch"], "torch"):
        embedder = Embedder(cache_dir=None, backend=backend)
        embedder.encode(texts[:64])  # loads (and the first time exports) the model
        t = time.perf_counter()
        vectors[backend] = embedder.encode(texts)
        rates.setdefault(backend, []).append(len(texts) / (time.perf_counter() - t))
    torch_rate = sum(rates["torch"]) / len(rates["torch"])
    out["torch_texts_per_s"] = torch_rate
    reference = vectors["torch"]
    sims = reference @ reference.T
    np.fill_diagonal(sims, -2)
    exact = np.argsort(-sims, axis=1)[:, :k]
    for backend in BACKENDS[1:]:
        v = vectors[backend]
        out[f"{backend}_texts_per_s"] = rates[backend][0]
        out[f"{backend}_speedup_vs_torch"] = rates[backend][0] / torch_rate
        out[f"{backend}_min_cosine_to_torch"] = float((v * reference).sum(axis=1).min())
        own = v @ v.T
        np.fill_diagonal(own, -2)
        found = np.argsort(-own, axis=1)[:, :k]
        out[f"{backend}_recall_at_{k}_vs_torch"] = float(np.mean([len(set(a) & set(b)) / k for a, b in zip(found, exact)]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=100_000)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--embeddings", choices=BACKENDS, default="openvino-int8",
                        help="the backend of the catalog path")
    parser.add_argument("--compare", type=int, default=2000, help="texts for the backend comparison (0: skip)")
    args = parser.parse_args()
    figures: dict[str, float | str] = {"tools": args.tools, "embeddings": args.embeddings,
                                       "load_average_1m_at_start": os.getloadavg()[0]}
    t = time.perf_counter()
    tools = synthetic_catalog(args.tools)
    figures["build_catalog_s"] = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:  # the same tools as a file, read and checked as a user's would be
        path = Path(tmp) / "tools.json"
        path.write_text(json.dumps([tool.model_dump(exclude_none=True) for tool in tools]), encoding="utf-8")
        t = time.perf_counter()
        loaded = load_catalog(str(path))
        figures["load_catalog_s"] = time.perf_counter() - t
        assert [tool.name for tool in loaded] == [tool.name for tool in tools]
    if args.compare:
        figures.update(backends_vs_torch([index_text(tool) for tool in tools[:args.compare]], args.k))
    with tempfile.TemporaryDirectory() as cache:
        embedder = Embedder(cache_dir=cache, backend=args.embeddings)
        t = time.perf_counter()
        embedder._load_model()
        figures["model_load_s"] = time.perf_counter() - t
        t = time.perf_counter()
        index = ToolIndex(tools, embedder, show_progress=False)
        figures["embed_and_index_s"] = time.perf_counter() - t
        figures["tools_per_s"] = args.tools / figures["embed_and_index_s"]
        t = time.perf_counter()
        index.all_neighbours(args.k)
        figures["knn_all_s"] = time.perf_counter() - t
        figures["embed_index_knn_stats_s"] = 0.0  # filled below: the "in under 3 minutes" figure
        t = time.perf_counter()
        stats = catalog_stats(tools, k=args.k, index=index)
        figures["stats_s"] = time.perf_counter() - t  # reuses the index's vectors and neighbours
        figures["embed_index_knn_stats_s"] = (figures["embed_and_index_s"] + figures["knn_all_s"]  # type: ignore[operator]
                                              + figures["stats_s"])
        figures["peak_rss_catalog_path_mb"] = peak_rss_mb()  # the comparisons, before it, and the path itself
        figures.update(approximate_vs_exact(index, args.k))
        t = time.perf_counter()
        again = Embedder(cache_dir=cache, backend=args.embeddings)
        ToolIndex(tools, again)
        figures["cached_reembed_and_index_s"] = time.perf_counter() - t
        figures["cached_texts_computed"] = again.computed
    figures["peak_rss_mb"] = peak_rss_mb()
    figures["load_average_1m_at_end"] = os.getloadavg()[0]
    figures["share_with_near_duplicate"] = stats.share_with_near_duplicate
    out = Path(__file__).parent / "out"
    out.mkdir(exist_ok=True)
    (out / "catalog.json").write_text(json.dumps(figures, indent=2))
    for key, value in figures.items():
        print(f"{key:36s} {value:,.3f}" if isinstance(value, float) else f"{key:36s} {value}")


if __name__ == "__main__":
    main()
