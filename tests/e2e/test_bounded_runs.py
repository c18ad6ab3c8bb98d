"""Bounded runs end to end: a hopeless catalog stops by itself, a flaky endpoint is absorbed."""

from __future__ import annotations

import importlib.util
import json
import re
import resource
from pathlib import Path

import pytest

from tests.support.cli import generate
from tests.support.paths import REPO as ROOT


@pytest.mark.slow
def test_a_hopeless_catalog_stops_within_a_minute_with_its_work_exported(tmp_path: Path) -> None:
    catalog = tmp_path / "hopeless.json"  # no value satisfies either tool's schema
    catalog.write_text(json.dumps([
        {"name": "file_expense", "description": "Files an expense claim.", "parameters": {
            "type": "object", "properties": {"amount": {"type": "number", "minimum": 10, "maximum": 5}},
            "required": ["amount"]}},
        {"name": "book_travel", "description": "Books a business trip.", "parameters": {
            "type": "object", "properties": {"city": {"type": "string", "minLength": 5, "maxLength": 2}},
            "required": ["city"]}}]))
    config = tmp_path / "run.yaml"  # the same-reason rule off: the acceptance rule alone must stop it
    config.write_text("synthesis:\n  stop_after_same_rejections: 0\n  max_jobs_in_flight: 4\n")
    out = tmp_path / "out"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = generate(tmp_path, out, "--config", str(config), "--catalog", str(catalog), "--num-dialogues", "10")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 1, done.stderr
    stopped = re.search(r"stopped: none of (\d+) attempts was accepted", done.stderr)
    assert stopped and "Traceback" not in done.stderr, done.stderr
    # judged from 50 attempts; jobs finishing together (4 in flight, 5 attempts each) may add up to 19 more
    assert 50 <= int(stopped[1]) < 50 + 4 * 5, stopped[0]
    # CPU seconds, start-up included: on a shared machine the wall time says more about the neighbours
    # (about 20 s of wall time on an idle 2-core machine)
    assert (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime) < 60
    stats = json.loads((out / "stats.json").read_text())  # exported as on a budget stop
    assert stats["counts"]["accepted"] == 0 and stats["counts"]["rejected"] >= 50


@pytest.mark.slow
def test_a_fault_soak_finishes_in_one_invocation_with_no_malformed_turn(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("bench_faults", ROOT / "bench" / "bench_faults.py")
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    run = bench.soak(tmp_path, 4, seed=11, max_retries=2, faults=True)
    assert run["exit_code"] == 0 and run["accepted"] == 4
    assert run["malformed_turns"] == []
    assert sum(run["faults"].values()) > 0 and run["retries"] > 0  # faults were met, and absorbed
    if run["faults"].get("rate_limited"):
        # every 429 was retried, unless it hit a call's last try (then the call gave up, and is counted so)
        retried = run["retry_reasons"].get("rate limited", 0)
        assert retried + (run["calls_failed"] or 0) >= run["faults"]["rate_limited"] and retried > 0
