"""`utcgen catalog stats` run as a user runs it, on a small crafted catalog with known answers."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.support.cli import UTCGEN
from tests.support.paths import REPO

pytestmark = pytest.mark.slow

TOOLS = [
    {"name": "approve_internal_training_request", "description": "Approve a pending internal training request.",
     "parameters": {"type": "object", "properties": {"request_id": {"type": "string"}}, "required": ["request_id"]},
     "line_of_business": "human_resources"},
    {"name": "approve_external_training_request", "description": "Approve a pending external training request.",
     "parameters": {"type": "object", "properties": {"request_id": {"type": "string"}}, "required": ["request_id"]},
     "line_of_business": "human_resources"},
    {"name": "book_meeting_room", "description": "Reserve a meeting room for a time slot.",
     "parameters": {"type": "object", "properties": {"room": {"type": "string"}, "start": {"type": "string"}},
                    "required": []},
     "line_of_business": "facilities"},
    {"name": "get_exchange_rate", "description": "Return the corporate exchange rate between two currencies.",
     "line_of_business": "finance"},
]


def run(tmp_path, *args):
    env = {**os.environ, "UTCGEN_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([UTCGEN, "catalog", "stats", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def test_catalog_stats_json_and_text(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS))
    result = run(tmp_path, str(path), "--json")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["tools"] == 4
    assert stats["lines_of_business"] == {"human_resources": 2, "facilities": 1, "finance": 1}
    assert stats["parameter_count_distribution"] == {"0": 1, "1": 2, "2": 1}
    assert stats["share_with_required_parameters"] == 0.5
    # the two training approvals are near duplicates of each other (A.4), the others of nothing
    assert stats["share_with_near_duplicate"] == 0.5
    text = run(tmp_path, str(path))
    assert text.returncode == 0 and "with a near-duplicate in top-5 50.0%" in text.stdout


def test_catalog_stats_on_a_bad_catalog_exits_2(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"name": "x", "description": ""}]))
    result = run(tmp_path, str(path))
    assert result.returncode == 2 and "description" in result.stderr


def test_catalog_stats_with_another_embedding_backend(tmp_path):
    """`--embeddings onnx` runs the same model through ONNX Runtime: the same vectors, so the same
    neighbours and figures as torch; a backend the CLI does not know is refused by name."""
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS))
    torch_run, onnx_run = (run(tmp_path, str(path), "--json", "--embeddings", backend) for backend in ("torch", "onnx"))
    assert torch_run.returncode == 0 and onnx_run.returncode == 0, onnx_run.stderr
    a, b = json.loads(torch_run.stdout), json.loads(onnx_run.stdout)
    assert a["share_with_near_duplicate"] == b["share_with_near_duplicate"] == 0.5
    assert abs(a["mean_cosine"] - b["mean_cosine"]) < 1e-5 and a["mean_cosine"] > 0
    assert list((tmp_path / "cache" / "onnx").glob("*/model.onnx"))  # it did run through ONNX
    refused = run(tmp_path, str(path), "--embeddings", "gpu")
    assert refused.returncode == 2 and "invalid choice: 'gpu'" in refused.stderr


CHAIN_TOOLS = [
    {"name": "list_pending_training_requests", "description": "List the training requests waiting for approval.",
     "line_of_business": "human_resources",
     "output_schema": {"type": "object", "properties": {"requests": {"type": "array", "items": {
         "title": "TrainingRequest", "type": "object",
         "properties": {"request_id": {"type": "string"}, "employee": {"type": "string"}}}}}}},
    *TOOLS,
]


def test_catalog_stats_counts_chain_pairs(tmp_path):
    """A list whose output schema holds `request_id` feeds both approvals; the other tools start and end
    nothing. The same figures in text."""
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(CHAIN_TOOLS))
    result = run(tmp_path, str(path), "--json")
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["chain_pairs"] == 2 and stats["chain_pairs_by_evidence"] == {"schema": 2}
    assert stats["tools_starting_chain"] == 1 and stats["tools_ending_chain"] == 2
    text = run(tmp_path, str(path))
    assert text.returncode == 0
    assert "chain pairs                    2 (schema 2): 1 tool starts one, 2 tools end one" in text.stdout
