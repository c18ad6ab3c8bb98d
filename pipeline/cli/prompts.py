"""`utcgen prompts show|export`: see what a model receives, and write out the templates to make your own.

`show` prints one role's prompt for one sampled seed job of the configuration (`synthesis.preview`):
the messages, and the reply's JSON Schema as response_format (or the tools of a native tool call).
`export DIR` writes the shipped templates into DIR; name DIR as `prompts_dir:` in a run config and
each file you edit there replaces the shipped one of its name."""

from __future__ import annotations

import argparse
import json
import sys

from ..settings.config import RunConfig
from ..settings.models import ROLES
from .checks import field


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser("prompts", help="show what a model receives; export the templates to edit",
                                   description=__doc__)
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
    show.set_defaults(func=_show)

    export = sub.add_parser("export", help="write the shipped templates into DIR, to edit and use as prompts_dir")
    export.add_argument("dir", metavar="DIR", help="the folder to write (made if missing)")
    export.add_argument("--force", action="store_true", help="overwrite templates already in DIR")
    export.set_defaults(func=_export)


def _show(args: argparse.Namespace) -> int:
    from ..settings.config import load_config
    from ..synthesis.preview import preview

    config = load_config(args.config, {"catalog": args.catalog, "seed": args.seed, "prompts_dir": args.prompts_dir,
                                       "scenarios": {args.scenario: 1.0} if args.scenario else None})
    shown = preview(config, args.role, args.phase)
    if args.json:
        print(json.dumps(shown.as_json(), indent=2, ensure_ascii=False))
    else:
        job = shown.job
        print(f"{args.role}{f' ({shown.phase})' if shown.phase else ''}: seed job {job['number']} of seed {config.seed}, "
              f"seed tool {job['seed_tool']}, scenario {job['scenario']}", file=sys.stderr)
        sys.stdout.write(shown.as_text())
    return 0


def _export(args: argparse.Namespace) -> int:
    from ..settings.templates import export_prompts

    written = export_prompts(args.dir, force=args.force)
    print(f"{len(written)} templates -> {args.dir}; name it as prompts_dir: in a run config and edit any of them",
          file=sys.stderr)
    return 0
