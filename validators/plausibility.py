"""Plausibility validator: gold values are believable for their parameters.

Each gold argument (and each item of a list) is checked against what its parameter's name,
description and schema imply (`dialogue.values.implausible`), with the seed tool's name and
description as context:

* the schema itself: enum, minimum/maximum, pattern, length, type and format (date,
  date-time, email, uri...);
* numbers: a non-whole value for a count, number or id (`issue_number` 1030.07, even when
  typed `number`), years within 2015-2032, months 1-12, non-negative amounts and counts,
  percentages within 0-100;
* strings: real dates in that window, year-month strings with a real month, phone numbers
  made of digits, e-mail addresses, a first or last name that is one name; a person's name
  only for a parameter about a person ("era name is Kaito Kobayashi" fails); no phrase of
  plain words for an identifier-like key (owner, repo, branch, path, url, email, id...:
  "regional sales kickoff" is no owner); a search (`q`, `query`, `keywords`...) sharing at
  least one word stem with its key, its description or its tool.

Rule code: implausible. A dialogue-level rule too, code shared_value: one string value given
to two or more required parameters of the seed tool (a repository named like its owner's
title, a base branch equal to its head) shows values drawn from a pool, not from the task.
"""

from __future__ import annotations

from ..pipeline.core.records import Dialogue, Verdict
from ..pipeline.dialogue.values import implausible, shared_values
from .common import Problem, verdict

NAME = "plausibility"


def check_plausibility(d: Dialogue) -> Verdict:
    props = d.seed_tool.properties
    context = f"{d.seed_tool.name} {d.seed_tool.description}"
    problems = [
        Problem("implausible", f"gold value for '{k}' is implausible: {why}")
        for k, v in d.gold_arguments.items()
        if (why := implausible(k, v, props.get(k) or {}, context))
    ]
    required = {k: v for k, v in d.gold_arguments.items() if k in set(d.seed_tool.required)}
    problems += [
        Problem("shared_value", f"gold value '{value}' is given to {len(keys)} parameters "
                                f"({', '.join(repr(k) for k in keys)}): each needs a value of its own")
        for value, keys in shared_values(required, props).items()
    ]
    return verdict(NAME, problems, f"{len(d.gold_arguments)} gold values are plausible")
