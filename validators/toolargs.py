"""Toolargs validator (paper A.2): the final call's arguments are exactly the gold ones, and said.

Three checks, all reported:
1. exactness: the same keys as `gold_arguments` (plus every required parameter), each
   value equal after schema-aware normalisation (`arguments.equal`, the comparison Acc uses too);
2. schema: the raw arguments validate against the tool's JSON Schema (Draft 2020-12,
   formats date, date-time and email checked);
3. grounding: every gold value was stated by the user somewhere in the dialogue
   (`mentions.mentioned`). A value the user never gave was invented by the assistant:
   a failure. Values that cannot be checked lexically (booleans, enums described in
   the user's words, relative dates, paraphrased free text) are listed in
   details["unverified"] instead of failing the dialogue.

Rule codes: no_call, missing_key, extra_key, value_mismatch, schema, hallucinated.
"""

from __future__ import annotations

from ..pipeline import scenarios
from ..pipeline.core.records import Dialogue, Verdict
from ..pipeline.dialogue import arguments as values
from ..pipeline.dialogue.mentions import mentioned
from ..pipeline.dialogue.said import user_said
from .common import Problem, final_call, verdict

NAME = "toolargs"


def check_toolargs(d: Dialogue) -> Verdict:
    """Exact, schema-valid, user-grounded arguments on the final call."""
    if not scenarios.get(d.scenario).expects_call:  # nothing may be called: the scenario validator checks that
        return verdict(NAME, [], "no call expected: the needed tool is unavailable")
    call = final_call(d)
    if call is None or not isinstance(call.arguments, dict):
        return verdict(NAME, [Problem("no_call", "no final tool call with an argument object to check")], "")
    tool, gold, args = d.seed_tool, d.gold_arguments, call.arguments
    problems: list[Problem] = []

    diff = values.diff_arguments(args, gold, tool)
    problems += [Problem("missing_key", f"missing argument '{k}'") for k in diff.missing]
    problems += [Problem("extra_key", f"unexpected argument '{k}'") for k in diff.extra]
    problems += [
        Problem("value_mismatch", f"argument '{k}' is {m['got']!r}, expected {m['expected']!r}")
        for k, m in diff.mismatched.items()
    ]
    errors = values.schema_errors(args, tool)
    if errors:
        problems.append(Problem("schema", f"arguments fail the tool schema: {errors[0]}"))

    said = user_said(d.messages)
    mentions = {k: mentioned(v, tool.properties.get(k) or {}, said) for k, v in gold.items()}
    problems += [Problem("hallucinated", f"hallucinated value for '{k}'") for k, m in mentions.items() if m == "absent"]
    return verdict(
        NAME,
        problems,
        f"{len(args)} arguments match the gold values",
        missing=diff.missing,
        extra=diff.extra,
        mismatched=diff.mismatched,
        schema_errors=errors,
        mentions=mentions,
        unverified=sorted(k for k, m in mentions.items() if m == "unverifiable"),
    )
