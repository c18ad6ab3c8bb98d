"""The `utcgen` command line: every command's flags, in one module that loads no command's work.

`utcgen --help` and a mistyped flag need only this module and the settings' field bounds (`checks`).
The command `utcgen NAME` is carried out by `cli/NAME.py`'s `run(args)`, which `cli.main` imports once
the line is parsed (`args.command`), so each command loads only what it uses.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import __version__
from ..evaluation.run_settings import EvalSettings
from ..export.fluency import TURNS as FLUENCY_TURNS
from ..ingest.formats import FORMATS
from ..retrieval.model import BACKENDS
from ..settings.config import BudgetSettings, ExportSettings, RunConfig
from ..settings.models import OFFLINE_MODEL, ROLES, LLMSettings
from .checks import choices, field, number, pair

DESCRIPTION = "The `utcgen` command. Each sub-command lives in its own module (cli/NAME.py)."
DEFAULT_BENCH = "eval-out/bench"
DEFAULT_RUNS = "eval-out/runs"
ESTIMATE_JOBS = 3  # seed jobs `generate --estimate` runs
DEFAULT_CONNECT_TIMEOUT = 20.0  # publish: seconds to reach the Hub
AUDIT_HELP = """`utcgen audit DIR`: every rule validator's pass rate on a dataset folder, each run on every dialogue.

Reads the dialogues of DIR in our record shape, from wherever they are: the exported
parquet splits (`data/dialogues/*.parquet` and `data/rejected/*.parquet`, any tool's
output with those columns), else the run journal (`journal/*.json`, every attempt), else
JSON Lines files of `Dialogue` records. Unlike the cascade, which stops at the first
failure, the audit runs every rule on every dialogue, so each rate is over all of them.
It also reports how often the opening user turn holds a word found only in the seed
tool's name versus only in a distractor's name (equal rates: names tell nothing), the
acceptance rate and turns per dialogue, and the data-quality figures of the set
(`export.quality`: seed tool closest to the user's words, description echoes, repeated
runs, shared and fractional gold values, opening variety, stock lines, fluency, acceptance), each
beside its target. Fluency scores at most --fluency-turns turns per role with a small language model
(the `fluency` extra; a second to load once converted, about 0.2 s a turn on two cores); --no-fluency
skips it.
"""

PROMPTS_HELP = """`utcgen prompts show|export`: see what a model receives, and write out the templates to make your own.

`show` prints one role's prompt for one sampled seed job of the configuration (`synthesis.preview`):
the messages, and the reply's JSON Schema as response_format (or the tools of a native tool call).
`export DIR` writes the shipped templates into DIR; name DIR as `prompts_dir:` in a run config and
each file you edit there replaces the shipped one of its name."""

PUBLISH_HELP = """`utcgen publish DIR --repo-id ORG/NAME`: upload a finished dataset folder to the Hub.

The token comes only from HF_TOKEN (or a stored `hf auth login`), never from a flag,
so it does not end up in shell history or the process list.
"""

VIEW_HELP = """`utcgen view DIR`: one static HTML page to browse a folder's dialogues (export.view)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="utcgen", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"utcgen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in (_audit, _catalog, _eval, _generate, _prompts, _publish, _view):
        command(sub)
    return parser


def _audit(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("audit", help="pass rate of every rule validator on a dataset folder",
                              description=AUDIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", help="an output folder (data/dialogues, data/rejected parquet; or journal/)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-fluency", dest="fluency_turns", action="store_const", const=0, default=FLUENCY_TURNS,
                   help="do not score fluency (no language model is loaded)")
    p.add_argument("--fluency-turns", type=number(int, [("ge", 1)]), default=FLUENCY_TURNS, metavar="N",
                   help=f"turns per role fluency scores, a seeded sample (default {FLUENCY_TURNS})")


def _catalog(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "catalog",
        help="validate a tool catalog, summarise it or convert it to the native format",
        description="Tool catalogs: native, OpenAI, MCP, OpenAPI 3.x or BFCL; a file or a directory.",
    )
    sub = parser.add_subparsers(dest="catalog_command", required=True)

    validate = sub.add_parser(
        "validate", help="check every tool; list all problems (exit status 2) or say OK"
    )
    _catalog_input(validate)

    stats = sub.add_parser("stats", help="summarise a catalog (tools, parameters, lines of business)")
    _catalog_input(stats)
    stats.add_argument("--json", action="store_true", help="print the statistics as JSON")
    stats.add_argument("--embeddings", choices=BACKENDS, default="torch",
                       help="how the embedding model runs, as `embeddings` in a run config (default: torch)")

    convert = sub.add_parser(
        "convert",
        help="write a catalog in any supported format as a native catalog file, to edit",
        description="Read a catalog (any supported format) and write its tools as a native catalog: "
                    "a JSON list, JSONL or YAML, chosen by the suffix of --out. The file is replaced "
                    "atomically; reading it back gives the same tools.",
    )
    _catalog_input(convert)
    convert.add_argument(
        "--out", required=True, metavar="FILE", help="native catalog to write (.json, .jsonl, .yaml or .yml)"
    )


def _catalog_input(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="catalog file (.json/.jsonl/.yaml/.yml) or directory")
    parser.add_argument(
        "--format", choices=FORMATS, default=None, help="skip detection: read every file as this format"
    )
    parser.add_argument(
        "--skip-invalid", action="store_true",
        help="leave out tools that cannot be imported (listed on stderr) instead of refusing the catalog; "
             "fails only if fewer than two usable tools remain",
    )
    parser.add_argument(
        "--verbose", action="store_true", help="print every warning and skipped tool, not a summary"
    )


def _eval_settings() -> type[EvalSettings]:
    return EvalSettings


def _eval(sub: argparse._SubParsersAction) -> None:
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
    r.add_argument("--max-turns", type=field(_eval_settings, "max_turns", int), default=10, help="dynamic: most assistant turns (default 10)")
    r.add_argument("--limit", type=field(_eval_settings, "limit", int), metavar="N", help="the first N cases only")
    r.add_argument("--max-in-flight", type=number(int, [("ge", 1)]), metavar="K",
                   help="cases evaluated at once (default 8; 1 for hf: models, which generate one reply at a "
                        "time, so that each case's elapsed time is its own)")
    r.add_argument("--max-new-tokens", type=field(_eval_settings, "max_new_tokens", int), default=256, metavar="N", help="hf: tokens generated per turn")
    r.add_argument("--seed", type=field(_eval_settings, "seed", int), default=0, help="dynamic: seeds the proxy's drafts and the voters' orders")
    r.add_argument("--config", metavar="PATH", help="YAML run config for the judge-side calls (llm settings)")
    r.add_argument("--allow-config-change", action="store_true",
                   help="resume into an --out made with other settings")
    r.add_argument("--no-progress", action="store_true", help="no progress: no bar on a terminal, no progress lines in a log")

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

    c = eval_sub.add_parser("compare", help="compare evaluation runs side by side (markdown)")
    c.add_argument("runs", nargs="+", metavar="RUN", help="run folders made by `utcgen eval run`")
    c.add_argument("--out", metavar="FILE", help="write the markdown here instead of printing it")


def _generate(sub: argparse._SubParsersAction) -> None:
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


def _prompts(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("prompts", help="show what a model receives; export the templates to edit",
                                   description=PROMPTS_HELP)
    sub = parser.add_subparsers(dest="prompts_command", required=True)

    show = sub.add_parser(
        "show", help="print one role's prompt for a sampled seed job (messages, response_format or tools)",
        description="Draws seed job 0 of the configuration as `utcgen generate` would, plays it once on the "
                    "offline backend (no model is called) and prints what ROLE receives: the user's opening, the "
                    "assistant's first turn of a phase after that opening, or a judge's prompt for the whole "
                    "dialogue. The templates are the config's (prompts_dir over the shipped ones).")
    show.add_argument("--role", required=True, choices=ROLES, help="the role whose prompt to print")
    show.add_argument("--phase", choices=("tool_selection", "argument_filling"),
                      help="user and assistant: the first turn of this phase (default: tool_selection)")
    show.add_argument("--scenario", metavar="S", help="play this scenario type (default: drawn from the config's mix)")
    show.add_argument("--catalog", metavar="C", help="a catalog file or folder, any format utcgen imports "
                                                     "(default: the config's)")
    show.add_argument("--seed", type=field(lambda: RunConfig, "seed"), metavar="N", help="the run seed (default: the config's)")
    show.add_argument("--config", metavar="F", help="YAML run configuration (default: configs/default.yaml)")
    show.add_argument("--prompts-dir", metavar="DIR", help="your own templates, as prompts_dir in the config")
    show.add_argument("--json", action="store_true",
                      help="print {messages, response_format, tools, job} as JSON")

    export = sub.add_parser("export", help="write the shipped templates into DIR, to edit and use as prompts_dir")
    export.add_argument("dir", metavar="DIR", help="the folder to write (made if missing)")
    export.add_argument("--force", action="store_true", help="overwrite templates already in DIR")


def _publish(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "publish",
        help="upload a dataset folder to a Hugging Face dataset repo (token from HF_TOKEN)",
        description=PUBLISH_HELP,
    )
    parser.add_argument("folder", type=Path, metavar="DIR", help="dataset folder written by `utcgen generate`")
    parser.add_argument("--repo-id", required=True, metavar="ORG/NAME", help="target dataset repo")
    parser.add_argument("--private", action="store_true", help="create the repo private (refuses an existing public one)")
    parser.add_argument("--revision", metavar="R", help="branch to commit to (created if missing; default main)")
    parser.add_argument("--message", metavar="M", help="commit message (default: row counts per config)")
    parser.add_argument(
        "--connect-timeout",
        type=number(float, [("gt", 0)]),
        default=DEFAULT_CONNECT_TIMEOUT,
        metavar="S",
        help=f"seconds to wait for a connection to the Hub (default {DEFAULT_CONNECT_TIMEOUT:g})",
    )


def _view(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("view", help="write one HTML page to browse a folder's dialogues",
                              description=VIEW_HELP)
    p.add_argument("dir", help="an output folder (data/dialogues, data/rejected parquet; or journal/)")
    p.add_argument("--out", metavar="FILE", help="the page to write (default: DIR.html beside the folder)")
