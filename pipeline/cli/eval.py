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

from .. import scenarios
from ..api import evaluate
from ..core.errors import InputError
from ..core.files import write_atomic
from ..core.progress import Progress
from ..evaluation import benchmark, bfcl
from ..evaluation import compare as comparing
from .parsers import DEFAULT_RUNS


def default_run_folder(model: str, mode: str) -> str:
    """eval-out/runs/<model with / and : as ->-<mode>: one folder per model and mode unless --out says otherwise."""
    slug = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in model).strip("-")
    return f"{DEFAULT_RUNS}/{slug}-{mode}"


def run(args: argparse.Namespace) -> int:
    """`utcgen eval build|run|import bfcl|compare`."""
    commands = {"build": build, "run": run_model, "import": import_benchmark, "compare": compare_runs}
    return commands[args.eval_command](args)


def build(args: argparse.Namespace) -> int:
    source = Path(args.source)
    if not source.is_dir():
        raise InputError(f"--from {source}: no such folder")
    summary = benchmark.build_benchmark(source, Path(args.out), by=args.by, holdout=args.holdout, seed=args.seed,
                                        catalog=Path(args.catalog) if args.catalog else None)
    print(summary.to_text())
    return 0


def import_benchmark(args: argparse.Namespace) -> int:
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


def run_model(args: argparse.Namespace) -> int:
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
    headline = []  # each scenario type's own headline metric
    for name, metrics in (getattr(report, "scenarios", None) or {}).items():
        key = scenarios.get(name).headline if name in scenarios.names() else "acc"
        if key in metrics and metrics[key].value is not None:
            headline.append(f"{name} {key.replace('_', ' ')} {metrics[key].value:.2f} (n={metrics[key].n})")
    per_scenario = f"\nper scenario: {'; '.join(headline)}" if len(headline) > 1 else ""
    scope = " by the C.1 metrics" if b is not None else ""  # BFCL's parallel and irrelevance cases are not
    return (f"{c.get('scored', 0)} of {c.get('cases', 0)} cases scored{scope}{excluded} in {elapsed:.1f}s: "
            f"{', '.join(parts)}{per_scenario}\nreport: {report.report_path}")


def compare_runs(args: argparse.Namespace) -> int:
    runs = [Path(r) for r in args.runs]
    for folder in runs:
        if not (folder / "metrics.json").is_file():
            raise InputError(f"{folder}: not an evaluation run folder (no metrics.json); make one with `utcgen eval run`")
    text = comparing.compare(runs)
    warning = comparing.coverage_warning(runs)
    if warning:
        print(warning, file=sys.stderr)
    if args.out:
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
