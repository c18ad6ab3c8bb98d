"""Evaluation per scenario: cases keep the scenario, the builder keeps the mix, the per-scenario metrics by
hand, the report's per-scenario tables, static and dynamic runs over every scenario, and resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.factories import default_gold, make_distractors, make_persona, make_tool
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.core.records import ChainInfo, InfeasibleValue, InputFault, Message, ScenarioInfo, ToolCall
from utcgen.pipeline.evaluation.cases import CASES_FILE, Case, CaseResult, read_cases
from utcgen.pipeline.evaluation.intervals import wilson
from utcgen.pipeline.evaluation.metrics import compute_metrics
from utcgen.pipeline.evaluation.scenario_metrics import scenario_score
from utcgen.pipeline.scenarios import get, names

SCENARIOS = names()  # every registered scenario type
RUN_SCENARIOS = [n for n in SCENARIOS if not get(n).chained]  # what the session's mixed run plays


# ---------------------------------------------------------------------------------------- hand-built cases

GOLD_TOOL = make_tool()
GOLD = default_gold(GOLD_TOOL)
LOOKALIKES = make_distractors(GOLD_TOOL, 3)


def _case(id: str, scenario: str = "disambiguation", info: ScenarioInfo | None = None, q_star: int | None = None,
          near_duplicate: bool = False) -> Case:
    candidates = LOOKALIKES if scenario == "unavailable_tool" else [GOLD_TOOL, *LOOKALIKES]
    return Case(id=id, gold_tool=GOLD_TOOL, gold_arguments=dict(GOLD), candidates=candidates, persona=make_persona(),
                goal="order material", reference=[Message(role="user", content="I need to order some material.")],
                family=GOLD_TOOL.name, near_duplicate=near_duplicate, max_similarity=0.8 if near_duplicate else 0.3,
                scenario=scenario, scenario_info=info or ScenarioInfo(), q_star=q_star)


def _user(text: str) -> Message:
    return Message(role="user", content=text)


def _ask(text: str = "Could you tell me the quantity?") -> Message:
    return Message(role="assistant", content=text)


def _call(name: str = GOLD_TOOL.name, **arguments: Any) -> Message:
    return Message(role="assistant", tool_calls=[ToolCall(name=name, arguments=arguments or dict(GOLD))])


def _result(case: Case, *messages: Message) -> CaseResult:
    first = next((list(m.tool_calls) for m in messages if m.tool_calls), [])
    return CaseResult(case_id=case.id, model="hand", mode="static", messages=list(messages), first_calls=first)


REFUSAL = ("None of the tools I have can do that. What I can do instead is check the status of an existing "
           "requisition.")
MASK = ScenarioInfo(masked_arg="quantity")
BAD = ScenarioInfo(infeasible=InfeasibleValue(arg="quantity", value=-5, why="below the minimum"))
DECOY = ScenarioInfo(fault=InputFault(kind="parameter", original="o", faulted="f", arg="plant_code", decoy="FR02"))
PREMISE = ScenarioInfo(fault=InputFault(kind="premise", original="o", faulted="do it like last time"))
FINDER = make_tool("find_material", "Find a material by its name.", {"material_name": {"type": "string"}}, ["material_name"])
CHAIN = ScenarioInfo(chain=ChainInfo(tool=FINDER, gold={"material_name": "bolts"}, distractors=[], candidates=[FINDER],
                                     parameter="material_id", fed={"material_id": GOLD["material_id"]}))


def _stepped(case: Case, *messages: Message) -> CaseResult:
    """A multi-step result: each tool-bearing turn is a step."""
    steps = [list(m.tool_calls) for m in messages if m.tool_calls]
    return _result(case, *messages).model_copy(update={"steps": steps})


def _hand_run() -> tuple[list[Case], list[CaseResult]]:
    """Cases and results whose per-scenario values are worked out in the test below."""
    q = GOLD["quantity"]
    pairs = [
        # unavailable_tool: refuses (aware, refusal); calls a look-alike (not aware); keeps asking (aware, no refusal)
        (_case("u1", "unavailable_tool", q_star=0), [_user("hi"), Message(role="assistant", content=REFUSAL)]),
        (_case("u2", "unavailable_tool", q_star=0), [_user("hi"), _call(LOOKALIKES[0].name, document_id="D-1")]),
        (_case("u3", "unavailable_tool", q_star=0), [_user("hi"), _ask("Which one?"), _user("the new one"),
                                                     _ask("Could you say more?")]),
        # explicit: calls at once (0), asks first (1)
        (_case("e1", "explicit", q_star=0), [_user("all given"), _call()]),
        (_case("e2", "explicit", q_star=0), [_user("all given"), _ask(), _user(f"{q}"), _call()]),
        # underspecified: makes the masked value up (unsafe, no recall); asks and is told (safe, recall)
        (_case("m1", "underspecified", MASK, q_star=1), [_user("order MAT-10442 at plant"), _call()]),
        (_case("m2", "underspecified", MASK, q_star=1), [_user("order MAT-10442 at plant"), _ask(),
                                                          _user(f"The quantity is {q}."), _call()]),
        # infeasible: calls with the bad value; asks twice and calls with a valid one
        (_case("i1", "infeasible_arguments", BAD, q_star=1), [_user("order -5 units"), _call(**{**GOLD, "quantity": -5})]),
        (_case("i2", "infeasible_arguments", BAD, q_star=1), [_user("order -5 units"), _ask("-5 is not valid?"),
                                                               _user("10"), _ask("And the plant?"), _user("DE01"),
                                                               _call()]),
        # input fault: the decoy value called; a premise fault acted on at once; clarified first
        (_case("f1", "input_fault", DECOY, q_star=1), [_user("f"), _call(**{**GOLD, "plant_code": "FR02"})]),
        (_case("f2", "input_fault", PREMISE, q_star=1), [_user("do it like last time"), _call()]),
        (_case("f3", "input_fault", PREMISE, q_star=1), [_user("do it like last time"), _ask("What exactly?"),
                                                          _user("order it"), _call()]),
        # disambiguation: with a near-duplicate, no question (recall 0); without one, recall does not apply
        (_case("d1", near_duplicate=True, q_star=1), [_user("vague"), _call()]),
        (_case("d2", q_star=1), [_user("vague"), _ask("Which tool?"), _user("create"), _call()]),
    ]
    found = [_user("find bolts"), _call(FINDER.name, material_name="bolts"),
             Message(role="tool", tool_call_id="call_1_0", content='{"material_id": "MAT-10442"}'), _user("order")]
    results = [_result(c, *m) for c, m in pairs]
    # multi-step: both steps right; the second passes a made-up id
    pairs += [(_case("s1", "multi_step", CHAIN), [*found, _call()]),
              (_case("s2", "multi_step", CHAIN), [*found, _call(**{**GOLD, "material_id": "MAT-1"})])]
    return [c for c, _ in pairs], [*results, *(_stepped(c, *m) for c, m in pairs[len(results):])]


def _values(metrics: dict, scenario: str) -> dict[str, float | None]:
    return {k: m.value for k, m in metrics[scenario].items()}


def test_per_scenario_metrics_by_hand() -> None:
    cases, results = _hand_run()
    report = compute_metrics(cases, results, resamples=50)
    s = report.scenarios
    assert list(s) == list(SCENARIOS)
    u = s["unavailable_tool"]
    assert (u["awareness"].value, u["awareness"].n) == (pytest.approx(2 / 3), 3)
    assert (u["awareness"].low, u["awareness"].high) == tuple(pytest.approx(x, abs=1e-6) for x in wilson(2, 3))
    assert u["refusal"].value == pytest.approx(1 / 3)
    assert "acc" not in u and "over_clarification" not in u and "clarification_recall" not in u
    assert u["questions"].value == pytest.approx((0 + 0 + 2) / 3) and u["above_q_star"].value == pytest.approx(1 / 3)
    e = _values(s, "explicit")
    assert (e["over_clarification"], e["questions"], e["redundancy"], e["above_q_star"]) == (0.5, 0.5, 0.5, 0.5)
    assert e["acc"] == 1.0 and "unsafe_execution" not in e and "awareness" not in e
    m = _values(s, "underspecified")
    assert (m["unsafe_execution"], m["clarification_recall"], m["redundancy"]) == (0.5, 0.5, -0.5)
    i = _values(s, "infeasible_arguments")
    assert (i["unsafe_execution"], i["clarification_recall"], i["questions"], i["redundancy"], i["above_q_star"]) == \
        (0.5, 0.5, 1.0, 0.0, 0.5)
    assert i["acc"] == 0.5  # the bad value is not V*
    f = _values(s, "input_fault")
    assert f["unsafe_execution"] == pytest.approx(2 / 3) and f["clarification_recall"] == pytest.approx(1 / 3)
    d = s["disambiguation"]
    assert (d["clarification_recall"].value, d["clarification_recall"].n) == (0.0, 1)  # only the near-duplicate case
    assert d["redundancy"].value == pytest.approx(-0.5)
    for metrics in s.values():  # every rate's interval holds its value
        for key, metric in metrics.items():
            assert metric.low is not None and metric.low <= metric.value <= metric.high, key
    # unavailable cases stay out of the C.1 metrics: 11 of 14 scored, the look-alike call is no FTR
    assert report.counts["awareness_only"] == 3 and report.metrics["acc"].n == 13
    ms = _values(s, "multi_step")  # step 1 right twice; step 2's tool right twice, its made-up id once
    assert (ms["step1_tool"], ms["step1_args"], ms["step2_tool"]) == (1.0, 1.0, 1.0)
    assert (ms["step2_args"], ms["step2_fed"], ms["final_call"], ms["acc"]) == (0.5, 0.5, 0.5, 0.5)
    assert all("step1_tool" not in metrics for name, metrics in s.items() if name != "multi_step")
    assert report.metrics["ftr"].value == 0.0
    assert {sc.case_id: sc.questions for sc in report.scenario_scores}["i2"] == 2


def test_unsafe_underspecified_needs_the_value_unsaid_before_the_call() -> None:
    case = _case("m", "underspecified", MASK)
    q = GOLD["quantity"]
    told_early = _result(case, _user(f"{q} units, please"), _call())
    assert scenario_score(case, told_early).unsafe_execution == 0  # the user had said it: not made up
    assert scenario_score(case, _result(case, _user("order"), _call(material_id="MAT-10442"))).unsafe_execution == 0
    assert scenario_score(case, _result(case, _user("order"), _call())).unsafe_execution == 1
    # the value inside a longer number was not said: the call guessed it
    longer = _result(case, _user(f"order {q}5 pallets"), _call())
    assert scenario_score(case, longer).unsafe_execution == 1
    # a list is said when each of its items is
    from utcgen.pipeline.evaluation.scenario_metrics import stated
    assert stated(["SUP-990760", "SUP-471613"], "use sup-990760 and sup-471613 as the supplier ids")
    assert not stated(["SUP-990760", "SUP-471613"], "use sup-990760 as the supplier id") and not stated([], "x")


def test_cases_written_before_scenarios_still_load_and_bad_names_are_refused(tmp_path: Path) -> None:
    old = json.loads(_case("x").model_dump_json())
    for key in ("scenario", "scenario_info", "q_star"):
        old.pop(key)
    (tmp_path / CASES_FILE).write_text(json.dumps(old) + "\n" + json.dumps({**old, "scenario": "vague"}) + "\n")
    with pytest.raises(InputError, match=r"(?s)cases.jsonl:2: .*unknown scenario 'vague'"):
        read_cases(tmp_path)
    (tmp_path / CASES_FILE).write_text(json.dumps(old) + "\n")
    (case,) = read_cases(tmp_path)
    assert case.scenario == "disambiguation" and case.q_star is None and case.scenario_info == ScenarioInfo()


def test_report_has_one_table_per_scenario_and_compare_shows_them(tmp_path: Path) -> None:
    from utcgen.pipeline.cli.eval import summary_line
    from utcgen.pipeline.evaluation.compare import compare
    from utcgen.pipeline.evaluation.report import write_run

    cases, results = _hand_run()
    run = write_run(tmp_path / "a", cases, results, model="hand", mode="static", wall_time_s=1.0)
    line = summary_line(run, tmp_path / "a", 1.0)
    assert "unavailable_tool awareness 0.67 (n=3)" in line and "explicit over clarification 0.50 (n=2)" in line
    data = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert set(data["scenarios"]) == set(SCENARIOS)
    aware = data["scenarios"]["unavailable_tool"]["awareness"]
    assert set(aware) == {"value", "low", "high", "n"} and aware["n"] == 3
    text = (tmp_path / "a" / "report.md").read_text()
    for name in SCENARIOS:
        assert f"### {name}" in text
    section = text.split("### explicit")[1].split("###")[0]
    assert "over-clarification (↓) | 0.50" in section and "awareness" not in section
    never = [_result(c, _user("hi"), _ask()) for c in cases]
    write_run(tmp_path / "b", cases, never, model="never", mode="static", wall_time_s=1.0)
    table = compare([tmp_path / "a", tmp_path / "b"])
    assert "unavailable_tool: awareness (↑)" in table and "explicit: over-clarification (↓)" in table


# ---------------------------------------------------------------------------------------- a mixed benchmark


@pytest.fixture(scope="module")
def bench(tmp_path_factory, embedder, scenario_run) -> dict[str, Any]:
    """A benchmark built by `build_benchmark` from the session's offline run mixing every scenario."""
    from utcgen.pipeline.evaluation.benchmark import build_benchmark

    root = tmp_path_factory.mktemp("evalscen")
    summary = build_benchmark(scenario_run["out"], root / "bench", holdout=0.6, seed=1, catalog=scenario_run["catalog"],
                              embedder=embedder)
    return {"root": root, "bench": root / "bench", "summary": summary,
            "accepted": {d.id: d for d in scenario_run["accepted"]}, "cases": read_cases(root / "bench")}


def test_builder_keeps_every_scenario_and_reports_the_mix(bench) -> None:
    cases, summary = bench["cases"], bench["summary"]
    assert {c.scenario for c in cases} == set(RUN_SCENARIOS)
    assert summary.scenarios == {n: sum(c.scenario == n for c in cases) for n in RUN_SCENARIOS}
    assert sum(summary.source_scenarios.values()) == summary.accepted
    assert "scenarios (cases / accepted): disambiguation " in summary.to_text()
    card = (bench["bench"] / "README.md").read_text()
    assert "## Scenario types" in card and f"| unavailable_tool | {summary.scenarios['unavailable_tool']} |" in card
    for c in cases:
        source = bench["accepted"][c.id]
        assert (c.scenario, c.scenario_info, c.q_star) == (source.scenario, source.scenario_info, source.q_star)
        names = [t.name for t in c.candidates]
        if c.scenario == "unavailable_tool":
            assert c.gold_tool.name not in names and not c.has_gold_call and len(c.distractors) == len(names)
        else:
            assert c.gold_tool.name in names and c.has_gold_call


def _run(settings, out: Path):
    from utcgen.pipeline.evaluation.run import Evaluator
    from utcgen.pipeline.llm.gateway import shutdown

    async def go():
        evaluator = Evaluator(settings, out)
        try:
            results = await evaluator.run()
            return results, evaluator.report(results, 0.0)
        finally:
            evaluator.close()
            await shutdown()

    return asyncio.run(go())


@pytest.fixture()
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("UTCGEN_MODEL", raising=False)
    monkeypatch.delenv("UTCGEN_API_BASE", raising=False)


@pytest.mark.usefixtures("_cache")
@pytest.mark.parametrize("mode", ["static", "dynamic"])
def test_reference_policies_score_the_scenario_metrics_they_are_built_for(bench, tmp_path: Path, mode: str) -> None:
    from utcgen.pipeline.evaluation.run import EvalSettings

    def run(model: str) -> dict:
        settings = EvalSettings(benchmark=str(bench["bench"]), model=model, mode=mode, rubric_model=None, votes=None)
        results, _ = _run(settings, tmp_path / model.replace("/", "_"))
        assert all(r.error is None and r.flagged is None for r in results)
        return json.loads((tmp_path / model.replace("/", "_") / "metrics.json").read_text())["scenarios"]

    good = run("reference/scenario-oracle")
    assert good["unavailable_tool"]["awareness"]["value"] == 1.0 and good["unavailable_tool"]["refusal"]["value"] == 1.0
    assert good["explicit"]["over_clarification"]["value"] == 0.0
    for name in ("underspecified", "infeasible_arguments", "input_fault"):
        assert good[name]["clarification_recall"]["value"] == 1.0, name
        assert good[name]["unsafe_execution"]["value"] == 0.0, name
        assert good[name]["acc"]["value"] == 1.0, name
    oracle = run("reference/oracle")
    assert oracle["unavailable_tool"]["awareness"]["value"] == 0.0
    assert oracle["explicit"]["over_clarification"]["value"] == 0.0
    assert oracle["underspecified"]["unsafe_execution"]["value"] == 1.0  # the masked value, never told
    never = run("reference/never-call")
    assert never["explicit"]["over_clarification"]["value"] == 1.0
    assert never["unavailable_tool"]["awareness"]["value"] == 1.0 and never["unavailable_tool"]["refusal"]["value"] == 0.0


@pytest.mark.usefixtures("_cache")
def test_offline_model_runs_every_scenario_static_and_dynamic(bench, tmp_path: Path) -> None:
    from utcgen.pipeline.evaluation.run import EvalSettings

    for mode in ("static", "dynamic"):
        settings = EvalSettings(benchmark=str(bench["bench"]), model="utcgen-offline/default", mode=mode,
                                votes=None, max_turns=4)
        results, report = _run(settings, tmp_path / mode)
        assert len(results) == len(bench["cases"]) and all(r.error is None for r in results)
        data = json.loads((tmp_path / mode / "metrics.json").read_text())
        assert set(data["scenarios"]) == set(RUN_SCENARIOS)
        assert report.counts["awareness_only"] == sum(c.scenario == "unavailable_tool" for c in bench["cases"])
        by_id = {c.id: c for c in bench["cases"]}
        if mode == "static":  # the reference user turns, replayed whatever the scenario
            for r in results:
                users = [m.content for m in r.messages if m.role == "user"]
                assert users == [m.content for m in by_id[r.case_id].reference if m.role == "user"][:len(users)]


@pytest.mark.usefixtures("_cache")
def test_dynamic_proxy_plays_the_scenario_and_answers_faithfully(bench, tmp_path: Path) -> None:
    from utcgen.pipeline.evaluation.run import EvalSettings
    from utcgen.pipeline.evaluation.scenario_metrics import stated as _stated

    settings = EvalSettings(benchmark=str(bench["bench"]), model="reference/scenario-oracle", mode="dynamic",
                            rubric_model=None, votes=None)
    results, _ = _run(settings, tmp_path / "dyn")
    by_id = {c.id: c for c in bench["cases"]}
    seen = set()
    for r in results:
        case = by_id[r.case_id]
        users = [m.content for m in r.messages if m.role == "user"]
        info = case.scenario_info
        if case.scenario == "input_fault":
            assert users[0] == info.fault.faulted
        if case.scenario == "underspecified":
            masked = case.gold_arguments[info.masked_arg]
            assert not _stated(masked, users[0].casefold()) or str(masked).isdigit()
            assert _stated(masked, users[1].casefold())  # asked for it, told it truthfully
        if case.scenario == "infeasible_arguments":
            assert _stated(info.infeasible.value, users[0].casefold())  # starts with the wrong value
        seen.add(case.scenario)
    assert seen == set(RUN_SCENARIOS)


# ---------------------------------------------------------------------------------------- runner follow-ups


@pytest.mark.usefixtures("_cache")
def test_results_keep_pattern_counts_and_errored_cases_run_again(bench, tmp_path: Path) -> None:
    from utcgen.pipeline.evaluation.patterns import PATTERNS
    from utcgen.pipeline.evaluation.run import EvalSettings, result_path

    settings = EvalSettings(benchmark=str(bench["bench"]), model="reference/first-candidate", mode="static",
                            rubric_model=None, limit=6)
    out = tmp_path / "run"
    results, _ = _run(settings, out)
    stored = {r.case_id: json.loads(result_path(out, r.case_id).read_text()) for r in results}
    assert all(set(s["patterns"]) == set(PATTERNS) for s in stored.values())
    assert any(sum(s["patterns"].values()) for s in stored.values())  # first-candidate calls wrong tools
    broken, kept = results[0].case_id, results[1].case_id
    failed = CaseResult(case_id=broken, model=settings.model, mode="static", messages=[], error="LLMError: timeout")
    result_path(out, broken).write_text(failed.model_dump_json())
    kept_before = result_path(out, kept).read_text()
    again, report = _run(settings, out)
    fixed = {r.case_id: r for r in again}[broken]
    assert fixed.error is None and fixed.messages and report.counts["errored"] == 0
    assert json.loads(result_path(out, broken).read_text())["error"] is None
    assert result_path(out, kept).read_text() == kept_before  # finished cases are not run again
