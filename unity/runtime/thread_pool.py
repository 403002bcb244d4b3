"""The thread pool that runs parallel loops, and its size.

Mechanism (chosen by measured launch overhead, see `bench/elementwise.py`): compiled
code calls libgomp's `GOMP_parallel(body, closure, num_threads, 0)`. libgomp keeps a
pool of worker threads for the whole process; with workers that spin about 1 ms
before they sleep (`SPIN_COUNT`) and are bound to cores of their own (`pin_workers`),
one launch costs about 1 us on this 2-core machine (`bench/default_schedules.py`
prints it; 75-85 us when workers sleep at once), against 40-70 us to fan the same call
out from Python threads calling ctypes. A pthread pool of our own in
LLVM IR would save nothing over libgomp's (both are a futex wake plus a barrier) and
is far more code.

Each compiled module holds an `i32 __unity_num_threads` global read at every launch
(0 = libgomp's default: one thread per core). `set_num_threads` writes every registered
global, so the setting is process-wide and works from any Python thread (libgomp's own
`omp_set_num_threads` is per calling thread).

Example:
    >>> from unity.runtime import thread_pool
    >>> thread_pool.set_num_threads(1); thread_pool.get_num_threads()
    1
    >>> thread_pool.set_num_threads(0); thread_pool.get_num_threads() == thread_pool.num_cores()
    True
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading

SPIN_COUNT = 30_000
"""Spins of an idle libgomp worker before it sleeps (about 1 ms on this machine)."""

NUM_THREADS_SYMBOL = "__unity_num_threads"
"""Name of the `i32` global each compiled module reads the thread count from."""

_lock = threading.Lock()
_num_threads = 0
_slots: dict[int, ctypes.c_int32] = {}
_gomp: ctypes.CDLL | None = None


def num_cores() -> int:
    """The number of cores this process may run on.

    Example:
        >>> num_cores() >= 1
        True
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def set_num_threads(n: int) -> None:
    """Run parallel loops on `n` threads from now on (0 = one per core).

    Example:
        >>> set_num_threads(2)
    """
    global _num_threads
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"set_num_threads: expected an int >= 0, got {n!r}")
    with _lock:
        _num_threads = n
        for slot in _slots.values():
            slot.value = n


def get_num_threads() -> int:
    """The number of threads parallel loops run on.

    Example:
        >>> get_num_threads() >= 1
        True
    """
    return _num_threads or num_cores()


def register_slot(address: int) -> None:
    """Track the `__unity_num_threads` global at `address` (of a module just loaded).

    Example:
        >>> cell = ctypes.c_int32(0)
        >>> register_slot(ctypes.addressof(cell)); cell.value == _num_threads
        True
    """
    slot = ctypes.c_int32.from_address(address)
    with _lock:
        slot.value = _num_threads
        _slots[address] = slot
    pin_workers()


def pin_workers() -> bool:
    """Bind each libgomp worker thread to a core of its own (once); True when they are.

    Left unbound, a worker woken after the process idled may land on the core of the
    thread that launched it, and both share that core until the scheduler moves one
    (ShuffleNet 5.0 -> 9.7 ms when runs are 2 ms apart).  onnxruntime binds its workers
    likewise.  The calling (Python) thread stays unbound, so threads a user starts keep
    the whole machine; worker `k` takes the `k`-th allowed core, leaving the first to
    the caller.  Skipped when the user set `OMP_PROC_BIND`, `OMP_PLACES` or
    `GOMP_CPU_AFFINITY`, or the process may use a single core.

    Example:
        >>> isinstance(pin_workers(), bool)
        True
    """
    global _pinned
    if _pinned is not None:
        return _pinned
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    user = any(k in os.environ for k in ("OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"))
    if len(cores) < 2 or user:
        _pinned = False
        return _pinned
    gomp = ctypes.CDLL(gomp_library())
    gomp.omp_get_thread_num.restype = ctypes.c_int

    def bind(_: object) -> None:
        worker = gomp.omp_get_thread_num()
        if worker > 0:
            os.sched_setaffinity(0, {cores[worker % len(cores)]})

    body = _BODY(bind)
    gomp.GOMP_parallel(body, None, ctypes.c_uint(len(cores)), ctypes.c_uint(0))
    _pinned = True
    return _pinned


_BODY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_pinned: bool | None = None


def unregister_slot(address: int) -> None:
    """Stop tracking the global at `address` (its module is being freed).

    Example:
        >>> unregister_slot(0)
    """
    with _lock:
        _slots.pop(address, None)


def gomp_library() -> str:
    """Load libgomp into the process with global symbols and return its path.

    Example:
        >>> gomp_library().startswith("libgomp")  # doctest: +SKIP
        True
    """
    global _gomp
    path = ctypes.util.find_library("gomp")
    if path is None:
        raise RuntimeError("libgomp was not found (needed for parallel loops); install libgomp1")
    if _gomp is None:
        # Idle workers spin a bounded while (about 1 ms), then sleep.  Sleeping at once
        # (OMP_WAIT_POLICY=PASSIVE) makes every launch wake a thread: 75-85 us each
        # here, against ~1 us spinning, and ShuffleNet took 7.5-12 ms instead of 5.
        # Spinning without bound (ACTIVE) holds a core the next run's Python code or
        # another process needs.  libgomp reads this when it is loaded; a user's own
        # OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.
        if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
            os.environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)
        _gomp = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return path
