"""Multi-step cases in `utcgen eval`: a benchmark built from an offline multi-step run keeps both steps and the
first result, and a static run scores each step's tool and arguments, the values fed from the first result, and
the final call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.runs import scenario_lines_run
from utcgen.pipeline.core.records import Message, ToolCall
from utcgen.pipeline.dialogue.arguments import correct_arguments
from utcgen.pipeline.dialogue.results import results as tool_results
from utcgen.pipeline.evaluation import policies
from utcgen.pipeline.evaluation.cases import Case, read_cases
from utcgen.pipeline.evaluation.scenario_metrics import STEP_KEYS

MADE_UP = "MADE-UP-0001"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> dict[str, Any]:
    """A small offline multi-step run, and the benchmark `utcgen eval build` makes of it, as a user runs it."""
    from utcgen.pipeline.cli import main

    root = tmp_path_factory.mktemp("multistep")
    run = scenario_lines_run(root, embedder, {"num_dialogues": 5, "seed": 5, "scenarios": {"multi_step": 1.0},
                                              "execution": {"results": True, "error_share": 0.2}})
    bench = root / "bench"
    assert main(["eval", "build", "--from", str(run["out"]), "--out", str(bench), "--holdout", "0.6",
                 "--seed", "1"]) == 0
    return {**run, "bench": bench, "cases": read_cases(bench)}


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("UTCGEN_MODEL", raising=False)
    monkeypatch.delenv("UTCGEN_API_BASE", raising=False)


def test_a_case_keeps_both_steps_and_the_first_result(built: dict[str, Any]) -> None:
    cases: list[Case] = built["cases"]
    assert cases and {c.scenario for c in cases} == {"multi_step"}
    source = {d.id: d for d in built["accepted"]}
    for case in cases:
        first, second = case.steps
        chain = case.scenario_info.chain
        assert chain is not None and (first.tool.name, first.gold) == (chain.tool.name, chain.gold)
        assert (second.tool.name, second.gold, second.fed) == (case.gold_tool.name, case.gold_arguments, chain.fed)
        assert chain.fed and all(case.gold_arguments[k] == v for k, v in chain.fed.items())
        assert [t.name for t in first.candidates] == [t.name for t in chain.candidates]
        shown = [t.name for t in case.shown]  # the model under test is shown both steps' pools
        assert set(shown) == {t.name for t in [*chain.candidates, *case.candidates]} and len(shown) == len(set(shown))
        # the reference runs to the second call, through the first step's successful result
        d = source[case.id]
        recorded = next(r for r in tool_results(d.messages) if r.call and r.call.name == first.tool.name
                        and r.error is None)
        results = [m for m in case.reference if m.role == "tool"]
        assert results[-1].content == d.messages[recorded.at].content
        assert [c.name for c in case.reference[-1].tool_calls] == [second.tool.name]


def _run(bench: Path, model: str, out: Path, mode: str = "static") -> dict[str, Any]:
    from utcgen.pipeline.evaluation.run import EvalSettings, Evaluator
    from utcgen.pipeline.llm.gateway import shutdown

    async def go() -> None:
        settings = EvalSettings(benchmark=str(bench), model=model, mode=mode, rubric_model=None, votes=None)
        evaluator = Evaluator(settings, out)
        try:
            evaluator.report(await evaluator.run(), 0.0)
        finally:
            evaluator.close()
            await shutdown()

    asyncio.run(go())
    return json.loads((out / "metrics.json").read_text())


def test_the_command_scores_each_step_and_the_final_call(built: dict[str, Any], tmp_path: Path) -> None:
    from utcgen.pipeline.cli import main
    from utcgen.pipeline.evaluation.cases import CaseResult

    out = tmp_path / "offline"
    assert main(["eval", "run", "--benchmark", str(built["bench"]), "--model", "utcgen-offline/default", "--mode",
                 "static", "--out", str(out), "--no-conv-rel", "--no-progress"]) == 0
    scores = json.loads((out / "metrics.json").read_text())["scenarios"]["multi_step"]
    n = len(built["cases"])
    assert all(scores[k]["n"] == n for k in ("step1_tool", "step2_tool", "final_call"))
    assert all(0.0 <= scores[k]["value"] <= 1.0 for k in STEP_KEYS if k in scores)
    report = (out / "report.md").read_text().split("### multi_step")[1]
    assert "step 1 tool" in report and "final call right" in report
    for path in (out / "results").glob("*.json"):
        result = CaseResult.model_validate_json(path.read_text())
        assert result.steps is not None and len(result.steps) == 2
        if result.steps[0]:  # a first call got the recorded result, answering that call
            answered = [m for m in result.messages if m.role == "tool"]
            assert answered and all(m.tool_call_id and m.tool_call_id.startswith("call_") for m in answered)
    oracle = _run(built["bench"], "reference/oracle", tmp_path / "oracle")["scenarios"]["multi_step"]
    assert {k: oracle[k]["value"] for k in ("step1_tool", "step2_tool", "step2_fed")} == dict.fromkeys(
        ("step1_tool", "step2_tool", "step2_fed"), 1.0)
    # its values are V*: right wherever V* itself is a valid call of the step's tool (an accepted dialogue may
    # hold a value its schema's pattern refuses, which no call can get right)
    for k in (1, 2):
        valid = [correct_arguments(c.steps[k - 1].gold, c.steps[k - 1].gold, c.steps[k - 1].tool) for c in built["cases"]]
        assert oracle[f"step{k}_args"]["value"] == pytest.approx(sum(valid) / n, abs=1e-6)
    assert oracle["final_call"]["value"] == oracle["step2_args"]["value"]


def _made_up_id(case: Case, history: list[Message]) -> Message:
    """The oracle, but the second call passes a made-up id where the first result's value belongs."""
    reply = policies.oracle(case, history)
    if not any(m.role == "tool" for m in history):
        return reply
    (call,) = reply.tool_calls
    chain = case.scenario_info.chain
    assert chain is not None
    wrong = {**call.arguments, **dict.fromkeys(chain.fed, MADE_UP)}
    return reply.model_copy(update={"tool_calls": [ToolCall(name=call.name, arguments=wrong)]})


def test_a_made_up_second_argument_fails_step_two_only(built: dict[str, Any], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(policies.POLICIES, "reference/made-up-id", _made_up_id)
    data = _run(built["bench"], "reference/made-up-id", tmp_path / "made-up")
    got = {k: m["value"] for k, m in data["scenarios"]["multi_step"].items()}
    assert (got["step1_tool"], got["step1_args"], got["step2_tool"]) == (1.0, 1.0, 1.0)
    assert (got["step2_args"], got["step2_fed"], got["final_call"], got["acc"]) == (0.0, 0.0, 0.0, 0.0)
    fed = sum(len(c.steps[1].fed) for c in built["cases"])  # each made-up value is one wrong value, nothing else
    assert data["patterns"]["wrong_argument_value"] == fed and data["patterns"]["insufficient_calls"] == 0


def test_dynamic_plays_each_step_with_the_proxy(built: dict[str, Any], tmp_path: Path) -> None:
    from utcgen.pipeline.evaluation.cases import CaseResult
    from utcgen.pipeline.evaluation.scenario_metrics import stated

    data = _run(built["bench"], "utcgen-offline/default", tmp_path / "dyn", mode="dynamic")
    scored = data["counts"]["scored"]
    assert scored and all(data["scenarios"]["multi_step"][k]["n"] == scored for k in ("step1_tool", "final_call"))
    by_id = {c.id: c for c in built["cases"]}
    followed = 0
    for path in (tmp_path / "dyn" / "results").glob("*.json"):
        result = CaseResult.model_validate_json(path.read_text())
        assert result.steps is not None and len(result.steps) == 2
        roles = [m.role for m in result.messages]
        if "tool" not in roles:
            continue
        # after the first result the proxy asks for the next thing, and never says what the result fed
        after = [m.content.casefold() for m in result.messages[roles.index("tool"):] if m.role == "user"]
        fed = by_id[result.case_id].steps[1].fed
        assert not any(stated(v, text) for v in fed.values() for text in after)
        followed += bool(after)
    assert followed
