"""ToolScan-style error patterns of every call a model made in one evaluated dialogue.

Every assistant turn of `CaseResult.messages` is the model's. Per turn and per call, in order:
- `invalid_format`: the turn could not be parsed (`parse_error` set); counted once per turn, and
  its calls (if any survived parsing) are still checked;
- `repeated_call`: the same tool with the same arguments (`arguments.normalise`) as an earlier call of the
  dialogue; a repeat counts only as a repeat (its other errors were counted the first time);
- `hallucinated_function`: a name that is not one of the case's candidates (nothing else is
  checked for it: there is no schema to check against);
- `insufficient_calls`: a candidate other than τ* was called instead of τ* (ToolScan's IAC in a
  disambiguation setting: a near-duplicate or other distractor chosen); in a multi-step case τ* and V*
  are each step's, so either step's tool is no such call;
- per supplied argument, the first that applies: `hallucinated_argument` (the called tool has no
  such parameter), `wrong_argument_type` (the value fails the parameter's JSON Schema `type`),
  `wrong_argument_value` (a call to τ* whose value is not `arguments.equal` to V*'s under the parameter's schema, the comparison
  Acc and the toolargs validator use);
- `missing_argument`: per key of V* (τ*'s required arguments) that a call to τ* does not supply.
  ToolScan counts a left-out required argument as an incorrect value (IAV); `missing_required_as=
  "wrong_argument_value"` does the same, the default keeps it apart.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from ..core.records import Tool
from ..dialogue.arguments import equal, normalise, type_ok
from .cases import Case, CaseResult

PATTERNS = ("invalid_format", "hallucinated_function", "hallucinated_argument", "wrong_argument_type",
            "repeated_call", "insufficient_calls", "wrong_argument_value", "missing_argument")
MissingAs = Literal["missing_argument", "wrong_argument_value"]


def _signature(name: str, arguments: dict[str, Any], tool: Tool | None) -> str:
    """The call with its values in normal form under the called tool's schema (as given when unknown)."""
    schema = {"type": "object", "properties": tool.properties} if tool is not None else None
    return json.dumps([name, normalise(arguments, schema)], sort_keys=True, default=str)


def count_patterns(case: Case, result: CaseResult,
                   missing_required_as: MissingAs = "missing_argument") -> dict[str, int]:
    """How often each pattern of PATTERNS occurs among the model's calls in `result` (see the module docstring)."""
    if missing_required_as not in ("missing_argument", "wrong_argument_value"):
        raise ValueError(f"missing_required_as must be missing_argument or wrong_argument_value, "
                         f"not {missing_required_as!r}")
    counts: dict[str, int] = dict.fromkeys(PATTERNS, 0)
    tools: dict[str, Tool] = {t.name: t for t in case.shown}
    tools.setdefault(case.gold_tool.name, case.gold_tool)
    # τ* -> V*; a multi-step case: each step's tool and values
    golds = {s.tool.name: s.gold for s in case.steps} or {case.gold_tool.name: case.gold_arguments}
    seen: set[str] = set()
    for turn in result.messages:
        if turn.role != "assistant":
            continue
        if turn.parse_error:
            counts["invalid_format"] += 1
        for call in turn.tool_calls:
            tool = tools.get(call.name)
            signature = _signature(call.name, call.arguments, tool)
            if signature in seen:
                counts["repeated_call"] += 1
                continue
            seen.add(signature)
            if tool is None:
                counts["hallucinated_function"] += 1
                continue
            gold = golds.get(call.name)
            if gold is None:
                counts["insufficient_calls"] += 1
            for key, value in call.arguments.items():
                schema = tool.properties.get(key)
                if schema is None:
                    counts["hallucinated_argument"] += 1
                elif not type_ok(value, schema):
                    counts["wrong_argument_type"] += 1
                elif gold is not None and key in gold and not equal(value, gold[key], schema):
                    counts["wrong_argument_value"] += 1
            if gold is not None:
                counts[missing_required_as] += sum(k not in call.arguments for k in gold)
    return counts
