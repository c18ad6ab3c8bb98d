"""Publish a finished dataset folder to a Hugging Face Hub dataset repository.

Everything that can be checked locally (`repo_tree`: the folder, and here the repo id and
revision) is checked before the first network call,
so a bad folder or repo id never leaves a half-created repo behind. Remote
failures are normalised at this boundary into `PublishError` with a message a
user can act on; the token never appears in any message, log or exception.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
from huggingface_hub.errors import HfHubHTTPError, HFValidationError, OfflineModeIsEnabled
from huggingface_hub.utils import get_session, validate_repo_id
from pydantic import BaseModel

from .. import __version__
from ..core.errors import InputError, UtcgenError
from .repo_tree import default_commit_message, validate_dataset_folder

__all__ = ["PublishError", "PublishResult", "bounded_connect", "default_commit_message", "publish_dataset",
           "validate_dataset_folder", "validate_dataset_repo_id"]

try:  # huggingface_hub 1.x speaks httpx; a caller-supplied client may still use requests.
    from requests.exceptions import ConnectionError as RequestsConnectionError
    from requests.exceptions import Timeout as RequestsTimeout
except ImportError:  # pragma: no cover - requests is installed alongside datasets
    RequestsConnectionError = RequestsTimeout = ConnectionError  # type: ignore[misc,assignment]

logger = logging.getLogger(__name__)

REPO_TYPE = "dataset"
DEFAULT_REVISION = "main"
# Remote paths this tool owns: stale files under them are deleted on re-publish,
# otherwise a config glob like data/sft/*.parquet would mix old shards into new data.
MANAGED_PREFIXES = ("data/", "plots/")


class PublishError(UtcgenError):
    """The Hub refused or could not be reached: reported with exit status 3."""

    exit_code = 3


class PublishResult(BaseModel):
    """What was published where, so callers can link to it or record it in a run journal."""

    repo_id: str
    repo_type: str = REPO_TYPE
    revision: str
    repo_url: str
    commit_url: str
    commit_oid: str
    commit_message: str
    files_uploaded: list[str]
    files_deleted: list[str]
    rows: dict[str, int]


# ---------------------------------------------------------------- repo id and revision


def validate_dataset_repo_id(repo_id: str) -> str:
    """Require NAMESPACE/NAME: without a namespace the Hub picks the token's user, which
    silently publishes to the wrong place when an org was meant."""
    if not isinstance(repo_id, str) or not repo_id.strip():
        raise InputError("repo id is empty: expected ORG/NAME, e.g. my-org/utcgen-dialogues")
    if "://" in repo_id or repo_id.startswith(("datasets/", "huggingface.co/")):
        raise InputError(
            f"repo id {repo_id!r} looks like a URL or path: pass just ORG/NAME, e.g. my-org/utcgen-dialogues"
        )
    namespace, sep, name = repo_id.partition("/")
    if not sep or not namespace or not name:
        raise InputError(f"repo id {repo_id!r} has no namespace: expected ORG/NAME, e.g. my-org/{repo_id or 'name'}")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        raise InputError(f"invalid repo id {repo_id!r}: {exc}") from None
    return repo_id


def _validate_revision(revision: str | None) -> str:
    """Reject branch names git and the Hub would refuse, before creating anything remotely."""
    if revision is None:
        return DEFAULT_REVISION
    bad = (
        not revision
        or revision != revision.strip()
        or any(c.isspace() or c in "~^:?*[\\" for c in revision)
        or ".." in revision
        or "//" in revision
        or revision.startswith(("/", "-", "refs/"))
        or revision.endswith(("/", ".", ".lock"))
        or "@{" in revision
    )
    if bad:
        raise InputError(f"invalid revision {revision!r}: expected a branch name such as 'main' or 'v1'")
    return revision


# ---------------------------------------------------------------- remote


def _resolve_token(token: str | None) -> str | None:
    """Explicit argument first, then HF_TOKEN; None lets huggingface_hub use a stored login."""
    value = token if token is not None else os.environ.get("HF_TOKEN")
    value = value.strip() if value else None
    return value or None


def _scrub(text: str, token: str | None) -> str:
    return text.replace(token, "***") if token else text


def _remote_error(exc: BaseException, endpoint: str, token: str | None) -> PublishError:
    """Turn a transport or HTTP failure into one actionable PublishError without the token."""
    detail = _scrub(str(exc), token)
    if isinstance(exc, OfflineModeIsEnabled):
        msg = "cannot reach the Hugging Face Hub (offline?): HF_HUB_OFFLINE is set; unset it to publish"
    elif isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else None
        server = _scrub(exc.server_message or "", token).strip()
        if status in (401, 403):
            msg = (
                f"unauthorised: check HF_TOKEN (the Hub answered {status}; the token needs write access "
                f"to the namespace){': ' + server if server else ''}"
            )
        elif status == 404:
            msg = f"repository or revision not found on the Hub (404){': ' + server if server else ''}"
        else:
            msg = f"the Hub refused the upload (HTTP {status}): {server or detail}"
    elif isinstance(exc, (httpx.TransportError, ConnectionError, RequestsConnectionError, RequestsTimeout)):
        msg = f"cannot reach the Hugging Face Hub (offline?) at {endpoint}: {detail or type(exc).__name__}"
    else:
        msg = f"publishing failed: {type(exc).__name__}: {detail}"
    error = PublishError(msg)
    if not (token and token in f"{exc!s} {exc.args!r}"):  # never chain an exception holding the token
        error.__cause__ = exc
    return error


def publish_dataset(
    folder: Path,
    repo_id: str,
    *,
    private: bool = False,
    revision: str | None = None,
    token: str | None = None,
    api: HfApi | None = None,
    commit_message: str | None = None,
) -> PublishResult:
    """Validate `folder` locally, then create the dataset repo (and branch) and upload the
    repo tree in a single commit, so readers never see a half-updated dataset."""
    token = _resolve_token(token)
    try:
        repo_id = validate_dataset_repo_id(repo_id)
        branch = _validate_revision(revision)
        plan = validate_dataset_folder(Path(folder))
    except InputError as exc:  # a user may paste the token where the repo id goes
        if not (token and token in str(exc)):
            raise
        problems = [_scrub(p, token) for p in exc.problems]
    else:
        problems = []
    if problems:  # raised outside the handler so no __context__ keeps the unscrubbed text
        raise InputError(problems)
    message = commit_message or default_commit_message(plan.rows)
    api = api or HfApi(library_name="utcgen", library_version=__version__)
    logger.info("publishing %d files from %s to dataset %s@%s", len(plan.files), plan.folder, repo_id, branch)

    failure: UtcgenError | None = None
    try:
        repo_url = api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True, token=token)
        if private:
            # create_repo(exist_ok=True) keeps an existing repo's visibility: refuse rather than leak.
            info = api.repo_info(repo_id, repo_type=REPO_TYPE, token=token)
            if info.private is False:
                raise PublishError(
                    f"{repo_id} already exists and is public: refusing to upload with --private; "
                    "make it private on the Hub first or drop --private"
                )
        if branch != DEFAULT_REVISION:
            api.create_branch(repo_id, branch=branch, repo_type=REPO_TYPE, exist_ok=True, token=token)
        remote = api.list_repo_files(repo_id, repo_type=REPO_TYPE, revision=branch, token=token)
        uploading = set(plan.files)
        stale = sorted(f for f in remote if f.startswith(MANAGED_PREFIXES) and f not in uploading)
        operations: list[CommitOperationAdd | CommitOperationDelete] = [
            CommitOperationAdd(path_in_repo=f, path_or_fileobj=str(plan.folder / f)) for f in plan.files
        ]
        operations += [CommitOperationDelete(path_in_repo=f) for f in stale]
        commit = api.create_commit(
            repo_id,
            operations,
            commit_message=message,
            commit_description=f"Generated by utcgen {__version__}.",
            repo_type=REPO_TYPE,
            revision=branch,
            token=token,
        )
    except HFValidationError as exc:
        failure = InputError(_scrub(f"rejected by huggingface_hub: {exc}", token))
    except (httpx.HTTPError, OSError, RequestsConnectionError, RequestsTimeout) as exc:
        # HfHubHTTPError is an httpx.HTTPError; OfflineModeIsEnabled is a ConnectionError (OSError).
        failure = _remote_error(exc, api.endpoint, token)
    if failure is not None:  # raised outside the handlers: __context__ must not carry the original
        raise failure

    logger.info("published %s", commit.commit_url)
    return PublishResult(
        repo_id=repo_id,
        revision=branch,
        repo_url=str(repo_url),
        commit_url=commit.commit_url,
        commit_oid=commit.oid,
        commit_message=message,
        files_uploaded=plan.files,
        files_deleted=stale,
        rows=plan.rows,
    )


@contextmanager
def bounded_connect(seconds: float | None) -> Iterator[None]:
    """Bound the Hub client's connect phase, restoring it afterwards.

    huggingface_hub's shared httpx client has no timeout at all, so a firewall that drops
    packets would hang an upload for minutes. Only the connect phase is bounded: a large
    upload may legitimately take long."""
    if not seconds:
        yield
        return

    session = get_session()
    previous = session.timeout
    session.timeout = httpx.Timeout(None, connect=seconds)
    try:
        yield
    finally:
        session.timeout = previous
