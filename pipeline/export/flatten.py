"""A dialogue flattened to a row of the `dialogues` or `rejected` config (utcgen.pipeline.export.rows).

Kept apart from the row models so the models read as the schema of the published dataset, and
this module as the one place that decides how a record fills it.
"""

from __future__ import annotations

from typing import Any

from ...validators.cascade import failed_stage
from ..core.records import Dialogue, Message, Persona, Verdict
from ..dialogue.labels import label_turn
from .column_types import json_text
from .rows import DialogueRow, GenerationRow, MessageRow, PersonaRow, RejectedRow, ToolCallRow, VerdictRow


def _persona_row(p: Persona) -> PersonaRow:
    return PersonaRow(
        id=p.id,
        text=p.text,
        role=p.role,
        seniority=p.seniority,
        line_of_business=p.line_of_business,
        style=p.style,
        attributes=json_text(p.attributes),
    )


def _message_row(m: Message) -> MessageRow:
    """A message as a row; an assistant turn recorded before labels existed is labelled here."""
    if m.role == "assistant" and m.action is None:
        m = label_turn(m, [])
    return MessageRow(
        role=m.role,
        content=m.content,
        thought=m.thought,
        tool_calls=[ToolCallRow(name=c.name, arguments=json_text(c.arguments)) for c in m.tool_calls],
        phase=m.phase,
        action=m.action,
        act=m.act,
        act_candidates=list(m.act_candidates),
        tool_call_id=m.tool_call_id,
    )


def _verdict_row(v: Verdict) -> VerdictRow:
    return VerdictRow(validator=v.validator, passed=v.passed, reason=v.reason, details=json_text(v.details))


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
        gold_arguments=json_text(d.gold_arguments),
        distractor_tools=[t.name for t in d.distractor_tools],
        candidate_tools=[t.name for t in d.candidate_tools],
        candidate_tool_specs=[t.spec_json() for t in d.candidate_tools],
        messages=[_message_row(m) for m in d.messages],
        validation=[_verdict_row(v) for v in d.validation],
        generation=GenerationRow(
            utcgen_version=g.utcgen_version,
            backend=g.backend,
            models=json_text(g.models),
            prompt_versions=json_text(g.prompt_versions),
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
        scenario_info=json_text(d.scenario_info.model_dump(mode="json")),
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
