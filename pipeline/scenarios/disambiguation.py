"""Disambiguation (DiaFORGE): a vague opening; clarify which tool, collect the values, call."""

from __future__ import annotations

from ..core.records import DEFAULT_SCENARIO
from .base import ScenarioType


class Disambiguation(ScenarioType):
    name = DEFAULT_SCENARIO
    plain = True
    summary = "vague request, clarified, then called"

    def clarification_expected(self, near_duplicate: bool) -> bool:
        return near_duplicate  # a question is needed only when a distractor is a near duplicate
