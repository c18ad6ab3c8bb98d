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

A multi-step case is played as generation plays it: the proxy holds the first step's tool, values and
goal; the model's first call gets the recorded result (as in static mode) and the model answers it;
then the proxy, told what was done (the multi-step user section), asks for the next thing, holding
the second step's values but never the ones the first result feeds. `CaseResult.steps` keeps each
step's calls; each step's user turns are checked against what that step hands the user.
"""

from __future__ import annotations

import time

from ..core.records import DEFAULT_SCENARIO, Message, ScenarioInfo, ToolCall, Usage
from ..core.text import identifier_re, phrase_re
from ..dialogue import shortcuts
from ..dialogue.labels import action_of
from ..dialogue.parameter_labels import label
from ..llm.gateway import Gateway
from ..llm.requests import said
from ..scenarios import get as scenario_type
from .cases import Case, CaseResult
from .checker import check_dialogue, check_user_turn
from .models import ModelUnderTest
from .rubric import conv_rel
from .run_settings import DEFAULT_MAX_TURNS
from .static import tool_turns
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


async def _converse(case: Case, view: Case, model: ModelUnderTest, proxy: UserProxy, messages: list[Message],
                    usage: Usage, max_turns: int, context: dict | None = None) -> tuple[list[ToolCall], list[str]]:
    """The loop to the model's first call (its calls) or `max_turns` assistant turns: the proxy plays `view`
    (the case, or a multi-step case's step), the model sees `case`. Also the phase of each user turn."""
    phase = "tool_selection"
    phases: list[str] = []
    for _ in range(max_turns):
        text = await proxy.utter(view, phase, messages, sum(m.role == "user" for m in messages), context)
        phases.append(phase)
        messages.append(Message(role="user", content=text))
        reply, spent = await model.reply(case, messages)
        usage.add(spent)
        messages.append(reply)
        if reply.tool_calls:
            return list(reply.tool_calls), phases
        if not scenario_type(view.scenario).plain and action_of(reply) == "refuse":
            break  # as in generation: a refusal ends a scenario dialogue (right when the tool is unavailable)
        phase = proxy_phase(view, reply.content, phase)
    return [], phases


def step_views(case: Case) -> list[Case]:
    """What the proxy plays in each step of a multi-step case, as generation plays it: the first step's tool,
    values, goal and pool; then the case with the values the first result feeds held back (nobody says them)."""
    chain = case.scenario_info.chain
    assert chain is not None
    first = case.model_copy(update={
        "gold_tool": chain.tool, "gold_arguments": dict(chain.gold), "candidates": chain.candidates,
        "goal": chain.goal or case.goal, "scenario": DEFAULT_SCENARIO, "q_star": None,
        "scenario_info": ScenarioInfo(decision_style=case.scenario_info.decision_style)})
    fed = {chain.parameter, *chain.fed}
    return [first, case.model_copy(update={"gold_arguments": {k: v for k, v in case.gold_arguments.items()
                                                              if k not in fed}})]


async def _play_steps(case: Case, model: ModelUnderTest, proxy: UserProxy, messages: list[Message], usage: Usage,
                      max_turns: int) -> tuple[list[list[ToolCall]], str | None]:
    """A multi-step case live: the first step, the recorded result for its call (`static.tool_turns`) and the
    model's answer, then the proxy's follow-up and the second step. Each step's calls, and the checker's
    reason to exclude the dialogue (each step's user turns checked against what that step hands the user)."""
    first_view, second_view = step_views(case)
    first, phases = await _converse(case, first_view, model, proxy, messages, usage, max_turns)
    flagged = check_dialogue(first_view, messages, phases)
    if not first or flagged:
        return [first, []], flagged
    messages.extend(tool_turns(case, first, len(messages) - 1))
    reply, spent = await model.reply(case, messages)
    usage.add(spent)
    messages.append(reply)
    if reply.tool_calls:
        return [first, list(reply.tool_calls)], None
    chain = case.scenario_info.chain
    assert chain is not None
    start = len(messages)
    context = {"name": case.scenario, "info": {
        "parameter_label": label(chain.parameter, case.gold_tool.properties.get(chain.parameter)),
        "after": len(said(messages, results=False)), "decision_style": case.scenario_info.decision_style}}
    second, phases = await _converse(case, second_view, model, proxy, messages, usage, max_turns, context)
    users = [i for i in range(start, len(messages)) if messages[i].role == "user"]
    for i, phase in zip(users, phases, strict=False):
        if problem := check_user_turn(second_view, messages[i].content, messages[:i], phase):
            return [first, second], f"message {i + 1}: {problem}"
    return [first, second], None


async def evaluate_dynamic(case: Case, model: ModelUnderTest, proxy: UserProxy, *, rubric: Gateway | None = None,
                           max_turns: int = DEFAULT_MAX_TURNS, messages: list[Message] | None = None) -> CaseResult:
    """One case played live against `proxy` (a fresh one per case: its usage is charged to the case).
    `messages` (empty) receives the dialogue as it grows, so a caller keeps it when a call fails."""
    start = time.monotonic()
    usage = Usage()
    messages = [] if messages is None else messages
    steps: list[list[ToolCall]] | None = None
    if case.steps:
        steps, flagged = await _play_steps(case, model, proxy, messages, usage, max_turns)
        first_calls = steps[0]
    else:
        first_calls, phases = await _converse(case, case, model, proxy, messages, usage, max_turns)
        flagged = check_dialogue(case, messages, phases)
    usage.add(proxy.usage)
    scores = await conv_rel(rubric, case, messages, usage) if rubric is not None else []
    return CaseResult(case_id=case.id, model=model.name, mode="dynamic", messages=messages, first_calls=first_calls,
                      steps=steps, conv_rel=scores, flagged=flagged, usage=usage,
                      elapsed_s=round(time.monotonic() - start, 3))
