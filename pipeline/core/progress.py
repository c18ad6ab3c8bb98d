"""Progress on stderr: the one display of every command that shows how far it is.

On a terminal, a tqdm bar redrawn when its count moves and at most ten times a second otherwise.
When stderr is a file or a pipe, one plain line at most every `EVERY_S` seconds and a last one
when the display closes (`generate: 12/40 accepted, 3 rejected, 1m20s`): a log holds lines, never
thousands of carriage-return redraws. Disabled (`--no-progress`), nothing at all.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO

from tqdm import tqdm

EVERY_S = 10.0   # a plain line at most this often
REDRAW_S = 0.1   # a bar whose count has not moved is redrawn at most this often


def is_terminal(stream: IO[str]) -> bool:
    """Whether `stream` is a terminal that a bar may redraw in place."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def duration(seconds: float) -> str:
    """`45s`, `1m20s`, `2h05m`: an elapsed time as a log line says it."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    """A count towards `total` (None: not known yet) with a note beside it.

    `name` and `counted` make the plain line (`<name>: <n>/<total> <counted>, <note>, <elapsed>`);
    `desc` and `unit` the bar, as tqdm shows them."""

    def __init__(self, total: int | None, *, name: str, counted: str, desc: str, unit: str,
                 enabled: bool = True, stream: IO[str] | None = None,
                 clock: Callable[[], float] = time.monotonic, every_s: float = EVERY_S) -> None:
        self.total, self.name, self.counted, self.desc, self.unit = total, name, counted, desc, unit
        self.enabled, self.every_s, self._clock = enabled, every_s, clock
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = enabled and is_terminal(self.stream)
        self.n, self.note = 0, ""
        self._bar: tqdm | None = None
        self._start = self._last = clock()
        self._drawn_n = -1
        self._written = False  # a plain line shows the count and note as they are now
        self._closed = False
        if self.terminal and total is not None:
            self._the_bar()

    def update(self, n: int, note: str = "", *, total: int | None = None, force: bool = False) -> None:
        """The count so far and the note beside it (and the total, once known); drawn when due, or now
        when `force`."""
        self.n, self.note = n, note
        self._written = False
        if total is not None:
            self.total = total
        if not self.enabled or self._closed:
            return
        now = self._clock()
        if self.terminal:
            if not force and n == self._drawn_n and now - self._last < REDRAW_S:
                return
            self._last, self._drawn_n = now, n
            bar = self._the_bar()
            bar.n = n if self.total is None else min(n, self.total)
            bar.set_postfix_str(note, refresh=False)
            bar.refresh()
        elif force or now - self._last >= self.every_s:
            self._last = now
            self._line(now)

    def advance(self, by: int = 1) -> None:
        """`by` more counted, the note kept."""
        self.update(self.n + by, self.note)

    def close(self) -> None:
        """The bar closed, or the last plain line written (unless the one before already says it);
        nothing more is drawn."""
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        elif self.enabled and not self.terminal and not self._written:
            self._line(self._clock())

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _the_bar(self) -> tqdm:
        if self._bar is None:
            self._bar = tqdm(total=self.total, unit=self.unit, desc=self.desc, file=self.stream, dynamic_ncols=True)
        elif self.total is not None and self._bar.total != self.total:
            self._bar.total = self.total
        return self._bar

    def _line(self, now: float) -> None:
        count = f"{self.n}/{self.total}" if self.total is not None else str(self.n)
        print(f"{self.name}: {count} {self.counted}" + (f", {self.note}" if self.note else "")
              + f", {duration(now - self._start)}", file=self.stream, flush=True)
        self._written = True
