"""The `utcgen` console script of the environment running the tests: commands run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO

UTCGEN = str(Path(sys.executable).with_name("utcgen"))


# Set by conftest for the session: the embedding cache every `generate_env` run shares. It is content-addressed
# (model and text), so sharing changes no vector; without it each run embeds the shipped catalog and personas
# again, about 15 s of a cold offline run.
SHARED_EMBEDDINGS_ENV = "UTCGEN_TESTS_SHARED_EMBEDDINGS"


def fresh_cache(tmp_path: Path) -> Path:
    """`tmp_path/cache`, a UTCGEN_CACHE_DIR of its own (reply cache, ONNX files) with the session's embedding
    cache linked in."""
    cache = tmp_path / "cache"
    shared = os.environ.get(SHARED_EMBEDDINGS_ENV)
    if shared and not (cache / "embeddings").exists():
        cache.mkdir(parents=True, exist_ok=True)
        (cache / "embeddings").symlink_to(shared, target_is_directory=True)
    return cache


def generate_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of an offline `utcgen generate`: its own cache (`fresh_cache`), no model override."""
    env = dict(os.environ)
    env.update(UTCGEN_CACHE_DIR=str(fresh_cache(tmp_path)), HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True",
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


# People of a pet store, for runs on tests/fixtures/catalogs/store_openapi.yaml: the persona_fit check accepts
# them, so a small run spends its calls on dialogues, not on attempts rejected for a persona that fits no tool.
STORE_ROLES = (
    "A pet shop owner who adds new animals to the shop, keeps their records up to date and uploads their photos",
    "A pet store clerk who looks pets up by their id, marks them sold and handles customer orders",
    "A regular customer of an online pet store who keeps their user account, avatar and orders in order",
)


def write_store_personas(path: Path, n: int = 12, field: str = "persona", **extra: str) -> Path:
    """A persona file of `n` pet-store people (text under `field`, plus `extra` keys) at `path`."""
    rows = ({field: f"{STORE_ROLES[i % len(STORE_ROLES)]} (shift {i}).", **extra} for i in range(n))
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path
