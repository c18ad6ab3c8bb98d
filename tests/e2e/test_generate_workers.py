"""`utcgen generate --workers N` run as a user runs it: the same dataset as one process, jobs journaled by
several processes, resumes across worker counts, and the flag's checks."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.support.cli import UTCGEN, generate, generate_env
from tests.support.paths import REPO
from tests.support.runs import lines_subset

pytestmark = pytest.mark.slow

N = "8"


def rows(out: Path, config: str) -> list[dict[str, Any]]:
    """A config's exported rows without their creation times."""
    table = pq.read_table(out / "data" / config).to_pylist()
    for row in table:
        row.pop("created_at", None)
        if isinstance(row.get("generation"), dict):
            row["generation"].pop("created_at", None)
    return table


def jobs(out: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (out / "journal").glob("job-*.json")}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One shared cache (embeddings computed once, of one line of business's tools and personas; LLM reply
    cache off, so every run makes every call), and the single-process run of N dialogues the worker runs
    are compared with."""
    root = tmp_path_factory.mktemp("workers")
    catalog, personas = lines_subset(root, ("finance",))
    config = root / "run.yaml"
    config.write_text(f"catalog: {catalog}\npersonas: {personas}\nllm:\n  cache: false\n", encoding="utf-8")
    env = generate_env(root)
    one = root / "one"
    result = generate(root, one, "--config", str(config), "--num-dialogues", N, env=env)
    assert result.returncode == 0, result.stderr
    return {"root": root, "config": config, "env": env, "one": one, "catalog": catalog, "personas": personas}


def test_two_workers_give_the_dataset_of_one_process(runs: dict[str, Any]) -> None:
    out = runs["root"] / "two"
    cmd = [UTCGEN, "generate", "--out", str(out), "--no-progress", "--config", str(runs["config"]),
           "--workers", "2", "--num-dialogues", N]
    proc = subprocess.Popen(cmd, cwd=REPO, env=runs["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "2 worker processes" in stderr and "done: 8 accepted" in stderr
    for config in ("dialogues", "sft", "rejected"):
        assert rows(out, config) == rows(runs["one"], config), config
    assert len({r["id"] for r in rows(out, "dialogues")}) == 8

    # the jobs were journaled by the workers, not by the parent: each process that writes a job keeps a
    # session file naming its pid
    sessions = [json.loads(p.read_text()) for p in (out / "journal").glob("session-*.json")]
    writers = {s["pid"] for s in sessions} - {proc.pid}
    assert len(writers) == 2, sessions
    assert writers <= {int(w.split()[1]) for w in stderr.split("workers: ", 1)[1].splitlines()[0].split(", ")}

    # the same command again: no job runs (no worker is even started), the export is the same
    before = jobs(out)
    again = generate(runs["root"], out, "--config", str(runs["config"]), "--workers", "2", "--num-dialogues", N,
                     env=runs["env"])
    assert again.returncode == 0, again.stderr
    assert jobs(out) == before
    assert "workers: " not in again.stderr
    assert rows(out, "dialogues") == rows(runs["one"], "dialogues")


def test_two_workers_resume_a_folder_begun_by_one_process(runs: dict[str, Any]) -> None:
    """A folder one process left unfinished (a copy of its run with jobs 1 and 3 on missing from the journal,
    as a kill leaves it) is finished by two workers: the gaps filled, the kept jobs not redone."""
    out = runs["root"] / "resumed"
    shutil.copytree(runs["one"], out)
    for path in (out / "journal").glob("job-*.json"):
        if path.name != "job-0000002.json" and path.name > "job-0000000.json":
            path.unlink()
    shutil.rmtree(out / "data")
    begun = jobs(out)
    assert sorted(begun) == ["job-0000000.json", "job-0000002.json"]
    rest = generate(runs["root"], out, "--config", str(runs["config"]), "--workers", "2", "--num-dialogues", N,
                    env=runs["env"])
    assert rest.returncode == 0, rest.stderr
    assert "done: 8 accepted" in rest.stderr
    assert {k: v for k, v in jobs(out).items() if k in begun} == begun  # finished jobs kept, not redone
    # every gap filled: the same jobs, but for spare jobs past the end that one run started and the other did not
    # (how many jobs a run starts depends on when its jobs end: on a loaded machine, one more); the data is the same
    mine, theirs = set(jobs(out)), set(jobs(runs["one"]))
    last = min(max(mine), max(theirs))
    assert {j for j in mine if j <= last} == {j for j in theirs if j <= last}
    for config in ("dialogues", "sft", "rejected"):
        assert rows(out, config) == rows(runs["one"], config), config


def test_workers_below_one_is_refused_by_the_api(tmp_path: Path) -> None:
    """(`utcgen generate --workers 0` is refused with exit 2 by the flag's type: tests/unit/cli/test_values.py.)"""
    from utcgen.pipeline.api import run_generation
    from utcgen.pipeline.core.errors import InputError
    from utcgen.pipeline.settings.config import load_config

    with pytest.raises(InputError, match="workers must be at least 1"):
        run_generation(load_config(None, {"out": str(tmp_path / "x")}), workers=0)
    assert not (tmp_path / "x").exists()


def test_a_job_error_in_a_worker_stops_the_run_as_in_one_process(simulated_gateway: None, tmp_path: Path, clean_env: Path, runs: dict[str, Any],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A key the server refuses: the worker's `LLMFatalError` crosses to the parent as itself, with the
    message one process gives, nothing is journaled, and no worker is left running."""
    import multiprocessing

    import yaml

    from tests.support.openai_server import FaultPlan, ScriptedOpenAIServer, ServerError
    from tests.support.simulator import simulator_config, simulator_responder
    from utcgen.pipeline.api import run_generation
    from utcgen.pipeline.llm.gateway import LLMFatalError
    from utcgen.pipeline.settings.config import load_config

    monkeypatch.setenv("UTCGEN_CACHE_DIR", runs["env"]["UTCGEN_CACHE_DIR"])  # the embeddings made once
    catalog, personas = runs["catalog"], runs["personas"]
    errors = {}
    with ScriptedOpenAIServer(simulator_responder, faults=FaultPlan.always(ServerError(401, "bad key"))) as srv:
        for workers in (1, 2):
            out = tmp_path / f"out{workers}"
            path = tmp_path / f"run{workers}.yaml"
            path.write_text(yaml.safe_dump(simulator_config(
                srv.base_url, num_dialogues=2, out=str(out), catalog=str(catalog), personas=str(personas),
                synthesis={"max_jobs_in_flight": 1, "speculate": False})), encoding="utf-8")
            with pytest.raises(LLMFatalError) as caught:
                run_generation(load_config(path), workers=workers)
            errors[workers] = str(caught.value)
            assert not list((out / "journal").glob("job-*.json"))
    assert "bad key" in errors[1] and errors[2] == errors[1]
    assert not multiprocessing.active_children()
