"""A generate run on an imported catalog and PersonaHub-style personas, as a user runs it:
the importer's warnings reach stderr, and --persona-field picks the persona text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support.cli import STORE_ROLES, write_store_personas
from tests.support.paths import REPO

pytestmark = pytest.mark.slow


def test_generate_shows_catalog_warnings_and_reads_the_named_persona_field(tmp_path: Path) -> None:
    personas = write_store_personas(tmp_path / "hub.jsonl", field="input_persona", **{"synthesized text": "x"})
    out = tmp_path / "ds"
    env = {**os.environ, "UTCGEN_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO)}
    env.pop("UTCGEN_MODEL", None)
    catalog = "tests/fixtures/catalogs/store_openapi.yaml"
    cmd = [sys.executable, "-m", "utcgen.pipeline", "generate", "--catalog", catalog, "--personas", str(personas),
           "--persona-field", "input_persona", "--num-dialogues", "2", "--out", str(out), "--no-progress"]
    run = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    warnings = [line for line in run.stderr.splitlines() if line.startswith("catalog warning: ")]
    assert len(warnings) == 3
    assert warnings[1].startswith(f"catalog warning: {catalog}: tool #6 'replaceOrder' (PUT /store/order/{{id}}): ")
    rows = pq.read_table(out / "data" / "dialogues" / "train-00000-of-00001.parquet").to_pylist()
    assert len(rows) == 2
    assert all(row["user_persona"]["text"].startswith(STORE_ROLES) for row in rows)
