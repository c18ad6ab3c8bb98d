"""The rows of the four configs (`dialogues`, `sft`, `preference`, `rejected`): one pydantic model per row shape, and the
arrow schema of each config.

Each column is written once, as a field of a row model below: its type gives the arrow type and
its description documents it in the dataset card (utcgen.pipeline.export.column_types turns both
into columns). A config with no rows still carries every column. The `sft` config stores its chat
messages and tool specs as `JsonValue`, so trainers get dicts, not text. How a dialogue fills
these rows is utcgen.pipeline.export.flatten.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ...validators.cascade import STAGES
from .. import scenarios
from ..core.records import DECISION_STYLES
from .column_types import JsonText, JsonValue, arrow_schema
from .wrong_turns import PATTERNS

if TYPE_CHECKING:
    import pyarrow as pa


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
        "message (or the tool result) this turn answers. Earlier assistant turns have the shape of `completion`. "
        "Tool results (runs with `execution.results` on), `chat` format: "
        '`{"role": "tool", "tool_call_id", "content"}` with content the result as JSON text, and each call of '
        'the turn it answers carries its `id` (`call_<m>_<k>`, as `dialogues.messages[].tool_call_id`); `json` '
        'format: a user message `Tool result for <id>:` followed by the result, as a JSON-protocol model reads it.'
    )
    completion: list[JsonValue] = Field(
        description="One message, the assistant turn to learn. `chat` format: `{role, content, reasoning_content, "
        'tool_calls}` where `reasoning_content` is the private thought and `tool_calls` (present only on the '
        'calling turn) is `[{"type": "function", "function": {"name", "arguments"}}]` with arguments as an object '
        '(in a dialogue with tool results each call also has its `id`, which the result names). '
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
    gold_call: JsonValue = Field(
        description='The call this turn makes, `{"name", "arguments"}` with arguments as an object, or null when it '
        "makes none: with `action`, the gold next action `utcgen.reward_function` scores a sampled turn against "
        "(GRPO passes extra columns to reward functions). Extra column."
    )


# --------------------------------------------------------------------------- preference


class PreferenceRow(_Row):
    """Pairs for preference training (DPO): at an assistant turn of an accepted dialogue, the gold turn against a
    realistic wrong one of a named pattern. TRL's conversational preference format with a `tools` column."""

    dialogue_id: str = Field(description="Id of the source dialogue (join key to `dialogues.id`).")
    turn_index: int = Field(description="0-based index of the assistant turn within its dialogue (as in `sft`).")
    scenario: str = Field(description="Scenario type of the source dialogue. Extra column.")
    pattern: str = Field(
        description="What is wrong with `rejected`: " + ", ".join(f"`{p}`" for p in PATTERNS) + " (see the card's "
        "preference section). Extra column."
    )
    action: str | None = Field(description="Next action of the chosen turn: `call`, `ask`, `refuse` or `answer`.")
    tools: list[JsonValue] = Field(description="Candidate tools as function spec objects, as in `sft`.")
    prompt: list[JsonValue] = Field(description="The `sft` prompt of this turn: system message and dialogue so far.")
    chosen: list[JsonValue] = Field(description="One message: the gold assistant turn (the `sft` completion).")
    rejected: list[JsonValue] = Field(description="One message of the same shape: the wrong turn.")


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
    role: str = Field(
        description="`user`, `assistant`, or `tool`: a tool call's result (only in runs with `execution.results` on)."
    )
    content: str = Field(
        description="The user's message, the assistant's public reply, or a tool turn's result as JSON object text "
        '(an error result is `{"error": {"type", "message"}}`).'
    )
    thought: str | None = Field(description="The assistant's private reasoning; null on user and tool turns.")
    tool_calls: list[ToolCallRow] = Field(description="Tool calls made in this turn (at most one).")
    phase: str | None = Field(
        description="`tool_selection` or `argument_filling` on assistant turns; null on user and tool turns."
    )
    action: str | None = Field(
        description="Assistant turns: the next action, `call`, `ask`, `refuse` or `answer`; null on user and tool "
        "turns. Derived from the turn and the scenario (utcgen.pipeline.dialogue.labels), the same for every backend."
    )
    act: str | None = Field(
        description="Assistant turns: the clarification act, `report_blocker`, `ask_parameter`, `disambiguate`, "
        "`propose_solution` or `confirm_risk`; null on calls, plain answers, user and tool turns."
    )
    act_candidates: list[str] = Field(description="The candidate tools a `disambiguate` turn names; else empty.")
    tool_call_id: str | None = Field(
        description="Tool turns: the id of the call this result answers, `call_<m>_<k>`: call k (from 0) of the "
        "assistant turn at index m of `messages`; null on user and assistant turns."
    )


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
        description="Scenario type: " + ", ".join(f"{t.name} ({t.summary})" for t in scenarios.all()) + "."
    )
    scenario_info: JsonText = Field(
        description="What the scenario changed: masked_arg, infeasible {arg, value, why}, fault {kind, original, "
        f"faulted, arg, decoy}}, replaceable, decision_style ({', '.join(DECISION_STYLES)}); unused fields null."
    )
    q_star: int | None = Field(
        description="Minimal number of clarification questions the dialogue needed: the length of an EVPI "
        "question plan over its candidate calls (utcgen.pipeline.dialogue.planning); 0 when nothing was worth asking."
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


# Config name -> its row model, in the order the card's `configs:` declares them.
CONFIG_ROWS: dict[str, type[_Row]] = {"dialogues": DialogueRow, "sft": SftRow, "preference": PreferenceRow,
                                      "rejected": RejectedRow}
CONFIGS = tuple(CONFIG_ROWS)
DEFAULT_CONFIG = "sft"


@cache
def schema(config: str) -> pa.Schema:
    """The parquet schema of a config, used even when it has no rows so every column is there."""
    return arrow_schema(CONFIG_ROWS[config])
