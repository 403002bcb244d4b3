"""Run the independent jobs of a build in worker processes forked from this one.

Lowering and compiling one PrimFunc does not depend on any other, and nearly all of it
is Python (where the GIL keeps threads from helping) or LLVM under llvmlite's global
lock.  So `unity.build` splits a large module's functions into jobs (`split_jobs`, by an
estimate of their cost) and runs the jobs in worker processes forked from this one
(`map_jobs`): a worker starts with everything this process holds (the functions, the
`PassContext`), and sends back only bytes.

The jobs run here, one after another, when any of these holds:

- the `PassContext` config ``build.jobs`` is 1 (0, the default, means a worker per
  core, at most `MAX_AUTO_JOBS`);
- the whole build looks short: its estimated time (`split_jobs`' costs) is under
  `PARALLEL_SECONDS`;
- an instrument of the `PassContext` wants to see every pass (`DumpIR`, `PrintAfterAll`,
  a `should_run` that skips passes...): one whose `needs_every_pass` is not False;
- this process cannot fork safely: not Linux, a daemonic process (which may not have
  children), or another Python thread that is not a daemon (it could be compiling too,
  holding a lock the workers would need; a Jupyter kernel's threads are daemons).

A job that fails in a worker, or a worker that dies, sends all the jobs back here, so
an error is raised as it would be without workers: with its own type, message and
traceback.

Example:
    >>> jobs = split_jobs([0.05, 0.02, 0.09])   # estimated seconds per function: short
    >>> jobs
    [[0, 1, 2]]
    >>> map_jobs(len(jobs), lambda i: [x * x for x in jobs[i]])
    [[0, 1, 4]]
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from unity.ir.pass_context import PassContext, register_config

MAX_AUTO_JOBS = 8
"""Workers `build.jobs = 0` starts at most (each holds a copy of the process's memory)."""

PARALLEL_SECONDS = 1.0
"""Builds estimated shorter run here: starting workers takes tens of milliseconds (more
for a large process), and each job's LLVM module a few more."""

JOBS_PER_WORKER = 8
"""Jobs per worker: enough that one slow job does not leave the others idle at the end
(the estimates are rough), few enough that LLVM's per-module start stays small."""

register_config("build.jobs", int, 0)

_WORK: Callable[[int], Any] | None = None
"""The job function of the running `_in_workers` (a forked worker inherits it)."""

_FORKING = threading.Lock()


def split_jobs(costs: Sequence[float]) -> list[list[int]]:
    """Group items of estimated `costs` (seconds) into jobs for `map_jobs`: a single job
    of every item when they are to run here, else `JOBS_PER_WORKER` jobs per worker of
    about equal cost (consecutive items, so their order is kept).

    Example:
        >>> split_jobs([0.01, 0.02, 0.01])
        [[0, 1, 2]]
        >>> with PassContext(config={"build.jobs": 2}):  # doctest: +SKIP
        ...     split_jobs([1.0] * 16)
        [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11], [12, 13], [14, 15]]
    """
    workers = _workers()
    total = sum(costs)
    if workers < 2 or len(costs) < 2 or total < PARALLEL_SECONDS:
        return [list(range(len(costs)))]
    share = total / (workers * JOBS_PER_WORKER)
    jobs: list[list[int]] = [[]]
    filled = 0.0
    for index, cost in enumerate(costs):
        if jobs[-1] and filled + cost / 2 > share:
            jobs.append([])
            filled = 0.0
        jobs[-1].append(index)
        filled += cost
    return jobs


def map_jobs(count: int, work: Callable[[int], Any]) -> list[Any]:
    """``[work(0), ..., work(count - 1)]``: here for one job, else in worker processes
    forked from this one (as many as ``build.jobs`` allows).

    A job that raises in a worker, or a worker that dies, sends all the jobs back here,
    where the failure raises as usual.  `work`'s results must pickle.

    Example:
        >>> map_jobs(3, lambda i: i * i)
        [0, 1, 4]
    """
    workers = min(_workers(), count)
    if workers > 1:
        results = _in_workers(count, work, workers)
        if results is not None:
            return results
    return [work(i) for i in range(count)]


def _workers() -> int:
    """How many worker processes this build may use (1: none, run here)."""
    ctx = PassContext.current()
    jobs = ctx.get_config("build.jobs")
    if jobs < 0:
        raise ValueError(f"PassContext config build.jobs must be >= 0 (0: one per core), "
                         f"got {jobs}")
    if jobs == 0:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        jobs = min(cores, MAX_AUTO_JOBS)
    if jobs < 2 or not _can_fork():
        return 1
    if any(getattr(inst, "needs_every_pass", True) for inst in ctx.instruments):
        return 1
    return jobs


def _in_workers(count: int, work: Callable[[int], Any], workers: int) -> list[Any] | None:
    """``[work(0), ..., work(count - 1)]`` from `workers` forked processes; None when a
    job raised or a worker died.  One build's workers at a time: they read `_WORK` as
    they start."""
    global _WORK
    with _FORKING, warnings.catch_warnings():  # Python 3.12+ warns on fork beside threads
        warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
        _WORK = work
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                   initializer=_in_worker)  # fmt: skip
        try:
            results = list(pool.map(_run, range(count)))
        except (BrokenProcessPool, OSError) as err:
            warnings.warn(f"unity.build: a worker process failed ({err}); building in this "
                          "process", RuntimeWarning, stacklevel=4)  # fmt: skip
            return None
        finally:  # on Ctrl-C too: the jobs not started are dropped, not waited for
            pool.shutdown(wait=True, cancel_futures=True)
            _WORK = None
    if not all(ok for ok, _ in results):
        return None
    return [value for _, value in results]


def _can_fork() -> bool:
    """Linux, not a daemonic process, and no other thread but daemon threads: those of
    a Jupyter kernel or a progress display, which do not compile; a non-daemon thread
    could be compiling too, inside llvmlite's lock, which a worker would then wait on
    forever."""
    if not sys.platform.startswith("linux") or multiprocessing.current_process().daemon:
        return False
    here = threading.current_thread()
    return all(t.daemon for t in threading.enumerate() if t is not here)


def _in_worker() -> None:
    """A worker's start: Ctrl-C ends it at once (even inside LLVM; the parent raises
    KeyboardInterrupt); the same settings, without the instruments (which stay in the
    parent; here they would report to nobody)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    ctx = PassContext.current()
    PassContext(ctx.opt_level, ctx.required_pass, ctx.disabled_pass, ctx.config).__enter__()


def _run(index: int) -> tuple[bool, Any]:
    assert _WORK is not None, "_in_workers: a worker started without its job function"
    try:
        return True, _WORK(index)
    except Exception:  # redone in the parent, which raises it with its own traceback
        return False, None
