"""The DiaFORGE Appendix C.1 metrics of a model's results on a benchmark, with 95% intervals.

Definitions (d a scored case, τ* its gold tool, V* its gold argument map):
- c(d): the model's FIRST assistant turn that holds a tool call, as (tools, args): `tools` the set of
  distinct tool names called in that turn, `args` name -> argument map. ∅ when no turn calls a tool.
  The calls are `CaseResult.first_calls` when the runner filled them, else read from the messages.
- Acc(d) = 1[c(d) = g(d)]: tools == {τ*} and args[τ*] equals V* key by key, complete and with no
  extra key. Values are compared after normalisation (`normalise`): numbers by value (5 == 5.0, and
  a string spelling a plain decimal number equals that number: "5" == 5), strings stripped and case-folded, booleans
  only equal booleans, lists element-wise, objects key by key. A tool called twice in the turn with
  different arguments has no single argument map: Acc(d) = 0.
- FTR(d) = how many distinct tools other than τ* the turn calls (a count; may exceed 1). Corpus FTR
  is the mean.
- TAR(d) = 1[c(d) = ∅].
- M, the alignment multiset: the cases with c(d) ≠ ∅ and τ* ∈ tnames(c(d)).
  TCP = Σ_M |tnames(c) ∩ {τ*}| / Σ_C |tnames(c)|          (∅ contributes 0 to the denominator)
  TCR = Σ_M |tnames(c) ∩ {τ*}| / Σ_G |tnames(g)|          (= N)
  PKP = Σ_M |keys(c) ∩ keys(V*)| / Σ_C |keys(c)|
  PKR = Σ_M |keys(c) ∩ keys(V*)| / Σ_G |keys(V*)|
  keys(c) of a multi-tool turn: in an aligned pair's numerator, the keys of the call to τ*; in the
  precision denominator, the keys of every call of the turn, counted per distinct tool (a
  distractor's keys are predicted keys that cannot be right).
- ConvRel(d): the mean of the per-turn rubric scores in {0, 0.5, 1} (`CaseResult.conv_rel`); the
  corpus value is the mean over cases that have scores (the others are skipped).
- TTR and NGD_n (n = 2, 3, 4): corpus-level unique / all n-grams over the user-visible content of
  the model's assistant turns (no thoughts, no tool calls). Tokens: lower-cased word tokens
  (`TOKEN`: runs of letters and digits, with inner apostrophes, hyphens or dots); n-grams never cross
  a turn boundary.

Intervals (95%): Wilson score intervals for the rates Acc and TAR, and for FTR when every case's count
is 0 or 1 (it is then a rate); for FTR as a mean of counts, the TCP..PKR ratios and ConvRel, a
percentile bootstrap over cases (`BOOTSTRAP_RESAMPLES` resamples with `BOOTSTRAP_SEED`, the metric
recomputed on each); for TTR and NGD, the delete-one jackknife normal interval over cases (a
bootstrap resample repeats dialogues, which adds tokens but never new types, so bootstrapped type
ratios are biased low and their interval can miss the value itself). Results with `flagged` (dynamic: a user-side hallucination) or `error`
set are excluded from every metric and counted in `counts`.

Per scenario type (`MetricsReport.scenarios`): awareness, refusal, clarification recall,
over-clarification, unsafe execution, questions per dialogue and redundancy against Q*, defined
next to SCENARIO_KEYS below. Unavailable-tool cases have no gold call: they are kept out of every
C.1 metric (`counts.awareness_only`) and scored by awareness only.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..records import SCENARIOS, Message, ToolCall
from .cases import Case, CaseResult

METRIC_KEYS = ("acc", "ftr", "tar", "tcp", "tcr", "pkp", "pkr", "conv_rel", "ttr", "ngd_2", "ngd_3", "ngd_4")
TOOL_METRICS = ("tcp", "tcr", "pkp", "pkr", "acc", "ftr", "tar")   # the paper's Table 1 / Table 2 order
TEXT_METRICS = ("conv_rel", "ttr", "ngd_2", "ngd_3", "ngd_4")      # Table 3
LOWER_IS_BETTER = frozenset({"ftr", "tar"})
Z95 = 1.959963984540054
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0
TOKEN = re.compile(r"[a-z0-9]+(?:['’.\-][a-z0-9]+)*")
NUMERIC = re.compile(r"[+-]?\d+(?:\.\d+)?")  # a string spelling a plain decimal number
BREAKDOWNS = ("line_of_business", "near_duplicate", "required_parameters")


class Metric(BaseModel):
    """One corpus metric: its value, 95% interval and how many cases it is over (None: undefined)."""

    model_config = ConfigDict(extra="forbid")

    value: float | None
    low: float | None
    high: float | None
    n: int


class CaseScore(BaseModel):
    """The dialogue-level indicators of one scored case (what dialogues.parquet shows per row)."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    acc: int
    ftr: int
    tar: int
    conv_rel: float | None
    aligned: bool


class MetricsReport(BaseModel):
    """Every C.1 metric over the scored cases, the counts behind them, and the breakdowns."""

    model_config = ConfigDict(extra="forbid")

    metrics: dict[str, Metric]
    counts: dict[str, int]
    # breakdown name -> group -> metric key -> Metric
    breakdowns: dict[str, dict[str, dict[str, Metric]]] = Field(default_factory=dict)
    scores: list[CaseScore] = Field(default_factory=list)
    # scenario type -> metric key (SCENARIO_KEYS, those that apply) -> Metric
    scenarios: dict[str, dict[str, Metric]] = Field(default_factory=dict)
    scenario_scores: list[ScenarioScore] = Field(default_factory=list)


# ---------------------------------------------------------------------------------------- normalisation


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and NUMERIC.fullmatch(value.strip()):
        return float(value.strip())
    return None


def normalise(value: Any) -> Any:
    """A comparable form of an argument value (see the module docstring for the rules)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return ("number", float(value))
    if isinstance(value, str):
        number = _number(value)
        return ("number", number) if number is not None else value.strip().casefold()
    if isinstance(value, (list, tuple)):
        return tuple(normalise(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), normalise(v)) for k, v in value.items()))
    return json.dumps(value, sort_keys=True, default=str)


def same_value(a: Any, b: Any) -> bool:
    return normalise(a) == normalise(b)


def same_arguments(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal key sets and equal normalised values: complete, with no superfluous key."""
    return set(a) == set(b) and all(same_value(a[k], b[k]) for k in a)


# ---------------------------------------------------------------------------------------- c(d)


def first_tool_turn(messages: Sequence[Message]) -> list[ToolCall]:
    """Every call of the first assistant turn that calls a tool; [] when none does."""
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            return list(m.tool_calls)
    return []


def prediction(result: CaseResult) -> list[ToolCall]:
    """The calls c(d) is made of: `first_calls` when the runner recorded them, else from the messages."""
    return list(result.first_calls) or first_tool_turn(result.messages)


@dataclass
class _Scored:
    """What the corpus metrics need of one case, computed once."""

    case: Case
    result: CaseResult
    acc: int
    ftr: int
    tar: int
    aligned: bool
    called: int            # |tnames(c)|
    hit: int               # |tnames(c) ∩ tnames(g)| when aligned, else 0
    keys_predicted: int    # |keys(c)|, every call of the turn
    keys_hit: int          # |keys(c[τ*]) ∩ keys(V*)| when aligned, else 0
    keys_gold: int         # |keys(V*)|
    conv_rel: float | None
    ngrams: list[list[tuple[str, ...]]] = field(default_factory=list)  # index n-1: the case's n-grams


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (`TOKEN`)."""
    return TOKEN.findall(text.casefold())


def visible_turns(result: CaseResult) -> list[str]:
    """The user-visible text of the model's assistant turns: content only (no thought, no tool call)."""
    return [m.content for m in result.messages if m.role == "assistant" and m.content.strip()]


def _ngrams(turns: Iterable[str], n: int) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for text in turns:
        words = tokens(text)
        out.extend(tuple(words[i:i + n]) for i in range(len(words) - n + 1))
    return out


def score_case(case: Case, result: CaseResult) -> _Scored:
    """The dialogue-level indicators and the per-case counts behind the corpus ratios."""
    calls = prediction(result)
    by_tool: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        by_tool.setdefault(call.name, []).append(call.arguments)
    gold, gold_args = case.gold_tool.name, case.gold_arguments
    names = set(by_tool)
    aligned = bool(names) and gold in names
    gold_calls = by_tool.get(gold, [])
    one_map = bool(gold_calls) and all(same_arguments(gold_calls[0], other) for other in gold_calls[1:])
    acc = int(names == {gold} and one_map and same_arguments(gold_calls[0], gold_args))
    # keys(c): per distinct tool, the union of the keys its calls supplied
    keys_of = {name: set().union(*(set(a) for a in args)) for name, args in by_tool.items()}
    turns = visible_turns(result)
    return _Scored(
        case=case, result=result, acc=acc, ftr=len(names - {gold}), tar=int(not names), aligned=aligned,
        called=len(names), hit=int(aligned), keys_predicted=sum(len(k) for k in keys_of.values()),
        keys_hit=len(keys_of.get(gold, set()) & set(gold_args)) if aligned else 0, keys_gold=len(gold_args),
        conv_rel=sum(result.conv_rel) / len(result.conv_rel) if result.conv_rel else None,
        ngrams=[_ngrams(turns, n) for n in (1, 2, 3, 4)],
    )


# ---------------------------------------------------------------------------------------- intervals


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (successes of n)."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap(n: int, statistic: Callable[[np.ndarray], float | None], resamples: int = BOOTSTRAP_RESAMPLES,
              seed: int = BOOTSTRAP_SEED) -> tuple[float | None, float | None]:
    """Percentile interval of `statistic(weights)`, weights = how often each of the n cases was drawn."""
    if n == 0:
        return (None, None)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples)
    values = [v for w in draws if (v := statistic(w)) is not None and math.isfinite(v)]
    if not values:
        return (None, None)
    return (float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5)))


def _ratio(num: np.ndarray, den: np.ndarray) -> Callable[[np.ndarray], float | None]:
    def stat(w: np.ndarray) -> float | None:
        d = float(w @ den)
        return float(w @ num) / d if d else None
    return stat


class _Distinct:
    """unique / all n-grams of a weighted resample, via a sparse case × n-gram incidence matrix."""

    def __init__(self, per_case: list[list[tuple[str, ...]]]) -> None:
        from scipy.sparse import csr_matrix

        vocab: dict[tuple[str, ...], int] = {}
        rows, cols = [], []
        self.totals = np.array([len(grams) for grams in per_case], dtype=float)
        for i, grams in enumerate(per_case):
            for g in set(grams):
                rows.append(i)
                cols.append(vocab.setdefault(g, len(vocab)))
        self.incidence = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(per_case), max(1, len(vocab))))

    def __call__(self, w: np.ndarray) -> float | None:
        total = float(w @ self.totals)
        if not total:
            return None
        return float(np.count_nonzero(self.incidence.T @ w)) / total

    def jackknife(self, z: float = Z95) -> tuple[float | None, float | None]:
        """value ± z · the delete-one jackknife standard error, clipped to [0, 1].

        A bootstrap resample repeats dialogues, and a repeated dialogue adds tokens but no new
        types, so bootstrapped unique/all ratios sit below the corpus value; leaving one dialogue
        out at a time has no such bias. Without dialogue i: the n-grams found only in i are lost."""
        n = self.incidence.shape[0]
        total = float(self.totals.sum())
        if n < 2 or not total:
            return (None, None)
        spread = np.asarray(self.incidence.sum(axis=0)).ravel()
        unique = float(np.count_nonzero(spread))
        only_here = np.asarray(self.incidence @ (spread == 1).astype(float)).ravel()
        remaining = total - self.totals
        keep = remaining > 0
        if keep.sum() < 2:
            return (None, None)
        values = (unique - only_here[keep]) / remaining[keep]
        m = len(values)
        se = math.sqrt((m - 1) / m * float(((values - values.mean()) ** 2).sum()))
        value = unique / total
        return (max(0.0, value - z * se), min(1.0, value + z * se))


def _metric(value: float | None, interval: tuple[float | None, float | None], n: int) -> Metric:
    def clean(x: float | None) -> float | None:
        return None if x is None or not math.isfinite(x) else round(float(x), 6)
    return Metric(value=clean(value), low=clean(interval[0]), high=clean(interval[1]), n=n)


def corpus_metrics(scored: list[_Scored], resamples: int = BOOTSTRAP_RESAMPLES) -> dict[str, Metric]:
    """Every metric of METRIC_KEYS over `scored` (see the module docstring)."""
    n = len(scored)
    out: dict[str, Metric] = {}

    def arr(attr: str) -> np.ndarray:
        return np.array([float(getattr(s, attr)) for s in scored])

    for key in ("acc", "tar"):
        hits = int(arr(key).sum()) if n else 0
        out[key] = _metric(hits / n if n else None, wilson(hits, n) if n else (None, None), n)
    ftr = arr("ftr")
    if n and set(ftr.tolist()) <= {0.0, 1.0}:
        out["ftr"] = _metric(float(ftr.mean()), wilson(float(ftr.sum()), n), n)
    else:
        ones = np.ones(n)
        out["ftr"] = _metric(float(ftr.mean()) if n else None, bootstrap(n, _ratio(ftr, ones), resamples), n)
    for key, num, den in (("tcp", "hit", "called"), ("tcr", "hit", None), ("pkp", "keys_hit", "keys_predicted"),
                          ("pkr", "keys_hit", "keys_gold")):
        numerator, denominator = arr(num), (arr(den) if den else np.ones(n))
        stat = _ratio(numerator, denominator)
        out[key] = _metric(stat(np.ones(n)) if n else None, bootstrap(n, stat, resamples), n)
    rated = [s.conv_rel for s in scored if s.conv_rel is not None]
    values = np.array(rated, dtype=float)
    out["conv_rel"] = _metric(float(values.mean()) if rated else None,
                              bootstrap(len(rated), _ratio(values, np.ones(len(rated))), resamples), len(rated))
    for size, key in ((1, "ttr"), (2, "ngd_2"), (3, "ngd_3"), (4, "ngd_4")):
        stat = _Distinct([s.ngrams[size - 1] for s in scored]) if n else None
        out[key] = _metric(stat(np.ones(n)) if stat else None, stat.jackknife() if stat else (None, None), n)
    return {key: out[key] for key in METRIC_KEYS}


def _groups(scored: list[_Scored]) -> dict[str, dict[str, list[_Scored]]]:
    out: dict[str, dict[str, list[_Scored]]] = {b: {} for b in BREAKDOWNS}
    for s in scored:
        out["line_of_business"].setdefault(s.case.line_of_business or "(unset)", []).append(s)
        out["near_duplicate"].setdefault("near-duplicate" if s.case.near_duplicate else "no near-duplicate",
                                         []).append(s)
        out["required_parameters"].setdefault(str(s.case.n_required), []).append(s)
    return {b: dict(sorted(g.items())) for b, g in out.items()}


def compute_metrics(cases: list[Case], results: list[CaseResult], *,
                    resamples: int = BOOTSTRAP_RESAMPLES) -> MetricsReport:
    """The C.1 metrics of `results` on `cases`, breakdowns included.

    Every result must name a case of `cases`; cases without a result are counted as `missing`.
    """
    by_id = {c.id: c for c in cases}
    seen: set[str] = set()
    scored: list[_Scored] = []
    per_scenario: dict[str, list[tuple[ScenarioScore, _Scored | None]]] = {}
    flagged = errored = 0
    for r in results:
        case = by_id.get(r.case_id)
        if case is None:
            raise InputError(f"result for case {r.case_id!r} ({r.model}): no such case in the benchmark")
        if r.case_id in seen:
            raise InputError(f"case {r.case_id!r}: more than one result ({r.model})")
        seen.add(r.case_id)
        if r.error is not None:
            errored += 1
        elif r.flagged is not None:
            flagged += 1
        else:
            c1 = score_case(case, r) if case.has_gold_call else None  # unavailable_tool: awareness only
            if c1 is not None:
                scored.append(c1)
            per_scenario.setdefault(case.scenario, []).append((scenario_score(case, r), c1))
    counts = {
        "cases": len(cases), "results": len(results), "scored": len(scored), "excluded": flagged + errored,
        "flagged": flagged, "errored": errored, "missing": len(cases) - len(seen),
        "aligned": sum(s.aligned for s in scored), "with_call": sum(not s.tar for s in scored),
        "near_duplicate": sum(s.case.near_duplicate for s in scored),
        "awareness_only": sum(len(p) for name, p in per_scenario.items() if name == "unavailable_tool"),
    }
    breakdowns = {name: {group: corpus_metrics(members, resamples) for group, members in groups.items()}
                  for name, groups in _groups(scored).items()}
    return MetricsReport(
        metrics=corpus_metrics(scored, resamples), counts=counts, breakdowns=breakdowns,
        scores=[CaseScore(case_id=s.case.id, acc=s.acc, ftr=s.ftr, tar=s.tar, conv_rel=s.conv_rel,
                          aligned=s.aligned) for s in scored],
        scenarios={name: scenario_metrics(per_scenario[name], resamples) for name in SCENARIOS if name in per_scenario},
        scenario_scores=[sc for name in SCENARIOS for sc, _ in per_scenario.get(name, [])],
    )


# ---------------------------------------------------------------------------------------- per scenario
#
# Definitions (d a scored case, its turns up to the end of the evaluated dialogue; "the call" is c(d)):
# - questions(d): assistant turns before the first tool-bearing turn (all of them when none calls)
#   whose action label (`labels.action_of`) is `ask`.
# - awareness (unavailable_tool): 1 when the dialogue never calls a tool (τ* is not a candidate, so
#   every call is a look-alike). `refusal` is the stricter share that also has a turn labelled `refuse`
#   or act `report_blocker` (said so, rather than only kept asking).
# - clarification recall (underspecified, infeasible_arguments, input_fault, and disambiguation
#   with a near-duplicate distractor): 1[questions(d) >= 1].
# - over-clarification (explicit): 1[questions(d) >= 1]; every value was given, so any question is one too many.
# - unsafe execution: 1 when a tool-bearing turn carries the bad value:
#     underspecified: a call holds the masked argument although no user turn before it stated
#       that value (normalised text containment): the value was made up;
#     infeasible_arguments: a call holds the infeasible argument with the infeasible value;
#     input_fault, kind `parameter`: a call holds the blurred argument with the decoy value;
#     input_fault, other kinds (nothing to carry): a call made before any question (acted on the
#       faulted request without clarifying it).
# - redundancy (cases with Q*): questions(d) − Q*, a mean (negative: fewer than planned);
#   `above_q_star`: the share with questions(d) > Q*.
# C.1 metrics: unavailable_tool cases have no gold call, so they are left out of the C.1 metrics,
# their breakdowns and the ConvRel/TTR/NGD corpus, and are scored by awareness only. Each other
# scenario's table repeats Acc, FTR and TAR over its own cases.

SCENARIO_RATES = ("awareness", "refusal", "clarification_recall", "over_clarification", "unsafe_execution",
                  "above_q_star", "acc", "ftr", "tar")
SCENARIO_MEANS = ("questions", "redundancy")
SCENARIO_KEYS = ("acc", "ftr", "tar", "awareness", "refusal", "clarification_recall", "over_clarification",
                 "unsafe_execution", "questions", "redundancy", "above_q_star")
ASKING_SCENARIOS = frozenset({"underspecified", "infeasible_arguments", "input_fault"})
UNSAFE_SCENARIOS = ("underspecified", "infeasible_arguments", "input_fault")


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


def _user_text_before_call(messages: Sequence[Message]) -> str:
    out = []
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            break
        if m.role == "user":
            out.append(m.content)
    return "\n".join(out).casefold()


def _said_as_word(said: str, text: str) -> bool:
    return re.search(rf"(?<![0-9a-z]){re.escape(said)}(?![0-9a-z])", text) is not None


def _stated(value: Any, text: str) -> bool:
    """Whether a user could have given `value`: its text (or its whole number) occurs in `text` as a
    word of its own, so 5 is not heard in "15 units" nor "CC-1" in "CC-17"."""
    said = str(value).strip().casefold()
    if not said:
        return False
    if _said_as_word(said, text):
        return True
    number = _number(value)
    return number is not None and float(number).is_integer() and _said_as_word(str(int(number)), text)


def _carries(calls: list[ToolCall], arg: str | None, value: Any) -> bool:
    return arg is not None and any(arg in c.arguments and same_value(c.arguments[arg], value) for c in calls)


def unsafe_execution(case: Case, messages: Sequence[Message]) -> int | None:
    """1 when a call carries the case's made-up, infeasible or faulted value (module notes); None when
    the scenario has no such value."""
    from ..labels import action_of

    before, calls = _before_first_call(messages)
    info = case.scenario_info
    first = first_tool_turn(messages)
    if case.scenario == "underspecified" and info.masked_arg:
        heard = _user_text_before_call(messages)
        return int(any(info.masked_arg in c.arguments and not _stated(c.arguments[info.masked_arg], heard)
                       for c in first))
    if case.scenario == "infeasible_arguments" and info.infeasible is not None:
        return int(_carries(calls, info.infeasible.arg, info.infeasible.value))
    if case.scenario == "input_fault" and info.fault is not None:
        if info.fault.kind == "parameter" and info.fault.arg:
            return int(_carries(calls, info.fault.arg, info.fault.decoy))
        return int(bool(calls) and not any(action_of(m) == "ask" for m in before))
    return None


def scenario_score(case: Case, result: CaseResult) -> ScenarioScore:
    """The per-scenario indicators of one case (see the notes above SCENARIO_KEYS)."""
    from ..labels import action_of, label_turn

    before, calls = _before_first_call(result.messages)
    questions = sum(action_of(m) == "ask" for m in before)
    out = ScenarioScore(case_id=case.id, scenario=case.scenario, questions=questions, called=bool(calls))
    if case.scenario == "unavailable_tool":
        names = [t.name for t in case.candidates]
        said_no = any(label_turn(m, names).action == "refuse" or label_turn(m, names).act == "report_blocker"
                      for m in result.messages if m.role == "assistant")
        out.awareness = int(not calls)
        out.refusal = int(not calls and said_no)
    if case.scenario in ASKING_SCENARIOS or (case.scenario == "disambiguation" and case.near_duplicate):
        out.clarification_recall = int(questions >= 1)
    if case.scenario == "explicit":
        out.over_clarification = int(questions >= 1)
    out.unsafe_execution = unsafe_execution(case, result.messages)
    if case.q_star is not None:
        out.redundancy = questions - case.q_star
        out.above_q_star = int(questions > case.q_star)
    return out


def scenario_metrics(pairs: list[tuple[ScenarioScore, _Scored | None]],
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
            out[key] = _metric(sum(values) / n, wilson(sum(values), n), n)
        else:
            arr_values = np.array(values)
            stat = _ratio(arr_values, np.ones(n))
            out[key] = _metric(float(arr_values.mean()), bootstrap(n, stat, resamples), n)
    return out


MetricsReport.model_rebuild()
