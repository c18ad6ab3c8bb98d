"""Models under test: a litellm model over a local OpenAI-compatible server (json and native tool
format, and a fatal error mid-run), and local Hugging Face checkpoints and LoRA adapters."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.support.eval_bench import benchmark, cases
from tests.support.openai_server import ChatRequest, FaultPlan, ScriptedOpenAIServer, ServerError
from tests.support.tiny_model import build_model, build_tokenizer
from utcgen.pipeline.core.errors import UtcgenError
from utcgen.pipeline.evaluation.cases import RESULTS_DIR
from utcgen.pipeline.evaluation.models import TRAIN_EXTRA, HFModel, parse_generation
from utcgen.pipeline.evaluation.run import EvalSettings, Evaluator, run_evaluation
from utcgen.pipeline.export.slicing import build_system_prompt


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-dummy")
    monkeypatch.delenv("UTCGEN_MODEL", raising=False)
    monkeypatch.delenv("UTCGEN_API_BASE", raising=False)


def _case_of(request: ChatRequest):
    """The benchmark case a request is about, told by its first user turn (the reference's)."""
    first = request.messages[1]["content"]
    return next(c for c in cases() if c.reference[0].content == first)


def _run(settings: EvalSettings, out: Path, **init):
    from utcgen.pipeline.llm.gateway import shutdown

    async def go():
        evaluator = Evaluator(settings, out, **init)
        try:
            return await evaluator.run(), evaluator
        finally:
            evaluator.close()
            await shutdown()

    return asyncio.run(go())


def json_responder(request: ChatRequest) -> str:
    """Asks once, then calls the gold tool with the gold values, in the JSON reply protocol."""
    case = _case_of(request)
    if sum(m["role"] == "user" for m in request.messages) < 2:
        return json.dumps({"thought": "unclear", "content": "Which one do you mean?", "tool_calls": []})
    return json.dumps({"thought": "clear now", "content": "",
                       "tool_calls": [{"name": case.gold_tool.name, "arguments": case.gold_arguments}]})


def native_responder(request: ChatRequest) -> dict:
    case = _case_of(request)
    if sum(m["role"] == "user" for m in request.messages) < 2:
        return {"content": "<think>not sure yet</think>Which one do you mean?"}
    return {"content": None, "reasoning_content": "clear now",
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": case.gold_tool.name, "arguments": json.dumps(case.gold_arguments)}}]}


@pytest.mark.slow
@pytest.mark.parametrize("tool_format", ["json", "native"])
def test_litellm_model_over_a_local_server(tool_format: str, tmp_path: Path) -> None:
    responder = json_responder if tool_format == "json" else native_responder
    with ScriptedOpenAIServer(responder) as srv:
        settings = EvalSettings(benchmark=str(benchmark(tmp_path)), model="openai/local-test", mode="static",
                                api_base=srv.base_url, tool_format=tool_format, rubric_model=None, limit=3)
        results, ev = _run(settings, tmp_path / "run")
        requests = srv.requests
    assert len(results) == 3
    for r, c in zip(results, ev.cases):
        assert r.error is None and [x.name for x in r.first_calls] == [c.gold_tool.name]
        assert r.first_calls[0].arguments == c.gold_arguments
        first = r.messages[1]
        assert first.content == "Which one do you mean?" and first.thought in ("unclear", "not sure yet")
    sft = "json" if tool_format == "json" else "chat"
    for req in requests:
        case = _case_of(req)
        assert req.messages[0] == {"role": "system", "content": build_system_prompt(case.candidates, sft)}
        assert req.body.get("temperature") == 0
        if tool_format == "native":
            assert req.tools == [t.openai_spec() for t in case.candidates] and req.response_format is None
        else:
            assert not req.tools and req.response_format is not None
    second = [q for q in requests if sum(m["role"] == "user" for m in q.messages) == 2]
    assert second, "no second turn was requested"
    earlier = second[0].messages[2]
    assert earlier["role"] == "assistant"
    if tool_format == "json":  # the model sees its own earlier turn in the protocol it was trained on
        assert json.loads(earlier["content"]) == {"thought": "unclear", "content": "Which one do you mean?",
                                                  "tool_calls": []}


@pytest.mark.slow
def test_a_fatal_error_stops_the_run_and_keeps_finished_cases(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(json_responder, faults=FaultPlan({2: ServerError(401, "bad key")})) as srv:
        settings = EvalSettings(benchmark=str(benchmark(tmp_path)), model="openai/local-test", mode="static",
                                api_base=srv.base_url, rubric_model=None)
        with pytest.raises(UtcgenError, match="re-run the same command to resume"):
            _run(settings, tmp_path / "run", max_in_flight=1)
    assert len(list((tmp_path / "run" / RESULTS_DIR).glob("*.json"))) == 1


def test_parse_generation_reads_think_tool_call_json_and_text() -> None:
    m = parse_generation('<think>\nneeds X\n</think>\n<tool_call>\n{"name": "a", "arguments": {"k": 1}}\n</tool_call>')
    assert m.thought == "needs X" and [(c.name, c.arguments) for c in m.tool_calls] == [("a", {"k": 1})]
    m = parse_generation('{"thought": "t", "content": "Which one?", "tool_calls": []}')
    assert (m.thought, m.content, m.tool_calls, m.parse_error) == ("t", "Which one?", [], None)
    m = parse_generation("<think>hmm</think>Which report do you mean?")
    assert (m.thought, m.content) == ("hmm", "Which report do you mean?")
    assert parse_generation("<tool_call>{not json</tool_call>").parse_error
    assert parse_generation('{"thought": ').parse_error
    assert parse_generation("   ").parse_error == "empty generation"


def _tiny_checkpoint(folder: Path) -> Path:
    texts = [json.dumps(c.model_dump()) for c in cases()]
    tok = build_tokenizer(texts)
    model = build_model(tok)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "ckpt")


def test_hf_checkpoint_run_completes_and_writes_the_report(checkpoint: Path, tmp_path: Path) -> None:
    from utcgen.pipeline.evaluation.patterns import count_patterns

    out = tmp_path / "run"
    settings = EvalSettings(benchmark=str(benchmark(tmp_path)), model=f"hf:{checkpoint}", mode="static",
                            max_new_tokens=16, limit=2)
    asyncio.run(run_evaluation(settings, out))
    results = [json.loads(p.read_text()) for p in sorted((out / RESULTS_DIR).glob("*.json"))]
    assert len(results) == 2 and all(r["error"] is None for r in results)
    for r in results:  # random weights: garbage, but every turn is a recorded reply with its usage
        turns = [m for m in r["messages"] if m["role"] == "assistant"]
        assert turns and r["usage"]["completion_tokens"] > 0 and len(r["conv_rel"]) == len(turns)
    metrics = json.loads((out / "metrics.json").read_text())
    assert (out / "report.md").is_file() and metrics
    from utcgen.pipeline.evaluation.cases import CaseResult

    by_id = {c.id: c for c in cases()}
    invalid = sum(m["parse_error"] is not None for r in results for m in r["messages"] if m["role"] == "assistant")
    counted = sum(count_patterns(by_id[r["case_id"]], CaseResult.model_validate(r)).get("invalid_format", 0)
                  for r in results)
    assert counted == invalid


def test_peft_lora_adapter_folder_loads(checkpoint: Path, tmp_path: Path) -> None:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(str(checkpoint))
    adapter = get_peft_model(base, LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj", "v_proj"],
                                              task_type="CAUSAL_LM"))
    adapter.save_pretrained(tmp_path / "adapter")
    assert json.loads((tmp_path / "adapter" / "adapter_config.json").read_text())["base_model_name_or_path"] == str(checkpoint)
    model = HFModel(tmp_path / "adapter", max_new_tokens=8)
    assert type(model._model).__name__ == "PeftModelForCausalLM"
    case = cases()[0]
    from utcgen.pipeline.core.records import Message

    message, usage = asyncio.run(model.reply(case, [Message(role="user", content="Hello, I need a report.")]))
    assert message.role == "assistant" and usage.calls == 1 and usage.prompt_tokens > 0


def test_an_adapter_without_peft_names_the_extra_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import re
    import sys
    import tomllib

    from tests.support.paths import REPO

    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": str(tmp_path / "base")}))
    monkeypatch.setitem(sys.modules, "peft", None)  # as if peft were not installed
    with pytest.raises(UtcgenError, match=rf"peft.*pip install 'utcgen\[{TRAIN_EXTRA}\]'") as raised:
        HFModel(adapter)
    assert isinstance(raised.value.__cause__, ImportError) and str(adapter) in str(raised.value)
    # the extra the message names exists and brings peft
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "peft" in {re.split(r"[=<>\[ ]", r)[0] for r in extras[TRAIN_EXTRA]}


@pytest.mark.slow
def test_a_request_refused_for_good_marks_its_case_and_the_run_goes_on(tmp_path: Path) -> None:
    from utcgen.pipeline.evaluation.metrics import compute_metrics

    with ScriptedOpenAIServer(json_responder, faults=FaultPlan({1: ServerError(400, "prompt is too long")})) as srv:
        settings = EvalSettings(benchmark=str(benchmark(tmp_path)), model="openai/local-test", mode="static",
                                api_base=srv.base_url, rubric_model=None, limit=3)
        results, ev = _run(settings, tmp_path / "run", max_in_flight=1)
    failed = [r for r in results if r.error]
    assert len(results) == 3 and len(failed) == 1 and "prompt is too long" in failed[0].error
    assert [m.role for m in failed[0].messages] == ["user", "assistant", "user"]  # kept up to the failed call
    counts = compute_metrics(ev.cases, results, resamples=20).counts
    assert (counts["errored"], counts["scored"]) == (1, 2)


def test_hf_checkpoint_in_the_dynamic_loop(checkpoint: Path, tmp_path: Path) -> None:
    settings = EvalSettings(benchmark=str(benchmark(tmp_path)), model=f"hf:{checkpoint}", mode="dynamic",
                            max_new_tokens=8, max_turns=2, limit=1, votes=(2, 1), rubric_model=None)
    results, _ = _run(settings, tmp_path / "run")
    (r,) = results
    assert r.error is None and [m.role for m in r.messages][:2] == ["user", "assistant"]
    assert sum(m.role == "assistant" for m in r.messages) <= 2
    # model turns (local tokens) and proxy calls (2 drafts + 1 vote per user turn) are both charged
    assert r.usage.calls == sum(m.role == "assistant" for m in r.messages) * 4


@pytest.mark.slow
def test_an_unparseable_reply_is_one_invalid_turn_not_retried(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(lambda request: '{"thought": "cut short') as srv:
        settings = EvalSettings(benchmark=str(benchmark(tmp_path)), model="openai/local-test", mode="static",
                                api_base=srv.base_url, rubric_model=None, limit=2)
        results, ev = _run(settings, tmp_path / "run")
        requests = len(srv.requests)
    user_turns = sum(m.role == "user" for c in ev.cases for m in c.reference)
    assert requests == user_turns  # one request per reference user turn
    for r in results:
        turns = [m for m in r.messages if m.role == "assistant"]
        assert turns and all(m.parse_error for m in turns) and not r.first_calls


# ---- the offline model under test sees what any model sees ------------------------------------------------

def test_the_under_test_request_holds_only_the_candidates_and_the_dialogue() -> None:
    from utcgen.pipeline.llm.requests import SaidWithThought, UnderTestRequest

    assert set(UnderTestRequest.model_fields) == {"role", "candidates", "history"}
    assert set(SaidWithThought.model_fields) == {"role", "content", "thought"}


@pytest.mark.parametrize("tool_format", ["json", "native"])
def test_the_offline_model_under_test_answers_alike_when_only_hidden_gold_differs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool_format: str) -> None:
    """Two cases with the same candidates and dialogue, but another gold tool, other gold values, persona,
    goal and scenario: whatever the model under test replies must be the same for both."""
    from tests.support.evalcases import CASE_TOOL, INCIDENT, TICKET, case
    from utcgen.pipeline.core.records import Message, Persona, ScenarioInfo
    from utcgen.pipeline.evaluation.models import LiteLLMModel

    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path / "cache"))
    pool = [TICKET, INCIDENT, CASE_TOOL]
    one = case("c1", candidates=pool)
    other = case("c1", candidates=pool, gold=INCIDENT, arguments={"title": "Fire", "severity": 1}).model_copy(
        update={"persona": Persona(id="p2", text="A facilities manager."), "goal": "Report a fire.",
                "scenario": "underspecified", "scenario_info": ScenarioInfo(masked_arg="severity")})
    model = LiteLLMModel("utcgen-offline/default", tool_format=tool_format)  # type: ignore[arg-type]
    history = [Message(role="user", content="My printer keeps jamming.")]
    replies = []
    try:
        for c in (one, other):
            turn, _ = asyncio.run(model.reply(c, history))
            after = [*history, turn, Message(role="user", content="Printer jam, the priority is high.")]
            replies.append((turn, asyncio.run(model.reply(c, after))[0]))
    finally:
        model.close()
    assert replies[0] == replies[1]
    assert replies[0][0].content  # it did answer (a question first: several candidates fit)
