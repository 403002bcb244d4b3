"""A one-line progress bar for tuning: trials done, best latency so far, time left.

On a terminal the line is redrawn in place; otherwise (a log file, pytest) a line is
printed every `every` trials and at the end of each task.

Example:
    >>> import io
    >>> out = io.StringIO()
    >>> bar = Progress(total=4, stream=out, every=2, clock=iter([0.0, 10.0]).__next__)
    >>> bar.update("matmul", done=2, best_s=0.0012, default_s=0.003)
    >>> print(out.getvalue().strip())
    [tune] matmul [##########----------] 2/4 trials  best 1.200 ms (default 3.000 ms, 2.50x)  left 0:00:10
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["Progress"]

_WIDTH = 20


class Progress:
    """Trials done out of `total`, best latency, and an estimate of the time left.

    Attributes:
        total: Trials planned in this run (all tasks together).
        stream: Where to draw (stderr by default); None draws nothing.

    Example:
        >>> import io
        >>> out = io.StringIO()
        >>> p = Progress(4, stream=out, clock=lambda: 0.0)
        >>> p.update("matmul", 4, 1e-3, 2e-3)
        >>> out.getvalue()  # doctest: +ELLIPSIS
        '[tune] matmul [####################] 4/4 trials  best 1.000 ms (default 2.000 ms, 2.00x)  left ...'
    """

    def __init__(
        self,
        total: int,
        stream: TextIO | None = sys.stderr,
        every: int = 8,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = max(total, 1)
        self.stream = stream
        self.every = every
        self.clock = clock
        self.start = clock()
        self.done = 0
        self._drawn = -1  # `done` when the last line was drawn
        self._tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())

    def update(
        self,
        task: str,
        done: int,
        best_s: float | None,
        default_s: float | None,
        final: bool = False,
    ) -> None:
        """Record that `done` trials of this run are finished and redraw.

        Example:
            >>> Progress(4, stream=None).update("matmul", 1, None, None)
        """
        before, self.done = self.done, done
        if self.stream is None:
            return
        crossed = done // self.every > before // self.every
        if not (self._tty or final or crossed or (done >= self.total > before)):
            return
        if final and not self._tty and self._drawn == done:
            return
        self._drawn = done
        line = self.line(task, best_s, default_s)
        if self._tty:
            self.stream.write("\r" + line + ("\n" if final else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def line(self, task: str, best_s: float | None, default_s: float | None) -> str:
        """The text of the bar.

        Example:
            >>> p = Progress(4, stream=None, clock=lambda: 0.0)
            >>> p.update("conv", 1, None, None)
            >>> p.line("conv", None, None)  # doctest: +ELLIPSIS
            '[tune] conv [#####---------------] 1/4 trials  left ...'
        """
        filled = min(_WIDTH, _WIDTH * self.done // self.total)
        bar = "#" * filled + "-" * (_WIDTH - filled)
        text = f"[tune] {task} [{bar}] {self.done}/{self.total} trials"
        if best_s is not None:
            text += f"  best {best_s * 1e3:.3f} ms"
            if default_s:
                text += f" (default {default_s * 1e3:.3f} ms, {default_s / best_s:.2f}x)"
        return text + f"  left {_clock(self._left())}"

    def _left(self) -> float:
        elapsed = self.clock() - self.start
        if self.done == 0:
            return 0.0
        return elapsed / self.done * max(self.total - self.done, 0)


def _clock(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
