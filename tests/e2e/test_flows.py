"""Prefect flows called as Python functions, against a temporary local Prefect server.

The generate flow is checked for what its journal promises: a re-run with a larger
target resumes without duplicates, and a batch task that fails part-way is retried
without redoing the jobs it had finished. The publish flows run at the huggingface_hub
API boundary (a recording HfApi), with the token taken from a Prefect Secret block.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.support.hub import RecordingApi, write_dataset

TOKEN = "hf_FLOWtokenDoNotLeak0123456789abcdef"


def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One UTCGEN_CACHE_DIR for every flow test of the session: embeddings are computed once."""
    path = tmp_path_factory.getbasetemp() / "flows-utcgen-cache"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="module")
def prefect_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A temporary Prefect server and database for this module; engines closed afterwards."""
    from prefect.settings import PREFECT_HOME, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    from utcgen.pipeline.synthesis.batch import RUNTIME

    mp = pytest.MonkeyPatch()
    mp.setenv("UTCGEN_CACHE_DIR", str(shared_cache(tmp_path_factory)))
    try:
        with temporary_settings({PREFECT_HOME: tmp_path_factory.mktemp("prefect-home")}), prefect_test_harness(server_startup_timeout=180):
            yield
    finally:
        RUNTIME.clear()
        mp.undo()


def ids(out: Path, config: str = "dialogues") -> list[str]:
    return pq.read_table(out / "data" / config).column("id").to_pylist()


# ------------------------------------------------------------------ generate flow


def test_generate_flow_resumes_with_a_larger_target(prefect_api: None, tmp_path: Path) -> None:
    from utcgen.flows.generate_dialogues import ARTIFACT_KEY, generate_dialogues

    out = tmp_path / "out"
    first = generate_dialogues(num_dialogues=3, out=str(out), batch_size=2)
    assert first["accepted"] == 3 and ids(out) and len(ids(out)) == 3
    first_ids = ids(out)
    journal = {p.name: p.stat().st_mtime_ns for p in (out / "journal").glob("job-*.json")}

    second = generate_dialogues(num_dialogues=6, out=str(out), batch_size=2)
    got = ids(out)
    assert second["accepted"] == 6 and len(got) == 6 and len(set(got)) == 6
    assert got[:3] == first_ids  # the first N of a bigger run are the smaller run
    stats = json.loads((out / "stats.json").read_text())
    assert stats["counts"]["accepted"] == 6
    for name, mtime in journal.items():  # finished jobs were skipped, not redone
        assert (out / "journal" / name).stat().st_mtime_ns == mtime

    third = generate_dialogues(num_dialogues=6, out=str(out))  # nothing to do: export only
    assert third["waves"] == 0 and ids(out) == got

    from prefect.artifacts import Artifact

    artifact = Artifact.get(ARTIFACT_KEY)
    assert artifact is not None and "### Validator pass rates" in str(artifact.data)
    assert "| critique | llm |" in str(artifact.data)


def test_failed_batch_is_retried_without_redoing_finished_jobs(
    prefect_api: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from utcgen.flows.generate_dialogues import generate_dialogues
    from utcgen.pipeline.synthesis.journal import JobRecord
    from utcgen.pipeline.synthesis.run import Engine

    calls: list[int] = []
    real = Engine.run_job

    async def flaky(self: Engine, job: int) -> JobRecord:
        calls.append(job)
        if job == 1 and calls.count(1) == 1:
            raise RuntimeError("transient failure")
        return await real(self, job)

    monkeypatch.setattr(Engine, "run_job", flaky)
    out = tmp_path / "out"
    result = generate_dialogues(num_dialogues=3, out=str(out), batch_size=8, seed=11)
    assert result["accepted"] == 3 and len(set(ids(out))) == 3
    assert calls.count(1) == 2  # failed once, retried once
    assert all(calls.count(j) == 1 for j in set(calls) - {1})  # its batch siblings ran once


def test_generate_flow_stops_for_the_token_budget_and_exports_only_finished_work(prefect_api: None, tmp_path: Path) -> None:
    from utcgen.flows.generate_dialogues import generate_dialogues
    from utcgen.pipeline.runner import BudgetExceeded
    from utcgen.pipeline.synthesis.journal import JobRecord, select

    out = tmp_path / "out"
    first = generate_dialogues(num_dialogues=1, out=str(out), seed=23)  # what one job costs here
    assert first["accepted"] == 1 and first["tokens"] > 0
    budget = 3 * first["tokens"]
    with pytest.raises(BudgetExceeded, match=r"^budget reached: the next jobs would pass --max-tokens "
                                             rf"{budget:,}\..* of 20 dialogues accepted") as stopped:
        generate_dialogues(num_dialogues=20, out=str(out), seed=23, batch_size=2, max_tokens=budget)
    assert stopped.value.exit_code == 3  # as `utcgen generate --max-tokens` exits

    records = {r.job: r for r in (JobRecord.model_validate_json(p.read_text())
                                  for p in (out / "journal").glob("job-*.json"))}
    per_job = [sum(d.generation.usage.total_tokens for d in r.dialogues) for r in records.values()]
    # planning stops before the budget would be passed at the average job's cost; a job costs more than
    # the average when its attempts are rejected (each runs to its turn limit), so the last job planned
    # may carry the spend past the budget by at most its own cost
    assert 1 < len(records) < 20 and sum(per_job) - max(per_job) <= budget
    accepted, _, complete = select(records, 20)
    assert not complete
    assert ids(out) == [d.id for d in accepted]  # the folder holds the finished jobs' dialogues, nothing else
    stats = json.loads((out / "stats.json").read_text())
    assert stats["counts"]["accepted"] == len(accepted) < 20


def test_generate_flow_refuses_another_configuration_in_the_same_folder(prefect_api: None, tmp_path: Path) -> None:
    from utcgen.flows.generate_dialogues import generate_dialogues
    from utcgen.pipeline.core.errors import InputError

    out = tmp_path / "out"
    generate_dialogues(num_dialogues=1, out=str(out))
    with pytest.raises(InputError, match="different configuration"):
        generate_dialogues(num_dialogues=1, out=str(out), seed=99)


def test_generate_flow_without_a_key_fails_before_any_task(
        prefect_api: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from utcgen.flows.generate_dialogues import generate_dialogues
    from utcgen.pipeline.core.errors import InputError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "out"
    with pytest.raises(InputError, match="models.assistant = 'openai/gpt-4o-mini': needs OPENAI_API_KEY"):
        generate_dialogues(num_dialogues=1, out=str(out), models={"assistant": "openai/gpt-4o-mini"})
    assert not out.exists()


# ------------------------------------------------------------------ publish flows


@pytest.fixture
def recording_hub(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The huggingface_hub boundary of tests/unit/export/test_hub.py: nothing leaves the machine."""
    from huggingface_hub import constants

    import utcgen.pipeline.export.hub

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    api = RecordingApi()
    monkeypatch.setattr(utcgen.pipeline.export.hub, "HfApi", lambda **_: api)
    return api


def _flow_run_logs(flow_run_id: Any) -> str:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.logging.handlers import APILogWorker

    APILogWorker.drain_all(timeout=10)
    with get_client(sync_client=True) as client:
        logs = client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
        run = client.read_flow_run(flow_run_id)
    return "\n".join(log.message for log in logs) + json.dumps(run.parameters, default=str)


def test_publish_flow_takes_the_token_from_a_secret_block_and_never_logs_it(
    prefect_api: None, tmp_path: Path, recording_hub: Any
) -> None:
    from prefect.blocks.system import Secret

    from utcgen.flows.publish_dataset import publish_dataset_flow

    Secret(value=TOKEN).save("utcgen-test-hf-token", overwrite=True)
    folder = write_dataset(tmp_path / "ds")
    state = publish_dataset_flow(folder=str(folder), repo_id="utcgen-org/flows", revision="v2",
                                 token_secret="utcgen-test-hf-token", return_state=True)
    assert state.is_completed()
    result = state.result()
    assert result["repo_id"] == "utcgen-org/flows" and result["revision"] == "v2"
    commit = recording_hub.call("create_commit")
    assert commit["token"] == TOKEN and commit["revision"] == "v2"
    logs = _flow_run_logs(state.state_details.flow_run_id)
    assert "published" in logs and TOKEN not in logs


def test_publish_flow_reports_a_missing_secret_block(prefect_api: None, tmp_path: Path, recording_hub: Any) -> None:
    from utcgen.flows.publish_dataset import publish_dataset_flow
    from utcgen.pipeline.core.errors import InputError

    with pytest.raises(InputError, match="no Prefect Secret block named 'nope'"):
        publish_dataset_flow(folder=str(write_dataset(tmp_path / "ds")), repo_id="utcgen-org/flows",
                             token_secret="nope")
    assert recording_hub.calls == []


def test_generate_and_publish_chains_the_flows(
    prefect_api: None, tmp_path: Path, recording_hub: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from utcgen.flows.publish_dataset import generate_and_publish
    from utcgen.pipeline.core.errors import InputError

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    out = tmp_path / "out"
    result = generate_and_publish(repo_id="utcgen-org/chained", num_dialogues=2, out=str(out))
    assert result["generated"]["accepted"] == 2
    assert result["published"]["rows"]["dialogues"] == 2
    commit = recording_hub.call("create_commit")
    uploaded = [op.path_in_repo for op in commit["operations"]]
    assert "README.md" in uploaded and "data/sft/train-00000-of-00001.parquet" in uploaded
    assert commit["token"] == TOKEN
    with pytest.raises(InputError, match="namespace"):  # checked before any generation
        generate_and_publish(repo_id="no-namespace", num_dialogues=2, out=str(tmp_path / "never"))
    assert not (tmp_path / "never").exists()
