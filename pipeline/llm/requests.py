"""Typed requests, one per role: the facts a role's prompt carries, and nothing else.

Role code builds a request, renders its prompt from the same data and hands both to
`Gateway.chat`. Every model receives the rendered prompt; the offline provider also
receives the request itself (in the litellm call's metadata, validated on arrival by
`parse_request`) and answers from it. A real model never receives it: it has no channel
to the server.

`seed` is a sampling seed (as an API's `seed` parameter): it fixes which of its equally
good replies the offline backend gives, and never carries a fact.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from ..core.records import Dialogue, Persona, Tool
from ..dialogue.outcomes import ResultError

Phase = Literal["tool_selection", "argument_filling"]
# where the gateway puts the typed request in a litellm call's metadata (for the offline provider only)
REQUEST_KEY = "utcgen_request"


class _Request(BaseModel):
    """A role's view: tools and personas as its prompt shows them (`Tool.shown`, `Persona.shown`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("tool", "distractors", "candidates", check_fields=False)
    @classmethod
    def _shown_tools(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [t.shown() if isinstance(t, Tool) else t for t in value]
        return value.shown() if isinstance(value, Tool) else value

    @field_validator("persona", check_fields=False)
    @classmethod
    def _shown_persona(cls, value: Any) -> Any:
        return value.shown() if isinstance(value, Persona) else value


class Said(BaseModel):
    """One turn of a transcript as a prompt shows it: who spoke and the public words."""

    model_config = ConfigDict(extra="forbid")

    role: str
    content: str = ""


class SaidWithThought(Said):
    """A turn of the model's own dialogue: its earlier private thoughts are in its context too."""

    thought: str | None = None


class GoalRequest(_Request):
    """The goal writer's prompt: the persona, the seed tool and the values the employee holds (so the
    goal never states another)."""

    role: Literal["goal"] = "goal"
    tool: Tool
    persona: Persona
    gold_arguments: dict[str, Any] = Field(default_factory=dict)
    seed: int = 0


class SlotsRequest(_Request):
    """The slot writer's prompt: persona, seed tool, its required parameters; `attempt` counts the
    replies already refused (the prompt's feedback)."""

    role: Literal["slots"] = "slots"
    tool: Tool
    persona: Persona
    required: list[str]
    attempt: int = 0
    seed: int = 0


class UserScenario(BaseModel):
    """The scenario facts the user proxy's prompt states (its note), and which opening it writes."""

    model_config = ConfigDict(extra="forbid")

    name: str
    info: dict[str, Any] = Field(default_factory=dict)
    original: str | None = None  # an input fault's opening as meant
    faulted: str | None = None   # ... and as said
    write: Literal["faulted"] | None = None  # the opening as meant is to be rewritten with its fault


class UserRequest(_Request):
    """The user proxy's prompt: who it is, what it wants, the tools in play, the values it holds,
    the transcript, and the scenario's note when one is played."""

    role: Literal["user"] = "user"
    phase: Phase
    tool: Tool
    persona: Persona
    goal: str
    distractors: list[Tool]
    gold_arguments: dict[str, Any]
    history: list[Said]
    seed: int = 0
    scenario: UserScenario | None = None

    @field_validator("tool", "distractors")
    @classmethod
    def _shown_tools(cls, value: Any) -> Any:
        """The user's own tool keeps its area (line of business), which the user's prompt states: the
        person who needs the tool knows what part of the work it belongs to."""
        if isinstance(value, list):
            return [t.shown() if isinstance(t, Tool) else t for t in value]
        return value.model_copy(update={"tags": []}) if isinstance(value, Tool) and value.tags else value


class AssistantRequest(_Request):
    """The generation assistant's prompt: the candidate tools, the tool it settled on (argument
    filling), the dialogue so far, the prompt variant (`may_decline`: the prompts that also
    cover refusing and invalid values) and the planner's note if any. Never the seed tool, the gold values or the scenario."""

    role: Literal["assistant"] = "assistant"
    phase: Phase
    candidates: list[Tool]
    tool: Tool | None = None
    history: list[Said]
    may_decline: bool = False
    hint: str | None = None  # the planner's private note, when the run gives one
    considered: list[str] = Field(default_factory=list)  # argument filling: the other candidates' names
    # calls get results (`execution.results`): the prompt says how to answer from one (prompts/rules_answer.txt)
    results: bool = False
    seed: int = 0


class RelevancyRequest(_Request):
    """The relevancy judge: the dialogue as its prompt shows it (`validators.judge.judge_view`): the seed
    tool, every candidate's spec, the goal, the scenario and the public transcript."""

    role: Literal["relevancy"] = "relevancy"
    dialogue: Dialogue


class CriticRequest(_Request):
    """The critic: the dialogue as its prompt shows it (`validators.judge.judge_view`): the persona's
    traits, goal, the values the user held, the scenario and its facts, the seed tool, every candidate's
    spec and the transcript with thoughts."""

    role: Literal["critic"] = "critic"
    dialogue: Dialogue


class UnderTestRequest(_Request):
    """The model under test in evaluation: the candidate tools and its dialogue so far. Nothing else."""

    role: Literal["under_test"] = "under_test"
    candidates: list[Tool]
    history: list[SaidWithThought]


class VoterRequest(_Request):
    """A voter of the evaluation user proxy: the employee (persona, goal), the transcript and the
    drafts in the order shown. Not the tools: its prompt never shows them."""

    role: Literal["voter"] = "voter"
    persona: Persona
    goal: str
    history: list[Said]
    shown: list[str]


class RubricTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    parse_error: str | None = None


class RubricRequest(_Request):
    """The ConvRel rubric: the candidate tools, the transcript before the turn, and the turn."""

    role: Literal["rubric"] = "rubric"
    turn: RubricTurn
    candidates: list[Tool]
    history: list[Said]


class ToolResultRequest(_Request):
    """The tool's backend: the tool as prompts show it, what a call returns (`output_schema`, which
    `Tool.shown` strips from `tool`: taken from the tool when not given), the call's arguments, the
    employee who asked (persona, goal) and whether the result is an error, and which kind (the
    pipeline's decision: `dialogue.outcomes.result_error`)."""

    role: Literal["tool_result"] = "tool_result"
    tool: Tool
    output_schema: dict[str, Any] | None = None
    arguments: dict[str, Any]
    persona: Persona
    goal: str
    error: ResultError | None = None
    # fields the result holds besides its schema's (name -> JSON Schema): what a later step of the task reads
    # from it, which the service holds though the tool's description may not say so
    holds: dict[str, dict[str, Any]] = Field(default_factory=dict)
    seed: int = 0

    @model_validator(mode="before")
    @classmethod
    def _schema_of_tool(cls, data: Any) -> Any:
        if isinstance(data, dict) and "output_schema" not in data and isinstance(data.get("tool"), Tool):
            return {**data, "output_schema": data["tool"].output_schema}
        return data

    def result_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of the result object: the output schema when it describes an object; a value
        of another kind (a list, a number) is the object's `result`; None without an output schema."""
        schema = self.output_schema
        if schema is None or _object_schema(schema):
            return schema
        return {"type": "object", "properties": {"result": schema}, "required": ["result"]}


def _object_schema(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or (kind is None and "properties" in schema)


Request = Annotated[
    GoalRequest | SlotsRequest | UserRequest | AssistantRequest | RelevancyRequest | CriticRequest
    | UnderTestRequest | VoterRequest | RubricRequest | ToolResultRequest,
    Field(discriminator="role"),
]
# Every role with a typed request, as each request type names it (the generation roles are `settings.models.ROLES`).
ROLES: tuple[str, ...] = tuple(get_args(t.model_fields["role"].annotation)[0] for t in get_args(get_args(Request)[0]))
_ADAPTER: TypeAdapter[Request] = TypeAdapter(Request)


def parse_request(data: Any) -> Request:
    """A request as it arrives (a mapping or JSON text), validated against its role's type;
    ValueError naming the role and each bad field otherwise."""
    try:
        if isinstance(data, str | bytes):
            return _ADAPTER.validate_json(data)
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'request'}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"not a valid role request ({problems})") from None


def said(history: list[Any], *, results: bool = True) -> list[Said]:
    """`Message`s as a transcript shows them; without the tool's results when `results` is False
    (the user sees the assistant's answer, never the tool's raw reply)."""
    return [Said(role=m.role, content=m.content) for m in history if results or m.role != "tool"]
