"""Run reports (metrics.json, dialogues.parquet, report.md, tradeoff.png) and the comparison of runs."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from tests.support.evalcases import CASE_TOOL, INCIDENT, TICKET, calls, case, replay, result
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.core.records import Usage
from utcgen.pipeline.evaluation.compare import compare
from utcgen.pipeline.evaluation.policies import POLICIES
from utcgen.pipeline.evaluation.report import write_run

METRICS = ["acc", "ftr", "tar", "tcp", "tcr", "pkp", "pkr", "conv_rel", "ttr", "ngd_2", "ngd_3", "ngd_4"]
COLUMNS = {"case_id", "transcript", "first_calls", "gold_tool", "gold_arguments", "acc", "ftr", "tar", "conv_rel",
           "flagged", "error", "invalid_format", "hallucinated_function", "hallucinated_argument",
           "wrong_argument_type", "repeated_call", "insufficient_calls", "wrong_argument_value", "missing_argument"}

CASES = [case(f"k{i}", candidates=[[TICKET, INCIDENT], [INCIDENT, TICKET], [CASE_TOOL, TICKET]][i % 3],
              near_duplicate=i % 2 == 0, line_of_business=["finance", "facilities"][i % 2]) for i in range(12)]


def policy_run(tmp_path, name: str, folder: str | None = None):
    results = [replay(c, POLICIES[name], model=name) for c in CASES]
    for r in results:
        r.usage = Usage(calls=2, prompt_tokens=10, completion_tokens=5)
    out = tmp_path / (folder or name.replace("/", "-"))
    return out, write_run(out, CASES, results, model=name, mode="static", wall_time_s=1.5,
                          settings={"benchmark": "fixture"})


def test_metrics_json_and_dialogues_parquet(tmp_path):
    out, report = policy_run(tmp_path, "reference/first-candidate")
    data = json.loads((out / "metrics.json").read_text())
    assert list(data["metrics"]) == METRICS
    for key in METRICS:
        assert set(data["metrics"][key]) == {"value", "low", "high", "n"}
    # first-candidate on this fixture: every third case shows τ* first -> Acc 4/12, FTR 8/12
    assert data["metrics"]["acc"]["value"] == pytest.approx(4 / 12, abs=1e-6)
    assert data["metrics"]["ftr"]["value"] == pytest.approx(8 / 12, abs=1e-6)
    assert data["counts"]["scored"] == 12 and data["counts"]["excluded"] == 0
    assert data["patterns"]["insufficient_calls"] == 8 and data["patterns"]["hallucinated_function"] == 0
    assert data["usage"]["calls"] == 24 and data["usage"]["total_tokens"] == 180
    assert data["model"] == "reference/first-candidate" and data["mode"] == "static" and data["wall_time_s"] == 1.5
    assert set(data["breakdowns"]) == {"line_of_business", "near_duplicate", "required_parameters"}
    assert data["breakdowns"]["line_of_business"]["finance"]["acc"]["n"] == 6
    table = pq.read_table(out / "dialogues.parquet")
    assert set(table.column_names) >= COLUMNS
    rows = {r["case_id"]: r for r in table.to_pylist()}
    assert len(rows) == 12
    wrong = rows["k1"]  # candidates [create_incident, create_ticket]: the distractor is called
    assert wrong["first_calls"][0]["name"] == "create_incident" and wrong["acc"] == 0 and wrong["ftr"] == 1
    assert wrong["insufficient_calls"] == 1 and wrong["gold_tool"] == "create_ticket"
    assert json.loads(wrong["transcript"])[-1]["tool_calls"][0]["name"] == "create_incident"
    assert rows["k0"]["acc"] == 1 and json.loads(rows["k0"]["gold_arguments"]) == CASES[0].gold_arguments
    assert report.patterns["insufficient_calls"] == 8 and report.counts["scored"] == 12


def test_report_markdown_and_plot(tmp_path):
    out, report = policy_run(tmp_path, "reference/oracle")
    text = (out / "report.md").read_text()
    assert "| Model | TCP (↑) | TCR (↑) | PKP (↑) | PKR (↑) | Acc (↑) | FTR (↓) | TAR (↓) |" in text
    assert "| reference/oracle | 1.00 [" in text  # TCP with its interval
    assert "ConvRel (↑) | TTR (↑) | NGD_2 (↑)" in text and "## Error patterns" in text
    assert "## By line of business" in text and "| finance | 6 |" in text
    assert (out / "tradeoff.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "tradeoff.png" in text
    assert report.metrics["acc"].value == 1.0 and "Acc 1.00" in report.to_text()
    assert not list(out.glob(".utcgen-tmp-*"))


def test_excluded_and_missing_results_are_counted(tmp_path):
    cases = [case("a"), case("b"), case("c")]
    results = [result("a", calls(("create_ticket", {"title": "Printer jam", "priority": "high"}))),
               result("b", None, flagged="user proxy invented a value")]
    write_run(tmp_path, cases, results, model="m", mode="dynamic", wall_time_s=0.0)
    data = json.loads((tmp_path / "metrics.json").read_text())
    assert data["counts"]["flagged"] == 1 and data["counts"]["missing"] == 1 and data["counts"]["scored"] == 1
    rows = {r["case_id"]: r for r in pq.read_table(tmp_path / "dialogues.parquet").to_pylist()}
    assert rows["b"]["flagged"] == "user proxy invented a value" and rows["b"]["acc"] is None
    assert rows["c"]["error"] == "no result" and rows["c"]["first_calls"] == []


def test_compare_marks_non_overlapping_intervals(tmp_path):
    oracle, _ = policy_run(tmp_path, "reference/oracle")
    never, _ = policy_run(tmp_path, "reference/never-call")
    twin, _ = policy_run(tmp_path, "reference/oracle", folder="oracle-again")
    text = compare([oracle, never, twin])
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in text.splitlines() if line.startswith("| ")}
    acc = rows["Acc (↑)"]
    assert acc[0].startswith("1.00 [") and not acc[0].endswith("*")
    assert acc[1].startswith("0.00 [") and acc[1].endswith("*")   # [0, 0.24] vs [0.76, 1]: disjoint
    assert not acc[2].endswith("*")                                 # the same run again overlaps
    assert rows["TAR (↓)"][1].endswith("*") and rows["cases scored"] == ["12", "12", "12"]
    with pytest.raises(InputError, match=f"{tmp_path / 'nothing'}: not an evaluation run folder"):
        compare([oracle, tmp_path / "nothing"])


def test_patterns_are_filled_into_the_results(tmp_path):
    results = [replay(c, POLICIES["reference/extra-key"]) for c in CASES[:3]]
    write_run(tmp_path, CASES[:3], results, model="x", mode="static", wall_time_s=0.1)
    assert all(set(r.patterns) == set(COLUMNS) - {"case_id", "transcript", "first_calls", "gold_tool",
                                                   "gold_arguments", "acc", "ftr", "tar", "conv_rel", "flagged",
                                                   "error"} for r in results)
    data = json.loads((tmp_path / "metrics.json").read_text())
    assert data["metrics"]["pkp"]["value"] == pytest.approx(2 / 3, abs=1e-6) and data["metrics"]["pkr"]["value"] == 1
