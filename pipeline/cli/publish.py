"""`utcgen publish DIR --repo-id ORG/NAME`: a finished dataset folder uploaded to the Hub, the token
from HF_TOKEN only (the command's help: parsers.PUBLISH_HELP)."""

from __future__ import annotations

import argparse
import sys

from ..export.hub import bounded_connect, publish_dataset


def run(args: argparse.Namespace) -> int:
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
