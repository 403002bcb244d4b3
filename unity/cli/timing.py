"""Latency of two runtimes measured in one process, each as if it ran alone.

Runs alternate (``a, b, a, b, ...``) so that both see the same drift in the machine's
load, with a pause before each timed run: a runtime's worker threads keep spinning
after a run returns (onnxruntime's for about 50 ms, libgomp's for about 3 ms), and a
run that starts while the other's threads still spin loses a core to them.  Measured
here on ResNet-50, back to back: unity 49 -> 93 ms while onnxruntime spun.

Example:
    >>> import time
    >>> t = alternate_latencies([lambda: None, lambda: time.sleep(0.001)], repeat=2, settle_s=0)
    >>> [len(ms) for ms in t], bool(t[1].min() >= 1.0)
    ([2, 2], True)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["SETTLE_S", "alternate_latencies"]

SETTLE_S = 0.1
"""Pause before each timed run, seconds: longer than onnxruntime's spin after a run."""


def alternate_latencies(
    fns: Sequence[Callable[[], object]], repeat: int, settle_s: float = SETTLE_S, warmup: int = 1
) -> list[np.ndarray]:
    """Milliseconds of `repeat` runs of each of `fns`, taken in turn after a pause.

    Args:
        fns: The runs to time (each a call with no arguments).
        repeat: Timed runs of each.
        settle_s: Pause before every run, so the other runtime's threads are idle.
        warmup: Untimed runs of each first.

    Example:
        >>> [t.shape for t in alternate_latencies([lambda: 1], repeat=3, settle_s=0)]
        [(3,)]
    """
    for fn in fns:
        for _ in range(warmup):
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, times):
            if settle_s:
                time.sleep(settle_s)
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return [np.array(t) * 1e3 for t in times]
