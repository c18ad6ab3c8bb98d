"""The validator cascade (paper §3.1, A.2): rule validators in order, then the LLM judges together.

Format -> toolcall -> toolargs run in that order because each assumes the previous
passed (toolargs reads the final call toolcall vouched for); the first failure stops
the cascade and costs no LLM call. Relevancy and critique are independent, so they run
concurrently. Every verdict produced is returned; a skipped stage produces none.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from utcgen.pipeline.records import Dialogue, Verdict
from utcgen.validators.critique import check_critique
from utcgen.validators.format import check_format
from utcgen.validators.judge import ChatGateway
from utcgen.validators.relevancy import check_relevancy
from utcgen.validators.toolargs import check_toolargs
from utcgen.validators.toolcall import check_toolcall

RULES: tuple[Callable[[Dialogue], Verdict], ...] = (check_format, check_toolcall, check_toolargs)
STAGES = ("format", "toolcall", "toolargs", "relevancy", "critique")


async def run_cascade(d: Dialogue, gateway: ChatGateway) -> list[Verdict]:
    """The verdicts of every stage that ran, in stage order."""
    verdicts: list[Verdict] = []
    for rule in RULES:
        verdicts.append(rule(d))
        if not verdicts[-1].passed:
            return verdicts
    verdicts += await asyncio.gather(check_relevancy(d, gateway), check_critique(d, gateway))
    return verdicts


def accepted(verdicts: list[Verdict]) -> bool:
    """True only when every stage of the cascade produced a passing verdict."""
    return {v.validator for v in verdicts} >= set(STAGES) and all(v.passed for v in verdicts)


def first_failure(verdicts: list[Verdict]) -> Verdict | None:
    """The earliest failing verdict (stage order), for the dialogue's rejection reason."""
    return next((v for v in verdicts if not v.passed), None)
