"""Scenario validator: each scenario type's own rule (explicit asks nothing, an unavailable tool is
never replaced by a look-alike, an infeasible value is never called, a fault is present and
resolved, the user invents nothing). Each scenario type owns its rules (`pipeline/scenarios/`,
`problems`), shared with the offline critic; the verdict's reason is the first broken rule, its
code in details. Plain disambiguation dialogues pass: the earlier stages already judge them.
"""

from __future__ import annotations

from ..pipeline.core.records import Dialogue, Verdict
from ..pipeline.scenarios import problems
from .common import Problem, verdict

NAME = "scenario"


def check_scenario(d: Dialogue) -> Verdict:
    """The dialogue's scenario rule holds."""
    found = [Problem(rule, message) for rule, message in problems(d)]
    return verdict(NAME, found, f"{d.scenario}: scenario rule holds", scenario=d.scenario)
