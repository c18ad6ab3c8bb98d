"""The A.4 composite score against values computed by hand."""

import itertools
import random

import numpy as np
import pytest

from utcgen.pipeline.core.records import Tool
from utcgen.pipeline.retrieval.similarity import (
    NEAR_DUPLICATE_THRESHOLD,
    composite_similarities,
    composite_similarity,
    description_similarity,
    lcs_length,
    name_similarity,
    param_similarity,
)


def dp_lcs(a: str, b: str) -> int:
    prev = [0] * (len(b) + 1)
    for ca in a:
        cur = [0]
        for j, cb in enumerate(b):
            cur.append(prev[j] + 1 if ca == cb else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def tool(name, required=(), types=None, extra=()):
    types = types or {}
    props = {k: types.get(k, {"type": "string"}) for k in itertools.chain(required, extra)}
    return Tool(name=name, description="d", parameters={"type": "object", "properties": props, "required": list(required)})


def test_lcs_matches_dynamic_programming_on_random_strings():
    rng = random.Random(7)
    for _ in range(500):
        a = "".join(rng.choice("abc_d") for _ in range(rng.randint(0, 70)))
        b = "".join(rng.choice("abc_d") for _ in range(rng.randint(0, 70)))
        assert lcs_length(a, b) == dp_lcs(a, b), (a, b)


def test_name_similarity_by_hand():
    # "get_order" vs "get_orders": LCS 9, lengths 9 + 10 -> 18/19
    assert name_similarity("get_order", "GET_ORDERS") == pytest.approx(18 / 19)
    # "abc" vs "xyz": nothing shared
    assert name_similarity("abc", "xyz") == 0.0


def test_description_rescaling():
    assert description_similarity(1.0) == 1.0
    assert description_similarity(-1.0) == 0.0
    assert description_similarity(0.2) == pytest.approx(0.6)


def test_param_similarity_conventions():
    # both without required keys: S_set = 1, S_type = 0 (empty average) -> 0.5
    assert param_similarity(tool("a"), tool("b")) == 0.5
    # disjoint keys: S_set = 0, S_type = 0
    assert param_similarity(tool("a", ["x"]), tool("b", ["y"])) == 0.0
    # A = {x, y}, B = {x, z}; shared x with the same type: 1/2 * 1/3 + 1/2 * 1
    assert param_similarity(tool("a", ["x", "y"]), tool("b", ["x", "z"])) == pytest.approx(0.5 / 3 + 0.5)
    # shared keys, one type differs (date vs plain string): 1/2 * 1 + 1/2 * 1/2
    a = tool("a", ["x", "y"], {"y": {"type": "string", "format": "date"}})
    b = tool("b", ["x", "y"])
    assert param_similarity(a, b) == pytest.approx(0.75)
    # optional keys do not count
    assert param_similarity(tool("a", ["x"], extra=["q"]), tool("b", ["x"])) == 1.0


def test_composite_and_threshold_by_hand():
    a = tool("approve_training_request", ["request_id"], {"request_id": {"type": "integer"}})
    b = tool("approve_training_requests", ["request_id"], {"request_id": {"type": "integer"}})
    # name: 2*24/(24+25); desc: (1+0.8)/2 = 0.9; params: 1
    expected = 0.40 * (48 / 49) + 0.35 * 0.9 + 0.25 * 1.0
    score = composite_similarity(a, b, 0.8)
    assert score == pytest.approx(expected)
    assert score >= NEAR_DUPLICATE_THRESHOLD
    far = composite_similarity(tool("reset_password", ["user"]), tool("book_flight", ["origin"]), -0.1)
    assert far < NEAR_DUPLICATE_THRESHOLD
    assert NEAR_DUPLICATE_THRESHOLD == 0.70  # Appendix A.4


def test_the_scores_of_many_pairs_at_once_equal_those_pair_by_pair():
    rng = random.Random(11)
    letters = "ab_dé日Z9"  # upper case, non-ASCII and wide characters, as tool names may hold
    lengths = [0, 1, 5, 30, 63, 64, 65, 90]
    types = [{"type": "string"}, {"type": "integer"}, {"type": "string", "format": "date"}, {"type": ["null", "number"]}]
    tools = []
    for i in range(120):
        name = "".join(rng.choice(letters) for _ in range(rng.choice(lengths))) or ("" if i % 2 else "x")
        keys = rng.sample(["id", "date", "amount", "owner", "note"], rng.randint(0, 4))
        tools.append(tool(name, keys, {k: rng.choice(types) for k in keys}))
    a = [rng.randrange(len(tools)) for _ in range(2000)]
    b = [rng.randrange(len(tools)) for _ in range(2000)]
    cosines = [rng.uniform(-1.0, 1.0) for _ in range(2000)]
    batch = composite_similarities(tools, np.array(a), np.array(b), np.array(cosines))
    one_by_one = [composite_similarity(tools[i], tools[j], c) for i, j, c in zip(a, b, cosines)]
    assert batch == pytest.approx(one_by_one, abs=1e-12)
