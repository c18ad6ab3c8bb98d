"""Pydantic records shared by every stage. Each record's schema is written once, here."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer


class Tool(BaseModel):
    """A callable enterprise tool; `parameters` is a JSON Schema object."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}, "required": []}
    )
    line_of_business: str | None = None
    tags: list[str] = Field(default_factory=list)
    # What a call returns, as a JSON Schema, where the catalog says (OpenAPI responses, MCP
    # `outputSchema`); only the tool-result role reads it, no prompt's tool spec shows it.
    output_schema: dict[str, Any] | None = None

    @property
    def properties(self) -> dict[str, dict[str, Any]]:
        return self.parameters.get("properties") or {}

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required") or [])

    def openai_spec(self) -> dict[str, Any]:
        """The tool as an OpenAI-style function spec (what chat templates and TRL expect)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def shown(self) -> Tool:
        """The tool as every prompt shows it (`openai_spec`): name, description and parameters only."""
        if self.line_of_business is None and not self.tags and self.output_schema is None:
            return self
        return self.model_copy(update={"line_of_business": None, "tags": [], "output_schema": None})

    def spec_json(self) -> str:
        """`openai_spec()` as compact JSON: how every prompt, judge and dataset row shows a tool."""
        return json.dumps(self.openai_spec(), ensure_ascii=False)


def tools_json(tools: Iterable[Tool]) -> str:
    """A JSON array of tool specs, each exactly as `Tool.spec_json` renders it."""
    return "[" + ", ".join(t.spec_json() for t in tools) + "]"


class Persona(BaseModel):
    """A user: an employee, a consumer or a developer. `text` is the free-form description every prompt uses.

    `line_of_business` is free text: the shipped pool uses the catalog's ten lines for employees,
    `consumer` and `software_development`; `seniority` is a job level, or for consumers their
    experience with the domain (beginner, casual, regular, enthusiast, expert).
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    text: str
    role: str | None = None
    seniority: str | None = None
    line_of_business: str | None = None
    style: str | None = None
    # Facts that make argument values persona-consistent: country, city, currency,
    # timezone, department, company, cost_center, employee_id, handle, ... (all optional; consumers
    # have no company, cost_center or employee_id).
    attributes: dict[str, str] = Field(default_factory=dict)

    def shown(self) -> Persona:
        """The persona as every prompt shows it: its traits, without its pool id or the fit score
        recorded after the prompts used it."""
        if not self.id and not set(FIT_ATTRIBUTES) & set(self.attributes):
            return self
        return self.model_copy(update={"id": "", "attributes": {k: v for k, v in self.attributes.items()
                                                                if k not in FIT_ATTRIBUTES}})


# The persona attributes where a dialogue records how well its persona fits the seed tool: the cosine of
# the persona's text to the tool's, and the share of reference roles closer to the tool than the
# persona's role (retrieval/rolefit.py).
FIT_ATTRIBUTE = "tool_fit"
ROLE_FIT_ATTRIBUTE = "role_fit"
FIT_ATTRIBUTES = (FIT_ATTRIBUTE, ROLE_FIT_ATTRIBUTE)


def persona_text(p: Persona, decision_style: str | None = None) -> str:
    """Every trait of the persona a prompt shows: its text, role, seniority, line of business, way of
    talking, decision style and facts (the whole persona a judge holds the user to)."""
    parts = [p.text]
    if traits := [f"{label}: {value.replace('_', ' ')}" for label, value in
                  (("Role", p.role), ("Seniority", p.seniority), ("Line of business", p.line_of_business)) if value]:
        parts.append("; ".join(traits) + ".")
    if p.style:
        parts.append(f"Way of talking: {p.style}.")
    if decision_style:
        parts.append(f"Decision style ({decision_style}): {DECISION_STYLES[decision_style]}")
    if p.attributes:
        parts.append("Facts: " + ", ".join(f"{k} {v}" for k, v in p.attributes.items()) + ".")
    return "\n".join(parts)


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


Role = Literal["system", "user", "assistant", "tool"]

# What an assistant turn does next, and which clarification act it performs (pipeline/dialogue/labels.py).
Action = Literal["call", "ask", "refuse", "answer"]
Act = Literal["report_blocker", "ask_parameter", "disambiguate", "propose_solution", "confirm_risk"]
ROLES: tuple[str, ...] = get_args(Role)
# The scenario a record plays when it names none (records made before scenario types); the types
# themselves are registered objects (pipeline/scenarios/), so a new one needs no change here.
DEFAULT_SCENARIO = "disambiguation"
# The names a record's `scenario` may hold, in registration order: the scenario registry
# (pipeline/scenarios/) writes them as types register, so a record checks its name without
# importing the layer above it.
SCENARIO_NAMES: dict[str, None] = {}
# The user decision styles (Drift-Bench), each with how it answers, in the user proxy's prompt's words.
DECISION_STYLES: dict[str, str] = {
    "rational": "You decide deliberately: you answer exactly what is asked, precisely, and give reasons when useful.",
    "intuitive": "You decide on gut feeling: you answer quickly and loosely, with the gist rather than every detail.",
    "dependent": "You lean on others to decide: you answer what is asked but like the assistant to confirm or advise.",
    "avoidant": "You put decisions off: you answer reluctantly, one thing at a time, and only when pressed.",
    "spontaneous": "You decide on the spot: you answer at once and may give several things in one go.",
}
# The kinds of input fault (Drift-Bench): what the faulted opening gets wrong.
FaultKind = Literal["intention", "premise", "parameter", "expression"]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)


class Message(BaseModel):
    """One turn. Assistant turns carry a private `thought`, public `content` and tool calls."""

    model_config = ConfigDict(extra="forbid")

    role: Role
    content: str = ""
    thought: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    phase: Literal["tool_selection", "argument_filling"] | None = None
    # Set when a model reply could not be parsed after retries; the format validator rejects it.
    parse_error: str | None = None
    # Labels of an assistant turn, derived from the turn and the scenario (pipeline/dialogue/labels.py).
    action: Action | None = None
    act: Act | None = None
    act_candidates: list[str] = Field(default_factory=list)  # the tools a `disambiguate` act weighs
    # A `tool` turn: the id of the assistant's call it answers (`call_<turn>_<index>`); its content is
    # the result, a JSON object (an error result holds an `error` object).
    tool_call_id: str | None = None

    def reply_json(self) -> str:
        """The assistant reply in the wire format every model must produce."""
        return json.dumps(
            {
                "thought": self.thought or "",
                "content": self.content,
                "tool_calls": [c.model_dump() for c in self.tool_calls],
            },
            ensure_ascii=False,
        )


class Verdict(BaseModel):
    """A validator's result: uniform across rule-based and LLM validators."""

    model_config = ConfigDict(extra="forbid")

    validator: str
    passed: bool
    reason: str = ""
    details: dict[str, Any] = Field(default_factory=dict)


class Usage(BaseModel):
    """Model calls, tokens and cost: of one reply, one dialogue or a whole run."""

    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cached_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.cached_calls += other.cached_calls

    @classmethod
    def total(cls, usages: Iterable[Usage]) -> Usage:
        """The sum of `usages` (a new record; the inputs are left alone)."""
        out = cls()
        for usage in usages:
            out.add(usage)
        return out

    def minus(self, other: Usage) -> Usage:
        """What this counts beyond `other` (never below 0): a new record."""
        return Usage(calls=max(0, self.calls - other.calls), cached_calls=max(0, self.cached_calls - other.cached_calls),
                     prompt_tokens=max(0, self.prompt_tokens - other.prompt_tokens),
                     completion_tokens=max(0, self.completion_tokens - other.completion_tokens),
                     cost_usd=max(0.0, self.cost_usd - other.cost_usd))

    def report(self) -> dict[str, int | float]:
        """The fields plus `total_tokens`, cost rounded to 1e-6 USD: how stats.json shows usage."""
        return {
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": round(self.cost_usd, 6),
        }


class GenerationInfo(BaseModel):
    """How a dialogue was made: enough to reproduce or audit it."""

    model_config = ConfigDict(extra="forbid")

    utcgen_version: str
    backend: str
    models: dict[str, str]
    prompt_versions: dict[str, str]
    seed: int
    attempt: int = 1
    usage: Usage = Field(default_factory=Usage)
    # The same calls role by role (empty in records made before it was kept).
    usage_by_role: dict[str, Usage] = Field(default_factory=dict)
    created_at: str


class InfeasibleValue(BaseModel):
    """The value the user first gives for `arg`, outside the parameter's domain, and why."""

    model_config = ConfigDict(extra="forbid")

    arg: str
    value: Any
    why: str


class InputFault(BaseModel):
    """A Drift-Bench style fault of the opening: the request as meant and as said."""

    model_config = ConfigDict(extra="forbid")

    kind: FaultKind
    original: str
    faulted: str
    arg: str | None = None  # the parameter a `parameter` fault blurs
    decoy: Any = None  # the wrong value it offers next to the right one


class ChainInfo(BaseModel):
    """The first step of a multi-step task (`multi_step`): its tool, values, goal and candidate pool,
    and the second step's required `parameter` its result feeds (`fed`: every value it gave, once it exists).
    The dialogue's own seed tool, values and pools are the second step's."""

    model_config = ConfigDict(extra="forbid")

    tool: Tool
    gold: dict[str, Any]
    goal: str = ""
    distractors: list[Tool]
    candidates: list[Tool]
    parameter: str
    source_path: str | None = None  # the first tool's output field that holds it (`items[].id`), when known
    evidence: str = "schema"  # how the pair was planned (`retrieval.chains`): schema, name or embedding
    fed: dict[str, Any] = Field(default_factory=dict)  # the second step's values the first result gave, `parameter` among them


class ScenarioInfo(BaseModel):
    """What a scenario changed in the seed job; unused fields stay null (`chain` is left out of the
    record when null, so records of the other scenarios read as they always have)."""

    model_config = ConfigDict(extra="forbid")

    masked_arg: str | None = None  # underspecified: the required argument the opening leaves out
    infeasible: InfeasibleValue | None = None
    fault: InputFault | None = None
    replaceable: bool | None = None  # unavailable_tool: the user could do it or supply the result
    decision_style: str | None = None  # one of DECISION_STYLES
    chain: ChainInfo | None = None  # multi_step: the first step

    @model_serializer(mode="wrap")
    def _without_null_chain(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        if isinstance(out, dict) and out.get("chain") is None:
            out.pop("chain", None)
        return out

    @field_validator("decision_style")
    @classmethod
    def _known_style(cls, value: str | None) -> str | None:
        if value is not None and value not in DECISION_STYLES:
            raise ValueError(f"unknown decision style {value!r} (known: {', '.join(DECISION_STYLES)})")
        return value


class Dialogue(BaseModel):
    """A synthesised dialogue with everything needed to train on, audit or reject it."""

    model_config = ConfigDict(extra="forbid")

    id: str
    seed_tool: Tool
    user_persona: Persona
    goal: str
    gold_arguments: dict[str, Any]
    distractor_tools: list[Tool]
    candidate_tools: list[Tool]
    messages: list[Message]
    # The scenario type (a registered name, pipeline/scenarios/) and what it changed; records made
    # before scenarios load as the default.
    scenario: str = DEFAULT_SCENARIO
    scenario_info: ScenarioInfo = Field(default_factory=ScenarioInfo)
    # The minimal number of questions the dialogue needed (EVPI plan, pipeline/dialogue/planning.py); None if not computed.
    q_star: int | None = None
    validation: list[Verdict] = Field(default_factory=list)
    accepted: bool = False
    rejection_reason: str | None = None
    generation: GenerationInfo

    @field_validator("scenario")
    @classmethod
    def _registered(cls, value: str) -> str:
        return registered_scenario(value)

    @property
    def assistant_turns(self) -> list[Message]:
        return [m for m in self.messages if m.role == "assistant"]

    def turns_in_phase(self, phase: str) -> int:
        return sum(1 for m in self.assistant_turns if m.phase == phase)


def registered_scenario(name: str) -> str:
    """`name` if a scenario type of that name is registered (pipeline/scenarios/), else a ValueError
    listing the known ones."""
    if name not in SCENARIO_NAMES:
        raise ValueError(f"unknown scenario '{name}'; known: {', '.join(SCENARIO_NAMES)}")
    return name
