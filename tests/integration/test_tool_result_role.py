"""The tool-result role through the real gateway: the offline provider reached through litellm, and a local
OpenAI-compatible server on 127.0.0.1 answering as a faithful model would (the offline backend's reply),
with the reply's schema sent, an unusable reply asked again, and the role called only when results are on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_server import FaultPlan, Reply, ScriptedOpenAIServer
from tests.support.simulator import SIM_MODEL, simulator_config, simulator_responder
from utcgen.pipeline import simulator as offline
from utcgen.pipeline.core.records import Persona, Tool
from utcgen.pipeline.llm.gateway import Gateway, LLMReply
from utcgen.pipeline.llm.registry import ModelRegistry
from utcgen.pipeline.llm.replies import ReplyError, result_reply_schema
from utcgen.pipeline.llm.requests import ToolResultRequest
from utcgen.pipeline.settings.config import RunConfig
from utcgen.pipeline.synthesis.results import render_tool_result, tool_result

TOOL = Tool(name="get_invoice", description="Gets an invoice of a supplier account, with its lines and due date.",
            parameters={"type": "object", "required": ["invoice_id"], "properties": {"invoice_id": {"type": "string"}}},
            output_schema={"type": "object", "required": ["invoice_id", "due_date", "lines"], "properties": {
                "invoice_id": {"type": "string"}, "due_date": {"type": "string", "format": "date"},
                "lines": {"type": "array", "items": {"type": "object", "properties": {
                    "description": {"type": "string"}, "amount": {"type": "number"}}}}}})
PERSONA = Persona(id="p2", text="An accounts payable clerk.", role="accounts payable clerk", attributes={"currency": "EUR"})
REQUEST = ToolResultRequest(tool=TOOL, arguments={"invoice_id": "INV-20931"}, persona=PERSONA,
                            goal="I need the due date of invoice INV-20931.", seed=8)


def offline_gateway(tmp_path: Path, results: bool = True) -> Gateway:
    config = RunConfig.model_validate({"execution": {"results": results},
                                       "llm": {"cache": False, "cache_dir": str(tmp_path / "cache")}})
    return Gateway(ModelRegistry.from_config(config))


def test_the_offline_provider_plays_the_tool_through_litellm(tmp_path: Path) -> None:
    gateway = offline_gateway(tmp_path)
    noted: list[tuple[str, LLMReply]] = []
    out = asyncio.run(tool_result(gateway, REQUEST, note=lambda role, reply: noted.append((role, reply))))
    assert out == json.loads(offline.respond(REQUEST, render_tool_result(REQUEST)))
    assert out["invoice_id"] == "INV-20931" and out["lines"]
    assert [role for role, _ in noted] == ["tool_result"] and gateway.usage_by_role["tool_result"].calls == 1
    failed = asyncio.run(tool_result(gateway, REQUEST.model_copy(update={"error": "permission_denied"})))
    assert failed["error"]["type"] == "permission_denied" and failed["error"]["message"]


def test_a_run_without_results_has_no_model_for_the_role(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="no model for role 'tool_result'"):
        asyncio.run(tool_result(offline_gateway(tmp_path, results=False), REQUEST))


def served(srv: ScriptedOpenAIServer, tmp_path: Path) -> Gateway:
    raw: dict[str, Any] = simulator_config(srv.base_url, execution={"results": True},
                                           llm={"max_retries": 0, "cache_dir": str(tmp_path / "cache")})
    raw["models"]["tool_result"] = SIM_MODEL
    return Gateway(ModelRegistry.from_config(RunConfig.model_validate(raw)))


@pytest.mark.slow  # starts a server
def test_a_model_at_a_local_server_plays_the_tool(simulated_gateway: None, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(simulator_responder) as srv:
        out = asyncio.run(tool_result(served(srv, tmp_path), REQUEST))
        sent = srv.requests[0]
    assert out == json.loads(offline.respond(REQUEST, []))
    assert sent.messages == render_tool_result(REQUEST)
    assert sent.response_format is not None and sent.response_format["schema"] == result_reply_schema(
        REQUEST.result_schema())


@pytest.mark.slow  # starts a server
def test_an_unusable_reply_is_asked_again_and_then_refused(simulated_gateway: None, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(simulator_responder, faults=FaultPlan({0: Reply('["INV-20931"]')})) as srv:
        out = asyncio.run(tool_result(served(srv, tmp_path), REQUEST))
        again = srv.requests[1].messages
    assert out["invoice_id"] == "INV-20931"
    assert again[-1]["role"] == "user" and "expected a JSON object, got list" in again[-1]["content"]
    with ScriptedOpenAIServer(lambda request: '{"invoice_id": "INV-20931"}') as srv:
        with pytest.raises(ReplyError, match=r"no usable result for get_invoice in 3 replies: tool_result reply: "
                                             r"result: 'due_date' is a required property"):
            asyncio.run(tool_result(served(srv, tmp_path), REQUEST))
        assert len(srv.requests) == 3
