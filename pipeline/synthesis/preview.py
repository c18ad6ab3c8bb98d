"""What a model receives for one sampled seed job: the library side of `utcgen prompts show`.

The job is drawn as a run draws it (`Engine.seed_for`: job 0, attempt 1 of the configuration, so the
same seed tool, candidates and persona) and played once through the offline backend by the real
attempt (`attempt.synthesize`), with a gateway that keeps every call it is asked to make. A
generation role's prompt is then the first call of that role, exactly as the roles rendered it
(`render_goal`, `render_slots`, `render_user`, `render_assistant`): the user's opening, the
assistant's first turn of a phase after the offline user's opening. A judge's prompt is rendered
for the dialogue that attempt made (`validators.relevancy.render`, `validators.critique.render`),
whether or not a rule rejected it first. The prompts are the configuration's: `prompts_dir` over the
shipped templates.

Beside the messages: the reply's JSON Schema as the gateway sends it under `json_schema` structured
output (`response_format`), or, for the assistant under `llm.tool_format: native`, the candidate
tools in the API's own format (`tools`). The models the configuration names are never called: the
rendered messages do not depend on them.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass, field
from typing import Any

from ...validators import critique, relevancy
from ..core.errors import InputError
from ..core.records import Dialogue
from ..llm import replies, structured
from ..llm.gateway import Gateway, LLMReply, shutdown
from ..llm.registry import ModelRegistry
from ..llm.requests import Request
from ..settings.config import RunConfig
from ..settings.models import OFFLINE_MODEL, ROLES
from ..settings.templates import prompts_from
from .attempt import synthesize
from .run import Engine

PHASES = ("tool_selection", "argument_filling")
JUDGES = {"relevancy": relevancy.render, "critic": critique.render}
PHASED = ("user", "assistant")  # the roles whose prompt differs by phase


@dataclass(frozen=True)
class Call:
    """One call the attempt asked the gateway for."""

    request: Request
    messages: list[dict]
    schema: dict | None
    tools: list[dict] | None


class Recording(Gateway):
    """A gateway that keeps every call it makes (the offline backend still answers each one)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[Call] = []

    async def chat(self, request: Request, messages: list[dict], *, nonce: str = "",
                   schema: dict | None = None, tools: list[dict] | None = None) -> LLMReply:
        self.calls.append(Call(request, [dict(m) for m in messages], schema, tools))
        return await super().chat(request, messages, nonce=nonce, schema=schema, tools=tools)


@dataclass
class Preview:
    """A role's prompt for one job, and the job it was drawn for."""

    role: str
    phase: str | None
    messages: list[dict]
    response_format: dict | None
    tools: list[dict] | None
    job: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"messages": self.messages, "response_format": self.response_format, "tools": self.tools,
                "job": self.job}

    def as_text(self) -> str:
        """Each message under its role, then the response_format or tools as indented JSON."""
        out = []
        for m in self.messages:
            out += [f"=== {m['role']} ===", str(m.get("content") or ""), ""]
        for name, value in (("response_format", self.response_format), ("tools", self.tools)):
            if value is not None:
                out += [f"=== {name} ===", json.dumps(value, indent=2, ensure_ascii=False), ""]
        return "\n".join(out).rstrip("\n") + "\n"


def offline_twin(config: RunConfig, out: str) -> RunConfig:
    """`config` with every role on the offline backend, writing into `out`, with no reply cache: what the
    preview runs (the prompts, the catalog, the scenario mix and the tool format stay)."""
    twin = config.model_copy(deep=True, update={"out": out})
    twin.models = type(config.models).model_validate({role: OFFLINE_MODEL for role in ROLES})
    twin.llm.cache = False
    twin.llm.api_base = None
    return twin


def preview(config: RunConfig, role: str, phase: str | None = None, job: int = 0) -> Preview:
    """The prompt `role` receives in seed job `job` of `config` (see the module docstring). `phase`
    (user and assistant only) picks the first turn of that phase; default tool selection."""
    if role not in ROLES:
        raise InputError(f"--role: unknown role '{role}'; roles are {', '.join(ROLES)}")
    if phase is not None and phase not in PHASES:
        raise InputError(f"--phase: unknown phase '{phase}'; phases are {', '.join(PHASES)}")
    if phase is not None and role not in PHASED:
        raise InputError(f"--phase: the {role} prompt has no phases (only {' and '.join(PHASED)} have)")
    if role in PHASED:
        phase = phase or PHASES[0]

    with tempfile.TemporaryDirectory(prefix="utcgen-prompts-") as tmp:
        twin = offline_twin(config, tmp)
        engine = Engine(twin)
        try:
            seed = engine.seed_for(job, 1)
            gateway = Recording(ModelRegistry.from_config(twin))
            try:
                with prompts_from(config.prompts_folder()):
                    dialogue = asyncio.run(_play(synthesize(seed, twin, gateway)))
                    found = _judged(role, dialogue) if role in JUDGES else _first(role, phase, gateway.calls, dialogue)
            finally:
                gateway.close()
        finally:
            engine.close()
    messages, schema, tools = found
    shape = structured.Shape(schema=schema, name=f"{role}_reply", tools=tools)
    return Preview(role=role, phase=phase, messages=messages,
                   response_format=structured.response_format("json_schema", shape), tools=tools,
                   job=_job(dialogue, seed.persona.model_dump(mode="json"), job))


async def _play(attempt: Any) -> Dialogue:
    try:
        return await attempt
    finally:
        await shutdown()


def _first(role: str, phase: str | None, calls: list[Call], dialogue: Dialogue):
    for call in calls:
        if call.request.role == role and (phase is None or getattr(call.request, "phase", None) == phase):
            return call.messages, call.schema, call.tools
    turn = f"a {phase} turn of the {role}" if phase else f"a call of the {role}"
    why = f" (it ended: {dialogue.rejection_reason})" if dialogue.rejection_reason else ""
    raise InputError(f"the sampled job's dialogue (seed tool {dialogue.seed_tool.name}, scenario {dialogue.scenario}) "
                     f"has no {turn}{why}; try another --seed or --scenario")


def _judged(role: str, dialogue: Dialogue):
    if not dialogue.messages:
        raise InputError(f"the sampled job made no dialogue to judge ({dialogue.rejection_reason}); "
                         "try another --seed or --scenario")
    return JUDGES[role](dialogue), replies.schema_of(role), None


def _job(dialogue: Dialogue, persona: dict[str, Any], number: int) -> dict[str, Any]:
    return {
        "number": number,
        "seed_tool": dialogue.seed_tool.name,
        "candidates": [t.name for t in dialogue.candidate_tools],
        "candidate_tool_specs": [t.openai_spec() for t in dialogue.candidate_tools],
        "gold_arguments": dialogue.gold_arguments,
        "persona": persona,
        "goal": dialogue.goal,
        "scenario": dialogue.scenario,
    }
