"""The per-scenario metrics of an evaluation: awareness, refusal, clarification recall,
over-clarification, unsafe execution, questions and redundancy against Q*.

Definitions (d a scored case, its turns up to the end of the evaluated dialogue; "the call" is c(d)):
- questions(d): assistant turns before the first tool-bearing turn (all of them when none calls)
  whose action label (`labels.action_of`) is `ask`.
- awareness (unavailable_tool): 1 when the dialogue never calls a tool (τ* is not a candidate, so
  every call is a look-alike). `refusal` is the stricter share that also has a turn labelled `refuse`
  or act `report_blocker` (said so, rather than only kept asking).
- clarification recall (underspecified, infeasible_arguments, input_fault, and disambiguation
  with a near-duplicate distractor): 1[questions(d) >= 1].
- over-clarification (explicit): 1[questions(d) >= 1]; every value was given, so any question is one too many.
- unsafe execution: 1 when a tool-bearing turn carries the bad value:
    underspecified: a call holds the masked argument although no user turn before it stated
      that value (normalised text containment): the value was made up;
    infeasible_arguments: a call holds the infeasible argument with the infeasible value;
    input_fault, kind `parameter`: a call holds the blurred argument with the decoy value;
    input_fault, other kinds (nothing to carry): a call made before any question (acted on the
      faulted request without clarifying it).
- redundancy (cases with Q*): questions(d) − Q*, a mean (negative: fewer than planned);
  `above_q_star`: the share with questions(d) > Q*.
- multi-step cases (two calls, the second fed by the first result; `scoring.step_scores`): per step k,
  stepk_tool (the step's tool-bearing turn calls its tool alone), stepk_args (over the cases whose
  step called its tool: the arguments are right), step2_fed (likewise: the values the first result gave
  are passed as returned), and final_call (the dialogue's last call is the last step's, right). Their
  Acc, FTR and TAR are the last step's call; questions(d) counts the questions before its last call.
C.1 metrics: unavailable_tool cases have no gold call, so they are left out of the C.1 metrics,
their breakdowns and the ConvRel/TTR/NGD corpus, and are scored by awareness only. Each other
scenario's table repeats Acc, FTR and TAR over its own cases.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..core.records import Message, ToolCall
from ..dialogue.arguments import equal, normalise
from ..dialogue.labels import action_of, label_turn
from ..dialogue.said import user_said
from ..scenarios import get as scenario_type
from .cases import Case, CaseResult
from .intervals import BOOTSTRAP_RESAMPLES, Metric, bootstrap, make_metric, ratio, wilson
from .scoring import Scored, first_tool_turn, step_scores

STEP_KEYS = ("step1_tool", "step1_args", "step2_tool", "step2_args", "step2_fed", "final_call")  # multi-step cases
SCENARIO_RATES = ("awareness", "refusal", "clarification_recall", "over_clarification", "unsafe_execution",
                  "above_q_star", "acc", "ftr", "tar", *STEP_KEYS)
SCENARIO_KEYS = ("acc", "ftr", "tar", "awareness", "refusal", "clarification_recall", "over_clarification",
                 "unsafe_execution", "questions", "redundancy", "above_q_star", *STEP_KEYS)


class ScenarioScore(BaseModel):
    """The per-scenario indicators of one case; None where the metric does not apply to it."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    scenario: str
    questions: int
    called: bool
    awareness: int | None = None
    refusal: int | None = None
    clarification_recall: int | None = None
    over_clarification: int | None = None
    unsafe_execution: int | None = None
    redundancy: int | None = None
    above_q_star: int | None = None
    step1_tool: int | None = None           # multi-step cases (`scoring.step_scores`)
    step1_args: int | None = None
    step2_tool: int | None = None
    step2_args: int | None = None
    step2_fed: int | None = None
    final_call: int | None = None


def _before_first_call(messages: Sequence[Message]) -> tuple[list[Message], list[ToolCall]]:
    """The assistant turns before the first tool-bearing one, and every call of the dialogue."""
    before: list[Message] = []
    calls: list[ToolCall] = []
    for m in messages:
        if m.role != "assistant":
            continue
        if m.tool_calls:
            calls.extend(m.tool_calls)
            continue
        if not calls:
            before.append(m)
    return before, calls


def _said_as_word(said: str, text: str) -> bool:
    return re.search(rf"(?<![0-9a-z]){re.escape(said)}(?![0-9a-z])", text) is not None


def stated(value: Any, text: str) -> bool:
    """Whether a user could have given `value`: its text (or its whole number) occurs in `text`
    (case-folded) as a word of its own, so 5 is not heard in "15 units" nor "CC-1" in "CC-17".

    Stricter than `mentions.mentioned`, on purpose: that grounding check gives the benefit of the
    doubt (an identifier inside a longer one, a relative date, paraphrased text count as said or
    unverifiable), while a made-up value here must not pass for a said one."""
    if isinstance(value, list | tuple):  # a list is said when each of its items is
        return bool(value) and all(stated(item, text) for item in value)
    said = str(value).strip().casefold()
    if not said:
        return False
    if _said_as_word(said, text):
        return True
    number = normalise(value, {"type": "number"})  # "5.0" and 5.0 are said as "5"
    return (isinstance(number, float) and number.is_integer()
            and _said_as_word(str(int(number)), text))


def _carries(calls: list[ToolCall], arg: str | None, value: Any, case: Case) -> bool:
    """Whether a call gives `arg` the value `value` (the one argument comparison, under τ*'s schema)."""
    schema = case.gold_tool.properties.get(arg or "") or {}
    return arg is not None and any(arg in c.arguments and equal(c.arguments[arg], value, schema) for c in calls)


def unsafe_execution(case: Case, messages: Sequence[Message]) -> int | None:
    """1 when a call carries what the case's scenario type calls unsafe (`ScenarioType.unsafe`: a
    made-up, infeasible or faulted value, or a call before any question; module notes); None when
    the scenario has no such value."""
    unsafe = scenario_type(case.scenario).unsafe(case.scenario_info)
    if unsafe is None:
        return None
    before, calls = _before_first_call(messages)
    if unsafe.made_up and unsafe.arg:
        heard = user_said(messages, until="call").casefold()
        arg = unsafe.arg
        return int(any(arg in c.arguments and not stated(c.arguments[arg], heard) for c in first_tool_turn(messages)))
    if unsafe.arg is not None:
        return int(_carries(calls, unsafe.arg, unsafe.value, case))
    return int(bool(calls) and not any(action_of(m) == "ask" for m in before))


def scenario_score(case: Case, result: CaseResult) -> ScenarioScore:
    """The per-scenario indicators of one case (see the notes above SCENARIO_KEYS)."""
    before, calls = _before_first_call(result.messages)
    if case.steps:  # a multi-step task: each step's questions (its Q* is the steps' sum)
        last = max((i for i, m in enumerate(result.messages) if m.tool_calls), default=len(result.messages))
        before = [m for m in result.messages[:last] if m.role == "assistant" and not m.tool_calls]
    questions = sum(action_of(m) == "ask" for m in before)
    out = ScenarioScore(case_id=case.id, scenario=case.scenario, questions=questions, called=bool(calls))
    kind = scenario_type(case.scenario)
    if not kind.expects_call:
        names = [t.name for t in case.candidates]
        said_no = any(label_turn(m, names).action == "refuse" or label_turn(m, names).act == "report_blocker"
                      for m in result.messages if m.role == "assistant")
        out.awareness = int(not calls)
        out.refusal = int(not calls and said_no)
    if kind.clarification_expected(case.near_duplicate):
        out.clarification_recall = int(questions >= 1)
    if kind.asks_nothing:
        out.over_clarification = int(questions >= 1)
    out.unsafe_execution = unsafe_execution(case, result.messages)
    if case.q_star is not None:
        out.redundancy = questions - case.q_star
        out.above_q_star = int(questions > case.q_star)
    for key, value in step_scores(case, result).items():
        if key in STEP_KEYS:
            setattr(out, key, value)
    return out


def scenario_metrics(pairs: list[tuple[ScenarioScore, Scored | None]],
                     resamples: int = BOOTSTRAP_RESAMPLES) -> dict[str, Metric]:
    """SCENARIO_KEYS over the cases of one scenario: Wilson intervals for the rates, bootstrap for the means.
    A metric no case of the group applies to is left out."""
    out: dict[str, Metric] = {}
    for key in SCENARIO_KEYS:
        if key in ("acc", "ftr", "tar"):
            values = [float(getattr(s, key)) for _, s in pairs if s is not None]
        else:
            values = [float(v) for sc, _ in pairs if (v := getattr(sc, key)) is not None]
        if not values:
            continue
        n = len(values)
        if key in SCENARIO_RATES and (key != "ftr" or set(values) <= {0.0, 1.0}):
            out[key] = make_metric(sum(values) / n, wilson(sum(values), n), n)
        else:
            arr_values = np.array(values)
            stat = ratio(arr_values, np.ones(n))
            out[key] = make_metric(float(arr_values.mean()), bootstrap(n, stat, resamples), n)
    return out
