"""A small dataset folder of the exported shape, and an HfApi that records what publishing would send: the
Hub tested at the huggingface_hub API boundary, without the internet."""

from __future__ import annotations

import inspect
import json
import shutil
import socket
import struct
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from huggingface_hub import CommitInfo, CommitOperationAdd, HfApi
from huggingface_hub.hf_api import DatasetInfo, RepoUrl

TOKEN = "hf_TESTtokenDoNotLeak0123456789abcd"
REPO_ID = "utcgen-org/tool-dialogues"
EXPECTED_FILES = {
    "README.md",
    "stats.json",
    "data/dialogues/train-00000-of-00001.parquet",
    "data/sft/train-00000-of-00001.parquet",
    "data/rejected/train-00000-of-00001.parquet",
    "plots/turns_per_dialogue.png",
}
CONFIGS = ("dialogues", "sft", "rejected")

# --------------------------------------------------------------------- fixture dataset

CARD = """---
pretty_name: utcgen test dialogues
license: apache-2.0
task_categories:
- text-generation
configs:
- config_name: dialogues
  data_files:
  - split: train
    path: data/dialogues/*.parquet
- config_name: sft
  data_files:
  - split: train
    path: data/sft/*.parquet
- config_name: rejected
  data_files:
  - split: train
    path: data/rejected/*.parquet
---

# utcgen test dialogues

Small synthetic fixture.
"""

_CHAT = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
DIALOGUE_SCHEMA = pa.schema([("id", pa.string()), ("seed_tool", pa.string()), ("messages", _CHAT)])
REJECTED_SCHEMA = DIALOGUE_SCHEMA.append(pa.field("rejection_reason", pa.string()))
SFT_SCHEMA = pa.schema(
    [("dialogue_id", pa.string()), ("turn_index", pa.int64()), ("tools", pa.list_(pa.string())),
     ("prompt", _CHAT), ("completion", _CHAT)]
)


def _png_1x1() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\xff\xff")) + chunk(b"IEND", b"")


def write_dataset(folder: Path, n_dialogues: int = 3, sft_per_dialogue: int = 2) -> Path:
    """A valid utcgen-style repo folder, plus the debris a real run leaves that must not be uploaded."""
    msgs = [{"role": "user", "content": "reset my VPN token"}, {"role": "assistant", "content": "Which user?"}]
    dialogues = [{"id": f"d{i}", "seed_tool": "reset_vpn", "messages": msgs} for i in range(n_dialogues)]
    sft = [
        {"dialogue_id": f"d{i}", "turn_index": t, "tools": ['{"type": "function"}'],
         "prompt": msgs[:1], "completion": msgs[1:]}
        for i in range(n_dialogues) for t in range(sft_per_dialogue)
    ]
    for name, rows, schema in (("dialogues", dialogues, DIALOGUE_SCHEMA), ("sft", sft, SFT_SCHEMA),
                               ("rejected", [], REJECTED_SCHEMA)):
        (folder / "data" / name).mkdir(parents=True, exist_ok=True)
        shard = folder / "data" / name / "train-00000-of-00001.parquet"
        if rows:
            pq.write_table(pa.Table.from_pylist(rows, schema=schema), shard)
        else:  # schema only, no row groups: the form `datasets` can load
            pq.ParquetWriter(shard, schema).close()
    (folder / "README.md").write_text(CARD, encoding="utf-8")
    stats = {"counts": {"generated": n_dialogues, "accepted": n_dialogues, "rejected": 0,
                        "sft_rows": n_dialogues * sft_per_dialogue}}
    (folder / "stats.json").write_text(json.dumps(stats), encoding="utf-8")
    (folder / "plots").mkdir(exist_ok=True)
    (folder / "plots" / "turns_per_dialogue.png").write_bytes(_png_1x1())
    # Debris: temp shard of an interrupted export, journal, caches, editor files, non-png plot.
    shutil.copy(folder / "data/sft/train-00000-of-00001.parquet", folder / "data/sft/.utcgen-tmp-x1.parquet")
    (folder / "data/sft/train-00000-of-00001.parquet.tmp").write_bytes(b"partial")
    (folder / "journal.jsonl").write_text('{"event": "start"}\n')
    (folder / ".cache").mkdir()
    (folder / ".cache" / "x.parquet").write_bytes(b"cache")
    (folder / "data" / "__pycache__").mkdir()
    (folder / "data" / "__pycache__" / "y.parquet").write_bytes(b"cache")
    (folder / "plots" / "notes.txt").write_text("draft")
    (folder / "README.md~").write_text("backup")
    return folder


class RecordingApi(HfApi):
    """HfApi whose network methods record their arguments instead of calling the Hub.

    Arguments are bound against the *real* HfApi signatures, so a misspelt or removed
    keyword fails here as it would against the Hub. Anything not overridden still goes
    through the real client and hits offline mode (the tests pin it).
    """

    def __init__(self, remote_files: list[str] | None = None, existing_private: bool = True,
                 fail: dict[str, BaseException] | None = None) -> None:
        super().__init__(endpoint="https://huggingface.co")
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.uploaded: dict[str, bytes] = {}
        self.remote_files = remote_files if remote_files is not None else [".gitattributes"]
        self.existing_private = existing_private
        self.fail = fail or {}

    def _record(self, name: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        bound = inspect.signature(getattr(HfApi, name)).bind(self, *args, **kwargs)
        bound.apply_defaults()
        arguments = {k: v for k, v in bound.arguments.items() if k != "self"}
        self.calls.append((name, arguments))
        if name in self.fail:
            raise self.fail[name]
        return arguments

    def create_repo(self, *args: Any, **kwargs: Any) -> RepoUrl:
        a = self._record("create_repo", *args, **kwargs)
        return RepoUrl(f"{self.endpoint}/datasets/{a['repo_id']}", endpoint=self.endpoint)

    def repo_info(self, *args: Any, **kwargs: Any) -> DatasetInfo:
        a = self._record("repo_info", *args, **kwargs)
        return DatasetInfo(id=a["repo_id"], private=self.existing_private)

    def create_branch(self, *args: Any, **kwargs: Any) -> None:
        self._record("create_branch", *args, **kwargs)

    def list_repo_files(self, *args: Any, **kwargs: Any) -> list[str]:
        self._record("list_repo_files", *args, **kwargs)
        return list(self.remote_files)

    def create_commit(self, *args: Any, **kwargs: Any) -> CommitInfo:
        a = self._record("create_commit", *args, **kwargs)
        for op in a["operations"]:
            if isinstance(op, CommitOperationAdd):
                self.uploaded[op.path_in_repo] = Path(op.path_or_fileobj).read_bytes()
        oid = "0123456789abcdef0123456789abcdef01234567"
        return CommitInfo(
            commit_url=f"{self.endpoint}/datasets/{a['repo_id']}/commit/{oid}",
            commit_message=a["commit_message"],
            commit_description=a["commit_description"] or "",
            oid=oid,
            _endpoint=self.endpoint,
        )

    def call(self, name: str) -> dict[str, Any]:
        (found,) = [a for n, a in self.calls if n == name]
        return found

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.calls]


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AuthFailServer:
    """A local 'Hub' that answers every request with one status, recording what it was sent."""

    def __init__(self, status: int) -> None:
        seen: list[tuple[str, str, str | None]] = []
        self.seen = seen

        class Handler(BaseHTTPRequestHandler):
            def _reply(self) -> None:
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                seen.append((self.command, self.path, self.headers.get("Authorization")))
                body = json.dumps({"error": "Invalid credentials in Authorization header"}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("X-Error-Message", "Invalid credentials in Authorization header")
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_HEAD = _reply

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> AuthFailServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
