"""Prefect flows `publish-dataset` and `generate-and-publish`.

The Hugging Face token never travels as a flow parameter (parameters are stored by the
Prefect API and shown in its UI): it comes from a Prefect Secret block named by
`token_secret`, or else from HF_TOKEN / a stored `hf auth login` in the flow's
environment. It is never logged; `utcgen.pipeline.export.hub` scrubs it from every error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, cast

from prefect import flow, get_run_logger
from prefect.blocks.system import Secret

from ..pipeline.core.errors import InputError
from ..pipeline.export.hub import bounded_connect, publish_dataset, validate_dataset_repo_id
from .generate_dialogues import DEFAULT_BATCH_SIZE, generate_dialogues

DEFAULT_CONNECT_TIMEOUT = 20.0


def load_token(token_secret: str | None) -> str | None:
    """The token from the named Prefect Secret block; None means HF_TOKEN or a stored login."""
    if not token_secret:
        return None

    try:
        block = cast(Secret, Secret.load(token_secret))  # sync in a sync flow
    except ValueError as exc:  # Block.load raises ValueError for a missing block
        raise InputError(f"no Prefect Secret block named {token_secret!r}: create it with "
                         f"Secret(value=...).save({token_secret!r}) or in the UI (Blocks > Secret)") from exc
    value = block.get()
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"Prefect Secret block {token_secret!r} does not hold a token string")
    return value.strip()


@flow(name="publish-dataset")
def publish_dataset_flow(
    folder: str,
    repo_id: str,
    private: bool = False,
    revision: str | None = None,
    token_secret: str | None = None,
    commit_message: str | None = None,
    connect_timeout: float | None = DEFAULT_CONNECT_TIMEOUT,
) -> dict[str, Any]:
    """Validate `folder` and upload it to the dataset repo `repo_id` in one commit.

    `token_secret` names a Prefect Secret block holding the token; without it the token
    comes from HF_TOKEN (or a stored login) in the flow's environment."""
    logger = get_run_logger()
    token = load_token(token_secret)
    source = f"Secret block {token_secret!r}" if token_secret else "HF_TOKEN / stored login"
    logger.info("publishing %s to %s@%s (token from %s)", folder, repo_id, revision or "main", source)
    with bounded_connect(connect_timeout):
        result = publish_dataset(Path(folder), repo_id, private=private, revision=revision, token=token,
                                 commit_message=commit_message)
    logger.info("published %d files (%s): %s", len(result.files_uploaded),
                ", ".join(f"{k}={v}" for k, v in result.rows.items()), result.commit_url)
    return result.model_dump(mode="json")


@flow(name="generate-and-publish")
def generate_and_publish(
    repo_id: str,
    config: str | None = None,
    catalog: str | None = None,
    num_dialogues: int | None = None,
    out: str | None = None,
    seed: int | None = None,
    models: dict[str, str] | None = None,
    model: str | None = None,
    task_runner: Literal["local", "dask"] = "local",
    dask_address: str | None = None,
    dask_workers: int = 2,
    batch_size: int = DEFAULT_BATCH_SIZE,
    private: bool = False,
    revision: str | None = None,
    token_secret: str | None = None,
) -> dict[str, Any]:
    """`generate-dialogues`, then `publish-dataset` on the folder it wrote (both as subflows).

    The repo id is checked before generating, so a typo does not cost a whole run."""
    validate_dataset_repo_id(repo_id)
    generated = generate_dialogues(config=config, catalog=catalog, num_dialogues=num_dialogues, out=out,
                                   seed=seed, models=models, model=model, task_runner=task_runner,
                                   dask_address=dask_address, dask_workers=dask_workers, batch_size=batch_size)
    published = publish_dataset_flow(folder=generated["out_dir"], repo_id=repo_id, private=private,
                                     revision=revision, token_secret=token_secret)
    return {"generated": generated, "published": published}
