"""A progress display for long runs: tasks done / total, rate, ETA, failures.

On a terminal the line is redrawn in place (at most every `every_tty` seconds); on a
file or pipe (a Slurm job's output) a line is written every `every_file` seconds, so
logs stay short. Nothing is written for runs that finish before the first interval.
"""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s" if m else f"{s}s"


class Progress:
    """Counts finished tasks of one batch and shows them on `stream` (default stderr).
    Called from the thread iterating the runner's results only."""

    def __init__(self, what: str = "episodes", stream: Optional[TextIO] = None,
                 every_tty: float = 0.5, every_file: float = 30.0) -> None:
        self.what = what
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = every_tty if self.tty else every_file
        self.total = self.done = self.failed = 0
        self._start = self._shown = 0.0
        self._drawn = False

    def start(self, total: int) -> None:
        self.total, self.done, self.failed = total, 0, 0
        self._start = self._shown = time.monotonic()
        self._drawn = False

    def line(self) -> str:
        elapsed = max(time.monotonic() - self._start, 1e-9)
        rate = self.done / elapsed
        left = self.total - self.done
        eta = _duration(left / rate) if rate > 0 else "?"
        text = (f"{self.what} {self.done}/{self.total}, {rate:.2f}/s, "
                f"elapsed {_duration(elapsed)}, ETA {eta}")
        if self.failed:
            text += f", {self.failed} failed"
        return text

    def update(self, failed: bool = False) -> None:
        self.done += 1
        self.failed += int(failed)
        now = time.monotonic()
        if now - self._shown >= self.every and self.done < self.total:
            self._shown = now
            self._write()

    def _write(self) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + self.line())
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()
        self._drawn = True

    def finish(self) -> None:
        """Ends the display: a final line if anything was shown."""
        if self._drawn:
            if self.tty:
                self.stream.write("\r\x1b[K")
            self.stream.write(self.line() + "\n")
            self.stream.flush()
            self._drawn = False
