"""The validator cascade (paper §3.1, A.2): rule validators in order, then the LLM judges together.

Format -> toolcall -> grounding -> toolargs run in that order because each assumes the
previous passed (grounding and toolargs read the final call toolcall vouched for; grounding
asks whether the user's words earned that call); then the shortcut and
leakage rules (name_leak, recitation, param_keys, repetition, plausibility,
persona_fit), then the scenario rule (scenario) and question planning against Q* (planning). The first failure stops the cascade and costs no LLM call. Relevancy and
critique are independent, so they run concurrently. Every verdict produced is returned; a skipped stage produces none.

The rules of what follows a tool result (`AFTER_RESULTS`: answers) run after the others, and only on a
dialogue holding a `tool` turn; every other rule and judge reads such a dialogue up to its first result
(`up_to_results`), the disambiguation that ends at the first call: a dialogue without one gets exactly the verdicts it got before they
existed, and `STAGES`, which stats, the audit, the rows and the prompt contract read, does not list them.
"""

from __future__ import annotations

import asyncio

from ..pipeline.core.records import Dialogue, Verdict
from ..pipeline.dialogue.results import has_results
from ..pipeline.scenarios import step_views
from . import (
    answers,
    critique,
    grounding,
    nameleak,
    paramkeys,
    personafit,
    planning,
    plausibility,
    recitation,
    relevancy,
    repetition,
    scenario,
    toolargs,
    toolcall,
)
from . import format as fmt
from .base import Judge, Kind, Rule, Validator
from .judge import ChatGateway

# The stages, in cascade order; a stage's name is the `validator` of the verdicts it writes.
RULES: tuple[Rule, ...] = (
    Rule(fmt.NAME, fmt.check_format, tells=("user", "assistant")),
    Rule(toolcall.NAME, toolcall.check_toolcall, tells=("assistant",)),
    # the call was earned: the user's words set the called tool apart from every other candidate
    Rule(grounding.NAME, grounding.check_grounding, tells=("user", "assistant")),
    Rule(toolargs.NAME, toolargs.check_toolargs, tells=("user", "assistant")),
    # shortcut and leakage checks: what would let a model pass without disambiguating
    Rule(nameleak.NAME, nameleak.check_name_leak, tells=("user",)),
    Rule(recitation.NAME, recitation.check_recitation, tells=("user",)),
    Rule(paramkeys.NAME, paramkeys.check_param_keys, tells=("user", "assistant")),
    Rule(repetition.NAME, repetition.check_repetition, tells=("assistant",)),
    Rule(plausibility.NAME, plausibility.check_plausibility, tells=("slots",)),
    Rule(personafit.NAME, personafit.check_persona_fit,
         untold="it judges the persona the sampler drew by embedding similarity; no model writes it"),
    # the scenario type's own rule (explicit asks nothing, an unavailable tool ends without a call, ...)
    Rule(scenario.NAME, scenario.check_scenario, tells=("user", "assistant")),
    # no question about what is known, not far more questions than the EVPI plan needs (Q*)
    Rule(planning.NAME, planning.check_planning, tells=("assistant",)),
)
# After every rule passed, these run concurrently (independent of each other).
JUDGES: tuple[Judge, ...] = (
    Judge(relevancy.NAME, relevancy.check_relevancy, rejects_as="off-topic", tells=("user", "goal")),
    Judge(critique.NAME, critique.check_critique, rejects_as="critique failed", tells=("user", "assistant")),
)
# Run after RULES only on a dialogue with tool results; the assistant is told them by
# prompts/rules_answer.txt (`answers.instructions`), which its prompt carries only when results are on.
AFTER_RESULTS: tuple[Rule, ...] = (
    Rule(answers.NAME, answers.check_answers, tells=("assistant",)),
)
_REGISTRY: dict[str, Validator] = {v.name: v for v in (*RULES, *AFTER_RESULTS, *JUDGES)}
RULE_STAGES: tuple[str, ...] = tuple(v.name for v in RULES)
LLM_STAGES: tuple[str, ...] = tuple(v.name for v in JUDGES)
STAGES: tuple[str, ...] = RULE_STAGES + LLM_STAGES


def stage(name: str) -> Validator | None:
    """The registered validator of that name; None for a verdict of a step outside the cascade
    (e.g. `selection`, `synthesis`)."""
    return _REGISTRY.get(name)


def stage_kind(name: str) -> Kind | None:
    """Whether stage `name` is a rule or a judge; None for a name that is no stage."""
    found = stage(name)
    return None if found is None else found.kind


async def run_cascade(d: Dialogue, gateway: ChatGateway) -> list[Verdict]:
    """The verdicts of every stage that ran, in stage order. A task of several steps (`step_views`) is
    judged step by step, each step's verdicts of a stage merged into one (`merged`); the scenario rule
    reads it whole, as the rules of what follows a result read every dialogue."""
    verdicts: list[Verdict] = []
    for rule in (*RULES, *(AFTER_RESULTS if has_results(d.messages) else ())):
        verdicts.append(judged(rule, d))
        if not verdicts[-1].passed:
            return verdicts
    heads = [up_to_results(view) for view in step_views(d)]
    steps = await asyncio.gather(*(judge.check(head, gateway) for head in heads for judge in JUDGES))
    verdicts += [merged(list(steps[i::len(JUDGES)])) for i in range(len(JUDGES))]
    return verdicts


def judged(rule: Rule, d: Dialogue) -> Verdict:
    """`rule`'s verdict on `d` as the cascade gives it (and the audit replays it): on each step up to its
    first result, merged; whole for a rule of what follows a result and for a task's scenario rule."""
    whole = rule in AFTER_RESULTS or (d.scenario_info.chain is not None and rule.name == scenario.NAME)
    return merged([rule.run(view) for view in ([d] if whole else [up_to_results(v) for v in step_views(d)])])


def merged(steps: list[Verdict]) -> Verdict:
    """One stage's verdict over the steps of a task: the first failing step's (its reason saying which
    step), else the last step's; a single step's verdict as it is."""
    if len(steps) == 1:
        return steps[0]
    failed = next((i for i, v in enumerate(steps) if not v.passed), None)
    if failed is None:
        return steps[-1].model_copy(update={"details": {**steps[-1].details, "steps": len(steps)}})
    bad = steps[failed]
    return bad.model_copy(update={"reason": f"step {failed + 1}: {bad.reason}",
                                  "details": {**bad.details, "step": failed + 1}})


def up_to_results(d: Dialogue) -> Dialogue:
    """`d` up to its first tool result: the disambiguation every rule and judge but `AFTER_RESULTS`
    judges, ending at the first call as a dialogue without results does; `d` itself when it has none."""
    first = next((i for i, m in enumerate(d.messages) if m.role == "tool"), None)
    return d if first is None else d.model_copy(update={"messages": d.messages[:first]})


def accepted(verdicts: list[Verdict]) -> bool:
    """True only when every stage of the cascade produced a passing verdict."""
    return {v.validator for v in verdicts} >= set(STAGES) and all(v.passed for v in verdicts)


def first_failure(verdicts: list[Verdict]) -> Verdict | None:
    """The earliest failing verdict in recorded order: what rejected the dialogue, if anything did.

    A dialogue's verdicts are the cascade's, in stage order, or the single verdict of the
    synthesis step that rejected it before validation (e.g. `selection`: wrong tool picked).
    """
    return next((v for v in verdicts if not v.passed), None)


def failed_stage(verdicts: list[Verdict]) -> str | None:
    """The cascade stage that rejected the dialogue; None when it passed or was rejected before validation."""
    failed = first_failure(verdicts)
    return failed.validator if failed is not None and failed.validator in _REGISTRY else None
