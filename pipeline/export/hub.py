"""Publish a finished dataset folder to a Hugging Face Hub dataset repository.

Everything that can be checked locally is checked before the first network call,
so a bad folder or repo id never leaves a half-created repo behind. Remote
failures are normalised at this boundary into `PublishError` with a message a
user can act on; the token never appears in any message, log or exception.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import httpx
import yaml
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, DatasetCard, HfApi
from huggingface_hub.errors import HfHubHTTPError, HFValidationError, OfflineModeIsEnabled
from huggingface_hub.utils import validate_repo_id
from pydantic import BaseModel

from .. import __version__
from ..errors import InputError, UtcgenError

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
# Same rule `datasets` applies to split names in card YAML.
_SPLIT_RE = re.compile(r"^\w+(\.\w+)*$")


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


@dataclass
class _Plan:
    """The validated local side of a publish: which files go up and what they contain."""

    folder: Path
    files: list[str]  # repo-relative POSIX paths, sorted
    rows: dict[str, int] = field(default_factory=dict)  # config name -> rows in its parquet files


# ---------------------------------------------------------------- validation


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


def _is_skipped(rel: PurePosixPath) -> bool:
    """Hidden files, editor/temp droppings and caches never belong in the repo."""
    return any(part.startswith((".", "~", "__")) or part.endswith("~") for part in rel.parts)


def collect_upload_files(folder: Path) -> list[str]:
    """The exact repo tree to upload: README.md, stats.json, data/**/*.parquet, plots/*.png."""
    files: list[str] = []
    for name in ("README.md", "stats.json"):
        if (folder / name).is_file():
            files.append(name)
    candidates = [*(folder / "data").rglob("*.parquet"), *(folder / "plots").glob("*.png")]
    for path in candidates:
        rel = PurePosixPath(path.relative_to(folder).as_posix())
        if path.is_file() and not path.is_symlink() and not _is_skipped(rel):
            files.append(str(rel))
    return sorted(set(files))


def _config_patterns(config: Any, index: int) -> tuple[str, list[str]]:
    """Return (config_name, data_files glob patterns), enforcing the shapes `datasets` accepts."""
    if not isinstance(config, dict):
        raise InputError(f"README.md: configs[{index}] must be a mapping, got {type(config).__name__}")
    name = config.get("config_name")
    if not isinstance(name, str) or not name:
        raise InputError(f"README.md: configs[{index}] has no config_name")
    data_files = config.get("data_files")
    if data_files is None:
        raise InputError(f"README.md: config {name!r} declares no data_files")
    items = [data_files] if isinstance(data_files, str) else data_files
    if not isinstance(items, list) or not items:
        raise InputError(f"README.md: config {name!r}: data_files must be a string or a non-empty list")
    patterns: list[str] = []
    for item in items:
        if isinstance(item, str):
            patterns.append(item)
            continue
        if not (isinstance(item, dict) and set(item) == {"split", "path"}):
            raise InputError(f"README.md: config {name!r}: each data_files entry must be a glob or {{split, path}}")
        split, path = item["split"], item["path"]
        if not isinstance(split, str) or not _SPLIT_RE.match(split):
            raise InputError(f"README.md: config {name!r}: invalid split name {split!r}")
        paths = [path] if isinstance(path, str) else path
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
            raise InputError(f"README.md: config {name!r}: split {split!r} path must be a glob or list of globs")
        patterns.extend(paths)
    return name, patterns


def _match(folder: Path, pattern: str, uploadable: set[str]) -> list[str]:
    """Files a data_files glob selects among those we would upload (paths are repo-relative)."""
    pure = PurePosixPath(pattern)
    if not pattern or pure.is_absolute() or ".." in pure.parts:
        raise InputError(f"README.md: data_files pattern {pattern!r} must be relative to the dataset folder")
    on_disk = {p.relative_to(folder).as_posix() for p in folder.glob(pattern) if p.is_file()}
    selected = sorted(on_disk & uploadable)
    if on_disk and not selected:
        raise InputError(
            f"README.md: data_files pattern {pattern!r} matches only files that are not uploaded "
            "(only data/**/*.parquet, excluding hidden and temporary files)"
        )
    return selected


def _parquet_rows(path: Path) -> int:
    """Read the footer: catches truncated or non-parquet files before they reach the Hub, and
    zero-row row groups (what `pq.write_table` writes for an empty table), which datasets 5.2
    cannot load: it sizes read batches from a row group and fails on 0."""
    import pyarrow.parquet as pq  # deferred: pyarrow costs import time the CLI's --help should not pay
    from pyarrow import ArrowException

    try:
        meta = pq.read_metadata(path)
    except (ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a readable parquet file ({exc})") from None
    if any(meta.row_group(i).num_rows == 0 for i in range(meta.num_row_groups)):
        raise InputError(
            f"{path}: has an empty row group, which `datasets` cannot load; write an empty config "
            "as a file with the schema and no row groups (pq.ParquetWriter(path, schema).close())"
        )
    return int(meta.num_rows)


def validate_dataset_folder(folder: Path) -> _Plan:
    """Check the folder is a loadable Hub dataset repo: card YAML, configs resolving to parquet, stats."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"dataset folder {folder} does not exist or is not a directory")
    files = collect_upload_files(folder)
    if "README.md" not in files:
        raise InputError(f"{folder}: no README.md dataset card (is this a utcgen output folder?)")
    parquet = [f for f in files if f.endswith(".parquet")]
    if not parquet:
        raise InputError(f"{folder}: no parquet files under data/: nothing to publish")

    readme = folder / "README.md"
    try:
        card = DatasetCard(readme.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"{readme}: not UTF-8 text ({exc.reason})") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{readme}: YAML front matter does not parse: {exc}") from None
    except (ValueError, TypeError) as exc:
        raise InputError(f"{readme}: invalid card metadata: {exc}") from None
    configs = card.data.get("configs")
    if not isinstance(configs, list) or not configs:
        raise InputError(f"{readme}: front matter must declare a non-empty `configs:` list")

    uploadable = set(parquet)
    rows: dict[str, int] = {}
    for index, config in enumerate(configs):
        name, patterns = _config_patterns(config, index)
        if name in rows:
            raise InputError(f"{readme}: config {name!r} is declared twice")
        matched: set[str] = set()
        for pattern in patterns:
            selected = _match(folder, pattern, uploadable)
            if not selected:
                raise InputError(f"{readme}: config {name!r}: data_files pattern {pattern!r} matches no parquet file")
            matched.update(selected)
        rows[name] = sum(_parquet_rows(folder / f) for f in sorted(matched))
        if rows[name] == 0:
            logger.warning(
                "config %r has 0 rows: it is published, but datasets 5.2 loads an empty config only "
                "with streaming=True (non-streaming raises 'corresponds to no data')",
                name,
            )

    if "stats.json" in files:
        try:
            stats = json.loads((folder / "stats.json").read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{folder / 'stats.json'}: not valid JSON ({exc})") from None
        if not isinstance(stats, dict):
            raise InputError(f"{folder / 'stats.json'}: expected a JSON object")
        _check_stats_counts(stats, rows, folder / "stats.json")
    return _Plan(folder=folder, files=files, rows=rows)


# stats.json `counts` key -> config it describes (as written by utcgen.pipeline.export.stats).
_STATS_COUNT_KEYS = {"accepted": "dialogues", "sft_rows": "sft", "rejected": "rejected"}


def _check_stats_counts(stats: dict[str, Any], rows: dict[str, int], path: Path) -> None:
    """stats.json and the parquet footers must agree: a mismatch means a stale or half-written
    export, and the card would then describe data that is not in the repo."""
    counts = stats.get("counts")
    if not isinstance(counts, dict):
        return
    for key, config in _STATS_COUNT_KEYS.items():
        expected = counts.get(key)
        if isinstance(expected, int) and config in rows and rows[config] != expected:
            raise InputError(
                f"{path}: counts.{key} is {expected} but config {config!r} has {rows[config]} rows "
                "in its parquet files: re-export the dataset"
            )


def default_commit_message(rows: dict[str, int]) -> str:
    """Title like 'Upload utcgen dataset: 3 dialogues, 7 sft rows, 1 rejected'. Counts are the
    parquet footers' (checked against stats.json), so the title cannot disagree with the data."""
    parts = []
    if "dialogues" in rows:
        parts.append(f"{rows['dialogues']} dialogues")
    if "sft" in rows:
        parts.append(f"{rows['sft']} sft rows")
    parts += [f"{n} {name}" for name, n in rows.items() if name not in ("dialogues", "sft")]
    return "Upload utcgen dataset: " + ", ".join(parts)


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
    from huggingface_hub.utils import get_session

    session = get_session()
    previous = session.timeout
    session.timeout = httpx.Timeout(None, connect=seconds)
    try:
        yield
    finally:
        session.timeout = previous
