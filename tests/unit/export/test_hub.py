"""Publishing to the Hub, tested without the internet.

The Hub is exercised at the huggingface_hub API boundary (a recording HfApi whose
overrides bind their arguments against the real method signatures) and with real
HfApi clients against things that exist locally: offline mode, a closed port, a
server that drops SYNs, and a tiny HTTP server that answers 401/403. `utcgen publish` run as a
user runs it is in tests/e2e/test_publish_cli.py.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest
import yaml
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, constants
from huggingface_hub.utils import hf_raise_for_status

from tests.support.hub import (
    CARD,
    CONFIGS,
    EXPECTED_FILES,
    REJECTED_SCHEMA,
    REPO_ID,
    TOKEN,
    AuthFailServer,
    RecordingApi,
    closed_port,
    write_dataset,
)
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.export.hub import PublishError, publish_dataset


@pytest.fixture
def dataset_dir(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "out")


@pytest.fixture(autouse=True)
def _no_real_hub(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Keep every in-process test off the internet.

    huggingface_hub reads HF_HUB_OFFLINE once at import, so pin the constant. Building
    request headers also fetches `{HF_ENDPOINT}/api/agent-harnesses` (telemetry) unless
    HF_HUB_DISABLE_TELEMETRY: pin that too. Finally, the transport itself refuses any
    host but loopback, so a stray call fails loudly instead of reaching the Hub.
    """
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    sent: list[str] = []
    real = httpx.HTTPTransport.handle_request

    def loopback_only(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        sent.append(str(request.url))
        if request.url.host not in ("127.0.0.1", "localhost"):
            raise AssertionError(f"test tried to reach {request.url}")
        return real(self, request)

    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", loopback_only)
    return sent


def http_error(status: int, url: str, body: dict[str, Any]) -> BaseException:
    """The exact exception huggingface_hub raises for such a response."""
    response = httpx.Response(status, request=httpx.Request("POST", url), json=body)
    try:
        hf_raise_for_status(response)
    except httpx.HTTPError as exc:
        return exc
    raise AssertionError("hf_raise_for_status did not raise")


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is not None and all(current is not s for s in seen):
            seen.append(current)
            todo += [current.__cause__, current.__context__]
    return seen


def _strings(value: Any) -> Iterator[str]:
    """Every string/bytes reachable from a recorded argument, including operation objects."""
    if isinstance(value, (str, bytes)):
        yield value if isinstance(value, str) else value.decode("utf-8", "replace")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple, set)):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, (CommitOperationAdd, CommitOperationDelete)):
        yield from _strings(vars(value))


# --------------------------------------------------------------------- happy path


def test_uploads_exact_repo_tree_in_one_commit(dataset_dir: Path) -> None:
    api = RecordingApi()
    result = publish_dataset(dataset_dir, REPO_ID, token=TOKEN, api=api)

    assert api.names == ["create_repo", "list_repo_files", "create_commit"]
    repo = api.call("create_repo")
    assert (repo["repo_id"], repo["repo_type"], repo["private"], repo["exist_ok"]) == (REPO_ID, "dataset", False, True)
    commit = api.call("create_commit")
    assert commit["repo_id"] == REPO_ID and commit["repo_type"] == "dataset" and commit["revision"] == "main"
    assert commit["commit_message"] == "Upload utcgen dataset: 3 dialogues, 6 sft rows, 0 rejected"
    assert all(isinstance(op, CommitOperationAdd) for op in commit["operations"])
    assert {op.path_in_repo for op in commit["operations"]} == EXPECTED_FILES
    assert len(commit["operations"]) == len(EXPECTED_FILES)

    card = api.uploaded["README.md"].decode()
    front = yaml.safe_load(card.split("---")[1])
    assert [c["config_name"] for c in front["configs"]] == list(CONFIGS)
    assert {c["data_files"][0]["path"] for c in front["configs"]} == {f"data/{c}/*.parquet" for c in CONFIGS}
    for path, content in api.uploaded.items():
        assert content == (dataset_dir / path).read_bytes()

    assert result.repo_id == REPO_ID and result.revision == "main"
    assert result.commit_url == f"https://huggingface.co/datasets/{REPO_ID}/commit/{result.commit_oid}"
    assert set(result.files_uploaded) == EXPECTED_FILES and result.files_deleted == []
    assert result.rows == {"dialogues": 3, "sft": 6, "rejected": 0}


def test_revision_private_and_message(dataset_dir: Path) -> None:
    api = RecordingApi(existing_private=True)
    result = publish_dataset(dataset_dir, REPO_ID, private=True, revision="v2", token=TOKEN, api=api,
                             commit_message="Nightly run 42")

    assert api.names == ["create_repo", "repo_info", "create_branch", "list_repo_files", "create_commit"]
    assert api.call("create_repo")["private"] is True
    branch = api.call("create_branch")
    assert (branch["branch"], branch["repo_type"], branch["exist_ok"]) == ("v2", "dataset", True)
    assert api.call("list_repo_files")["revision"] == "v2"
    commit = api.call("create_commit")
    assert (commit["revision"], commit["commit_message"]) == ("v2", "Nightly run 42")
    assert result.revision == "v2"


def test_explicit_main_revision_creates_no_branch(dataset_dir: Path) -> None:
    api = RecordingApi()
    publish_dataset(dataset_dir, REPO_ID, revision="main", token=TOKEN, api=api)
    assert "create_branch" not in api.names


def test_private_refuses_an_existing_public_repo(dataset_dir: Path) -> None:
    api = RecordingApi(existing_private=False)
    with pytest.raises(PublishError, match="already exists and is public") as info:
        publish_dataset(dataset_dir, REPO_ID, private=True, token=TOKEN, api=api)
    assert info.value.exit_code == 3
    assert "create_commit" not in api.names


def test_stale_remote_shards_are_deleted_in_the_same_commit(dataset_dir: Path) -> None:
    """Without this, the glob data/sft/*.parquet would mix an old run's shards into the new data."""
    remote = [".gitattributes", "README.md", "LICENSE", "data/sft/train-00000-of-00002.parquet",
              "data/sft/train-00000-of-00001.parquet", "data/old_config/x.parquet", "plots/old.png"]
    api = RecordingApi(remote_files=remote)
    result = publish_dataset(dataset_dir, REPO_ID, token=TOKEN, api=api)
    ops = api.call("create_commit")["operations"]
    deleted = {op.path_in_repo for op in ops if isinstance(op, CommitOperationDelete)}
    assert deleted == {"data/sft/train-00000-of-00002.parquet", "data/old_config/x.parquet", "plots/old.png"}
    assert set(result.files_deleted) == deleted
    assert {op.path_in_repo for op in ops if isinstance(op, CommitOperationAdd)} == EXPECTED_FILES


def test_round_trip_uploaded_tree_loads_with_datasets(dataset_dir: Path, tmp_path: Path) -> None:
    """The bytes handed to create_commit, laid out as the repo, load as every config."""
    import datasets

    api = RecordingApi()
    publish_dataset(dataset_dir, REPO_ID, token=TOKEN, api=api)
    repo = tmp_path / "repo"
    for path, content in api.uploaded.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_bytes(content)

    sft = datasets.load_dataset(str(repo), "sft", cache_dir=str(tmp_path / "cache-sft"))
    assert sft["train"].num_rows == 6
    assert sft["train"][0]["completion"] == [{"role": "assistant", "content": "Which user?"}]
    dialogues = datasets.load_dataset(str(repo), "dialogues", cache_dir=str(tmp_path / "cache-d"))
    assert dialogues["train"].num_rows == 3
    # A 0-row config is publishable, but datasets 5.2 only loads it streaming: the non-streaming
    # path raises "Instruction 'train' corresponds to no data!". Pinned so an upgrade shows up here.
    rejected = datasets.load_dataset(str(repo), "rejected", streaming=True, cache_dir=str(tmp_path / "cache-r"))
    assert list(rejected["train"]) == [] and "rejection_reason" in rejected["train"].column_names
    with pytest.raises(ValueError, match="corresponds to no data"):
        datasets.load_dataset(str(repo), "rejected", cache_dir=str(tmp_path / "cache-r2"))


# --------------------------------------------------------------------- token hygiene


@pytest.mark.parametrize("via_env", [False, True], ids=["argument", "HF_TOKEN"])
def test_token_only_in_token_parameters_and_never_logged(
    dataset_dir: Path, via_env: bool, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    if via_env:
        monkeypatch.setenv("HF_TOKEN", TOKEN)
    caplog.set_level(logging.DEBUG)
    api = RecordingApi(existing_private=True)
    result = publish_dataset(dataset_dir, REPO_ID, private=True, revision="v2", api=api,
                             token=None if via_env else TOKEN)

    assert len(api.calls) == 5
    for name, arguments in api.calls:
        assert arguments["token"] == TOKEN, name
        others = {k: v for k, v in arguments.items() if k != "token"}
        assert not any(TOKEN in s for s in _strings(others)), name
    assert TOKEN not in caplog.text
    assert "publishing" in caplog.text  # logging did happen
    assert TOKEN not in result.model_dump_json()


@pytest.mark.parametrize("kind", ["http-500", "transport", "os"])
def test_token_scrubbed_from_remote_error_and_its_chain(dataset_dir: Path, kind: str) -> None:
    """Whatever echoes the token (a server message, a proxy error, ...) is scrubbed and not chained."""
    url = f"https://huggingface.co/api/datasets/{REPO_ID}/commit/main"
    echo = {
        "http-500": http_error(500, url, {"error": f"internal error while checking token {TOKEN}"}),
        "transport": httpx.ConnectError(f"proxy refused Bearer {TOKEN}"),
        "os": OSError(f"cannot read credential {TOKEN}"),
    }[kind]
    api = RecordingApi(fail={"create_commit": echo})
    with pytest.raises(PublishError) as info:
        publish_dataset(dataset_dir, REPO_ID, token=TOKEN, api=api)
    assert "***" in str(info.value)
    for linked in _chain(info.value):  # cause *and* context: both are reachable by error reporters
        assert TOKEN not in str(linked) and TOKEN not in repr(linked.args)


def test_token_pasted_as_repo_id_is_not_echoed(dataset_dir: Path) -> None:
    with pytest.raises(InputError) as info:
        publish_dataset(dataset_dir, TOKEN, token=TOKEN, api=RecordingApi())
    assert all(TOKEN not in str(e) and TOKEN not in repr(e.args) for e in _chain(info.value))


@pytest.mark.parametrize("status", [401, 403])
def test_auth_errors_from_commit_are_unauthorised(dataset_dir: Path, status: int) -> None:
    url = f"https://huggingface.co/api/datasets/{REPO_ID}/commit/main"
    api = RecordingApi(fail={"create_commit": http_error(status, url, {"error": "You don't have the rights"})})
    with pytest.raises(PublishError, match=r"^unauthorised: check HF_TOKEN") as info:
        publish_dataset(dataset_dir, REPO_ID, token=TOKEN, api=api)
    assert info.value.exit_code == 3


# --------------------------------------------------------------------- rejected before any API call


@pytest.mark.parametrize(
    "repo_id",
    ["noslash", "a/b/c", "/name", "org/", "org/na me", "org/--x", "org/x.git", "org/.x", "org/é", "",
     "https://huggingface.co/datasets/org/name", "datasets/org/name", "org/" + "n" * 97],
)
def test_malformed_repo_id_rejected_before_any_api_call(dataset_dir: Path, repo_id: str) -> None:
    api = RecordingApi()
    with pytest.raises(InputError) as info:
        publish_dataset(dataset_dir, repo_id, token=TOKEN, api=api)
    assert info.value.exit_code == 2
    assert api.calls == []


@pytest.mark.parametrize("revision", ["", "has space", "a..b", "refs/pr/1", "-x", "x.lock", "br/"])
def test_bad_revision_rejected_before_any_api_call(dataset_dir: Path, revision: str) -> None:
    api = RecordingApi()
    with pytest.raises(InputError, match="invalid revision"):
        publish_dataset(dataset_dir, REPO_ID, revision=revision, token=TOKEN, api=api)
    assert api.calls == []


def _break(folder: Path, how: str) -> None:
    readme = folder / "README.md"
    if how == "missing folder":
        shutil.rmtree(folder)
    elif how == "empty folder":
        shutil.rmtree(folder)
        folder.mkdir()
    elif how == "no README":
        readme.unlink()
    elif how == "no parquet":
        shutil.rmtree(folder / "data")
    elif how == "no front matter":
        readme.write_text("# Just a title\n")
    elif how == "bad YAML":
        readme.write_text("---\nconfigs: [unclosed\n  - x: {\n---\n# t\n")
    elif how == "YAML not a mapping":
        readme.write_text("---\n- just\n- a list\n---\n")
    elif how == "no configs":
        readme.write_text("---\nlicense: apache-2.0\n---\n")
    elif how == "data_files match nothing":
        readme.write_text(CARD.replace("data/rejected/*.parquet", "data/rejectd/*.parquet"))
    elif how == "data_files match only a temp shard":
        readme.write_text(CARD.replace("data/sft/*.parquet", "data/sft/.utcgen-tmp-*.parquet"))
    elif how == "data_files escape the folder":
        readme.write_text(CARD.replace("data/sft/*.parquet", "../*.parquet"))
    elif how == "malformed data_files entry":
        readme.write_text(CARD.replace("  - split: train\n    path: data/sft/*.parquet", "  - {path: data/sft/*.parquet}"))
    elif how == "duplicate config":
        readme.write_text(CARD.replace("config_name: rejected", "config_name: sft"))
    elif how == "truncated parquet":
        shard = folder / "data/sft/train-00000-of-00001.parquet"
        shard.write_bytes(shard.read_bytes()[:-20])
    elif how == "empty config written with an empty row group":
        pq.write_table(REJECTED_SCHEMA.empty_table(), folder / "data/rejected/train-00000-of-00001.parquet")
    elif how == "stats.json not JSON":
        (folder / "stats.json").write_text("{counts: ")
    elif how == "stats.json disagrees with data":
        (folder / "stats.json").write_text(json.dumps({"counts": {"accepted": 5, "sft_rows": 6, "rejected": 0}}))
    else:
        raise AssertionError(how)


@pytest.mark.parametrize(
    "how",
    ["missing folder", "empty folder", "no README", "no parquet", "no front matter", "bad YAML",
     "YAML not a mapping", "no configs", "data_files match nothing", "data_files match only a temp shard",
     "data_files escape the folder", "malformed data_files entry", "duplicate config", "truncated parquet",
     "empty config written with an empty row group", "stats.json not JSON", "stats.json disagrees with data"],
)
def test_invalid_folder_refused_before_any_api_call(dataset_dir: Path, how: str) -> None:
    _break(dataset_dir, how)
    api = RecordingApi()
    with pytest.raises(InputError) as info:
        publish_dataset(dataset_dir, REPO_ID, token=TOKEN, api=api)
    assert info.value.exit_code == 2
    assert api.calls == []


def test_folder_without_stats_or_plots_is_still_publishable(dataset_dir: Path) -> None:
    (dataset_dir / "stats.json").unlink()
    shutil.rmtree(dataset_dir / "plots")
    api = RecordingApi()
    result = publish_dataset(dataset_dir, REPO_ID, token=TOKEN, api=api)
    assert set(result.files_uploaded) == {f for f in EXPECTED_FILES if f.startswith(("README", "data/"))}


# --------------------------------------------------------------------- real HfApi, no Hub


def test_offline_mode_gives_clear_error(dataset_dir: Path) -> None:
    start = time.monotonic()
    with pytest.raises(PublishError, match=r"cannot reach the Hugging Face Hub \(offline\?\)") as info:
        publish_dataset(dataset_dir, REPO_ID, token=TOKEN, api=HfApi())
    assert "HF_HUB_OFFLINE" in str(info.value) and info.value.exit_code == 3
    assert TOKEN not in str(info.value)
    assert time.monotonic() - start < 5


def test_unreachable_endpoint_gives_same_clear_error(dataset_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                    _no_real_hub: list[str]) -> None:
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    endpoint = f"http://127.0.0.1:{closed_port()}"
    start = time.monotonic()
    with pytest.raises(PublishError, match=r"cannot reach the Hugging Face Hub \(offline\?\)") as info:
        publish_dataset(dataset_dir, REPO_ID, token=TOKEN, api=HfApi(endpoint=endpoint))
    assert endpoint in str(info.value) and TOKEN not in str(info.value)
    assert time.monotonic() - start < 5
    assert _no_real_hub and all(url.startswith(endpoint) for url in _no_real_hub)


@pytest.mark.slow
@pytest.mark.parametrize("status", [401, 403])
def test_auth_failure_from_a_real_http_server(dataset_dir: Path, status: int, monkeypatch: pytest.MonkeyPatch,
                                             _no_real_hub: list[str]) -> None:
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with AuthFailServer(status) as server, pytest.raises(PublishError, match=r"^unauthorised: check HF_TOKEN") as info:
        publish_dataset(dataset_dir, REPO_ID, token=TOKEN, api=HfApi(endpoint=server.url))
    assert info.value.exit_code == 3 and TOKEN not in str(info.value)
    # The token travelled only as a bearer header, and the repo was being created as a dataset.
    assert server.seen[0][:2] == ("POST", "/api/repos/create")
    assert all(auth == f"Bearer {TOKEN}" for _, _, auth in server.seen)
    assert not any(TOKEN in path for _, path, _ in server.seen)
    assert len(_no_real_hub) == len(server.seen) and all(u.startswith(server.url) for u in _no_real_hub)


def test_cli_success_prints_commit_url(dataset_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from huggingface_hub.utils import get_session

    import utcgen.pipeline.export.hub
    from utcgen.pipeline.cli import main

    session = get_session()
    monkeypatch.setattr(session, "timeout", session.timeout)  # the CLI bounds it; restore afterwards
    api = RecordingApi()
    monkeypatch.setattr(utcgen.pipeline.export.hub, "HfApi", lambda **_: api)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    code = main(["publish", str(dataset_dir), "--repo-id", REPO_ID, "--revision", "v3", "--message", "hello"])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.strip() == f"https://huggingface.co/datasets/{REPO_ID}/commit/0123456789abcdef0123456789abcdef01234567"
    assert TOKEN not in out + err
    commit = api.call("create_commit")
    assert (commit["revision"], commit["commit_message"], commit["token"]) == ("v3", "hello", TOKEN)
