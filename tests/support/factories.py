"""Builders of realistic `Dialogue` records for tests, shared by every test module.

The dialogues follow the UTC-Gen shape: a seed tool among k near-duplicate
distractors, tool-selection turns that end once the tool is clear, then
argument-filling turns that collect the gold arguments and finish with a call.
Every builder takes keyword overrides so a test states only what it cares about.
"""

from __future__ import annotations

from typing import Any

from utcgen.pipeline.core.records import Dialogue, GenerationInfo, Message, Persona, Tool, ToolCall, Usage, Verdict
from utcgen.validators.cascade import LLM_STAGES, RULE_STAGES


def make_tool(
    name: str = "create_purchase_requisition",
    description: str = "Create a purchase requisition for a material at a plant.",
    properties: dict[str, dict[str, Any]] | None = None,
    required: list[str] | None = None,
    line_of_business: str | None = "procurement",
    tags: list[str] | None = None,
) -> Tool:
    """A tool whose parameters form a JSON Schema object; all properties required by default."""
    if properties is None:
        properties = {
            "material_id": {"type": "string", "description": "Material number, e.g. MAT-10442."},
            "quantity": {"type": "integer", "description": "Units to order."},
            "plant_code": {"type": "string", "description": "Four-character receiving plant code."},
        }
    return Tool(
        name=name,
        description=description,
        parameters={
            "type": "object",
            "properties": properties,
            "required": list(properties) if required is None else required,
        },
        line_of_business=line_of_business,
        tags=list(tags or []),
    )


def make_distractors(seed: Tool, k: int = 5) -> list[Tool]:
    """k near-duplicates of `seed`: same domain, overlapping parameters, different intent."""
    verbs = ["update", "approve", "cancel", "get_status_of", "list", "copy", "release", "close"]
    base = seed.name.split("_", 1)[-1]
    out: list[Tool] = []
    for i in range(k):
        verb = verbs[i % len(verbs)] + ("" if i < len(verbs) else f"_{i}")
        props = dict(list(seed.properties.items())[:2])
        props["document_id"] = {"type": "string", "description": "Identifier of an existing document."}
        out.append(
            make_tool(
                name=f"{verb}_{base}",
                description=f"{verb.replace('_', ' ').capitalize()} an existing {base.replace('_', ' ')}.",
                properties=props,
                required=["document_id"],
                line_of_business=seed.line_of_business,
            )
        )
    return out


def make_persona(**overrides: Any) -> Persona:
    fields: dict[str, Any] = {
        "id": "persona-0042",
        "text": "A procurement lead at a mid-sized automotive supplier who writes terse, direct requests.",
        "role": "procurement lead",
        "seniority": "senior",
        "line_of_business": "procurement",
        "style": "terse",
        "attributes": {"country": "DE", "currency": "EUR", "plant": "DE01"},
    }
    fields.update(overrides)
    return Persona(**fields)


def make_generation(**overrides: Any) -> GenerationInfo:
    fields: dict[str, Any] = {
        "utcgen_version": "0.1.0",
        "backend": "offline",
        "models": {
            "goal": "offline/template",
            "user": "offline/template",
            "assistant": "offline/template",
            "validator": "offline/template",
        },
        "prompt_versions": {"user": "user/1", "assistant": "assistant/1", "critique": "critique/1"},
        "seed": 7,
        "attempt": 1,
        "usage": Usage(calls=9, prompt_tokens=4200, completion_tokens=610, cost_usd=0.0123, cached_calls=1),
        "created_at": "2025-01-01T00:00:00+00:00",
    }
    fields.update(overrides)
    return GenerationInfo(**fields)


def cascade_verdicts(fail_at: str | None = None, reason: str = "") -> list[Verdict]:
    """Verdicts as the cascade records them.

    Rule validators run in order and stop at the first failure; the LLM
    validators run together (both recorded) only when every rule passed.
    """
    verdicts: list[Verdict] = []
    for stage in RULE_STAGES:
        failed = stage == fail_at
        verdicts.append(
            Verdict(
                validator=stage,
                passed=not failed,
                reason=(reason or f"{stage} check failed") if failed else "",
                details={"checked_turns": 3} if stage == "format" else {},
            )
        )
        if failed:
            return verdicts
    for stage in LLM_STAGES:
        failed = stage == fail_at
        verdicts.append(
            Verdict(
                validator=stage,
                passed=not failed,
                reason=(reason or f"{stage} judged the dialogue invalid") if failed else "looks fine",
                details={"score": 2 if failed else 5},
            )
        )
    return verdicts


_KNOWN_VALUES: dict[str, Any] = {"material_id": "MAT-10442", "quantity": 250, "plant_code": "DE01"}
_TYPE_VALUES: dict[str, Any] = {"string": "X-001", "integer": 3, "number": 12.5, "boolean": True}


def default_gold(tool: Tool) -> dict[str, Any]:
    """Plausible values for every required parameter of `tool`."""
    return {
        name: _KNOWN_VALUES.get(name, _TYPE_VALUES.get(tool.properties.get(name, {}).get("type", "string"), "X-001"))
        for name in tool.required
    }


def _value_text(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k.replace('_', ' ')} is {v}" for k, v in arguments.items())


# a different question each selection turn (two turns sharing eight words fail `repetition`)
_QUESTIONS = ["Do you want to create a new {subject} or change an existing one?",
              "Is this {subject} one you already have, or one to set up from scratch?",
              "Should I start a fresh {subject}, or work on one on file?",
              "Are we making a {subject} today, or editing an earlier one?"]


def make_messages(
    seed: Tool,
    gold: dict[str, Any],
    tool_selection_turns: int = 2,
    argument_filling_turns: int = 1,
) -> list[Message]:
    """User/assistant turns: vague request, clarifications, then slots revealed in chunks.

    With zero argument-filling turns the last tool-selection turn makes the call
    (arguments were given while the tool was being pinned down).
    """
    if tool_selection_turns < 1:
        raise ValueError("a dialogue needs at least one tool-selection turn")
    messages: list[Message] = []
    subject = seed.name.split("_", 1)[-1].replace("_", " ")
    call = ToolCall(name=seed.name, arguments=dict(gold))
    for t in range(tool_selection_turns):
        last = t == tool_selection_turns - 1
        user_text = (
            f"I need some help with a {subject}." if t == 0 else f"It's a new one, I want to raise it ({t})."
        )
        if last and argument_filling_turns == 0:
            user_text += f" The {_value_text(gold)}." if gold else ""
        messages.append(Message(role="user", content=user_text))
        if last and argument_filling_turns == 0:
            messages.append(
                Message(
                    role="assistant",
                    content="Creating it now.",
                    thought=f"The user wants {seed.name} and gave every required value.",
                    tool_calls=[call],
                    phase="tool_selection",
                )
            )
        else:
            messages.append(
                Message(
                    role="assistant",
                    content=_QUESTIONS[t % len(_QUESTIONS)].format(subject=subject),
                    thought="Several candidates still fit; ask what separates them.",
                    phase="tool_selection",
                )
            )
    keys = list(gold)
    chunks = [keys[i::argument_filling_turns] for i in range(argument_filling_turns)] if argument_filling_turns else []
    for t, chunk in enumerate(chunks):
        last = t == len(chunks) - 1
        messages.append(Message(role="user", content=f"The {_value_text({k: gold[k] for k in chunk})}." if chunk else "Go ahead."))
        if last:
            messages.append(
                Message(
                    role="assistant",
                    content="All set, submitting the request.",
                    thought=f"All required arguments of {seed.name} are known.",
                    tool_calls=[call],
                    phase="argument_filling",
                )
            )
        else:
            missing = [k for c in chunks[t + 1 :] for k in c]
            messages.append(
                Message(
                    role="assistant",
                    content=f"Thanks. I still need: {', '.join(missing)}.",
                    thought=f"Still missing {missing}.",
                    phase="argument_filling",
                )
            )
    return messages


def assistant_turn(content: str = "", calls: list[ToolCall] | None = None, phase: str = "argument_filling") -> Message:
    """An assistant message with a thought, as the format validator wants it."""
    return Message.model_validate({"role": "assistant", "content": content, "thought": "t",
                                   "tool_calls": calls or [], "phase": phase})


def make_dialogue(
    id: str = "dlg-0001",
    seed_tool: Tool | None = None,
    gold_arguments: dict[str, Any] | None = None,
    distractors: list[Tool] | None = None,
    tool_selection_turns: int = 2,
    argument_filling_turns: int = 1,
    accepted: bool = True,
    fail_at: str | None = None,
    rejection_reason: str | None = None,
    validation: list[Verdict] | None = None,
    persona: Persona | None = None,
    generation: GenerationInfo | None = None,
    seed_position: int = 2,
) -> Dialogue:
    """A full dialogue record. `fail_at` names a failing validator stage and implies rejection."""
    seed = seed_tool or make_tool()
    gold = gold_arguments if gold_arguments is not None else default_gold(seed)
    distract = distractors if distractors is not None else make_distractors(seed)
    candidates = list(distract)
    candidates.insert(min(seed_position, len(candidates)), seed)
    if fail_at is not None:
        accepted = False
    if validation is None:
        validation = cascade_verdicts(fail_at) if (accepted or fail_at) else []
    if not accepted and rejection_reason is None:
        rejection_reason = f"{fail_at} validator failed" if fail_at else "assistant selected the wrong tool"
    return Dialogue(
        id=id,
        seed_tool=seed,
        user_persona=persona or make_persona(),
        goal=f"Get the assistant to run {seed.name} with the right values.",
        gold_arguments=gold,
        distractor_tools=distract,
        candidate_tools=candidates,
        messages=make_messages(seed, gold, tool_selection_turns, argument_filling_turns),
        validation=validation,
        accepted=accepted,
        rejection_reason=None if accepted else rejection_reason,
        generation=generation or make_generation(),
    )


def wrong_selection(id: str = "sel") -> Dialogue:
    """A dialogue rejected before validation: synthesis records the wrong pick as a `selection` verdict."""
    return make_dialogue(
        id=id,
        accepted=False,
        rejection_reason="selection: wrong tool selected",
        validation=[Verdict(validator="selection", passed=False, reason="wrong tool selected")],
    )
