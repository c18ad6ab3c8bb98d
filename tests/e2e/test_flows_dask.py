"""The Dask task runner gives the same dataset as the local one.

Both runs happen in one subprocess with no Prefect server configured, so this also
covers the flows' offline path: Prefect's temporary local server, whose address the
flow hands to the Dask worker processes. The LLM response cache is off, so both runs
make every call and their records differ only in `generation.created_at`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.paths import REPO
from tests.support.runs import rows

pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent(
    """
    import json, sys
    from utcgen.flows.generate_dialogues import generate_dialogues

    config, local_out, dask_out = sys.argv[1:4]
    common = dict(config=config, num_dialogues=6, seed=3, batch_size=2)
    local = generate_dialogues(out=local_out, task_runner="local", **common)
    dask = generate_dialogues(out=dask_out, task_runner="dask", dask_workers=2, **common)
    print("RESULT " + json.dumps({"local": local, "dask": dask}))
    """
)


def test_dask_runner_matches_local_runner(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    cache = tmp_path_factory.getbasetemp() / "flows-utcgen-cache"
    cache.mkdir(exist_ok=True)
    config = tmp_path / "run.yaml"
    config.write_text("llm:\n  cache: false\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PREFECT_HOME=str(tmp_path / "prefect-home"), PREFECT_SERVER_ANALYTICS_ENABLED="false",
               UTCGEN_CACHE_DIR=str(cache), LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false", PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="180")
    env.pop("UTCGEN_MODEL", None)
    env.pop("UTCGEN_API_BASE", None)
    local_out, dask_out = tmp_path / "local", tmp_path / "dask"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(config), str(local_out), str(dask_out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "Creating a new Dask cluster" in proc.stderr
    assert proc.stderr.count("Starting temporary server") == 1  # the workers used the flow's server
    result = json.loads(proc.stdout.split("RESULT ", 1)[1])
    assert result["local"]["accepted"] == result["dask"]["accepted"] == 6

    local_rows, dask_rows = rows(local_out, "dialogues"), rows(dask_out, "dialogues")
    assert [r["id"] for r in local_rows] == [r["id"] for r in dask_rows]
    assert len({r["id"] for r in local_rows}) == 6
    assert local_rows == dask_rows
    for config_name in ("sft", "rejected"):
        assert rows(local_out, config_name) == rows(dask_out, config_name)
