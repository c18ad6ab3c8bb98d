"""`utcgen generate --max-cost / --max-tokens / --estimate`, run as a user runs them (offline backend).

The offline backend reports real token counts but costs nothing, so the cost tests give its model a
price the way litellm prices any model (`litellm.register_model`), from a `sitecustomize` module on
the subprocess's PYTHONPATH: the run then spends dollars like a paid endpoint would.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support.cli import generate, generate_env

pytestmark = pytest.mark.slow

# dollars per token for utcgen-offline/default in the priced runs
PRICE_IN, PRICE_OUT = 1e-6, 2e-6


def priced_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    price = {"utcgen-offline/default": {"input_cost_per_token": PRICE_IN, "output_cost_per_token": PRICE_OUT,
                                        "litellm_provider": "utcgen-offline", "mode": "chat"}}
    (site / "sitecustomize.py").write_text(f"import litellm\nlitellm.register_model({price!r})\n")
    return generate_env(tmp_path, PYTHONPATH=str(site))


def journal_spend(out: Path) -> tuple[int, int, float]:
    """(jobs journaled, tokens, dollars) over every journaled attempt of a run folder."""
    tokens, cost, jobs = 0, 0.0, 0
    for path in (out / "journal").glob("job-*.json"):
        jobs += 1
        for d in json.loads(path.read_text())["dialogues"]:
            usage = d["generation"]["usage"]
            tokens += usage["prompt_tokens"] + usage["completion_tokens"]
            cost += usage["cost_usd"]
    return jobs, tokens, cost


def accepted_in_journal(out: Path) -> int:
    return sum(any(d["accepted"] for d in json.loads(p.read_text())["dialogues"])
               for p in (out / "journal").glob("job-*.json"))


def test_max_tokens_stops_the_run_short_and_says_so(tmp_path: Path) -> None:
    out, limit = tmp_path / "ds", 40_000  # about three offline dialogues' worth of tokens
    run = generate(tmp_path, out, "--num-dialogues", "30", "--max-tokens", str(limit))
    assert run.returncode == 3, run.stderr[-2000:]
    assert "budget reached" in run.stderr and "--max-tokens 40,000" in run.stderr
    jobs, tokens, _ = journal_spend(out)
    assert 0 < jobs < 30 and 0 < accepted_in_journal(out) < 30
    assert tokens <= limit  # the finished jobs stayed inside the budget
    said = re.search(r"Spent so far \(resumed runs included\): \d+ calls, ([\d,]+) tokens", run.stderr)
    assert said and int(said.group(1).replace(",", "")) <= limit
    assert re.search(r"(\d+) of 30 dialogues accepted", run.stderr)
    # the finished work is exported before the stop: every accepted dialogue journaled so far, no other
    exported = pq.read_table(next((out / "data" / "dialogues").glob("*.parquet"))).num_rows
    assert exported == accepted_in_journal(out)

    # a higher budget on the same folder goes on from the journal and finishes
    more = generate(tmp_path, out, "--num-dialogues", "4", "--max-tokens", str(limit * 4))
    assert more.returncode == 0, more.stderr[-2000:]
    assert "done: 4 accepted" in more.stderr


def test_max_cost_stops_a_priced_run_short_and_says_so(tmp_path: Path) -> None:
    out, env, limit = tmp_path / "ds", priced_env(tmp_path), 0.05
    run = generate(tmp_path, out, "--num-dialogues", "30", "--max-cost", str(limit), env=env)
    assert run.returncode == 3, run.stderr[-2000:]
    assert "budget reached" in run.stderr and "--max-cost $0.05" in run.stderr
    jobs, tokens, cost = journal_spend(out)
    assert 0 < jobs < 30 and 0 < cost <= limit
    assert cost >= tokens * PRICE_IN  # the price was applied, so the limit was really about dollars

    # the same command without a price spends nothing and is not stopped by the same budget
    free = generate(tmp_path, tmp_path / "free", "--num-dialogues", "3", "--max-cost", str(limit))
    assert free.returncode == 0, free.stderr[-2000:]


def test_estimate_prints_an_estimate_and_writes_no_dialogues(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    run = generate(tmp_path, out, "--num-dialogues", "60", "--estimate", env=priced_env(tmp_path))
    assert run.returncode == 0, run.stderr[-2000:]
    assert not out.exists()  # nothing written into --out
    sample = re.search(r"sample: 3 seed jobs, (\d+) accepted, ([\d,]+) calls, ([\d,]+) tokens, \$([\d.]+)", run.stderr)
    estimate = re.search(r"estimate for 60 accepted dialogues \(acceptance (\d+)%.*?about (\d+) seed jobs\): "
                         r"([\d,]+) calls, ([\d,]+) prompt \+ ([\d,]+) completion tokens, \$([\d.]+)", run.stdout)
    assert sample and estimate, (run.stdout, run.stderr[-2000:])
    calls = int(sample.group(2).replace(",", ""))
    jobs = int(estimate.group(2))
    assert jobs >= 60 and float(sample.group(4)) > 0
    # the whole run is the sample scaled by the seed jobs it needs
    assert int(estimate.group(3).replace(",", "")) == pytest.approx(calls * jobs / 3, rel=0.02)
    assert float(estimate.group(6)) == pytest.approx(float(sample.group(4)) * jobs / 3, rel=0.05, abs=0.01)
    # and role by role: every role of the run has a row, and their calls add up to the whole
    rows = {m.group(1): m.groups()[1:] for m in re.finditer(
        r"^(\w+) +([\d,]+) +([\d,]+) +([\d,]+) +([\d.]+) +([\d.]+) +([\d,]+) +([\d.]+)$", run.stdout, re.M)}
    assert set(rows) == {"goal", "slots", "user", "assistant", "relevancy", "critic"}, run.stdout
    role_calls = sum(int(row[0].replace(",", "")) for row in rows.values())
    assert role_calls == pytest.approx(int(estimate.group(3).replace(",", "")), abs=len(rows))
    assert float(rows["assistant"][4]) == pytest.approx(int(rows["assistant"][0].replace(",", "")) / 60, abs=0.06)
