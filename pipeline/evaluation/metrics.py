"""The DiaFORGE Appendix C.1 metrics of a model's results on a benchmark, with 95% intervals.

Definitions (d a scored case, τ* its gold tool, V* its gold argument map):
- c(d): the model's FIRST assistant turn that holds a tool call, as (tools, args): `tools` the set of
  distinct tool names called in that turn, `args` name -> argument map. ∅ when no turn calls a tool.
  The calls are `CaseResult.first_calls` when the runner filled them, else read from the messages.
- Acc(d) = 1[c(d) = g(d)]: tools == {τ*} and args[τ*] equals V* key by key, complete and with no
  extra key. Values are compared by the one schema-aware comparison the toolargs validator uses
  (`arguments.equal` under τ*'s parameter schemas; its docstring has the rules): numbers by value
  (5 == 5.0 == "5" under an integer or number schema), strings stripped with case kept and
  compared as text ("5" != "5.0" under `type: string`), dates by the day they denote, enum members
  case-insensitively when the enum's members stay distinct under case-folding, booleans only equal
  booleans, lists element-wise, objects key by key. The map must also validate against τ*'s schema,
  as the validator requires (`arguments.correct_arguments`): "eur" names the member "EUR" but is not
  a spelling the API accepts, so Acc(d) = 0. A tool called twice in the turn with different
  arguments has no single argument map: Acc(d) = 0.
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
  (`text.TOKEN`: runs of letters and digits, with inner apostrophes, hyphens or dots); n-grams never
  cross a turn boundary.

Intervals (95%): Wilson score intervals for the rates Acc and TAR, and for FTR when every case's count
is 0 or 1 (it is then a rate); for FTR as a mean of counts, the TCP..PKR ratios and ConvRel, a
percentile bootstrap over cases (`BOOTSTRAP_RESAMPLES` resamples with `BOOTSTRAP_SEED`, the metric
recomputed on each); for TTR and NGD, the delete-one jackknife normal interval over cases (a
bootstrap resample repeats dialogues, which adds tokens but never new types, so bootstrapped type
ratios are biased low and their interval can miss the value itself). Results with `flagged` (dynamic: a user-side hallucination) or `error`
set are excluded from every metric and counted in `counts`.

Per scenario type (`MetricsReport.scenarios`): awareness, refusal, clarification recall,
over-clarification, unsafe execution, questions per dialogue and redundancy against Q*, defined
in `scenario_metrics`. Intervals are computed in `intervals`; c(d) and the per-case indicators in
`scoring`. Unavailable-tool cases have no gold call: they are kept out of every
C.1 metric (`counts.awareness_only`) and scored by awareness only.

Imported BFCL cases (`Case.answer`) also get bfcl_acc(d) = 1[`scoring.bfcl_correct`(d, c(d))]: BFCL's AST
rules on the same calls (acceptable values per argument, `""` optional, loose strings, an int for a float,
parallel calls in any order, no call for irrelevance, some call for live_relevance). `bfcl` holds its mean
with a Wilson interval over every scored imported case (`all`) and per BFCL category. Only the imported
cases with exactly one gold call enter the C.1 metrics (their τ* and V*: that call and its first acceptable
values); parallel and irrelevance cases are scored by bfcl_acc (and the scenario metrics) alone.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..core.errors import InputError
from ..scenarios import get as scenario_type
from ..scenarios import names
from .cases import Case, CaseResult
from .intervals import BOOTSTRAP_RESAMPLES, Distinct, Metric, bootstrap, make_metric, ratio, wilson
from .scenario_metrics import ScenarioScore, scenario_metrics, scenario_score
from .scoring import Scored, bfcl_correct, prediction, score_case

METRIC_KEYS = ("acc", "ftr", "tar", "tcp", "tcr", "pkp", "pkr", "conv_rel", "ttr", "ngd_2", "ngd_3", "ngd_4")
TOOL_METRICS = ("tcp", "tcr", "pkp", "pkr", "acc", "ftr", "tar")   # the paper's Table 1 / Table 2 order
TEXT_METRICS = ("conv_rel", "ttr", "ngd_2", "ngd_3", "ngd_4")      # Table 3
LOWER_IS_BETTER = frozenset({"ftr", "tar"})
BREAKDOWNS = ("line_of_business", "near_duplicate", "required_parameters")


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
    # imported BFCL cases: "all" and each category -> bfcl_acc; per case id, its 0/1 verdict
    bfcl: dict[str, Metric] = Field(default_factory=dict)
    bfcl_scores: dict[str, int] = Field(default_factory=dict)


def corpus_metrics(scored: list[Scored], resamples: int = BOOTSTRAP_RESAMPLES) -> dict[str, Metric]:
    """Every metric of METRIC_KEYS over `scored` (see the module docstring)."""
    n = len(scored)
    out: dict[str, Metric] = {}

    def arr(attr: str) -> np.ndarray:
        return np.array([float(getattr(s, attr)) for s in scored])

    for key in ("acc", "tar"):
        hits = int(arr(key).sum()) if n else 0
        out[key] = make_metric(hits / n if n else None, wilson(hits, n) if n else (None, None), n)
    ftr = arr("ftr")
    if n and set(ftr.tolist()) <= {0.0, 1.0}:
        out["ftr"] = make_metric(float(ftr.mean()), wilson(float(ftr.sum()), n), n)
    else:
        ones = np.ones(n)
        out["ftr"] = make_metric(float(ftr.mean()) if n else None, bootstrap(n, ratio(ftr, ones), resamples), n)
    for key, num, den in (("tcp", "hit", "called"), ("tcr", "hit", None), ("pkp", "keys_hit", "keys_predicted"),
                          ("pkr", "keys_hit", "keys_gold")):
        numerator, denominator = arr(num), (arr(den) if den else np.ones(n))
        stat = ratio(numerator, denominator)
        out[key] = make_metric(stat(np.ones(n)) if n else None, bootstrap(n, stat, resamples), n)
    rated = [s.conv_rel for s in scored if s.conv_rel is not None]
    values = np.array(rated, dtype=float)
    out["conv_rel"] = make_metric(float(values.mean()) if rated else None,
                              bootstrap(len(rated), ratio(values, np.ones(len(rated))), resamples), len(rated))
    for size, key in ((1, "ttr"), (2, "ngd_2"), (3, "ngd_3"), (4, "ngd_4")):
        stat = Distinct([s.ngrams[size - 1] for s in scored]) if n else None
        out[key] = make_metric(stat(np.ones(n)) if stat else None, stat.jackknife() if stat else (None, None), n)
    return {key: out[key] for key in METRIC_KEYS}


def _groups(scored: list[Scored]) -> dict[str, dict[str, list[Scored]]]:
    out: dict[str, dict[str, list[Scored]]] = {b: {} for b in BREAKDOWNS}
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
    scored: list[Scored] = []
    per_scenario: dict[str, list[tuple[ScenarioScore, Scored | None]]] = {}
    flagged = errored = 0
    bfcl: dict[str, int] = {}
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
            if case.answer is not None:
                bfcl[case.id] = int(bfcl_correct(case, prediction(r)))
    counts = {
        "cases": len(cases), "results": len(results), "scored": len(scored), "excluded": flagged + errored,
        "flagged": flagged, "errored": errored, "missing": len(cases) - len(seen),
        "aligned": sum(s.aligned for s in scored), "with_call": sum(not s.tar for s in scored),
        "near_duplicate": sum(s.case.near_duplicate for s in scored),
        "awareness_only": sum(len(p) for name, p in per_scenario.items() if not scenario_type(name).expects_call),
    }
    breakdowns = {name: {group: corpus_metrics(members, resamples) for group, members in groups.items()}
                  for name, groups in _groups(scored).items()}
    return MetricsReport(
        metrics=corpus_metrics(scored, resamples), counts=counts, breakdowns=breakdowns,
        scores=[CaseScore(case_id=s.case.id, acc=s.acc, ftr=s.ftr, tar=s.tar, conv_rel=s.conv_rel,
                          aligned=s.aligned) for s in scored],
        scenarios={name: scenario_metrics(per_scenario[name], resamples) for name in names() if name in per_scenario},
        scenario_scores=[sc for name in names() for sc, _ in per_scenario.get(name, [])],
        bfcl=bfcl_metrics(by_id, bfcl), bfcl_scores=bfcl,
    )


def bfcl_metrics(cases: dict[str, Case], verdicts: dict[str, int]) -> dict[str, Metric]:
    """bfcl_acc with its Wilson interval over every judged imported case ("all") and per BFCL category."""
    groups: dict[str, list[int]] = {}
    for case_id, ok in verdicts.items():
        answer = cases[case_id].answer
        groups.setdefault("all", []).append(ok)
        groups.setdefault(answer.category if answer else "?", []).append(ok)
    return {name: make_metric(sum(v) / len(v), wilson(sum(v), len(v)), len(v)) for name, v in groups.items()}


MetricsReport.model_rebuild()
