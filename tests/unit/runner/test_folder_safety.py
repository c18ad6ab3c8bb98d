"""The output folder: refused when it is not ours, locked while a run writes it, cleaned only of our own files."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

from utcgen.pipeline.core.errors import InputError, check_nesting, nesting_depth
from utcgen.pipeline.core.files import STATE_DIR, TMP_PREFIX, TMP_SUFFIX, remove_stale_temporaries, temporary_folder
from utcgen.pipeline.export.folder import MANIFEST, DatasetFolder
from utcgen.pipeline.runner.lock import HOLDER_FILE, FolderLocked, RunLock
from utcgen.pipeline.runner.outdir import check_out_folder


def test_a_foreign_non_empty_folder_is_refused_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("my project\n")
    with pytest.raises(InputError, match=r"not a utcgen run folder.*--force"):
        check_out_folder(tmp_path)
    assert not (tmp_path / STATE_DIR).exists()  # nothing written into it
    assert check_out_folder(tmp_path, force=True) == tmp_path
    assert (tmp_path / STATE_DIR).is_dir()
    assert check_out_folder(tmp_path) == tmp_path  # now a run folder: accepted without --force


@pytest.mark.parametrize("out", ["", "   ", None])
def test_an_empty_out_is_refused(out: str | None) -> None:
    with pytest.raises(InputError, match="--out: empty path"):
        check_out_folder(out)


def test_a_file_or_a_path_under_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match="is a file, not a folder"):
        check_out_folder(tmp_path / "f")
    with pytest.raises(InputError, match="lies under .*f, which is a file"):
        check_out_folder(tmp_path / "f" / "sub")


def test_new_empty_and_older_run_folders_are_accepted(tmp_path: Path) -> None:
    assert check_out_folder(tmp_path / "new" / "deeper").is_dir()
    (tmp_path / "empty").mkdir()
    check_out_folder(tmp_path / "empty")
    (tmp_path / "old" / "journal").mkdir(parents=True)
    (tmp_path / "old" / "journal" / "run.json").write_text("{}")
    check_out_folder(tmp_path / "old")


def test_the_writer_deletes_only_shards_it_wrote(tmp_path: Path) -> None:
    schema = pa.schema([("x", pa.int64())])
    theirs = tmp_path / "data" / "dialogues" / "theirs.parquet"
    theirs.parent.mkdir(parents=True)
    theirs.write_bytes(b"not ours")
    ours = tmp_path / "data" / "dialogues" / "train-00000-of-00002.parquet"
    folder = DatasetFolder(tmp_path)
    folder.claim(ours)  # a shard an earlier version of the writer produced
    ours.write_bytes(b"ours")
    folder.write_config("dialogues", [{"x": 1}], schema)
    assert theirs.exists() and not ours.exists()
    listed = json.loads((tmp_path / MANIFEST).read_text())["files"]
    assert "data/dialogues/train-00000-of-00001.parquet" in listed and "data/dialogues/theirs.parquet" not in listed


def test_a_second_lock_on_a_folder_is_refused_naming_the_holder(tmp_path: Path) -> None:
    with RunLock(tmp_path, command="utcgen generate"):
        holder = json.loads((tmp_path / STATE_DIR / HOLDER_FILE).read_text())
        assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname()
        with pytest.raises(FolderLocked, match=rf"pid {os.getpid()} on {socket.gethostname()} \(since .*utcgen generate"):
            RunLock(tmp_path).acquire()
    with RunLock(tmp_path):  # released: free again
        pass
    assert not (tmp_path / STATE_DIR / HOLDER_FILE).exists()


def _tmp_name(host: str, pid: int) -> str:
    return f"{TMP_PREFIX}{host}-{pid}-abcd1234{TMP_SUFFIX}"


@pytest.mark.slow  # a subprocess, for the pid of a process that has ended
def test_start_up_clean_up_spares_live_processes_and_other_hosts(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    host = socket.gethostname()
    live = tmp_path / _tmp_name(host, os.getpid())
    gone = tmp_path / _tmp_name(host, dead_pid)
    remote = tmp_path / _tmp_name("other-host.example", dead_pid)
    legacy_new = tmp_path / f"{TMP_PREFIX}q1w2e3r4{TMP_SUFFIX}"
    legacy_old = tmp_path / f"{TMP_PREFIX}z9x8c7v6{TMP_SUFFIX}"
    for path in (live, gone, remote, legacy_new, legacy_old):
        path.write_text("partial")
    old = time.time() - 7200
    os.utime(legacy_old, (old, old))
    # a folder of work that becomes whole by one rename (a quantised model): the same rules
    live_folder = tmp_path / _tmp_name(host, os.getpid()).replace("abcd", "dir1")
    gone_folder = tmp_path / _tmp_name(host, dead_pid).replace("abcd", "dir2")
    for folder in (live_folder, gone_folder):
        (folder / "inner").mkdir(parents=True)
        (folder / "inner" / "model.bin").write_bytes(b"half")
    remove_stale_temporaries(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, remote.name, legacy_new.name, live_folder.name])
    made = temporary_folder(tmp_path)
    assert made.is_dir() and made.name.startswith(f"{TMP_PREFIX}{socket.gethostname()}-{os.getpid()}-")


def test_nesting_depth_is_counted_without_recursion() -> None:
    deep: dict = {}
    node = deep
    for _ in range(5000):
        node["x"] = {}
        node = node["x"]
    assert nesting_depth({"a": [1, {"b": 2}]}) == 3
    assert nesting_depth(deep, limit=64) == 65  # stops counting once past the limit
    with pytest.raises(InputError, match=r"tools.json, tool t, field parameters: nested more than 64 levels"):
        check_nesting(deep, "tools.json, tool t, field parameters")
