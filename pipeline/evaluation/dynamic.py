"""Dynamic evaluation (§3.3): the model under test is the assistant in the full loop, facing a
frozen user proxy (`voting.UserProxy`: the synthesis user role, by multi-sample voting or not)
that holds the case's (τ*, persona, goal, D_k, V*).

The model answers in one phase (all candidates, its first call ends the dialogue), but the
proxy plays the paper's two: it starts in tool selection and moves to argument filling, for
good, once an assistant turn names τ* alone (its identifier, or all the words of its name; a turn
naming several candidates is still choosing) or asks about a required parameter of τ* (its key
or the words people say for it). A turn that quotes what two or more candidates do is a
choice question and moves nothing, whatever words those descriptions hold. Parameters every
candidate requires do not count, unless τ* has no other: asking for them does not show which
tool the assistant has in mind. The loop runs to the first call or `max_turns` assistant turns.
The user-side checker flags dialogues the proxy spoiled (`CaseResult.flagged`).

Scenario cases: the proxy is the generation user role given the case's scenario facts
(`voting.scenario_context`): it keeps back a masked value until asked, starts with the infeasible
value, opens an input-fault case with the recorded faulted request, and answers a clarification
truthfully. A refusal ends a scenario dialogue, as it does in generation.
"""

from __future__ import annotations

import time

from ..core.records import Message, Usage
from ..core.text import identifier_re, phrase_re
from ..dialogue import shortcuts
from ..dialogue.labels import action_of
from ..dialogue.parameter_labels import label
from ..llm.gateway import Gateway
from ..scenarios import get as scenario_type
from .cases import Case, CaseResult
from .checker import check_dialogue
from .models import ModelUnderTest
from .rubric import conv_rel
from .run_settings import DEFAULT_MAX_TURNS
from .voting import UserProxy


def telling_parameters(case: Case) -> list[str]:
    """The required parameters of τ* whose mention shows the assistant has τ* in mind."""
    required = case.gold_tool.required
    others = case.distractors
    telling = [k for k in required if not others or not all(k in o.required for o in others)]
    return telling or required


def proxy_phase(case: Case, assistant_text: str, phase: str) -> str:
    """The phase the proxy plays after an assistant turn (see the module docstring)."""
    if phase == "argument_filling" or not assistant_text:
        return phase
    low = " ".join(shortcuts.split_words(assistant_text))
    if _names(assistant_text, low, case.gold_tool.name) and not any(
            _names(assistant_text, low, d.name) for d in case.distractors):
        return "argument_filling"
    if sum(shortcuts.recited(assistant_text, c.description, n=4, content=2) is not None for c in case.candidates) >= 2:
        return phase  # a choice between candidates quoting what they do: still tool selection
    for key in telling_parameters(case):
        spoken = [" ".join(shortcuts.split_words(key)), " ".join(shortcuts.split_words(label(key)))]
        if key in assistant_text or any(s and phrase_re(s).search(low) for s in spoken):
            return "argument_filling"
    return phase


def _names(text: str, low: str, name: str) -> bool:
    """`text` names the tool: its identifier, or all its words in order (`low`: the text's words)."""
    if identifier_re(name).search(text):
        return True
    spoken = " ".join(shortcuts.split_words(name))
    return len(spoken.split()) >= 2 and phrase_re(spoken).search(low) is not None


async def evaluate_dynamic(case: Case, model: ModelUnderTest, proxy: UserProxy, *, rubric: Gateway | None = None,
                           max_turns: int = DEFAULT_MAX_TURNS, messages: list[Message] | None = None) -> CaseResult:
    """One case played live against `proxy` (a fresh one per case: its usage is charged to the case).
    `messages` (empty) receives the dialogue as it grows, so a caller keeps it when a call fails."""
    start = time.monotonic()
    usage = Usage()
    messages = [] if messages is None else messages
    first_calls = []
    phase = "tool_selection"
    phases: list[str] = []
    for turn in range(max_turns):
        text = await proxy.utter(case, phase, messages, turn)
        phases.append(phase)
        messages.append(Message(role="user", content=text))
        reply, spent = await model.reply(case, messages)
        usage.add(spent)
        messages.append(reply)
        if reply.tool_calls:
            first_calls = list(reply.tool_calls)
            break
        if not scenario_type(case.scenario).plain and action_of(reply) == "refuse":
            break  # as in generation: a refusal ends a scenario dialogue (right when the tool is unavailable)
        phase = proxy_phase(case, reply.content, phase)
    usage.add(proxy.usage)
    scores = await conv_rel(rubric, case, messages, usage) if rubric is not None else []
    return CaseResult(case_id=case.id, model=model.name, mode="dynamic", messages=messages, first_calls=first_calls,
                      conv_rel=scores, flagged=check_dialogue(case, messages, phases), usage=usage,
                      elapsed_s=round(time.monotonic() - start, 3))
