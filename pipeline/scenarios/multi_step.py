"""Multi-step: a task of two calls in order, the second taking a value the first one's result returned
(list -> get, search -> book, find the id -> update).

The pair comes from the catalog's chain pairs (`retrieval.chains`); the dialogue's seed tool, values
and candidate pool are the second step's, the first step's are `ScenarioInfo.chain`. Each step is the
plain protocol with its own near-duplicate candidates: the user asks for the first thing, the assistant
settles the tool, gathers its values and calls it; the result comes back and is answered; the user then
asks for the next thing, and the assistant settles that tool among its own look-alikes and calls it with
the value the first result returned, which nobody says aloud.

The cascade judges each step as a dialogue of its own (`step_views`): the first step's turns up to its
result, with its tool, values and pool; the second's from the follow-up to its result, with the fed
parameter set aside (it is checked here, not asked of the user). The rules of this type read the whole
dialogue: the second call exists and carries the value the first result gave.
"""

from __future__ import annotations

import random
from typing import Any

from ..core.records import (
    DEFAULT_SCENARIO,
    FIT_ATTRIBUTE,
    ROLE_FIT_ATTRIBUTE,
    ChainInfo,
    Dialogue,
    Message,
    ScenarioInfo,
    Tool,
    ToolCall,
)
from ..dialogue.results import results
from .base import DialogueView, ScenarioType


class MultiStep(ScenarioType):
    name = "multi_step"
    plain = True  # each step follows the plain protocol, with the plain prompts
    chained = True
    summary = "two calls in order: the second takes a value the first one's result returned"
    critique_note = ("the user's task takes two tools in order; the second call uses a value the first "
                     "one's result returned, which the assistant takes from that result without asking.")
    prompt_versions = (("scenario_user_multi_step", "user-multi-step/1"),)

    def prepare(self, tool: Tool, gold: dict[str, Any], rng: random.Random) -> ScenarioInfo:
        return ScenarioInfo()  # the first step is drawn with the seed job (`synthesis.chain`)

    def user_section(self, info: dict, scenario: dict) -> str:
        return ("What has happened: the assistant has done an earlier task of yours and told you what it\n"
                "found. Your goal above is the next thing you want done, with what it found.\n"
                "How to behave:\n"
                "- Your first message now asks for this next thing as a follow-up, briefly and somewhat\n"
                "  vaguely, in a way that could fit the tool you need AND the similar ones; name no tool.\n"
                "- Answer what the assistant asks; when it asks which one you mean, say in your own words\n"
                "  what sets your need apart. Give a value only when the assistant asks for it.\n"
                f"Note: {self.user_note(info, scenario)}")

    def user_note(self, info: dict, scenario: dict) -> str:
        what = info.get("parameter_label") or "value"
        return (f"You do not know the {what}: the assistant takes it from what it found. Never state or "
                "invent it; if asked, say to use the one it just found.")

    def problems(self, view: DialogueView) -> list[tuple[str, str]]:
        chain = view.dialogue.scenario_info.chain
        if chain is None:
            return [("chain_missing", "a multi-step dialogue without its first step")]
        found = results(view.messages)
        later = [r for r in found if r.call is not None and r.call.name == view.dialogue.seed_tool.name]
        first = next((r for r in found if r.call is not None and r.call.name == chain.tool.name), None)
        if first is None or first.error is not None:
            return [("chain_missing", f"the first step ('{chain.tool.name}') has no successful result")]
        if not later:
            return [("chain_missing", f"no call of '{view.dialogue.seed_tool.name}' after the first result")]
        call = later[0].call
        assert call is not None
        for key, value in chain.fed.items():
            if not _same(got := call.arguments.get(key), value):
                return [("chain_unused", f"the second call's '{key}' is {got!r}, not {value!r} that the first "
                                         "result returned")]
        return []


def _same(got: Any, value: Any) -> bool:
    """Whether the call passed the fed value: as is, as a list holding it, or as text of it."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(got, list):
        return any(_same(g, value) for g in got)
    return got == value or (got is not None and str(got).strip() == str(value).strip())


def offered(d: Dialogue) -> list[Tool]:
    """Every tool the dialogue's assistant may use: its candidates, and a multi-step task's first-step pool
    before them (one tool set for the whole conversation, as an agent has; what SFT rows offer)."""
    return offered_tools(d.scenario_info.chain, d.candidate_tools)


def offered_tools(chain: ChainInfo | None, candidates: list[Tool]) -> list[Tool]:
    """`offered` from the first step (if any) and the last step's candidates, as a benchmark case keeps them."""
    if chain is None:
        return list(candidates)
    names = {t.name for t in chain.candidates}
    return [*chain.candidates, *(t for t in candidates if t.name not in names)]


def step_views(d: Dialogue) -> list[Dialogue]:
    """Each step of a multi-step dialogue as a plain dialogue of its own (the module doc); `[d]` for any
    other dialogue."""
    chain = d.scenario_info.chain
    if chain is None:
        return [d]
    tools = [i for i, m in enumerate(d.messages) if m.role == "tool"]
    first_end = tools[0] if tools else len(d.messages)
    start = next((i for i in range(first_end, len(d.messages)) if d.messages[i].role == "user"), len(d.messages))
    end = next((i for i in tools if i > start), len(d.messages))
    plain = ScenarioInfo(decision_style=d.scenario_info.decision_style)
    # the user was drawn for the task's last tool: its fit is judged there, not against the first step's
    unfitted = d.user_persona.model_copy(update={"attributes": {
        k: v for k, v in d.user_persona.attributes.items() if k not in (FIT_ATTRIBUTE, ROLE_FIT_ATTRIBUTE)}})
    first = d.model_copy(update={"user_persona": unfitted,
        "seed_tool": chain.tool, "gold_arguments": chain.gold, "goal": chain.goal or d.goal,
        "distractor_tools": chain.distractors, "candidate_tools": chain.candidates,
        "messages": d.messages[:first_end], "scenario": DEFAULT_SCENARIO, "scenario_info": plain, "q_star": None})
    if start >= len(d.messages):
        return [first]
    fed = {chain.parameter, *chain.fed}
    tool = _without(d.seed_tool, fed)
    second = d.model_copy(update={
        "seed_tool": tool, "gold_arguments": {k: v for k, v in d.gold_arguments.items() if k not in fed},
        "candidate_tools": [tool if t.name == tool.name else t for t in d.candidate_tools],
        "messages": [_unfed(m, tool.name, fed) for m in d.messages[start:end]],
        "scenario": DEFAULT_SCENARIO, "scenario_info": plain, "q_star": None})
    return [first, second]


def _without(tool: Tool, keys: set[str]) -> Tool:
    """`tool` with parameters `keys` set aside (neither properties nor required)."""
    params = dict(tool.parameters)
    params["properties"] = {k: v for k, v in tool.properties.items() if k not in keys}
    if isinstance(params.get("required"), list):
        params["required"] = [k for k in params["required"] if k not in keys]
    return tool.model_copy(update={"parameters": params})


def _unfed(m: Message, name: str, keys: set[str]) -> Message:
    """`m` with `keys` left out of its calls of `name` (the fed values, judged by this type's rules)."""
    if not m.tool_calls:
        return m
    calls = [ToolCall(name=c.name, arguments={k: v for k, v in c.arguments.items() if k not in keys})
             if c.name == name else c for c in m.tool_calls]
    return m.model_copy(update={"tool_calls": calls})
