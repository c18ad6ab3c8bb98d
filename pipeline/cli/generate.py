"""`utcgen generate`: synthesise, validate and export a dataset, resumably."""

from __future__ import annotations

import argparse
import logging
import sys
import time

from ..api import run_generation
from ..core.progress import Progress
from ..settings.config import RunConfig, load_config
from ..synthesis.estimate import estimate_run
from ..synthesis.schedule import MIN_RATE
from .checks import check_catalog_nesting, check_tokenizer
from .parsers import ESTIMATE_JOBS


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config, {"catalog": args.catalog, "personas": args.personas,
                                       "persona_field": args.persona_field,
                                       "num_dialogues": args.num_dialogues, "out": args.out, "seed": args.seed,
                                       "exclude_split": args.exclude_split, "skip_invalid": args.skip_invalid},
                         model=args.model)
    if args.max_in_flight:
        config.llm.max_in_flight = args.max_in_flight
    if args.sft_format:
        config.export.sft_format = args.sft_format
    if args.tokenizer:
        config.export.tokenizer = args.tokenizer
    if args.max_cost is not None:
        config.budget.max_cost_usd = args.max_cost
    if args.max_tokens is not None:
        config.budget.max_tokens = args.max_tokens
    if args.verbose:  # the catalog logs each warning, not a summary, when its logger is enabled for DEBUG

        logging.getLogger("utcgen.catalog").setLevel(logging.DEBUG)
    check_tokenizer(config.export.tokenizer, "--tokenizer" if args.tokenizer else "export.tokenizer")
    check_catalog_nesting(config.catalog, "--catalog" if args.catalog else "catalog")
    if args.estimate:
        return _estimate(config)
    return _generate(args, config)


def _generate(args: argparse.Namespace, config: RunConfig) -> int:
    """The run itself (`api.run_generation`, which holds the folder's lock), with a progress bar and log lines."""
    start = time.monotonic()
    print(f"utcgen: {config.num_dialogues} dialogues -> {config.out} "
          f"(backend {config.backend()}, catalog {config.catalog}"
          + (f", {args.workers} worker processes" if args.workers > 1 else "") + ")", file=sys.stderr)

    engines = []

    def started(engine) -> None:
        engines.append(engine)
        if config.exclude_split:
            print(f"utcgen: {engine.excluded} held-out tools of {config.exclude_split} removed from the catalog "
                  f"({len(engine.tools)} left)", file=sys.stderr)

    bar = _Bar(config.num_dialogues, enabled=not args.no_progress)
    try:  # a run stopped early still exports its finished jobs; the exit status (3 budget, 1) says why
        summary = run_generation(config, force=args.force, allow_config_change=args.allow_config_change,
                                 on_progress=bar.update, on_engine=started, workers=args.workers)
        bar.finish(summary.accepted, summary.rejected)  # the bar's last counts are the summary's
    finally:
        bar.close()
    if engines and engines[0].worker_jobs:
        print("workers: " + ", ".join(f"pid {pid} ran {jobs} jobs" for pid, jobs in engines[0].worker_jobs.items()),
              file=sys.stderr)
    print(f"done: {summary.accepted} accepted, {summary.rejected} rejected, {summary.sft_rows} sft rows, "
          f"{summary.preference_rows} preference pairs "
          f"in {time.monotonic() - start:.1f}s -> {summary.out_dir}", file=sys.stderr)
    return 0


def _estimate(config: RunConfig) -> int:
    """`--estimate`: the first seed jobs run into a temporary folder (`synthesis.estimate`), their spend
    scaled to the whole run, printed with a table by role."""
    print(f"utcgen: estimating from {ESTIMATE_JOBS} seed jobs in a temporary folder "
          f"(backend {config.backend()}); nothing is written into {config.out}", file=sys.stderr)
    e = estimate_run(config, ESTIMATE_JOBS)
    usage, scale = e.usage, e.scale
    print(f"sample: {e.jobs} seed jobs, {e.accepted} accepted, {usage.calls} calls, "
          f"{usage.total_tokens:,} tokens, ${usage.cost_usd:.4f} in {e.elapsed:.1f}s", file=sys.stderr)
    rate_note = "" if e.accepted else f" (none accepted in the sample: assumed {MIN_RATE:.0%})"
    print(f"estimate for {e.target} accepted dialogues (acceptance {e.rate:.0%}{rate_note}, about {e.seed_jobs:.0f} "
          f"seed jobs): {usage.calls * scale:,.0f} calls, {usage.prompt_tokens * scale:,.0f} prompt + "
          f"{usage.completion_tokens * scale:,.0f} completion tokens, ${usage.cost_usd * scale:.2f}")
    print(_role_table(e.by_role, scale, e.target))
    return 0


def _role_table(by_role, scale: float, accepted: int) -> str:
    """The estimate role by role: calls, tokens and cost for the whole run and per accepted dialogue."""
    head = ("role", "calls", "prompt tok", "completion tok", "cost $", "calls/dlg", "tokens/dlg", "$/dlg")
    rows: list[tuple[str, ...]] = [head]
    for role in sorted(by_role):
        u = by_role[role]
        calls, prompt, completion, cost = (u.calls * scale, u.prompt_tokens * scale,
                                           u.completion_tokens * scale, u.cost_usd * scale)
        rows.append((role, f"{calls:,.0f}", f"{prompt:,.0f}", f"{completion:,.0f}", f"{cost:.2f}",
                     f"{calls / accepted:.1f}", f"{(prompt + completion) / accepted:,.0f}", f"{cost / accepted:.4f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in
                               enumerate(zip(row, widths))) for row in rows)


class _Bar:
    """Accepted dialogues as the run's progress (`core.progress`), moved by every LLM call: calls,
    tokens, cost, calls in flight and retries beside the count."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.progress = Progress(total, name="generate", counted="accepted", desc="accepted", unit="dlg",
                                 enabled=enabled)

    def update(self, p) -> None:
        u = p.spent if p.spent.calls else p.usage
        self.progress.update(p.accepted, f"rejected {p.rejected}, calls {u.calls:,} ({p.calls_in_flight} in flight, "
                                         f"{p.retries} retries), tokens {u.total_tokens:,}, cost ${u.cost_usd:.4f}"
                                         + (f", resumed {p.resumed} jobs" if p.resumed else "")
                                         + (f"; {p.note.upper()}" if p.note else ""))

    def finish(self, accepted: int, rejected: int) -> None:
        """The exported counts: jobs that finished past the N-th accepted dialogue are not in the dataset,
        nor are their rejected attempts, so the running count can be higher than the summary's."""
        note = self.progress.note
        tail = note.split(", ", 1)[1] if note.startswith("rejected ") and ", " in note else note
        self.progress.update(accepted, f"rejected {rejected}" + (f", {tail}" if tail else ""), force=True)
        self.close()

    def close(self) -> None:
        self.progress.close()
