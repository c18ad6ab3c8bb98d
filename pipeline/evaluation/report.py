"""An evaluation run's report files, and a side-by-side comparison of several runs.

`write_run` writes, each atomically, into the run folder:
- `metrics.json`: every C.1 metric as {value, low, high, n} under `metrics`, the counts (scored,
  excluded: flagged and errored, missing), breakdowns (line of business, near-duplicate or not,
  required parameters), the per-scenario metrics under `scenarios` ({name: {metric: {value, low, high,
  n}}}), error-pattern totals over the scored cases, usage, wall time, model, mode;
- `dialogues.parquet`: one row per case (transcript, the first tool turn's calls, the reference,
  the dialogue-level indicators and the pattern counts), for reading failures one by one;
- `report.md`: the paper's Table 1 (TCP TCR PKP PKR Acc FTR TAR) and Table 3 (ConvRel TTR NGD_2..4)
  with 95% intervals, one table per scenario type, the breakdowns and the error patterns, and `tradeoff.png` (DiaFORGE Fig. 3:
  Acc against 1 - TAR, the marker's area growing with FTR).
A benchmark imported from BFCL adds `bfcl_acc` (BFCL's AST rules, `scoring.bfcl_correct`) under `metrics`,
per category under `bfcl`, per case in dialogues.parquet (beside `source_id`, the BFCL id), and a table in
report.md. `eval compare` lives in `evaluation.compare`.
"""

from __future__ import annotations

import io
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import pyarrow as pa
from jinja2 import FunctionLoader
from matplotlib.figure import Figure
from pydantic import BaseModel, ConfigDict

from .. import __version__
from ..core.files import write_atomic
from ..core.records import Usage
from ..export.folder import finite, write_parquet
from ..scenarios import names as scenario_names
from ..settings.templates import jinja_environment
from .cases import Case, CaseResult
from .metrics import (
    LOWER_IS_BETTER,
    METRIC_KEYS,
    TEXT_METRICS,
    TOOL_METRICS,
    Metric,
    MetricsReport,
    compute_metrics,
)
from .patterns import PATTERNS, MissingAs, count_patterns
from .scenario_metrics import SCENARIO_KEYS

METRICS_FILE = "metrics.json"
DIALOGUES_FILE = "dialogues.parquet"
REPORT_FILE = "report.md"
PLOT_FILE = "tradeoff.png"
REPORT_TEMPLATE = "report.md.j2"  # with report_bfcl.md.j2 and report_scenarios.md.j2
SCENARIO_TEMPLATE = "report_scenarios.md.j2"
LABELS = {"acc": "Acc", "ftr": "FTR", "tar": "TAR", "tcp": "TCP", "tcr": "TCR", "pkp": "PKP", "pkr": "PKR",
          "conv_rel": "ConvRel", "ttr": "TTR", "ngd_2": "NGD_2", "ngd_3": "NGD_3", "ngd_4": "NGD_4"}
SCENARIO_LABELS = {"acc": "Acc", "ftr": "FTR", "tar": "TAR", "awareness": "awareness", "refusal": "refusal",
                   "clarification_recall": "clarification recall", "over_clarification": "over-clarification",
                   "unsafe_execution": "unsafe execution", "questions": "questions / dialogue",
                   "redundancy": "questions − Q*", "above_q_star": "share above Q*",
                   "step1_tool": "step 1 tool", "step1_args": "step 1 arguments (tool right)",
                   "step2_tool": "step 2 tool", "step2_args": "step 2 arguments (tool right)",
                   "step2_fed": "step 2 value from the first result", "final_call": "final call right"}
SCENARIO_LOWER_IS_BETTER = frozenset({"ftr", "tar", "over_clarification", "unsafe_execution", "above_q_star"})


def better_direction(key: str) -> str:
    """The arrow after a scenario metric's name: questions have no better direction, redundancy is best at 0."""
    if key == "questions":
        return ""
    if key == "redundancy":
        return " (best 0)"
    return " (↓)" if key in SCENARIO_LOWER_IS_BETTER else " (↑)"
BREAKDOWN_TITLES = {"line_of_business": "Line of business", "near_duplicate": "Near-duplicate distractor",
                    "required_parameters": "Required parameters of τ*"}


class RunReport(BaseModel):
    """What `write_run` wrote: the metrics and where the files are."""

    model_config = ConfigDict(extra="forbid")

    out_dir: str
    model: str
    mode: str
    metrics: dict[str, Metric]
    counts: dict[str, int]
    patterns: dict[str, int]
    scenarios: dict[str, dict[str, Metric]] = {}
    bfcl: dict[str, Metric] = {}
    metrics_path: str
    dialogues_path: str
    report_path: str
    plot_path: str

    def to_text(self) -> str:
        shown = ", ".join(f"{LABELS[k]} {metric_cell(self.metrics[k])}" for k in ("acc", "ftr", "tar"))
        if "all" in self.bfcl:
            shown += f", bfcl_acc {metric_cell(self.bfcl['all'])}"
        return (f"{self.model} ({self.mode}): {self.counts['scored']} of {self.counts['cases']} cases scored "
                f"({self.counts['excluded']} excluded); {shown}; report {self.report_path}")


# ---------------------------------------------------------------------------------------- formatting


def _num(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def metric_cell(m: Metric | dict[str, Any] | None, digits: int = 2) -> str:
    """`0.83 [0.71, 0.91]`; a dash when undefined."""
    if m is None:
        return "–"
    m = m if isinstance(m, dict) else m.model_dump()
    if m.get("value") is None:
        return "–"
    if m.get("low") is None or m.get("high") is None:
        return _num(m["value"], digits)
    return f"{_num(m['value'], digits)} [{_num(m['low'], digits)}, {_num(m['high'], digits)}]"


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _metric_header(keys: tuple[str, ...]) -> list[str]:
    return [f"{LABELS[k]} ({'↓' if k in LOWER_IS_BETTER else '↑'})" for k in keys]


# ---------------------------------------------------------------------------------------- files


def _rows(cases: list[Case], results: dict[str, CaseResult], metrics: MetricsReport) -> list[dict[str, Any]]:
    scores = {s.case_id: s for s in metrics.scores}
    bfcl = metrics.bfcl_scores
    per_scenario = {s.case_id: s for s in metrics.scenario_scores}
    rows = []
    for case in cases:
        r = results.get(case.id)
        s = scores.get(case.id)
        row = {
            "case_id": case.id,
            "model": r.model if r else None,
            "mode": r.mode if r else None,
            "transcript": json.dumps([m.model_dump(exclude_none=True) for m in r.messages] if r else [],
                                     ensure_ascii=False, default=str),
            "first_calls": [{"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False, default=str)}
                            for c in (r.first_calls if r else [])],
            "source_id": case.source_id,
            "bfcl_category": case.answer.category if case.answer else None,
            "bfcl_acc": bfcl.get(case.id),
            "gold_tool": case.gold_tool.name,
            "gold_arguments": json.dumps(case.gold_arguments, ensure_ascii=False, default=str),
            "line_of_business": case.line_of_business,
            "near_duplicate": case.near_duplicate,
            "required_parameters": case.n_required,
            "scenario": case.scenario,
            "questions": per_scenario[case.id].questions if case.id in per_scenario else None,
            "acc": s.acc if s else None, "ftr": s.ftr if s else None, "tar": s.tar if s else None,
            "conv_rel": s.conv_rel if s else None,
            "flagged": r.flagged if r else None,
            "error": (r.error if r else "no result"),
            "elapsed_s": r.elapsed_s if r else None,
        }
        row.update({p: (r.patterns.get(p, 0) if r else None) for p in PATTERNS})
        rows.append(row)
    return rows


def _schema():
    text, whole = pa.string(), pa.int64()
    fields = [("case_id", text), ("model", text), ("mode", text), ("transcript", text),
              ("first_calls", pa.list_(pa.struct([("name", text), ("arguments", text)]))),
              ("source_id", text), ("bfcl_category", text), ("bfcl_acc", whole),
              ("gold_tool", text), ("gold_arguments", text), ("line_of_business", text),
              ("near_duplicate", pa.bool_()), ("required_parameters", whole), ("scenario", text),
              ("questions", whole), ("acc", whole), ("ftr", whole),
              ("tar", whole), ("conv_rel", pa.float64()), ("flagged", text), ("error", text),
              ("elapsed_s", pa.float64())]
    fields += [(p, whole) for p in PATTERNS]
    return pa.schema(fields)


def tradeoff_png(points: list[tuple[str, dict[str, Any]]]) -> bytes:
    """DiaFORGE Fig. 3 for the given runs: Acc (y) against 1 - TAR (x), marker area growing with FTR,
    95% intervals as error bars. `points`: (label, metrics as in metrics.json)."""
    fig = Figure(figsize=(6, 5))
    ax = fig.subplots()
    for label, m in points:
        acc, tar, ftr = m["acc"], m["tar"], m["ftr"]
        if acc["value"] is None or tar["value"] is None:
            continue
        x, y = 1 - tar["value"], acc["value"]
        xerr = [[max(0.0, x - (1 - tar["high"]))], [max(0.0, (1 - tar["low"]) - x)]] if tar["low"] is not None else None
        yerr = [[max(0.0, y - acc["low"])], [max(0.0, acc["high"] - y)]] if acc["low"] is not None else None
        ax.errorbar([x], [y], xerr=xerr, yerr=yerr, fmt="none", ecolor="grey", elinewidth=0.8, capsize=2)
        size = 60 + 600 * min(2.0, ftr["value"] or 0.0)
        ax.scatter([x], [y], s=size, alpha=0.6, edgecolors="black", linewidths=0.6)
        ax.annotate(f"{label}\nFTR {_num(ftr['value'])}", (x, y), textcoords="offset points", xytext=(8, 6),
                    fontsize=8)
    ax.plot([0, 1], [0, 1], linestyle=":", color="grey", linewidth=0.8)  # Acc can never exceed 1 - TAR
    ax.set_xlim(-0.02, 1.05)
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlabel("1 − TAR (share of dialogues with a tool call)")
    ax.set_ylabel("Acc")
    ax.set_title("Accuracy against willingness to call (marker area: FTR)")
    ax.grid(alpha=0.3)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight")
    return buf.getvalue()


# report.md's templates (package data beside this module), in the Jinja set-up prompts use too
_TEMPLATES = jinja_environment(
    FunctionLoader(lambda name: files(__name__.rpartition(".")[0]).joinpath(name).read_text(encoding="utf-8")))


def render_report(data: dict[str, Any]) -> str:
    """report.md from metrics.json's content (report.md.j2; the tables made here)."""
    m, counts = data["metrics"], data["counts"]
    line = (f"{counts['scored']} of {counts['cases']} cases scored; excluded {counts['excluded']} "
            f"(flagged by the user-side check {counts['flagged']}, errors {counts['errored']}), "
            f"without a result {counts['missing']}"
            + (f"; {counts['awareness_only']} unavailable-tool cases scored by awareness only"
               if counts.get("awareness_only") else "")
            + (f"; BFCL's rules judged {data['bfcl']['all']['n']} imported cases (the C.1 metrics only those with "
               "exactly one gold call)" if (data.get("bfcl") or {}).get("all") else "")
            + f". Wall time {_num(data.get('wall_time_s'), 1)} s; "
            f"{data['usage']['calls']} model calls, {data['usage']['total_tokens']:,} tokens, "
            f"${data['usage']['cost_usd']:.4f}.")
    breakdowns = []
    for name, groups in data["breakdowns"].items():
        title = BREAKDOWN_TITLES.get(name) or str(name)
        keys = ("acc", "ftr", "tar", "pkp", "pkr")
        breakdowns.append((title.lower(), markdown_table([title, "n", *(LABELS[k] for k in keys)],
                                                 [[group, str(g["acc"]["n"]), *(metric_cell(g[k]) for k in keys)]
                                                  for group, g in groups.items()]) if groups else "(no scored case)"))
    totals = data["patterns"]
    return _TEMPLATES.get_template(REPORT_TEMPLATE).render(
        model=data["model"], mode=data["mode"], counts=line, plot=PLOT_FILE, conv_rel_n=m["conv_rel"]["n"],
        tool_table=markdown_table(["Model", *_metric_header(TOOL_METRICS)], [[data["model"], *(metric_cell(m[k]) for k in TOOL_METRICS)]]),
        text_table=markdown_table(["Model", *_metric_header(TEXT_METRICS)], [[data["model"], *(metric_cell(m[k]) for k in TEXT_METRICS)]]),
        bfcl_table=_bfcl_table(data.get("bfcl") or {}), scenario_sections=_scenario_sections(data.get("scenarios") or {}),
        breakdowns=breakdowns, scored=counts["scored"], model_turns=data.get("model_turns") or 0,
        missing_required_as=data["missing_required_as"],
        patterns_table=markdown_table(["pattern", "count", "dialogues"],
                              [[p, str(totals[p]), str(data["pattern_dialogues"][p])] for p in PATTERNS]))


def _bfcl_table(bfcl: dict[str, dict[str, Any]]) -> str:
    """bfcl_acc over the imported BFCL cases, all and per category; empty without any."""
    if not bfcl:
        return ""
    rows = [[name, metric_cell(m), str(m["n"])] for name, m in sorted(bfcl.items(), key=lambda kv: kv[0] != "all")]
    return markdown_table(["category", "bfcl_acc [95% CI]", "n"], rows)


def _scenario_sections(scenarios: dict[str, dict[str, Any]]) -> list[tuple[str, str, bool]]:
    """(scenario type, its table of metric, value with interval and n, whether questions − Q* is below 0),
    the registered types first."""
    known = scenario_names()
    out = []
    for name in [*(n for n in known if n in scenarios), *(n for n in scenarios if n not in known)]:
        metrics = scenarios[name]
        rows = [[f"{SCENARIO_LABELS.get(k, k)}{better_direction(k)}", metric_cell(metrics[k]),
                 str(metrics[k]["n"])] for k in SCENARIO_KEYS if k in metrics]
        below = (metrics.get("redundancy") or {}).get("value") is not None and metrics["redundancy"]["value"] < 0
        out.append((name, markdown_table(["metric", "value [95% CI]", "n"], rows), below))
    return out


def scenario_tables(scenarios: dict[str, dict[str, Any]]) -> str:
    """report.md's section of one table per scenario type (metric, value with interval, n); empty without any."""
    return _TEMPLATES.get_template(SCENARIO_TEMPLATE).render(scenario_sections=_scenario_sections(scenarios))


def write_run(out: Path, cases: list[Case], results: list[CaseResult], *, model: str, mode: str,
              wall_time_s: float, settings: dict[str, Any] | None = None,
              missing_required_as: MissingAs = "missing_argument") -> RunReport:
    """Score `results` on `cases` and write metrics.json, dialogues.parquet, report.md and tradeoff.png.

    Fills each result's `patterns` (error-pattern counts of its calls) on the way."""
    out = Path(out)
    by_id = {c.id: c for c in cases}
    for r in results:
        if r.case_id in by_id:
            r.patterns = count_patterns(by_id[r.case_id], r, missing_required_as)
    metrics = compute_metrics(cases, results)
    scored = [r for r in results if r.error is None and r.flagged is None]
    totals = {p: sum(r.patterns.get(p, 0) for r in scored) for p in PATTERNS}
    data = finite({
        "model": model, "mode": mode, "utcgen_version": __version__,
        "metrics": {**{k: metrics.metrics[k].model_dump() for k in METRIC_KEYS},
                    **({"bfcl_acc": metrics.bfcl["all"].model_dump()} if "all" in metrics.bfcl else {})},
        "counts": metrics.counts,
        "breakdowns": {name: {g: {k: v.model_dump() for k, v in ms.items()} for g, ms in groups.items()}
                       for name, groups in metrics.breakdowns.items()},
        "scenarios": {name: {k: v.model_dump() for k, v in ms.items()} for name, ms in metrics.scenarios.items()},
        "bfcl": {name: m.model_dump() for name, m in metrics.bfcl.items()},
        "patterns": totals,
        "pattern_dialogues": {p: sum(bool(r.patterns.get(p)) for r in scored) for p in PATTERNS},
        "missing_required_as": missing_required_as,
        "model_turns": sum(m.role == "assistant" for r in scored for m in r.messages),
        "usage": Usage.total(r.usage for r in results).report(),
        "wall_time_s": round(wall_time_s, 3),
        "settings": settings or {},
    })
    paths = {name: out / name for name in (METRICS_FILE, DIALOGUES_FILE, REPORT_FILE, PLOT_FILE)}
    write_atomic(paths[METRICS_FILE], json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    write_parquet(paths[DIALOGUES_FILE], _rows(cases, {r.case_id: r for r in results}, metrics), _schema())
    write_atomic(paths[PLOT_FILE], tradeoff_png([(model, data["metrics"])]))
    write_atomic(paths[REPORT_FILE], render_report(data))
    return RunReport(out_dir=str(out), model=model, mode=mode, metrics=metrics.metrics, counts=metrics.counts,
                     scenarios=metrics.scenarios, bfcl=metrics.bfcl,
                     patterns=totals, metrics_path=str(paths[METRICS_FILE]),
                     dialogues_path=str(paths[DIALOGUES_FILE]), report_path=str(paths[REPORT_FILE]),
                     plot_path=str(paths[PLOT_FILE]))
