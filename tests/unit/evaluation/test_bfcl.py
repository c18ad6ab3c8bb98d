"""BFCL import and scoring: real entries cut from the gorilla repository's BFCL v4 files
(tests/fixtures/bfcl), BFCL's answer rules, the reference policies' pinned scores, and the commands."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support.cli import REPO, UTCGEN
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.core.records import ToolCall
from utcgen.pipeline.dialogue.arguments import accepts, loose_text
from utcgen.pipeline.evaluation.bfcl import build_cases, category_of, import_bfcl
from utcgen.pipeline.evaluation.cases import read_cases
from utcgen.pipeline.evaluation.compare import compare, coverage_warning
from utcgen.pipeline.evaluation.report import scenario_tables
from utcgen.pipeline.evaluation.run import EvalSettings, Evaluator
from utcgen.pipeline.evaluation.scoring import bfcl_correct

FIXTURES = REPO / "tests" / "fixtures" / "bfcl"
CATEGORIES = ("multiple", "parallel", "irrelevance", "live_simple", "live_relevance")


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("UTCGEN_MODEL", raising=False)


def _cases(category: str):
    return {c.id: c for c in build_cases(FIXTURES / f"BFCL_v4_{category}.json",
                                         FIXTURES / "possible_answer" / f"BFCL_v4_{category}.json"
                                         if category in ("multiple", "parallel", "live_simple") else None)[1]}


def _calls(*pairs: tuple[str, dict]) -> list[ToolCall]:
    return [ToolCall(name=n, arguments=a) for n, a in pairs]


# ---------------------------------------------------------------------------------------- import


def test_import_keeps_ids_functions_question_and_answers(tmp_path: Path) -> None:
    summary = import_bfcl(FIXTURES / "BFCL_v4_multiple.json", tmp_path / "b")  # answers found beside it
    assert (summary.category, summary.cases, summary.with_gold_call) == ("multiple", 5, 5)
    cases = {c.id: c for c in read_cases(tmp_path / "b")}
    case = cases["multiple_8"]
    assert case.source_id == "multiple_8" and case.scenario == "explicit"
    assert [t.name for t in case.candidates] == ["property_valuation_get", "realestate_find_properties"]
    budget = case.candidates[1].properties["budget"]
    assert budget["type"] == "object" and budget["properties"]["min"]["type"] == "number"  # dict, float mapped
    assert case.reference[0].role == "user" and case.reference[0].content.startswith("Find a 3 bedroom villa")
    assert case.answer is not None and case.answer.calls[0].name == "realestate_find_properties"
    assert case.answer.calls[0].arguments["location"] == ["SD", "San Diego", "San Diego, CA", "CA"]
    # V* of the C.1 metrics: the first acceptable value of each argument that may not be left out
    assert case.gold_arguments == {"location": "SD", "propertyType": "villa", "bedrooms": 3,
                                   "budget": {"min": 300000, "max": 400000}}
    assert cases["multiple_6"].gold_arguments == {"A": 10, "d": 0.01}  # K: [1.0, ""] is optional
    rows = pq.read_table(tmp_path / "b" / "data" / "cases" / "train-00000-of-00001.parquet").to_pylist()
    assert [r["source_id"] for r in rows] == list(cases)


def test_irrelevance_and_relevance_cases_have_no_gold_call() -> None:
    irrelevant = _cases("irrelevance")["irrelevance_1"]
    assert irrelevant.answer is not None and irrelevant.answer.calls == [] and not irrelevant.answer.any_call
    assert irrelevant.scenario == "unavailable_tool" and not irrelevant.has_gold_call
    assert irrelevant.gold_tool.name not in {t.name for t in irrelevant.candidates}
    relevant = _cases("live_relevance")["live_relevance_3-3-0"]
    assert relevant.answer is not None and relevant.answer.any_call and not relevant.has_gold_call
    assert relevant.candidates[0].properties["coordinates"]["type"] == "array"  # BFCL's tuple


def test_category_from_file_name_ids_or_flag(tmp_path: Path) -> None:
    assert category_of(Path("BFCL_v3_live_parallel.json"), None) == "live_parallel"
    assert category_of(Path("BFCL_v4_simple_python.json"), None) == "simple"
    assert category_of(Path("mine.jsonl"), "parallel_multiple_12") == "parallel_multiple"
    assert category_of(Path("mine.jsonl"), "live_irrelevance_3-0-3") == "live_irrelevance"
    assert category_of(Path("BFCL_v4_multiple.json"), "multiple_0", "parallel") == "parallel"
    for name in ("BFCL_v4_multi_turn_base.json", "BFCL_v3_multi_turn_miss_func.json", "BFCL_v4_memory.json"):
        with pytest.raises(InputError, match="not imported: it runs against BFCL's executable"):
            category_of(Path(name), None)
    with pytest.raises(InputError, match="--category"):
        category_of(Path("mine.jsonl"), "whatever")


def test_malformed_lines_name_file_line_and_field(tmp_path: Path) -> None:
    lines = (FIXTURES / "BFCL_v4_irrelevance.json").read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "BFCL_v4_irrelevance.json"
    broken = json.loads(lines[1])
    del broken["question"]
    bad.write_text("\n".join([lines[0], json.dumps(broken), lines[2]]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"BFCL_v4_irrelevance.json:2: field question: Field required"):
        build_cases(bad, None)
    broken = json.loads(lines[0])
    broken["function"][0]["parameters"]["properties"]["weight"]["type"] = "quaternion"
    bad.write_text(json.dumps(broken) + "\n", encoding="utf-8")
    bad.write_text(json.dumps(broken) + "\n" + lines[1] + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r":1: field function\[0\]\.parameters.*quaternion.*--skip-invalid"):
        build_cases(bad, None)
    summary = import_bfcl(bad, tmp_path / "kept", skip_invalid=True)  # the broken entry left out and listed
    assert summary.cases == 1 and len(summary.skipped) == 1 and summary.skipped[0].startswith("irrelevance_0: ")
    twins = json.loads(lines[1])
    twins["function"].append({**twins["function"][0], "name": "math_sum"})  # math.sum and math_sum
    bad.write_text(json.dumps(twins) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r":1: field function\[1\]\.name: 'math_sum' is another function's name"):
        build_cases(bad, None)
    bad.write_text(lines[0] + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"BFCL_v4_irrelevance.json:2: not a JSON line"):
        build_cases(bad, None)
    questions = tmp_path / "BFCL_v4_multiple.json"
    shutil.copy(FIXTURES / "BFCL_v4_multiple.json", questions)
    with pytest.raises(InputError, match="needs its answers: pass --answers"):
        build_cases(questions, None)
    answers = tmp_path / "answers.json"
    answers.write_text('{"id": "multiple_1", "ground_truth": [{"math.triangle_area_heron": {"side1": 3}}]}\n')
    with pytest.raises(InputError, match=r"answers.json:1: field ground_truth\.0\.math\.triangle_area_heron\.side1"):
        build_cases(questions, answers)


# ---------------------------------------------------------------------------------------- BFCL's rules


def test_values_follow_bfcl_rules() -> None:
    assert loose_text("April 1, 2024") == loose_text("april 1,2024") == "april12024"
    assert accepts("san diego, ca", ["SD", "San Diego, CA"], {"type": "string"})
    assert not accepts("San Diego County", ["SD", "San Diego, CA"], {"type": "string"})
    assert accepts(6, [6.0], {"type": "number"}) and not accepts(6.5, [6], {"type": "integer"})
    assert not accepts("6", [6], {"type": "integer"})           # a string is not an integer
    assert not accepts(True, [1], {"type": "integer"})          # nor is a boolean
    assert accepts(["SSN", "email"], [["email", "ssn"], ["ssn", "email"]], {"type": "array"})
    assert not accepts(["email"], [["email", "ssn"]], {"type": "array"})
    budget = {"type": "object", "properties": {"min": {"type": "number"}, "max": {"type": "number"}}}
    assert accepts({"min": 300000.0, "max": 400000}, [{"min": [300000], "max": [400000]}], budget)
    assert not accepts({"min": 300000}, [{"min": [300000], "max": [400000]}], budget)  # max is not optional
    assert not accepts({"min": 3, "max": 4, "cap": 5}, [{"min": [3], "max": [4]}], budget)
    assert accepts(None, ["", None], {"type": "string"})       # a value of the answer's own type: as is


def test_calls_are_judged_like_bfcl() -> None:
    multiple = _cases("multiple")
    capacitance = multiple["multiple_6"]
    assert bfcl_correct(capacitance, _calls(("capacitance_calculator_calculate", {"A": 10, "d": 0.01})))
    assert bfcl_correct(capacitance, _calls(("capacitance_calculator.calculate", {"A": 10, "d": 0.01, "K": 1})))
    assert not bfcl_correct(capacitance, _calls(("capacitance_calculator_calculate", {"A": 10})))  # required d
    assert not bfcl_correct(capacitance, _calls(("capacitance_calculator_calculate", {"A": 10, "d": 0.01, "x": 1})))
    assert not bfcl_correct(capacitance, _calls(("magnetic_field_calculate", {"I": 10, "r": 0.01})))
    assert not bfcl_correct(capacitance, _calls(("capacitance_calculator_calculate", {"A": 10, "d": 0.01}),
                                                ("capacitance_calculator_calculate", {"A": 10, "d": 0.01})))
    assert not bfcl_correct(capacitance, [])
    bmi = _cases("parallel")["parallel_4"]
    assert bfcl_correct(bmi, _calls(("calculate_bmi", {"height": 5.6, "weight": 60}),
                                    ("calculate_bmi", {"height": 6, "weight": 80})))       # any order, int for float
    assert not bfcl_correct(bmi, _calls(("calculate_bmi", {"height": 5.6, "weight": 60}),
                                        ("calculate_bmi", {"height": 5.6, "weight": 60})))  # one call per answer
    assert not bfcl_correct(bmi, _calls(("calculate_bmi", {"height": 6, "weight": 80})))
    irrelevant = _cases("irrelevance")["irrelevance_8"]
    assert bfcl_correct(irrelevant, []) and not bfcl_correct(irrelevant, _calls(("str_to_int", {"value": "1"})))
    relevant = _cases("live_relevance")["live_relevance_2-2-0"]
    assert bfcl_correct(relevant, _calls(("search_web", {"query": "capitale des États-Unis"})))
    assert not bfcl_correct(relevant, [])


def test_bfcl_acc_per_category_with_its_wilson_interval() -> None:
    """Three parallel cases, one answered right, one with a wrong value, one with no call: bfcl_acc 1/3, Wilson
    95% [0.0615, 0.7923] (worked out from p = 1/3, n = 3, z = 1.96); only imported cases with one gold call
    enter the C.1 metrics (none here)."""
    from utcgen.pipeline.core.records import Message
    from utcgen.pipeline.evaluation.cases import CaseResult
    from utcgen.pipeline.evaluation.metrics import compute_metrics

    cases = list(_cases("parallel").values())
    replies = {
        "parallel_0": _calls(("spotify.play", {"artist": "maroon 5", "duration": 15}),
                             ("spotify_play", {"artist": "Taylor Swift", "duration": 20})),
        "parallel_4": _calls(("calculate_bmi", {"height": 6.0, "weight": 80}),
                             ("calculate_bmi", {"height": 5.5, "weight": 60})),
        "parallel_7": [],
    }
    results = [CaseResult(case_id=c.id, model="m", mode="static", first_calls=replies[c.id],
                          messages=[Message(role="user", content="q"),
                                    Message(role="assistant", content="", tool_calls=replies[c.id])])
               for c in cases]
    report = compute_metrics(cases, results, resamples=20)
    assert report.bfcl_scores == {"parallel_0": 1, "parallel_4": 0, "parallel_7": 0}
    m = report.bfcl["parallel"]
    assert (m.value, m.n) == (0.333333, 3) and (round(m.low, 4), round(m.high, 4)) == (0.0615, 0.7923)
    assert report.bfcl["all"] == m and report.counts["scored"] == 0


# ---------------------------------------------------------------------------------------- runs


def _evaluate(bench: Path, model: str, out: Path):
    from utcgen.pipeline.llm.gateway import shutdown

    async def go():
        evaluator = Evaluator(EvalSettings(benchmark=str(bench), model=model, mode="static", rubric_model=None), out)
        try:
            results = await evaluator.run()
            return evaluator.report(results, 0.0)
        finally:
            evaluator.close()
            await shutdown()

    return asyncio.run(go())


def test_reference_policies_score_what_they_must(tmp_path: Path) -> None:
    """oracle 1.0 on every answered category and on irrelevance; never-call 1.0 on irrelevance, 0 elsewhere."""
    for category in CATEGORIES:
        bench = tmp_path / category
        import_bfcl(FIXTURES / f"BFCL_v4_{category}.json", bench)
        oracle = _evaluate(bench, "reference/oracle", tmp_path / f"{category}-oracle")
        never = _evaluate(bench, "reference/never-call", tmp_path / f"{category}-never")
        assert oracle.bfcl["all"].value == 1.0 and oracle.bfcl[category].n == len(read_cases(bench))
        assert never.bfcl["all"].value == (1.0 if category == "irrelevance" else 0.0), category
        data = json.loads((tmp_path / f"{category}-oracle" / "metrics.json").read_text())
        assert data["metrics"]["bfcl_acc"]["value"] == 1.0 and data["bfcl"][category]["n"] >= 2
    rows = pq.read_table(tmp_path / "multiple-oracle" / "dialogues.parquet")
    names = rows.column_names
    assert names.index("source_id") == names.index("first_calls") + 1
    assert rows.column("source_id").to_pylist() == [c.id for c in read_cases(tmp_path / "multiple")]
    assert set(rows.column("bfcl_acc").to_pylist()) == {1}
    assert "## BFCL (AST rules)" in (tmp_path / "multiple-oracle" / "report.md").read_text()


def test_compare_warns_when_runs_cover_different_cases(tmp_path: Path) -> None:
    import_bfcl(FIXTURES / "BFCL_v4_multiple.json", tmp_path / "m")
    import_bfcl(FIXTURES / "BFCL_v4_live_simple.json", tmp_path / "l")
    _evaluate(tmp_path / "m", "reference/oracle", tmp_path / "a")
    _evaluate(tmp_path / "m", "reference/never-call", tmp_path / "b")
    _evaluate(tmp_path / "l", "reference/oracle", tmp_path / "c")
    assert coverage_warning([tmp_path / "a", tmp_path / "b"]) is None
    warning = coverage_warning([tmp_path / "a", tmp_path / "c"])
    assert warning and "5 (`a`) vs 2 (`c`)" in warning and "0 in common" in warning
    text = compare([tmp_path / "a", tmp_path / "c"])
    assert "cover different cases" in text and "bfcl_acc multiple" in text and "bfcl_acc live_simple" in text


def test_negative_redundancy_is_explained() -> None:
    metric = {"value": -1.5, "low": -2.0, "high": -1.0, "n": 4}
    assert "below 0" in scenario_tables({"disambiguation": {"redundancy": metric}})
    assert "below 0" not in scenario_tables({"disambiguation": {"redundancy": {**metric, "value": 0.5}}})


@pytest.mark.slow
def test_cli_import_run_and_refusals(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("UTCGEN_MODEL", "UTCGEN_API_BASE")}
    env.update(UTCGEN_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([UTCGEN, "eval", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)

    shutil.copytree(FIXTURES, tmp_path / "data")
    done = cli("import", "bfcl", "data/BFCL_v4_parallel.json")  # answers from possible_answer/, default --out
    assert done.returncode == 0, done.stderr[-2000:]
    assert "3 BFCL parallel cases" in done.stdout and (tmp_path / "eval-out" / "bfcl-parallel" / "cases.jsonl").is_file()
    done = cli("run", "--benchmark", "eval-out/bfcl-parallel", "--model", "reference/oracle", "--mode", "static",
               "--no-progress")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "bfcl_acc 1.000" in done.stdout
    assert (tmp_path / "eval-out" / "runs" / "reference-oracle-static" / "metrics.json").is_file()
    assert cli("import", "bfcl", "data/BFCL_v4_irrelevance.json").returncode == 0
    other = cli("run", "--benchmark", "eval-out/bfcl-irrelevance", "--model", "reference/oracle", "--mode", "static",
                "--no-progress", "--out", "eval-out/runs/irr")
    assert other.returncode == 0, other.stderr[-2000:]
    compared = cli("compare", "eval-out/runs/reference-oracle-static", "eval-out/runs/irr")
    assert compared.returncode == 0 and "cover different cases (3 (`reference-oracle-static`) vs 3 (`irr`); 0 in common)" \
        in compared.stderr
    assert "bfcl_acc parallel" in compared.stdout and "bfcl_acc irrelevance" in compared.stdout
    (tmp_path / "data" / "BFCL_v4_multi_turn_base.json").write_text('{"id": "multi_turn_base_0"}\n')
    refused = cli("import", "bfcl", "data/BFCL_v4_multi_turn_base.json")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "multi_turn_base is not imported" in refused.stderr
    dynamic = cli("run", "--benchmark", "eval-out/bfcl-parallel", "--model", "reference/oracle", "--mode", "dynamic",
                  "--out", "eval-out/runs/dyn")
    assert dynamic.returncode == 2 and "--mode static" in dynamic.stderr
