"""`utcgen publish DIR --repo-id ORG/NAME`: upload a finished dataset folder to the Hub.

The token comes only from HF_TOKEN (or a stored `hf auth login`), never from a flag,
so it does not end up in shell history or the process list.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .checks import number

DEFAULT_CONNECT_TIMEOUT = 20.0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "publish",
        help="upload a dataset folder to a Hugging Face dataset repo (token from HF_TOKEN)",
        description=__doc__,
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
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..export.hub import bounded_connect, publish_dataset

    with bounded_connect(args.connect_timeout):
        result = publish_dataset(args.folder, args.repo_id, private=args.private, revision=args.revision,
                                 commit_message=args.message)
    print(
        f"published {len(result.files_uploaded)} files to {result.repo_id}@{result.revision}"
        + (f", deleted {len(result.files_deleted)} stale" if result.files_deleted else ""),
        file=sys.stderr,
    )
    print(result.commit_url)
    return 0
