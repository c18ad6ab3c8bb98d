"""`utcgen eval`: build a held-out benchmark (or import one from BFCL), evaluate a model on it (static or
dynamic), compare runs.

Output folders default to places under `eval-out/` (git-ignored, removed by `make clean`, outside the
dataset folder `output/` that `utcgen publish` uploads), so the README's commands never write into the
repository's own folders.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..core.errors import InputError
from ..core.progress import Progress
from ..settings.models import OFFLINE_MODEL
from .checks import field, number, pair

DEFAULT_BENCH = "eval-out/bench"
DEFAULT_RUNS = "eval-out/runs"


def default_run_folder(model: str, mode: str) -> str:
    """eval-out/runs/<model with / and : as ->-<mode>: one folder per model and mode unless --out says otherwise."""
    slug = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in model).strip("-")
    return f"{DEFAULT_RUNS}/{slug}-{mode}"


def _settings():
    from ..evaluation.run import EvalSettings

    return EvalSettings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="benchmark a tool-calling model on held-out dialogues",
                       description="Evaluate tool-calling models (DiaFORGE §3.3): build a benchmark from accepted "
                                   "dialogues, run a model on it statically or dynamically, compare runs.")
    eval_sub = p.add_subparsers(dest="eval_command", required=True)

    b = eval_sub.add_parser("build", help="build a benchmark folder from a generated dataset folder")
    b.add_argument("--from", dest="source", required=True, metavar="DIR", help="a dataset folder made by generate")
    b.add_argument("--out", default=DEFAULT_BENCH, metavar="DIR", help=f"the benchmark folder to write (default {DEFAULT_BENCH})")
    b.add_argument("--by", choices=["family", "line_of_business"], default="family",
                   help="hold out whole near-duplicate families (default) or lines of business")
    b.add_argument("--holdout", type=number(float, [("gt", 0), ("lt", 1)]), default=0.2, help="share of groups held out (default 0.2)")
    b.add_argument("--seed", type=number(int), default=0)
    b.add_argument("--catalog", metavar="PATH", help="the catalog the dataset was made from (for the families)")
    b.set_defaults(func=build)

    r = eval_sub.add_parser("run", help="evaluate a model on a benchmark; re-running resumes",
                            description="Evaluate one model on a benchmark folder. Re-running the same command on "
                                        "the same --out resumes where it stopped.")
    r.add_argument("--benchmark", required=True, metavar="DIR", help="a benchmark folder made by `utcgen eval build`")
    r.add_argument("--model", required=True, metavar="MODEL",
                   help="litellm model (openai/..., utcgen-offline/default), reference/<policy> or hf:PATH")
    r.add_argument("--mode", choices=["static", "dynamic"], required=True)
    r.add_argument("--out", metavar="DIR", help="the run folder (results/, metrics.json, report.md); default "
                   f"{DEFAULT_RUNS}/<model>-<mode>")
    r.add_argument("--api-base", metavar="URL", help="the model under test's server (litellm models)")
    r.add_argument("--tool-format", choices=["json", "native"],
                   help="json: calls in the JSON reply (default for litellm models); native: the API's tool calls "
                        "(default for hf:)")
    r.add_argument("--user-model", default=OFFLINE_MODEL, metavar="M", help="dynamic: the user proxy")
    r.add_argument("--voter-model", metavar="M", help="dynamic: the voter (default: the user model)")
    votes = r.add_mutually_exclusive_group()
    votes.add_argument("--votes", type=pair, default="3,3", metavar="N,M", help="dynamic: N drafts, M voters (default 3,3)")
    votes.add_argument("--no-voting", action="store_true", help="dynamic: one draft per user turn")
    r.add_argument("--rubric-model", default=OFFLINE_MODEL, metavar="M", help="the ConvRel judge")
    r.add_argument("--no-conv-rel", action="store_true", help="skip ConvRel (no rubric calls)")
    r.add_argument("--max-turns", type=field(_settings, "max_turns", int), default=10, help="dynamic: most assistant turns (default 10)")
    r.add_argument("--limit", type=field(_settings, "limit", int), metavar="N", help="the first N cases only")
    r.add_argument("--max-in-flight", type=number(int, [("ge", 1)]), metavar="K",
                   help="cases evaluated at once (default 8; 1 for hf: models, which generate one reply at a "
                        "time, so that each case's elapsed time is its own)")
    r.add_argument("--max-new-tokens", type=field(_settings, "max_new_tokens", int), default=256, metavar="N", help="hf: tokens generated per turn")
    r.add_argument("--seed", type=field(_settings, "seed", int), default=0, help="dynamic: seeds the proxy's drafts and the voters' orders")
    r.add_argument("--config", metavar="PATH", help="YAML run config for the judge-side calls (llm settings)")
    r.add_argument("--allow-config-change", action="store_true",
                   help="resume into an --out made with other settings")
    r.add_argument("--no-progress", action="store_true", help="no progress: no bar on a terminal, no progress lines in a log")
    r.set_defaults(func=run)

    i = eval_sub.add_parser("import", help="import a benchmark from another format (BFCL)",
                            description="Turn another benchmark's files into a utcgen benchmark folder.")
    i_sub = i.add_subparsers(dest="import_format", required=True)
    bf = i_sub.add_parser("bfcl", help="a Berkeley Function-Calling Leaderboard file (v3 or v4, JSON lines)",
                          description="Import one BFCL questions file (simple, multiple, parallel, parallel_multiple, "
                                      "irrelevance and the live_ categories). Multi-turn categories need BFCL's "
                                      "executable environments and are refused.")
    bf.add_argument("questions", metavar="QUESTIONS.json", help="a BFCL questions file (one entry per line)")
    bf.add_argument("--answers", metavar="ANSWERS.json",
                    help="its possible_answer file (default: possible_answer/<same name> beside QUESTIONS.json)")
    bf.add_argument("--category", metavar="NAME", help="the BFCL category (default: from the file name or the ids)")
    bf.add_argument("--out", default=None, metavar="DIR", help="the benchmark folder (default eval-out/bfcl-<category>)")
    bf.add_argument("--skip-invalid", action="store_true",
                    help="leave out (and list) entries whose functions fail the catalog checks instead of stopping")
    bf.set_defaults(func=import_bfcl)

    c = eval_sub.add_parser("compare", help="compare evaluation runs side by side (markdown)")
    c.add_argument("runs", nargs="+", metavar="RUN", help="run folders made by `utcgen eval run`")
    c.add_argument("--out", metavar="FILE", help="write the markdown here instead of printing it")
    c.set_defaults(func=compare)


def build(args: argparse.Namespace) -> int:
    from ..evaluation import benchmark

    source = Path(args.source)
    if not source.is_dir():
        raise InputError(f"--from {source}: no such folder")
    summary = benchmark.build_benchmark(source, Path(args.out), by=args.by, holdout=args.holdout, seed=args.seed,
                                        catalog=Path(args.catalog) if args.catalog else None)
    print(summary.to_text())
    return 0


def import_bfcl(args: argparse.Namespace) -> int:
    from ..evaluation import bfcl

    questions = Path(args.questions)
    if not questions.is_file():
        raise InputError(f"QUESTIONS.json {questions}: no such file")
    if args.answers and not Path(args.answers).is_file():
        raise InputError(f"--answers {args.answers}: no such file")
    summary = bfcl.import_bfcl(questions, Path(args.out) if args.out else None,
                               answers=Path(args.answers) if args.answers else None, category=args.category,
                               skip_invalid=args.skip_invalid)
    print(summary.to_text())
    return 0


def run(args: argparse.Namespace) -> int:
    from ..api import evaluate

    start = time.monotonic()
    args.out = args.out or default_run_folder(args.model, args.mode)
    print(f"utcgen eval: {args.model} ({args.mode}) on {args.benchmark} -> {args.out}", file=sys.stderr)
    bar = _Bar(enabled=not args.no_progress)
    try:
        report = evaluate(
            args.benchmark, args.model, args.mode, args.out,
            max_in_flight=args.max_in_flight or (1 if args.model.startswith("hf:") else 8),
            allow_config_change=args.allow_config_change, on_progress=bar.update, api_base=args.api_base,
            tool_format=args.tool_format, user_model=args.user_model, voter_model=args.voter_model,
            votes=None if args.no_voting else args.votes,
            rubric_model=None if args.no_conv_rel else args.rubric_model, max_turns=args.max_turns,
            max_new_tokens=args.max_new_tokens, seed=args.seed, config=args.config, limit=args.limit)
    finally:
        bar.close()
    print(summary_line(report, Path(args.out), time.monotonic() - start))
    return 0


def summary_line(report, out: Path, elapsed: float) -> str:
    """Acc, FTR and TAR with their 95% intervals, the excluded cases, and where the report is."""
    parts = []
    for name in ("acc", "ftr", "tar"):
        m = report.metrics.get(name)
        if m is None or m.value is None:
            parts.append(f"{name.upper()} n/a")
            continue
        interval = f" [{m.low:.3f}, {m.high:.3f}]" if m.low is not None and m.high is not None else ""
        parts.append(f"{name.upper()} {m.value:.3f}{interval}")
    b = (getattr(report, "bfcl", None) or {}).get("all")
    if b is not None and b.value is not None:
        parts.append(f"bfcl_acc {b.value:.3f} [{b.low:.3f}, {b.high:.3f}] (n={b.n})")
    c = report.counts
    excluded = f" ({c.get('errored', 0)} errored, {c.get('flagged', 0)} flagged)" if c.get("excluded") else ""
    from .. import scenarios

    headline = []  # each scenario type's own headline metric
    for name, metrics in (getattr(report, "scenarios", None) or {}).items():
        key = scenarios.get(name).headline if name in scenarios.names() else "acc"
        if key in metrics and metrics[key].value is not None:
            headline.append(f"{name} {key.replace('_', ' ')} {metrics[key].value:.2f} (n={metrics[key].n})")
    scenarios = f"\nper scenario: {'; '.join(headline)}" if len(headline) > 1 else ""
    scope = " by the C.1 metrics" if b is not None else ""  # BFCL's parallel and irrelevance cases are not
    return (f"{c.get('scored', 0)} of {c.get('cases', 0)} cases scored{scope}{excluded} in {elapsed:.1f}s: "
            f"{', '.join(parts)}{scenarios}\nreport: {report.report_path}")


def compare(args: argparse.Namespace) -> int:
    from ..evaluation import compare as comparing

    runs = [Path(r) for r in args.runs]
    for folder in runs:
        if not (folder / "metrics.json").is_file():
            raise InputError(f"{folder}: not an evaluation run folder (no metrics.json); make one with `utcgen eval run`")
    text = comparing.compare(runs)
    warning = comparing.coverage_warning(runs)
    if warning:
        print(warning, file=sys.stderr)
    if args.out:
        from ..core.files import write_atomic

        write_atomic(Path(args.out), text)
        print(f"comparison written to {args.out}", file=sys.stderr)
    else:
        print(text)
    return 0


class _Bar:
    """Cases evaluated as the run's progress (`core.progress`), moved by every model call: calls, tokens,
    cost and in-flight counts beside the count."""

    def __init__(self, enabled: bool) -> None:
        self.progress = Progress(None, name="eval", counted="evaluated", desc="evaluated", unit="case",
                                 enabled=enabled)

    def update(self, p) -> None:
        u = p.spent
        self.progress.update(p.done, f"calls {u.calls:,} ({p.calls_in_flight} in flight), cases in flight "
                                     f"{p.in_flight}, tokens {u.total_tokens:,}, cost ${u.cost_usd:.4f}"
                                     + (f", errors {p.errors}" if p.errors else "")
                                     + (f", resumed {p.resumed}" if p.resumed else ""), total=p.target)

    def close(self) -> None:
        self.progress.close()
