"""Build and run candidates in worker processes, surviving crashes, wrong results and hangs.

`WorkerPool(num_workers, timeout_s)` keeps `num_workers` processes started with the
``spawn`` context (never ``fork``: the OpenMP runtime of a parent that ran a parallel
kernel is not fork-safe).  A worker receives a scheduled PrimFunc, builds it, runs it
once on random inputs (`make_args`, seeded, so every process draws the same arrays),
compares every buffer with the reference outputs, and then, when the pool hands it the
single timing token, times it as a compiled model runs it: weights it packs come already
packed, and every argument but the first is evicted from the caches before each run
(`_FLUSH`).  Builds overlap each other, but a kernel is timed alone:
no other kernel and no build runs meanwhile (on a two-core machine a parallel kernel
timed next to a build reports the build's load, tens of times its own latency).

Every candidate ends in a `MeasureResult`: ``ok`` with a latency, or ``wrong`` (differs
from the reference), ``error`` (an exception while building or running), ``crash`` (the
worker died: a segfault; the worker is restarted) or ``timeout`` (the worker ran past
`timeout_s` in its build or its run phase; it is killed and restarted).

Example:
    >>> with WorkerPool(num_workers=2, timeout_s=10) as pool:  # doctest: +SKIP
    ...     ref = pool.reference(func)
    ...     [r.status for r in pool.measure([scheduled], ref)]
    ['ok']
"""

from __future__ import annotations

import io
import multiprocessing
import pickle
import time
import traceback
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Self

import numpy as np

from unity.ir.op import Op
from unity.tir.function import PrimFunc

__all__ = ["MeasureResult", "WorkerPool", "dumps_ir", "loads_ir", "make_args"]

_FLUSH = True
"""Time each run with every argument but the first evicted from the caches.

A model's weights do not fit in the caches (ResNet-50's are 100 MB, the encoder's 56 MB),
so inside it each kernel reads its weights from memory (and finds no dirty lines of its
own last run to write back); timed back to back, it sees caches a model never leaves, and
candidates rank differently.  Measured on ResNet-50's 3x3 64->64 conv at 56x56: the
default 1.36 ms timed warm, 1.21 ms flushed and 1.21 ms inside the model; a tuned
choice 9% faster warm was level with it flushed and in the model (as TVM's tuners do
with ``cache_flush_cpu_non_first_arg``)."""

_STARTUP_S = 120.0
"""How long a fresh worker may take to import the compiler before its first job starts."""


@dataclass(frozen=True)
class MeasureResult:
    """The outcome of one candidate: `status` is ok/wrong/error/crash/timeout.

    Example:
        >>> MeasureResult("ok", 1.5e-3).latency_s, MeasureResult("timeout").status
        (0.0015, 'timeout')
    """

    status: str
    latency_s: float | None = None
    error: str = ""


class _IRPickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> Any:
        return ("op", obj.name) if isinstance(obj, Op) else None


class _IRUnpickler(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> Any:
        return Op.get(pid[1])  # registered ops are singletons: keep `is` comparisons true


def dumps_ir(obj: object) -> bytes:
    """Pickle IR, sending each registered `Op` by name.

    Example:
        >>> structural_equal(loads_ir(dumps_ir(func)), func)  # doctest: +SKIP
        True
    """
    buf = io.BytesIO()
    _IRPickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


def loads_ir(data: bytes) -> Any:
    """Unpickle what `dumps_ir` wrote.

    Example:
        >>> from unity import tir
        >>> f = tir.PrimFunc([], tir.Evaluate(tir.exp(tir.Var("x", "float32"))))
        >>> loads_ir(dumps_ir(f)).body.value.op is f.body.value.op  # ops come back as the same object
        True
    """
    return _IRUnpickler(io.BytesIO(data)).load()


def make_args(
    func: PrimFunc, seed: int, shape_hints: dict[str, int] | None = None
) -> list[np.ndarray]:
    """Random arrays for the buffer parameters of `func` (same `seed`, same arrays); a
    symbolic dimension takes its size from `shape_hints`, by the variable's name.

    Floats are standard normal; integers and booleans are 0 or 1 (safe as indices).

    Raises:
        TypeError: A parameter is a scalar.
        ValueError: A parameter has a symbolic dimension `shape_hints` does not size.

    Example:
        >>> [a.shape for a in make_args(func, 0)]  # doctest: +SKIP
        [(64, 64), (64, 64), (64, 64)]
    """
    from unity.tir.buffer import Buffer

    rng = np.random.default_rng(seed)
    args = []
    for p in func.params:
        if not isinstance(p, Buffer):
            raise TypeError(f"cannot tune a PrimFunc with the scalar parameter {p.name}")
        shape = tuple(_size(d, shape_hints or {}) for d in p.shape)
        if any(d is None for d in shape):
            raise ValueError(
                f"cannot tune a PrimFunc whose parameter {p.name} has a symbolic shape "
                "(give its dimensions a size with `shape_hints`)"
            )
        dtype = np.dtype("bool" if p.dtype == "bool" else p.dtype)
        if dtype.kind == "f":
            args.append(rng.standard_normal(shape).astype(dtype))
        else:
            args.append(rng.integers(0, 2, size=shape).astype(dtype))
    return args


def _size(dim: Any, hints: dict[str, int]) -> int | None:
    """A dimension's size: its value, or the hint for a symbolic variable (else None)."""
    from unity.schedule.analysis import as_int
    from unity.tir.expr import Var

    value = as_int(dim)
    if value is None and isinstance(dim, Var) and dim.name in hints:
        value = int(hints[dim.name])
    return value


@dataclass
class _Job:
    index: int
    payload: tuple[Any, ...]
    phase: str = "start"
    deadline: float = 0.0


class _Worker:
    def __init__(self, mp: Any) -> None:
        self.conn, child = mp.Pipe()
        self.proc = mp.Process(target=_worker_main, args=(child,), daemon=True)
        self.proc.start()
        child.close()
        self.job: _Job | None = None

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()


class WorkerPool:
    """`num_workers` spawned processes that build, check and time candidates.

    Example:
        >>> with WorkerPool(2, timeout_s=10) as pool:  # doctest: +SKIP
        ...     pool.measure([func], pool.reference(func))
    """

    def __init__(self, num_workers: int = 2, timeout_s: float = 10.0, target: str = "llvm") -> None:
        if num_workers < 1:
            raise ValueError(f"WorkerPool: num_workers must be at least 1, got {num_workers}")
        self.timeout_s = timeout_s
        self.target = target
        self.seed = 0
        self.shape_hints: dict[str, int] = {}
        """Sizes of symbolic dimensions in the measured inputs (the kernels stay symbolic)."""
        self._mp = multiprocessing.get_context("spawn")
        self.workers = [_Worker(self._mp) for _ in range(num_workers)]

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker.

        Example:
            >>> pool = WorkerPool(2)  # doctest: +SKIP
            >>> pool.close()  # doctest: +SKIP
        """
        for w in self.workers:
            if w.proc.is_alive() and w.job is None:
                try:
                    w.conn.send(None)
                except OSError:
                    pass
            w.kill()
        self.workers = []

    def reference(
        self, func: PrimFunc, timeout_s: float | None = None
    ) -> list[np.ndarray] | MeasureResult:
        """Every buffer after running the unscheduled `func` once, or the failure.

        Example:
            >>> ref = pool.reference(func)  # doctest: +SKIP
        """
        saved, self.timeout_s = self.timeout_s, timeout_s or 10 * self.timeout_s
        try:
            job = ("reference", dumps_ir(func), self.target, self.seed, self.shape_hints, None)
            result = self._run([job])[0]
        finally:
            self.timeout_s = saved
        return result

    def measure(self, funcs: list[PrimFunc], reference: list[np.ndarray]) -> list[MeasureResult]:
        """Build, check against `reference` and time each scheduled function.

        Example:
            >>> [r.status for r in pool.measure([good, crashing], ref)]  # doctest: +SKIP
            ['ok', 'crash']
        """
        payloads = [
            ("measure", dumps_ir(f), self.target, self.seed, self.shape_hints, reference)
            for f in funcs
        ]
        return self._run(payloads)

    # -- scheduling of jobs over workers ---------------------------------------------------
    def _run(self, payloads: list[tuple[Any, ...]]) -> list[Any]:
        pending = deque(_Job(n, p) for n, p in enumerate(payloads))
        results: list[Any] = [None] * len(payloads)
        timing: _Worker | None = None  # the worker holding the timing token
        ready: deque[_Worker] = deque()  # checked workers waiting for the token
        while pending or any(w.job for w in self.workers):
            # a kernel is timed alone: no build runs meanwhile, and no other kernel
            building = any(
                w.job is not None and w.job.phase not in ("ready", "run") for w in self.workers
            )
            if timing is None and ready and not building:
                timing = ready.popleft()
                timing.job.phase, timing.job.deadline = "run", time.monotonic() + self.timeout_s
                timing.conn.send("go")
            for w in self.workers if timing is None else ():
                if w.job is None and pending:
                    self._dispatch(w, pending.popleft())
            for w in self._wait():
                outcome = self._receive(w)
                if outcome is None:  # woken early: nothing to read yet
                    continue
                if isinstance(outcome, str):  # "started" (imports done) or "ready" (checked)
                    started = outcome == "started"
                    w.job.phase = "build and check" if started else "ready"
                    w.job.deadline = time.monotonic() + self.timeout_s if started else float("inf")
                    ready.extend(() if started else (w,))
                    continue
                results[w.job.index] = outcome
                if timing is w:
                    timing = None
                if w in ready:  # died while waiting for the token
                    ready.remove(w)
                if outcome_dead(outcome):
                    self._restart(w)
                w.job = None
        return results

    def _dispatch(self, w: _Worker, job: _Job) -> None:
        w.job = job
        job.deadline = time.monotonic() + _STARTUP_S
        try:
            w.conn.send(job.payload)
        except OSError:  # died while idle: its sentinel reports a crash
            pass

    def _wait(self) -> list[_Worker]:
        busy = [w for w in self.workers if w.job is not None]
        if not busy:
            return []
        now = time.monotonic()
        timeout = max(0.0, min(w.job.deadline for w in busy) - now)
        handles = {w.conn: w for w in busy} | {w.proc.sentinel: w for w in busy}
        fired = {handles[h] for h in wait(list(handles), timeout=min(timeout, 3600))}
        now = time.monotonic()
        fired |= {w for w in busy if w.job.deadline <= now}
        return [w for w in busy if w in fired]

    def _receive(self, w: _Worker) -> Any:
        """The worker's next message, a crash or timeout result, or None (nothing yet)."""
        try:
            if w.conn.poll():
                return w.conn.recv()
        except (EOFError, OSError):
            w.proc.join(5)
        if not w.proc.is_alive():
            w.proc.join(1)
            return MeasureResult("crash", error=f"worker died ({_exit_reason(w.proc.exitcode)})")
        if w.job.deadline <= time.monotonic():
            w.proc.kill()
            return MeasureResult(
                "timeout", error=f"no result within {self.timeout_s:g} s ({w.job.phase})"
            )
        return None

    def _restart(self, w: _Worker) -> None:
        w.kill()
        fresh = _Worker(self._mp)
        w.conn, w.proc = fresh.conn, fresh.proc


def _exit_reason(code: int | None) -> str:
    if code is not None and code < 0:
        import signal

        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def outcome_dead(outcome: Any) -> bool:
    """True when the worker that produced `outcome` must be restarted.

    Example:
        >>> outcome_dead(MeasureResult("timeout")), outcome_dead(MeasureResult("ok", 1e-3))
        (True, False)
    """
    return isinstance(outcome, MeasureResult) and outcome.status in ("crash", "timeout")


# -- the worker process ---------------------------------------------------------------------
def _worker_main(conn: Connection) -> None:
    import unity.codegen  # noqa: F401  # import before the first job: not part of its time limit

    while True:
        try:
            payload = conn.recv()
        except (EOFError, OSError):
            return
        if payload is None:
            return
        conn.send("started")
        conn.send(_serve(conn, *payload))


def _serve(
    conn: Connection, kind: str, func_bytes: bytes, target: str, seed: int, hints: Any, ref: Any
) -> Any:
    try:
        import unity
        from unity.ir.module import IRModule

        func = loads_ir(func_bytes)
        lib = unity.build(IRModule({"main": func}), target)
        args = make_args(func, seed, hints)
        lib["main"](*args)
        if kind == "reference":
            return args
        problem = _compare(args, ref)
        if problem:
            return MeasureResult("wrong", error=problem)
        lib, args = _as_run_in_a_model(func, lib, make_args(func, seed, hints), target)
        conn.send("ready")
        if conn.recv() != "go":
            return MeasureResult("error", error="worker: unexpected message")
        # weights evicted before each run: in a model they come from memory (see `_FLUSH`)
        timer = lib.time_evaluator(
            "main", unity.cpu(), number=1, repeat=5, min_repeat_ms=20, flush_cache=_FLUSH
        )
        return MeasureResult("ok", latency_s=min(timer(*args).results))
    except Exception as exc:  # noqa: BLE001  # what a candidate raises is its result
        lines = traceback.format_exception_only(type(exc), exc)
        return MeasureResult("error", error="".join(lines).strip()[-500:])


def _as_run_in_a_model(func: PrimFunc, lib: Any, args: list[np.ndarray], target: str):
    """The kernel and arguments a compiled model runs: a weight the schedule packs comes
    packed at compile time (`DefaultSchedules` does that for constant weights), so the
    packing copy is not timed."""
    import unity
    from unity.ir.module import IRModule
    from unity.schedule.default.prepack import pack_array, prepacked_params, split_prepacked

    packs = prepacked_params(func)
    if not packs:
        return lib, args
    lib = unity.build(IRModule({"main": split_prepacked(func, set(packs))}), target)
    return lib, [pack_array(packs[k], a) if k in packs else a for k, a in enumerate(args)]


def _compare(outs: list[np.ndarray], refs: list[np.ndarray]) -> str:
    for n, (out, ref) in enumerate(zip(outs, refs)):
        if out.dtype.kind != "f":
            if not np.array_equal(out, ref):
                return f"buffer {n}: {int(np.sum(out != ref))} elements differ from the reference"
            continue
        scale = float(np.nanmax(np.abs(ref))) if ref.size and not np.all(np.isnan(ref)) else 1.0
        close = np.isclose(out, ref, rtol=1e-3, atol=1e-4 * max(scale, 1.0), equal_nan=True)
        if not close.all():
            worst = float(np.nanmax(np.abs(out.astype(np.float64) - ref)))
            count = int((~close).sum())
            return f"buffer {n}: {count} elements differ from the reference (max error {worst:.3g})"
    return ""
