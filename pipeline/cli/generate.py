"""`utcgen generate`: synthesise, validate and export a dataset, resumably."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="generate validated dialogues into a dataset folder",
                       description="Generate disambiguation-centric tool-calling dialogues. Re-running the "
                                   "same command on the same --out resumes where it stopped.")
    p.add_argument("--config", help="YAML run configuration (default: configs/default.yaml)")
    p.add_argument("--catalog", help="tool catalog file or folder")
    p.add_argument("--personas", help="personas JSONL")
    p.add_argument("--persona-field", metavar="NAME",
                   help="field holding each persona's text (default: text, persona or input persona)")
    p.add_argument("--num-dialogues", type=int, help="accepted dialogues to produce")
    p.add_argument("--out", help="output folder (a Hugging Face dataset repository layout)")
    p.add_argument("--seed", type=int)
    p.add_argument("--model", metavar="MODEL", help="litellm model for every role (over UTCGEN_MODEL and the config)")
    p.add_argument("--max-in-flight", type=int, help="LLM calls in flight")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--sft-format", choices=["chat", "json"],
                   help="sft rows: chat (native tool_calls and reasoning_content, default) or json (one JSON reply)")
    p.add_argument("--tokenizer", metavar="PATH",
                   help="local tokenizer folder for the card's token-length statistics (default: a byte estimate)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from utcgen.pipeline.config import load_config
    from utcgen.pipeline.synthesis.run import Engine

    config = load_config(args.config, {"catalog": args.catalog, "personas": args.personas,
                                       "persona_field": args.persona_field,
                                       "num_dialogues": args.num_dialogues, "out": args.out, "seed": args.seed},
                         model=args.model)
    if args.max_in_flight:
        config.llm.max_in_flight = args.max_in_flight
    if args.sft_format:
        config.export.sft_format = args.sft_format
    if args.tokenizer:
        config.export.tokenizer = args.tokenizer
    start = time.monotonic()
    print(f"utcgen: {config.num_dialogues} dialogues -> {config.out} "
          f"(backend {config.backend()}, catalog {config.catalog})", file=sys.stderr)
    engine = Engine(config)
    try:
        bar = _Bar(config.num_dialogues, enabled=not args.no_progress)
        records = asyncio.run(_run(engine, bar.update))
        bar.close()
        summary = engine.export(records, wall_time_s=round(time.monotonic() - start, 2))
    finally:
        engine.close()
    print(f"done: {summary.accepted} accepted, {summary.rejected} rejected, {summary.sft_rows} sft rows "
          f"in {time.monotonic() - start:.1f}s -> {summary.out_dir}", file=sys.stderr)
    return 0


async def _run(engine, on_progress):
    from utcgen.pipeline.llm.gateway import shutdown

    try:
        return await engine.run(on_progress)
    finally:
        await shutdown()


class _Bar:
    """A tqdm bar over accepted dialogues, with rejections, tokens and cost alongside."""

    def __init__(self, total: int, enabled: bool) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, unit="dlg", desc="accepted", disable=not enabled, file=sys.stderr,
                        dynamic_ncols=True)

    def update(self, p) -> None:
        self.bar.n = min(p.accepted, p.target)
        tokens = p.usage.prompt_tokens + p.usage.completion_tokens
        self.bar.set_postfix_str(f"rejected {p.rejected}, resumed {p.resumed_jobs} jobs, "
                                 f"tokens {tokens:,}, cost ${p.usage.cost_usd:.4f}", refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()
