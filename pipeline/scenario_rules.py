"""What each scenario type demands of a finished dialogue, as named problems.

One definition shared by the scenario validator (`utcgen.validators.scenario`) and the
offline critic, so the critic never passes what the validator rejects. Pure: reads the
dialogue, its scenario facts and its turn labels (derived when a turn has none).

Rules (code: meaning):
* explicit_asked: the opening said everything, yet the assistant asked before calling.
* masked_volunteered / masked_not_asked: an underspecified opening (or any user turn before
  the assistant asked) already held the masked value / the assistant never asked for it.
* lookalike_called / no_refusal / no_offer / seed_offered: an unavailable-tool dialogue
  called a tool / did not end by saying no candidate can do it / offered nothing instead /
  had the needed tool among its candidates after all.
* bad_value_missing / bad_value_called / bad_value_not_raised: the infeasible value was
  never given / a call used it / no assistant turn raised it before the call.
* fault_missing / fault_not_clarified: the opening is not the faulted request (or the fault
  is not visible in it) / the assistant called without asking anything first.
* user_invented: a user turn states a value the user was never given (`shortcuts.invented_values`).
"""

from __future__ import annotations

from typing import Any

from . import shortcuts
from .arguments import equal
from .labels import action_of, label_turn
from .mentions import mentioned
from .records import Dialogue, Message


def _labelled(d: Dialogue) -> list[Message]:
    names = [t.name for t in d.candidate_tools]
    return [m if m.role != "assistant" or m.action else label_turn(m, names) for m in d.messages]


def _before_call(msgs: list[Message]) -> list[Message]:
    """Assistant turns before the first call."""
    out = []
    for m in msgs:
        if m.role == "assistant":
            if m.tool_calls:
                break
            out.append(m)
    return out


def _literal(value: Any, text: str) -> bool:
    return mentioned(value, {}, text) == "found"


def problems(d: Dialogue) -> list[tuple[str, str]]:
    """(rule, message) for every scenario rule `d` breaks; empty for disambiguation dialogues."""
    msgs = _labelled(d)
    info, out = d.scenario_info, []
    users = [m for m in msgs if m.role == "user"]
    opening = users[0].content if users else ""
    asked = _before_call(msgs)
    calls = [c for m in msgs if m.role == "assistant" for c in m.tool_calls]
    if d.scenario == "explicit" and any(m.action != "call" for m in asked):
        out.append(("explicit_asked", "the opening specified everything, yet the assistant asked before calling"))
    if d.scenario == "underspecified" and info.masked_arg:
        value = d.gold_arguments.get(info.masked_arg)
        first = next((i for i, m in enumerate(msgs) if m.role == "user" and _literal(value, m.content)), None)
        first_ask = next((i for i, m in enumerate(msgs) if m.role == "assistant" and m.action == "ask"), None)
        if first is not None and (first_ask is None or first < first_ask):
            out.append(("masked_volunteered", f"the user gave the masked '{info.masked_arg}' before being asked"))
        if first_ask is None or not any(m.action == "ask" for m in asked):
            out.append(("masked_not_asked", f"the assistant never asked for the masked '{info.masked_arg}'"))
    if d.scenario == "unavailable_tool":
        if calls:
            out.append(("lookalike_called", f"the needed tool is unavailable, yet '{calls[0].name}' was called"))
        last = next((m for m in reversed(msgs) if m.role == "assistant"), None)
        if last is None or (last.action or action_of(last)) != "refuse":
            out.append(("no_refusal", "the dialogue does not end by saying no available tool can do it"))
        elif last.act != "propose_solution":
            out.append(("no_offer", "the refusal offers nothing the assistant can do instead"))
        if d.seed_tool.name in {t.name for t in d.candidate_tools}:
            out.append(("seed_offered", "the unavailable tool is among the candidates"))
    if d.scenario == "infeasible_arguments" and info.infeasible:
        bad = info.infeasible
        if not _literal(bad.value, "\n".join(m.content for m in users)):
            out.append(("bad_value_missing", f"the user never gave the infeasible value {bad.value!r}"))
        schema = d.seed_tool.properties.get(bad.arg) or {}
        if any(bad.arg in c.arguments and equal(c.arguments[bad.arg], bad.value, schema) for c in calls):
            out.append(("bad_value_called", f"a call used the infeasible {bad.arg}={bad.value!r}"))
        if not any(m.action == "ask" and m.act == "report_blocker" for m in asked):
            out.append(("bad_value_not_raised", f"no assistant turn pointed out the invalid {bad.arg} before calling"))
    if d.scenario == "input_fault" and info.fault:
        fault = info.fault
        if not fault.faulted or fault.faulted == fault.original or opening != fault.faulted:
            out.append(("fault_missing", "the opening is not a faulted version of the request"))
        elif fault.kind == "parameter" and not _literal(fault.decoy, opening):
            out.append(("fault_missing", f"the opening does not give the second value for '{fault.arg}'"))
        elif fault.kind == "premise" and d.gold_arguments and all(
                _literal(v, opening) for v in d.gold_arguments.values()):
            out.append(("fault_missing", "the opening relies on earlier details yet states every value"))
        if not any(m.action == "ask" for m in asked):
            out.append(("fault_not_clarified", "the assistant acted on the faulted request without asking first"))
    if d.scenario != "disambiguation":
        out += _invented(d, users)
    return out


def _invented(d: Dialogue, users: list[Message]) -> list[tuple[str, str]]:
    """Values the user says but was never given (`shortcuts.invented_values` against the gold values,
    the scenario's wrong value or decoy, the persona, the goal)."""
    info = d.scenario_info
    held = [*map(str, _flatten(d.gold_arguments)), d.user_persona.text, d.goal,
            *d.user_persona.attributes.values()]
    if info.infeasible:
        held.append(str(info.infeasible.value))
    if info.fault is not None and info.fault.decoy is not None:
        held.append(str(info.fault.decoy))
    given = " ".join(held)
    for m in users:
        if found := shortcuts.invented_values(m.content, given):
            return [("user_invented", f"the user states '{found[0]}', which it was never given")]
    return []


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _flatten(v)]
    if isinstance(value, list):
        return [x for v in value for x in _flatten(v)]
    return [value]
