"""The rows of the three configs: one pydantic model per row shape, the arrow schemas and the flattening.

Each column is written once, as a field of a row model below: its type gives the arrow
type (`arrow_schema`) and its description documents it in the dataset card (`columns`).
Nested, open-ended values (tool specs, argument maps, verdict details, model maps) are
`JsonText`, JSON strings, so a schema never depends on the content of a run; a config
with no rows still carries every column. The `sft` config stores its chat messages and
tool specs as `JsonValue`: arrow's JSON extension type, which `datasets` reads as its
`Json()` feature and decodes to Python objects on load, so trainers get dicts, not text.
"""

from __future__ import annotations

import json
import types
import typing
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import BaseModel, ConfigDict, Field

from ...validators.cascade import STAGES, failed_stage
from ..records import Dialogue, Message, Persona, Verdict

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class _Json:
    """Marks a column that holds a JSON document: as text (`native=False`) or as arrow JSON (`native=True`)."""

    native: bool = False


JsonText = Annotated[str, _Json()]
# Any JSON value; stored as arrow `json` (string storage), decoded by `datasets` (feature `Json()`).
JsonValue = Annotated[Any, _Json(native=True)]


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- sft


SFT_FORMATS = ("chat", "json")
DEFAULT_SFT_FORMAT = "chat"


class SftRow(_Row):
    """One row per assistant turn of each accepted dialogue, in TRL's conversational prompt/completion format."""

    dialogue_id: str = Field(description="Id of the source dialogue (join key to `dialogues.id`).")
    turn_index: int = Field(description="0-based index of this assistant turn within its dialogue.")
    phase: str | None = Field(description="`tool_selection` or `argument_filling`.")
    seed_tool: str = Field(description="Name of the gold tool.")
    tools: list[JsonValue] = Field(
        description="Candidate tools in the order the assistant saw them, each an OpenAI function spec object "
        '(`{"type": "function", "function": {"name", "description", "parameters"}}`): what `tools=` of a chat '
        "template and TRL take."
    )
    prompt: list[JsonValue] = Field(
        description="Messages as objects: the system prompt, then the dialogue up to and including the user "
        "message this turn answers. Earlier assistant turns have the shape of `completion`."
    )
    completion: list[JsonValue] = Field(
        description="One message, the assistant turn to learn. `chat` format: `{role, content, reasoning_content, "
        'tool_calls}` where `reasoning_content` is the private thought and `tool_calls` (present only on the '
        'calling turn) is `[{"type": "function", "function": {"name", "arguments"}}]` with arguments as an object. '
        '`json` format: `{role, content}` with content the JSON string `{"thought", "content", "tool_calls": '
        '[{"name", "arguments"}]}`.'
    )
    scenario: str = Field(
        description="Scenario type of the source dialogue (disambiguation, explicit, underspecified, "
        "unavailable_tool, infeasible_arguments, input_fault). Extra column: TRL ignores it."
    )
    action: str | None = Field(
        description="Label of this turn: its next action, `call`, `ask`, `refuse` or `answer`. Extra column."
    )
    act: str | None = Field(
        description="Label of this turn: its clarification act (`report_blocker`, `ask_parameter`, `disambiguate`, "
        "`propose_solution`, `confirm_risk`), null on calls and plain answers. Extra column."
    )


# --------------------------------------------------------------------------- dialogues


class PersonaRow(_Row):
    id: str = Field(description="Persona id.")
    text: str = Field(description="Free-form description of the user, as every prompt shows it.")
    role: str | None = Field(description="Job role.")
    seniority: str | None = Field(description="Seniority.")
    line_of_business: str | None = Field(description="Line of business the user works in.")
    style: str | None = Field(description="Way of talking.")
    attributes: JsonText = Field(
        description="Persona facts that keep argument values consistent (country, currency, department, ...)."
    )


class ToolCallRow(_Row):
    name: str = Field(description="Name of the called tool.")
    arguments: JsonText = Field(description="The call's argument map.")


class MessageRow(_Row):
    role: str = Field(description="`user` or `assistant`.")
    content: str = Field(description="The user's message or the assistant's public reply.")
    thought: str | None = Field(description="The assistant's private reasoning; null on user turns.")
    tool_calls: list[ToolCallRow] = Field(description="Tool calls made in this turn (at most one).")
    phase: str | None = Field(
        description="`tool_selection` or `argument_filling` on assistant turns; null on user turns."
    )
    action: str | None = Field(
        description="Assistant turns: the next action, `call`, `ask`, `refuse` or `answer`; null on user turns. "
        "Derived from the turn and the scenario (utcgen.pipeline.labels), the same for every backend."
    )
    act: str | None = Field(
        description="Assistant turns: the clarification act, `report_blocker`, `ask_parameter`, `disambiguate`, "
        "`propose_solution` or `confirm_risk`; null on calls, plain answers and user turns."
    )
    act_candidates: list[str] = Field(description="The candidate tools a `disambiguate` turn names; else empty.")


class VerdictRow(_Row):
    validator: str = Field(description="The stage that wrote the verdict.")
    passed: bool = Field(description="Whether the dialogue passed it.")
    reason: str = Field(description="Why it passed or failed.")
    details: JsonText = Field(description="What the validator found (rule codes, problems, judge answer).")


class GenerationRow(_Row):
    utcgen_version: str = Field(description="utcgen version that made the dialogue.")
    backend: str = Field(description="`offline` (templates, no model called) or `litellm` (language models).")
    models: JsonText = Field(description="Model of each role.")
    prompt_versions: JsonText = Field(description="Version of each prompt file.")
    seed: int = Field(description="Seed of the run.")
    attempt: int = Field(description="Attempt number within its seed job, from 1.")
    calls: int = Field(description="Model calls made for this dialogue, judges included.")
    prompt_tokens: int = Field(description="Prompt tokens of those calls.")
    completion_tokens: int = Field(description="Completion tokens of those calls.")
    tokens: int = Field(description="`prompt_tokens` + `completion_tokens`.")
    cached_calls: int = Field(description="Calls answered from the response cache.")
    cost_usd: float = Field(description="Cost of those calls in USD.")
    created_at: str = Field(description="When the dialogue was made (ISO 8601, UTC).")


class DialogueRow(_Row):
    """Accepted dialogues, one per row."""

    id: str = Field(description="Dialogue id.")
    seed_tool: str = Field(description="Name of the gold tool: the one the user needs.")
    seed_tool_spec: JsonText = Field(description="The gold tool's OpenAI function spec.")
    user_persona: PersonaRow = Field(description="The enterprise user the user-proxy plays.")
    goal: str = Field(description="The user-proxy's goal.")
    gold_arguments: JsonText = Field(description="The argument map the final call must carry.")
    distractor_tools: list[str] = Field(description="Names of the near-duplicate distractors.")
    candidate_tools: list[str] = Field(
        description="Candidates (seed + distractors) in the order the assistant saw them."
    )
    candidate_tool_specs: list[JsonText] = Field(description="OpenAI function specs of `candidate_tools`, same order.")
    messages: list[MessageRow] = Field(description="The dialogue, turn by turn.")
    validation: list[VerdictRow] = Field(
        description=f"Verdicts in cascade order ({' -> '.join(STAGES)}; the rules stop at their first failure), "
        "or the single verdict of the step that rejected the dialogue before validation (e.g. `selection`: "
        "wrong tool selected)."
    )
    generation: GenerationRow = Field(description="How the dialogue was made.")
    scenario: str = Field(
        description="Scenario type: disambiguation (vague request, clarified, then called), explicit (fully "
        "specified: call at once), underspecified (one required value missing: ask for it), unavailable_tool "
        "(the needed tool is not offered: refuse and offer an alternative, call nothing), infeasible_arguments "
        "(a value outside its domain: point it out, get a valid one), input_fault (a faulted opening: clarify)."
    )
    scenario_info: JsonText = Field(
        description="What the scenario changed: masked_arg, infeasible {arg, value, why}, fault {kind, original, "
        "faulted, arg, decoy}, replaceable, decision_style (rational, intuitive, dependent, avoidant, "
        "spontaneous); unused fields null."
    )
    q_star: int | None = Field(
        description="Minimal number of clarification questions the dialogue needed: the length of an EVPI "
        "question plan over its candidate calls (utcgen.pipeline.planning); 0 when nothing was worth asking."
    )
    num_turns: int = Field(description="Assistant turns in the dialogue.")
    tool_selection_turns: int = Field(description="Assistant turns in the tool-selection phase.")
    argument_filling_turns: int = Field(description="Assistant turns in the argument-filling phase.")


class RejectedRow(DialogueRow):
    """Dialogues that did not make it. Useful for auditing the engine; do not train on it."""

    rejection_reason: str | None = Field(description="Why the dialogue was rejected.")
    failed_validator: str | None = Field(
        description="The cascade stage that failed first; null when the dialogue was rejected before validation."
    )


# --------------------------------------------------------------------------- flattening


def _json(value: Any) -> str:
    """Compact JSON; `default=str` keeps odd values (dates, paths) from aborting an export."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _persona_row(p: Persona) -> PersonaRow:
    return PersonaRow(
        id=p.id,
        text=p.text,
        role=p.role,
        seniority=p.seniority,
        line_of_business=p.line_of_business,
        style=p.style,
        attributes=_json(p.attributes),
    )


def _message_row(m: Message) -> MessageRow:
    """A message as a row; an assistant turn recorded before labels existed is labelled here."""
    if m.role == "assistant" and m.action is None:
        from ..labels import label_turn

        m = label_turn(m, [])
    return MessageRow(
        role=m.role,
        content=m.content,
        thought=m.thought,
        tool_calls=[ToolCallRow(name=c.name, arguments=_json(c.arguments)) for c in m.tool_calls],
        phase=m.phase,
        action=m.action,
        act=m.act,
        act_candidates=list(m.act_candidates),
    )


def _verdict_row(v: Verdict) -> VerdictRow:
    return VerdictRow(validator=v.validator, passed=v.passed, reason=v.reason, details=_json(v.details))


def num_turns(d: Dialogue) -> int:
    """Turns as in the paper's <(u1,a1),...,(uT,aT)>: one per assistant reply."""
    return len(d.assistant_turns)


def _dialogue_fields(d: Dialogue) -> dict[str, Any]:
    g, usage = d.generation, d.generation.usage
    return dict(
        id=d.id,
        seed_tool=d.seed_tool.name,
        seed_tool_spec=d.seed_tool.spec_json(),
        user_persona=_persona_row(d.user_persona),
        goal=d.goal,
        gold_arguments=_json(d.gold_arguments),
        distractor_tools=[t.name for t in d.distractor_tools],
        candidate_tools=[t.name for t in d.candidate_tools],
        candidate_tool_specs=[t.spec_json() for t in d.candidate_tools],
        messages=[_message_row(m) for m in d.messages],
        validation=[_verdict_row(v) for v in d.validation],
        generation=GenerationRow(
            utcgen_version=g.utcgen_version,
            backend=g.backend,
            models=_json(g.models),
            prompt_versions=_json(g.prompt_versions),
            seed=g.seed,
            attempt=g.attempt,
            calls=usage.calls,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            tokens=usage.total_tokens,
            cached_calls=usage.cached_calls,
            cost_usd=usage.cost_usd,
            created_at=g.created_at,
        ),
        scenario=d.scenario,
        scenario_info=_json(d.scenario_info.model_dump(mode="json")),
        q_star=d.q_star,
        num_turns=num_turns(d),
        tool_selection_turns=d.turns_in_phase("tool_selection"),
        argument_filling_turns=d.turns_in_phase("argument_filling"),
    )


def dialogue_row(d: Dialogue) -> DialogueRow:
    """A dialogue flattened to the `dialogues` columns."""
    return DialogueRow(**_dialogue_fields(d))


def rejected_row(d: Dialogue) -> RejectedRow:
    """A rejected dialogue flattened to the `rejected` columns."""
    return RejectedRow(
        **_dialogue_fields(d), rejection_reason=d.rejection_reason, failed_validator=failed_stage(d.validation)
    )


# --------------------------------------------------------------------------- types


def _unwrap(annotation: Any) -> tuple[Any, _Json | None]:
    """(type without `| None` and `Annotated`, its JSON marker if it holds a JSON document)."""
    marker = None
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            base, *meta = typing.get_args(annotation)
            marker = marker or next((m for m in meta if isinstance(m, _Json)), None)
            annotation = base
        elif origin in (Union, types.UnionType):
            (annotation,) = [a for a in typing.get_args(annotation) if a is not type(None)]
        else:
            return annotation, marker


def _field_type(model: type[BaseModel], name: str) -> tuple[Any, _Json | None]:
    info = model.model_fields[name]
    base, marker = _unwrap(info.annotation)
    return base, marker or next((m for m in info.metadata if isinstance(m, _Json)), None)


# Python type -> (pyarrow type factory, the card's name for it).
_SCALARS = {str: ("string", "string"), int: ("int64", "int"), float: ("float64", "float"), bool: ("bool_", "bool")}


def _arrow_type(annotation: Any, marker: _Json | None = None) -> pa.DataType:
    import pyarrow as pa

    if marker is not None and marker.native:
        return pa.json_()
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return pa.list_(_arrow_type(*_unwrap(item)))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pa.struct([(name, _arrow_type(*_field_type(annotation, name))) for name in annotation.model_fields])
    return getattr(pa, _SCALARS[annotation][0])()


def arrow_schema(model: type[BaseModel]) -> pa.Schema:
    """The parquet schema of a row model: one column per field, in field order."""
    import pyarrow as pa

    return pa.schema([(name, _arrow_type(*_field_type(model, name))) for name in model.model_fields])


def _encode(value: Any, annotation: Any, marker: _Json | None) -> Any:
    """A dumped field value in its arrow storage form: arrow JSON values become JSON text."""
    if value is None:
        return None
    if marker is not None and marker.native:
        return _json(value)
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return [_encode(v, *_unwrap(item)) for v in value]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {name: _encode(value[name], *_field_type(annotation, name)) for name in annotation.model_fields}
    return value


def storage_row(row: BaseModel) -> dict[str, Any]:
    """A row as `pa.Table.from_pylist` takes it for `storage_schema`: JSON values as text."""
    dumped = row.model_dump()
    return {name: _encode(dumped[name], *_field_type(type(row), name)) for name in type(row).model_fields}


def _storage_type(t: pa.DataType) -> pa.DataType:
    import pyarrow as pa

    if isinstance(t, pa.BaseExtensionType):
        return t.storage_type
    if pa.types.is_list(t):
        return pa.list_(_storage_type(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([(f.name, _storage_type(f.type)) for f in t])
    return t


def storage_schema(schema: pa.Schema) -> pa.Schema:
    """`schema` with extension types (arrow JSON) replaced by their storage: what a pylist converts to."""
    import pyarrow as pa

    return pa.schema([(f.name, _storage_type(f.type)) for f in schema])


@dataclass(frozen=True)
class Column:
    """One documented column or nested field, e.g. `messages[].tool_calls[].name`."""

    name: str
    type: str
    description: str


def _type_label(annotation: Any, marker: _Json | None) -> tuple[str, type[BaseModel] | None]:
    """A reader's name for a type ('list of JSON string') and the struct model inside it, if any."""
    if marker is not None and marker.native:
        return "JSON", None
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        label, struct = _type_label(*_unwrap(item))
        return f"list of {label}", struct
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "struct", annotation
    return ("JSON string" if marker is not None else _SCALARS[annotation][1]), None


def columns(model: type[BaseModel], prefix: str = "") -> list[Column]:
    """Every column of a row model with its type and description, nested struct fields after their column."""
    out: list[Column] = []
    for name, info in model.model_fields.items():
        label, struct = _type_label(*_field_type(model, name))
        path = f"{prefix}{name}"
        out.append(Column(path, label, info.description or ""))
        if struct is not None:
            out += columns(struct, f"{path}[]." if label.startswith("list") else f"{path}.")
    return out


# Config name -> its row model, in the order the card's `configs:` declares them.
CONFIG_ROWS: dict[str, type[_Row]] = {"dialogues": DialogueRow, "sft": SftRow, "rejected": RejectedRow}
CONFIGS = tuple(CONFIG_ROWS)
DEFAULT_CONFIG = "sft"


@cache
def schema(config: str) -> pa.Schema:
    """The parquet schema of a config, used even when it has no rows so every column is there."""
    return arrow_schema(CONFIG_ROWS[config])
