"""`utcgen generate`: synthesise, validate and export a dataset, resumably."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from ..core.progress import Progress
from ..settings.config import BudgetSettings, ExportSettings, RunConfig
from ..settings.models import LLMSettings
from .checks import check_catalog_nesting, check_tokenizer, choices, field, number, quiet_progress_bars


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="generate validated dialogues into a dataset folder",
                       description="Generate disambiguation-centric tool-calling dialogues. Re-running the "
                                   "same command on the same --out resumes where it stopped.")
    p.add_argument("--config", help="YAML run configuration (default: configs/default.yaml)")
    p.add_argument("--catalog", help="tool catalog file or folder")
    p.add_argument("--personas", help="personas JSONL")
    p.add_argument("--persona-field", metavar="NAME",
                   help="field holding each persona's text (default: text, persona or input persona)")
    p.add_argument("--num-dialogues", type=field(lambda: RunConfig, "num_dialogues"), help="accepted dialogues to produce")
    p.add_argument("--out", help="output folder (a Hugging Face dataset repository layout)")
    p.add_argument("--seed", type=field(lambda: RunConfig, "seed"))
    p.add_argument("--exclude-split", metavar="PATH",
                   help="a benchmark's split.json (utcgen eval build): its held-out tools are neither seed tools "
                        "nor distractors of this run")
    p.add_argument("--skip-invalid", action="store_true", default=None,
                   help="leave out catalog tools that cannot be imported (listed at start-up) instead of refusing "
                        "the catalog; the run still needs two usable tools")
    p.add_argument("--verbose", action="store_true",
                   help="print every catalog warning and skipped tool at start-up, not a summary")
    p.add_argument("--model", metavar="MODEL", help="litellm model for every role (over UTCGEN_MODEL and the config)")
    p.add_argument("--max-in-flight", type=field(lambda: LLMSettings, "max_in_flight"),
                   help="most LLM calls in flight per endpoint (adapts below it on rate limits)")
    p.add_argument("--max-cost", type=field(lambda: BudgetSettings, "max_cost_usd"), metavar="USD",
                   help="stop before the run's spend (resumes included) would pass this many US dollars")
    p.add_argument("--max-tokens", type=field(lambda: BudgetSettings, "max_tokens"), metavar="N",
                   help="stop before the run's prompt + completion tokens (resumes included) would pass N")
    p.add_argument("--workers", type=number(int, [("ge", 1)]), default=1, metavar="N",
                   help="run seed jobs in N processes (default 1: this one alone), for CPU-bound runs such as the "
                        "offline backend; the dataset is the same as with one. Each worker has its own "
                        "llm.max_in_flight call slots")
    p.add_argument("--estimate", action="store_true",
                   help=f"run {ESTIMATE_JOBS} seed jobs in a temporary folder and print the expected calls, tokens "
                        "and cost of the whole run; writes nothing into --out")
    p.add_argument("--allow-config-change", action="store_true",
                   help="resume into an --out made with a different configuration (API base, sampling, ...)")
    p.add_argument("--force", action="store_true",
                   help="write into an existing, non-empty --out that is not a utcgen run folder (its README.md and "
                        "stats.json are replaced; files utcgen did not write are never deleted)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress: no bar on a terminal, no progress lines in a log, none of the embedding "
                        "model's loading bars either")
    p.add_argument("--sft-format", choices=choices(ExportSettings, "sft_format"),
                   help="sft rows: chat (native tool_calls and reasoning_content, default) or json (one JSON reply)")
    p.add_argument("--tokenizer", metavar="PATH",
                   help="local tokenizer folder for the card's token-length statistics (default: a byte estimate)")
    p.set_defaults(func=run)


ESTIMATE_JOBS = 3


def run(args: argparse.Namespace) -> int:
    from ..settings.config import load_config

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
        import logging

        logging.getLogger("utcgen.catalog").setLevel(logging.DEBUG)
    if args.no_progress:
        quiet_progress_bars()
    check_tokenizer(config.export.tokenizer, "--tokenizer" if args.tokenizer else "export.tokenizer")
    check_catalog_nesting(config.catalog, "--catalog" if args.catalog else "catalog")
    if args.estimate:
        return _estimate(config)
    return _generate(args, config)


def _generate(args: argparse.Namespace, config: RunConfig) -> int:
    """The run itself (`api.run_generation`, which holds the folder's lock), with a progress bar and log lines."""
    from ..api import run_generation

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


def _estimate(config) -> int:
    """Runs the first seed jobs into a temporary folder and scales their spend to the whole run."""
    import tempfile

    from ..core.records import Usage
    from ..synthesis.run import Engine
    from ..synthesis.schedule import MIN_RATE

    n = config.num_dialogues
    with tempfile.TemporaryDirectory(prefix="utcgen-estimate-") as tmp:
        sample = config.model_copy(deep=True, update={"out": tmp})
        sample.llm.cache = False  # a cached reply costs nothing and would hide the real price
        print(f"utcgen: estimating from {ESTIMATE_JOBS} seed jobs in a temporary folder "
              f"(backend {config.backend()}); nothing is written into {config.out}", file=sys.stderr)
        engine = Engine(sample)
        try:
            start = time.monotonic()
            records = asyncio.run(_sample(engine, ESTIMATE_JOBS))
            elapsed = time.monotonic() - start
        finally:
            engine.close()
    usage = Usage.total(d.generation.usage for r in records for d in r.dialogues)
    accepted = sum(r.accepted for r in records)
    rate = max(MIN_RATE, accepted / len(records))
    jobs = n / rate
    scale = jobs / len(records)
    print(f"sample: {len(records)} seed jobs, {accepted} accepted, {usage.calls} calls, "
          f"{usage.total_tokens:,} tokens, ${usage.cost_usd:.4f} in {elapsed:.1f}s", file=sys.stderr)
    rate_note = "" if accepted else f" (none accepted in the sample: assumed {MIN_RATE:.0%})"
    print(f"estimate for {n} accepted dialogues (acceptance {rate:.0%}{rate_note}, about {jobs:.0f} seed jobs): "
          f"{usage.calls * scale:,.0f} calls, {usage.prompt_tokens * scale:,.0f} prompt + "
          f"{usage.completion_tokens * scale:,.0f} completion tokens, ${usage.cost_usd * scale:.2f}")
    by_role: dict[str, Usage] = {}
    for r in records:
        for d in r.dialogues:
            for role, u in d.generation.usage_by_role.items():
                by_role.setdefault(role, Usage()).add(u)
    print(_role_table(by_role, scale, n))
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


async def _sample(engine, jobs: int):
    from ..llm.gateway import shutdown

    try:
        return await asyncio.gather(*(engine.run_job(job) for job in range(jobs)))
    finally:
        await shutdown()


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
