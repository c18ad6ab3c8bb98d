"""Distractor retrieval on a small crafted catalog whose true neighbours are known."""

import numpy as np

from utcgen.pipeline.core.records import Tool
from utcgen.pipeline.retrieval.embeddings import Embedder
from utcgen.pipeline.retrieval.index import ToolIndex
from utcgen.pipeline.retrieval.stats import catalog_stats


def t(name, desc, *params):
    props = {p: {"type": "string", "description": p} for p in params}
    return Tool(name=name, description=desc, parameters={"type": "object", "properties": props, "required": list(params)})


CATALOG = [
    t("approve_internal_training_request", "Approve a pending internal training course request for an employee.", "request_id"),
    t("approve_external_training_request", "Approve a pending external (third-party) training course request.", "request_id"),
    t("approve_all_training_requests", "Approve every pending training request awaiting your decision."),
    t("get_purchase_order_by_number", "Look up a purchase order by its PO number.", "po_number"),
    t("list_purchase_orders_by_supplier", "List purchase orders placed with a given supplier.", "supplier_id"),
    t("get_open_purchase_orders", "List purchase orders that are still open.", ),
    t("book_meeting_room", "Reserve a meeting room in an office building.", "room_id", "start"),
    t("reset_user_password", "Reset the password of a user account in the directory.", "user_id"),
    t("unlock_user_account", "Unlock a user account that was locked after failed sign-ins.", "user_id"),
]


def names(neighbours):
    return [n.tool.name for n in neighbours]


def test_distractors_are_true_neighbours(embedder):
    index = ToolIndex(CATALOG, embedder)
    d = names(index.distractors(CATALOG[0], k=2))
    assert set(d) == {"approve_external_training_request", "approve_all_training_requests"}
    d = names(index.distractors(CATALOG[3], k=2))
    assert set(d) == {"list_purchase_orders_by_supplier", "get_open_purchase_orders"}
    assert names(index.distractors(CATALOG[7], k=1)) == ["unlock_user_account"]


def test_distractors_exclude_self_sorted_and_k_sized(embedder):
    index = ToolIndex(CATALOG, embedder)
    for tool in CATALOG:
        found = index.distractors(tool, k=5)
        assert len(found) == 5
        assert tool.name not in names(found)
        cos = [n.cosine for n in found]
        assert cos == sorted(cos, reverse=True)
        assert all(-1.0 <= c <= 1.0001 for c in cos)


def test_a_look_alike_that_says_all_the_tool_says_is_passed_over(embedder):
    """GitHub's catalog holds `update_issue_body` beside `issue_write`, whose description and
    parameters hold every word of what the first does: only a parameter's small print could set it
    apart, so the next nearest tool stands in, for a seed in the catalog and for one outside it alike."""
    seed = t("update_issue_body", "Update the body of an issue.", "owner", "repo", "issue_number", "body", "login")
    # 'login' is a parameter issue_write lacks: small print, not what the tool does, so it sets nothing apart
    superset = t("issue_write", "Create or update an issue: its title, body, labels and state.",
                 "owner", "repo", "issue_number", "body", "title", "labels", "state")
    tools = [seed, superset, *CATALOG]
    index = ToolIndex(tools, embedder)
    found = names(index.distractors(seed, k=3))
    assert "issue_write" not in found and len(found) == 3
    assert "update_issue_body" in names(index.distractors(superset, k=3))  # the other way, its own words set it apart
    outside = t("update_issue_body", "Update an issue's body.", "owner", "repo", "issue_number", "body")  # not the catalog's
    assert "issue_write" not in names(index.distractors(outside, k=3))
    _cos, ids = index.all_neighbours(3)
    assert tools[ids[0][0]].name == "issue_write"  # it is the nearest: only the distractors pass it over


def test_distractors_for_tool_outside_catalog(embedder):
    index = ToolIndex(CATALOG, embedder)
    probe = t("approve_training_request", "Approve a training request for an employee.", "request_id")
    assert names(index.distractors(probe, k=3))[0].startswith("approve_")


def test_embedding_cache_avoids_recomputation(tmp_path):
    texts = ["reset a password", "book a room", "reset a password"]
    first = Embedder(cache_dir=tmp_path)
    a = first.encode(texts)
    assert first.computed == 2  # duplicates are embedded once
    second = Embedder(cache_dir=tmp_path)
    b = second.encode(texts)
    assert second.computed == 0
    np.testing.assert_allclose(a, b)
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    # a corrupt shard costs recomputation, never a crash
    shard = next(tmp_path.rglob("shard-*.npz"))
    shard.write_bytes(b"not a zip")
    third = Embedder(cache_dir=tmp_path)
    third.encode(texts)
    assert third.computed == 2


def test_load_loads_the_model_a_cached_text_never_loads(tmp_path):
    """A server warms its embedder before it serves: embedding a text the disk cache holds would not."""
    Embedder(cache_dir=tmp_path).encode(["warm-up"])
    warmed = Embedder(cache_dir=tmp_path)
    warmed.encode(["warm-up"])
    assert warmed._model is None  # the text came from the cache
    warmed.load()
    assert warmed._model is not None and warmed.encode(["something new"]).shape == (1, 384)


def test_catalog_stats_on_crafted_catalog(embedder):
    stats = catalog_stats(CATALOG, k=2, embedder=embedder)
    assert stats.tools == len(CATALOG)
    assert stats.share_with_required_parameters == 7 / 9
    assert stats.parameter_count_distribution == {0: 2, 1: 6, 2: 1}
    # the training-approval family is a near-duplicate family under A.4
    assert stats.share_with_near_duplicate >= 2 / 9
    assert 0.0 < stats.mean_composite_similarity < 1.0
    assert "with required parameters" in stats.to_text()


def test_above_the_threshold_the_index_is_ivf_and_finds_the_same_neighbours(embedder):
    exact = ToolIndex(CATALOG, embedder)
    approx = ToolIndex(CATALOG, embedder, exact_up_to=4)
    assert exact.exact and not approx.exact
    assert type(approx.index).__name__ == "IndexIVFFlat"
    for tool in CATALOG:  # 9 tools make one cluster, scanned whole: the same neighbours, same order
        assert names(approx.distractors(tool, k=3)) == names(exact.distractors(tool, k=3))


def test_the_ivf_index_is_built_the_same_every_time_and_finds_nearly_every_neighbour():
    """A resumed run must draw the same distractors: the clusters may not depend on chance or thread
    timing. Catalog vectors gather in families (near duplicates), as these points do around centres."""
    from utcgen.pipeline.retrieval.index import build_index, ivf_clusters, neighbours

    rng = np.random.default_rng(0)
    centres = rng.normal(size=(300, 32))
    vectors = (centres[rng.integers(0, 300, 25_000)] + 0.35 * rng.normal(size=(25_000, 32))).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    first = build_index(vectors, exact_up_to=0)
    assert first.nlist == ivf_clusters(25_000) == 512 and first.nprobe == 8
    found = neighbours(first, vectors, 5)[1]
    assert (found == neighbours(build_index(vectors, exact_up_to=0), vectors, 5)[1]).all()
    exact = neighbours(build_index(vectors, exact_up_to=len(vectors)), vectors, 5)[1]
    recall = np.mean([len(set(a) & set(e)) / 5 for a, e in zip(found, exact)])
    assert recall > 0.95, recall


def test_threads_asking_at_once_share_one_model(tmp_path):
    """A threaded server answering offline calls embeds from many threads at the first request:
    the model is loaded once, and every thread gets the same vectors."""
    from concurrent.futures import ThreadPoolExecutor

    class Counting(Embedder):
        loads = 0

        def _new_model(self):
            Counting.loads += 1
            return super()._new_model()

    embedder = Counting(cache_dir=None)
    texts = [f"check the status of order {i}" for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        vectors = list(pool.map(lambda t: embedder.encode([t])[0], texts))
    assert Counting.loads == 1
    assert np.allclose(np.stack(vectors), Embedder(cache_dir=None).encode(texts), atol=1e-5)
