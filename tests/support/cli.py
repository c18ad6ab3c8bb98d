"""The `utcgen` console script of the environment running the tests: commands run as a user runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

UTCGEN = str(Path(sys.executable).with_name("utcgen"))
REPO = Path(__file__).resolve().parents[2]


def generate_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of an offline `utcgen generate`: its own reply cache under tmp_path, no model override."""
    env = dict(os.environ)
    env.update(UTCGEN_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True",
               **extra)
    env.pop("UTCGEN_MODEL", None)
    env.pop("UTCGEN_API_BASE", None)
    return env


def generate(tmp_path: Path, out: Path, *extra: str, env: dict[str, str] | None = None,
             **kw) -> subprocess.CompletedProcess:
    """`utcgen generate --out OUT --no-progress EXTRA...`, run from the repository like a user would."""
    cmd = [UTCGEN, "generate", "--out", str(out), "--no-progress", *extra]
    return subprocess.run(cmd, cwd=REPO, env=env or generate_env(tmp_path), capture_output=True, text=True,
                          timeout=300, **kw)
