"""A user's mistake is one line and exit status 2, found before any work starts, with nothing written.

The quick cases run the `utcgen` entry point in this process (`cli.main`, what the console script
calls); the ones that need two processes, a kill or a closed pipe run the console script itself
and are slow.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import REPO, UTCGEN, generate, generate_env
from utcgen.pipeline.cli import main
from utcgen.pipeline.core.files import STATE_DIR, TMP_PREFIX, TMP_SUFFIX
from utcgen.pipeline.runner.lock import HOLDER_FILE, RunLock


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """(exit status, stderr) of `utcgen ARGV`; argparse's own refusals exit through SystemExit."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def deep_catalog(path: Path, levels: int) -> Path:
    schema: dict = {"type": "string", "description": "the leaf"}
    for level in range(levels):
        schema = {"type": "object", "description": f"level {level}", "properties": {"inner": schema}}
    tools = [{"name": "deep_tool", "description": "Takes a deeply nested request.",
              "parameters": {"type": "object", "properties": {"request": schema}, "required": ["request"]}},
             {"name": "find_order", "description": "Looks up an order by its number.",
              "parameters": {"type": "object", "properties": {"order_id": {"type": "string", "description": "n"}},
                             "required": ["order_id"]}}]
    path.write_text(json.dumps(tools), encoding="utf-8")
    return path


def cases(tmp: Path) -> dict[str, tuple[list[str], str]]:
    """name -> (arguments after `generate --no-progress`, what the one line must say)."""
    (tmp / "a-file").write_text("not a folder\n")
    (tmp / "foreign").mkdir()
    (tmp / "foreign" / "README.md").write_text("someone's project\n")
    (tmp / "tok-file").write_text("{}\n")
    (tmp / "tok-empty").mkdir()
    deep = deep_catalog(tmp / "deep.json", 120)
    new = str(tmp / "new")
    return {
        "out is a file": (["--out", str(tmp / "a-file")], "is a file, not a folder"),
        "out under a file": (["--out", str(tmp / "a-file" / "sub")], "which is a file, not a folder"),
        "empty out": (["--out", ""], "--out: empty path"),
        "foreign folder": (["--out", str(tmp / "foreign")], "is not a utcgen run folder; a run would overwrite"),
        "missing tokenizer": (["--out", new, "--tokenizer", str(tmp / "no-such-tok")], "--tokenizer .*no such folder"),
        "tokenizer is a file": (["--out", new, "--tokenizer", str(tmp / "tok-file")], "--tokenizer .*not a folder"),
        "tokenizer folder without one": (["--out", new, "--tokenizer", str(tmp / "tok-empty")], "holds no tokenizer"),
        "schema nested 120 levels": (["--out", new, "--catalog", str(deep)], "--catalog .*deep.json: nested more than 64"),
        "seed past 64 bits": (["--out", new, "--seed", str(10**30)], "argument --seed: must be <= 9,223,372,036,854,775,807"),
        "seed not a number": (["--out", new, "--seed", "10**30"], "argument --seed: expected an integer"),
        "no dialogues": (["--out", new, "--num-dialogues", "0"], "argument --num-dialogues: must be >= 1"),
        "missing catalog": (["--out", new, "--catalog", str(tmp / "nope.json")], "nope.json: no such file"),
    }


NAMES = ["out is a file", "out under a file", "empty out", "foreign folder", "missing tokenizer", "tokenizer is a file",
         "tokenizer folder without one", "schema nested 120 levels", "seed past 64 bits", "seed not a number",
         "no dialogues", "missing catalog"]


@pytest.mark.parametrize("name", NAMES)
def test_a_user_error_is_one_line_and_exit_2_with_nothing_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    import re

    monkeypatch.chdir(tmp_path)  # an empty --out must not write here
    every = cases(tmp_path)
    assert sorted(every) == sorted(NAMES)
    args, says = every[name]
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code, err = run_cli(capsys, "generate", "--no-progress", *args)
    assert code == 2, err
    lines = [line for line in err.splitlines() if not line.startswith(("usage:", " ", "utcgen: "))]
    assert len(lines) == 1 and re.search(says, lines[0]), err
    assert "Traceback" not in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing half-written


def test_force_accepts_a_foreign_folder_past_the_folder_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "README.md").write_text("someone's project\n")
    # --force passes the folder check; the bad tokenizer then stops the run before any work
    code, err = run_cli(capsys, "generate", "--no-progress", "--force", "--out", str(tmp_path),
                        "--tokenizer", str(tmp_path / "missing"))
    assert code == 2 and "--tokenizer" in err and "not a utcgen run folder" not in err
    code, err = run_cli(capsys, "generate", "--no-progress", "--force", "--out", str(tmp_path),
                        "--catalog", str(deep_catalog(tmp_path / "deep.json", 80)))
    assert code == 2 and "nested more than 64" in err


def test_a_locked_folder_is_refused_in_process_naming_the_holder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    with RunLock(out, command="utcgen generate"):
        code, err = run_cli(capsys, "generate", "--no-progress", "--out", str(out))
    assert code == 2 and f"pid {os.getpid()}" in err and "another utcgen run is writing into this folder" in err


@pytest.mark.slow
def test_two_runs_on_one_folder_the_second_is_refused_and_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = generate_env(tmp_path)
    first = subprocess.Popen([UTCGEN, "generate", "--out", str(out), "--no-progress", "--num-dialogues", "2"],
                             cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    holder = out / STATE_DIR / HOLDER_FILE
    deadline = time.monotonic() + 60
    while not holder.exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    second = generate(tmp_path, out, "--num-dialogues", "2", env=env)
    _, first_err = first.communicate(timeout=300)
    assert second.returncode == 2, second.stderr
    assert f"pid {first.pid} on " in second.stderr and "another utcgen run is writing into this folder" in second.stderr
    assert first.returncode == 0, first_err[-2000:]
    assert "done: 2 accepted" in first_err and not holder.exists()
    # --no-progress: no bar of any library (the embedding model's "Loading weights" neither), just the two lines
    assert [line.split()[0] for line in first_err.splitlines() if line.strip()] == ["utcgen:", "done:"], first_err

    # `utcgen audit --json out | head`: the reader is gone before the report is written
    audit = subprocess.Popen([UTCGEN, "audit", "--json", "--no-fluency", str(out)], cwd=REPO, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert audit.stdout is not None and audit.stderr is not None
    audit.stdout.close()
    err = audit.stderr.read().decode()
    assert audit.wait(timeout=120) == 141 and err == "", err


HOLD = """
import sys, time
from pathlib import Path
from utcgen.pipeline.core.files import write_atomic
from utcgen.pipeline.runner.lock import RunLock
out = Path(sys.argv[1])
lock = RunLock(out).acquire()  # kept referenced: a collected lock is released
def never_finishes(tmp):
    tmp.write_text("half")
    print("holding", flush=True)
    time.sleep(600)
write_atomic(out / "journal" / "job-0000000.json", never_finishes)
"""


@pytest.mark.slow
def test_a_lock_left_by_a_killed_run_is_taken_over_and_its_temp_file_cleaned(tmp_path: Path) -> None:
    from utcgen.pipeline.core.files import remove_stale_temporaries

    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
    temps = list((out / "journal").glob(f"{TMP_PREFIX}*{TMP_SUFFIX}"))
    assert len(temps) == 1 and f"-{holder.pid}-" in temps[0].name
    remove_stale_temporaries(out / "journal")  # the holder lives: its file is kept
    assert temps[0].exists()
    with pytest.raises(Exception, match=f"pid {holder.pid}"):
        RunLock(out).acquire()
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    with RunLock(out):  # the kernel dropped the dead holder's lock: taken at once
        assert json.loads((out / STATE_DIR / HOLDER_FILE).read_text())["pid"] == os.getpid()
    remove_stale_temporaries(out / "journal")
    assert not temps[0].exists()


def test_audit_of_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("x")
    assert run_cli(capsys, "audit", str(tmp_path / "f")) == (2, f"error: {tmp_path / 'f'}: not a folder\n")


def test_the_bars_last_rejected_count_is_the_summarys(capsys: pytest.CaptureFixture[str]) -> None:
    from utcgen.pipeline.cli.generate import _Bar
    from utcgen.pipeline.runner import RunProgress

    bar = _Bar(5, enabled=True)
    # jobs finished past the fifth accepted dialogue still counted their rejections while running
    bar.update(RunProgress(target=5, accepted=5, rejected=17, retries=2))
    bar.finish(accepted=5, rejected=12)
    last = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert "5/5" in last and "rejected 12, calls 0" in last and "rejected 17" not in last

    quiet = _Bar(5, enabled=False)
    quiet.update(RunProgress(target=5, accepted=1, rejected=3))
    quiet.finish(accepted=5, rejected=12)
    assert capsys.readouterr().err == ""


NAMESPACE = ["unshare", "--user", "--map-root-user", "--mount"]


def _namespaces_work() -> bool:
    try:
        return subprocess.run([*NAMESPACE, "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.mark.slow
@pytest.mark.skipif(not _namespaces_work(), reason="needs user and mount namespaces to mount a small file system")
def test_a_read_only_folder_is_exit_2_and_a_full_disk_exit_1_each_in_one_line(tmp_path: Path) -> None:
    """In a private mount namespace: a read-only file system, and a 64 KiB one that fills during the run."""
    ro, full = tmp_path / "ro", tmp_path / "full"
    ro.mkdir()
    full.mkdir()
    script = (f"mount -t tmpfs -o ro tmpfs {ro} && mount -t tmpfs -o size=64k tmpfs {full} || exit 99\n"
              f"{UTCGEN} generate --no-progress --out {ro}/out 2>&1; echo \"ro-status $?\"\n"
              f"{UTCGEN} generate --no-progress --num-dialogues 5 --out {full}/out 2>&1; echo \"full-status $?\"\n"
              f"ls -A {full}/out/journal\n")
    result = subprocess.run([*NAMESPACE, "sh", "-c", script], cwd=REPO, env=generate_env(tmp_path),
                            capture_output=True, text=True, timeout=600)
    lines = result.stdout.splitlines()
    assert "ro-status 2" in lines and "full-status 1" in lines, result.stdout + result.stderr
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 2 and "Traceback" not in result.stdout
    assert errors[0] == f"error: --out {ro}/out: cannot write there (Read-only file system); choose a folder you can write into"
    assert "No space left on device" in errors[1] and "finished work is kept" in errors[1]
    listed = lines[lines.index("full-status 1") + 1:]
    assert "run.json" in listed and not [name for name in listed if name.startswith(TMP_PREFIX)]  # nothing half-written
