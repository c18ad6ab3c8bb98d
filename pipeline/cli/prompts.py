"""`utcgen prompts show|export`: one role's prompt for a sampled seed job (`synthesis.preview`), or the
shipped templates written out to edit (the command's help: parsers.PROMPTS_HELP)."""

from __future__ import annotations

import argparse
import json
import sys

from ..settings.config import load_config
from ..settings.templates import export_prompts
from ..synthesis.preview import preview


def run(args: argparse.Namespace) -> int:
    """`utcgen prompts show|export`."""
    return {"show": _show, "export": _export}[args.prompts_command](args)


def _show(args: argparse.Namespace) -> int:
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
    written = export_prompts(args.dir, force=args.force)
    print(f"{len(written)} templates -> {args.dir}; name it as prompts_dir: in a run config and edit any of them",
          file=sys.stderr)
    return 0
