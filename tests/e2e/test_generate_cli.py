"""`utcgen generate` run as a user runs it: offline backend, real subprocesses, real kills."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli import UTCGEN, generate
from tests.support.cli import generate_env as env
from tests.support.paths import REPO

pytestmark = pytest.mark.slow


def ids(out: Path, config: str = "dialogues") -> list[str]:
    import pyarrow.parquet as pq

    return pq.read_table(out / "data" / config / "train-00000-of-00001.parquet").column("id").to_pylist()


def test_generate_offline_end_to_end_loads_with_datasets(tmp_path):
    import datasets

    out = tmp_path / "ds"
    result = generate(tmp_path, out, "--num-dialogues", "8", "--seed", "3")
    assert result.returncode == 0, result.stderr
    assert "done: 8 accepted" in result.stderr
    stats = json.loads((out / "stats.json").read_text())
    assert stats["counts"]["accepted"] == 8
    sft = datasets.load_dataset(str(out), "sft", cache_dir=str(tmp_path / "hf"))["train"]
    dialogues = datasets.load_dataset(str(out), "dialogues", cache_dir=str(tmp_path / "hf"))["train"]
    assert len(dialogues) == 8
    assistant_turns = sum(sum(m["role"] == "assistant" for m in row["messages"]) for row in dialogues)
    assert len(sft) == assistant_turns
    assert assistant_turns == sum(r["tool_selection_turns"] + r["argument_filling_turns"] for r in dialogues)
    row = dialogues[0]
    assert row["generation"]["backend"] == "offline"
    assert len(row["candidate_tools"]) == 6 and row["seed_tool"] in row["candidate_tools"]
    last = row["messages"][-1]
    assert last["role"] == "assistant" and last["tool_calls"][0]["name"] == row["seed_tool"]
    assert json.loads(last["tool_calls"][0]["arguments"]) == json.loads(row["gold_arguments"])
    completion = sft[0]["completion"][0]  # chat format: the thought as reasoning_content
    assert completion["role"] == "assistant" and {"content", "reasoning_content"} <= set(completion)
    card = (out / "README.md").read_text()
    assert "config_name: sft" in card and "offline" in card.lower()
    assert {p.name for p in (out / "plots").glob("*.png")} >= {"turns_per_dialogue.png"}

    # the same command again is a no-op resume: same records, nothing duplicated
    before = ids(out)
    again = generate(tmp_path, out, "--num-dialogues", "8", "--seed", "3")
    assert again.returncode == 0, again.stderr
    assert ids(out) == before


def test_kill_9_then_rerun_gives_exactly_the_requested_dialogues(tmp_path):
    out, n = tmp_path / "ds", 40
    cmd = [UTCGEN, "generate", "--out", str(out), "--no-progress",
           "--num-dialogues", str(n)]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    journal = out / "journal"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and len(list(journal.glob("job-*.json"))) < 10 and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "generation finished before it could be killed: " + proc.stderr.read().decode()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = {p.name: p.stat().st_mtime_ns for p in journal.glob("job-*.json")}
    assert len(finished) >= 10
    assert not (out / "data").exists() or not ids(out)  # killed before export

    result = generate(tmp_path, out, "--num-dialogues", str(n))
    assert result.returncode == 0, result.stderr
    accepted = ids(out)
    assert len(accepted) == n and len(set(accepted)) == n
    # finished jobs were kept, not redone
    for name, mtime in finished.items():
        assert (journal / name).stat().st_mtime_ns == mtime
    assert not list(journal.glob(".*.tmp"))
    # the wall time adds the killed session (up to its last finished job) to the resumed one
    spans = sorted((s["started"], s["last"]) for s in
                   (json.loads(p.read_text()) for p in journal.glob("session-*.json")))
    assert len(spans) == 2 and spans[0][1] <= spans[1][0]
    wall = json.loads((out / "stats.json").read_text())["wall_time_s"]
    assert wall == pytest.approx(sum(b - a for a, b in spans), abs=0.02)
    assert wall > spans[1][1] - spans[1][0] + 0.5 * (spans[0][1] - spans[0][0])


def test_changed_configuration_on_same_output_is_refused(tmp_path):
    out = tmp_path / "ds"
    assert generate(tmp_path, out, "--num-dialogues", "2").returncode == 0
    result = generate(tmp_path, out, "--num-dialogues", "2", "--seed", "99")
    assert result.returncode == 2
    assert "different configuration" in result.stderr and str(out) in result.stderr


def test_max_tokens_stops_the_run_exports_finished_jobs_and_a_resume_goes_on(tmp_path):
    out = tmp_path / "budget"
    stopped = generate(tmp_path, out, "--num-dialogues", "10", "--max-tokens", "60000")
    assert stopped.returncode == 3, stopped.stderr
    assert "budget reached: the next jobs would pass --max-tokens 60,000" in stopped.stderr
    assert "of 10 dialogues accepted" in stopped.stderr
    jobs = sorted((out / "journal").glob("job-*.json"))
    assert 1 <= len(jobs) < 10
    finished = [json.loads(p.read_text()) for p in jobs]
    kept = ids(out)  # the folder holds the finished jobs' dialogues, nothing else
    assert kept and set(kept) <= {d["id"] for r in finished for d in r["dialogues"] if d["accepted"]}
    assert json.loads((out / "stats.json").read_text())["counts"]["accepted"] == len(kept) < 10

    resumed = generate(tmp_path, out, "--num-dialogues", "10")  # no budget now: the same run goes on
    assert resumed.returncode == 0, resumed.stderr
    assert ids(out)[:len(kept)] == kept and len(ids(out)) == 10
