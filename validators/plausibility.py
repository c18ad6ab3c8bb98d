"""Plausibility validator: gold values are believable for their parameters.

Each gold argument (and each item of a list) is checked against what its parameter's
name and schema imply (`shortcuts.implausible`): years within 2015-2032, real dates in
that window, year-month strings with a real month, phone numbers made of digits, email
addresses, a first or last name that is one name, non-negative amounts and counts,
percentages within 0-100. Values the rules say nothing about pass. Rule code: implausible.
"""

from __future__ import annotations

from ..pipeline import shortcuts
from ..pipeline.records import Dialogue, Verdict
from .common import Problem, verdict

NAME = "plausibility"


def check_plausibility(d: Dialogue) -> Verdict:
    props = d.seed_tool.properties
    problems = [
        Problem("implausible", f"gold value for '{k}' is implausible: {why}")
        for k, v in d.gold_arguments.items()
        if (why := shortcuts.implausible(k, v, props.get(k) or {}))
    ]
    return verdict(NAME, problems, f"{len(d.gold_arguments)} gold values are plausible")
