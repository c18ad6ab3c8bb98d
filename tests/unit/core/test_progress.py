"""The progress display: a bar on a terminal, plain lines at most every 10 s in a log, nothing when off."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

from utcgen.pipeline.core.progress import Progress, duration


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(stream: io.StringIO, enabled: bool = True) -> None:
    """40 dialogues over 200 s of a fake clock, the count moving with every one of 4,000 calls."""
    clock = Clock()
    progress = Progress(40, name="generate", counted="accepted", desc="accepted", unit="dlg", enabled=enabled,
                        stream=stream, clock=clock)
    for call in range(4000):
        clock.now = 1000.0 + (call + 1) / 20
        progress.update(call // 100, f"{call // 300} rejected")
    progress.update(40, "13 rejected", force=True)
    progress.close()


def test_a_log_gets_a_plain_line_at_most_every_ten_seconds_and_a_last_one() -> None:
    log = io.StringIO()
    run(log)
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue()
    assert 20 <= len(lines) <= 200 // 10 + 1  # one per 10 s of the 200, and the last one
    assert all(re.fullmatch(r"generate: \d+/40 accepted, \d+ rejected, (\d+s|\dm\d\ds)", line) for line in lines), lines
    assert lines[0] == "generate: 1/40 accepted, 0 rejected, 10s"
    assert lines[-1] == "generate: 40/40 accepted, 13 rejected, 3m20s" != lines[-2]  # once, though forced then closed


def test_off_shows_nothing_anywhere() -> None:
    log, terminal = io.StringIO(), Terminal()
    run(log, enabled=False)
    run(terminal, enabled=False)
    assert log.getvalue() == terminal.getvalue() == ""


def test_a_terminal_gets_the_bar_redrawn_in_place() -> None:
    terminal = Terminal()
    run(terminal)
    text = terminal.getvalue()
    assert "\r" in text and "accepted: 100%" in text and "40/40" in text and "13 rejected" in text
    assert "generate:" not in text  # no plain lines on a terminal


def test_durations() -> None:
    assert [duration(s) for s in (0, 59.9, 60, 80, 3599, 3600, 7500)] == [
        "0s", "59s", "1m00s", "1m20s", "59m59s", "1h00m", "2h05m"]


def test_a_process_writing_to_a_file_writes_lines(tmp_path: Path) -> None:
    """The real stderr of a process, redirected to a file: not a terminal, so lines, never a redraw."""
    code = ("from utcgen.pipeline.core.progress import Progress\n"
            "with Progress(3, name='eval', counted='evaluated', desc='evaluated', unit='case') as p:\n"
            "    for i in range(1, 4):\n"
            "        p.update(i, 'calls 7')\n")
    log = tmp_path / "run.log"
    with log.open("w") as err:
        subprocess.run([sys.executable, "-c", code], stderr=err, check=True)
    assert log.read_text() == "eval: 3/3 evaluated, calls 7, 0s\n"
