"""The validator cascade (paper §3.1, A.2): rule validators in order, then the LLM judges together.

Format -> toolcall -> toolargs run in that order because each assumes the previous
passed (toolargs reads the final call toolcall vouched for); then the shortcut and
leakage rules (name_leak, recitation, param_keys, repetition, plausibility,
persona_fit), then the scenario rule (scenario) and question planning against Q* (planning). The first failure stops the cascade and costs no LLM call. Relevancy and
critique are independent, so they run concurrently. Every verdict produced is returned; a skipped stage produces none.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ..pipeline.records import Dialogue, Verdict
from . import (
    critique,
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
from .judge import ChatGateway

# The stages, in cascade order; a stage's name is the `validator` of the verdicts it writes.
RULES: tuple[tuple[str, Callable[[Dialogue], Verdict]], ...] = (
    (fmt.NAME, fmt.check_format),
    (toolcall.NAME, toolcall.check_toolcall),
    (toolargs.NAME, toolargs.check_toolargs),
    # shortcut and leakage checks: what would let a model pass without disambiguating
    (nameleak.NAME, nameleak.check_name_leak),
    (recitation.NAME, recitation.check_recitation),
    (paramkeys.NAME, paramkeys.check_param_keys),
    (repetition.NAME, repetition.check_repetition),
    (plausibility.NAME, plausibility.check_plausibility),
    (personafit.NAME, personafit.check_persona_fit),
    # the scenario type's own rule (explicit asks nothing, an unavailable tool ends without a call, ...)
    (scenario.NAME, scenario.check_scenario),
    # no question about what is known, not far more questions than the EVPI plan needs (Q*)
    (planning.NAME, planning.check_planning),
)
JUDGES: tuple[tuple[str, Callable[[Dialogue, ChatGateway], Awaitable[Verdict]]], ...] = (
    (relevancy.NAME, relevancy.check_relevancy),
    (critique.NAME, critique.check_critique),
)
RULE_STAGES: tuple[str, ...] = tuple(name for name, _ in RULES)
LLM_STAGES: tuple[str, ...] = tuple(name for name, _ in JUDGES)
STAGES: tuple[str, ...] = RULE_STAGES + LLM_STAGES


async def run_cascade(d: Dialogue, gateway: ChatGateway) -> list[Verdict]:
    """The verdicts of every stage that ran, in stage order."""
    verdicts: list[Verdict] = []
    for _, rule in RULES:
        verdicts.append(rule(d))
        if not verdicts[-1].passed:
            return verdicts
    verdicts += await asyncio.gather(*(judge(d, gateway) for _, judge in JUDGES))
    return verdicts


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
    return failed.validator if failed is not None and failed.validator in STAGES else None
