"""`C = A + B` on 2^24 float32: one parallel, vectorized loop vs `np.add(a, b, out=c)`.

Also measures the launch cost of a parallel loop (libgomp's `GOMP_parallel`, the
mechanism the codegen uses) against fanning the same call out from Python threads.

Run: ``python bench/elementwise.py``
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np

import unity
from unity import tir
from unity.runtime.thread_pool import num_cores

N, LANES, CHUNK = 1 << 24, 16, 1 << 14


def vector_add(n: int) -> tir.PrimFunc:
    """`C = A + B`: a parallel loop over chunks, each a loop of 16-lane vector adds."""
    A, B, C = (tir.decl_buffer((n,), "float32", name) for name in "ABC")
    chunk, v = tir.Var("chunk"), tir.Var("v")
    idx = tir.Ramp(chunk * CHUNK + v * LANES, tir.const(1), LANES)
    inner = tir.For(
        v,
        tir.const(0),
        tir.const(CHUNK // LANES),
        tir.ForKind.SERIAL,
        tir.BufferStore(C, A[idx] + B[idx], (idx,)),
    )
    return tir.PrimFunc(
        (A, B, C), tir.For(chunk, tir.const(0), tir.const(n // CHUNK), tir.ForKind.PARALLEL, inner)
    )


def _empty(kind: tir.ForKind) -> tir.PrimFunc:
    """A loop of `num_cores` iterations storing one int each: launch cost only."""
    A = tir.decl_buffer((64,), "int32", "A")
    i = tir.Var("i")
    return tir.PrimFunc(
        (A,), tir.For(i, tir.const(0), tir.const(num_cores()), kind, tir.BufferStore(A, i, (i,)))
    )


def _per_call(fn, reps: int) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - start) / reps


def launch_costs() -> tuple[float, float]:
    """(GOMP_parallel launch, Python-thread fan-out) cost in microseconds, beyond a serial call."""
    par, ser = unity.build(_empty(tir.ForKind.PARALLEL)), unity.build(_empty(tir.ForKind.SERIAL))
    a = np.zeros(64, "int32")
    f_par, f_ser = par["main"], ser["main"]
    args_par, args_ser = f_par.convert_args((a,)), f_ser.convert_args((a,))
    c_par, c_ser = f_par.c_function, f_ser.c_function
    serial = min(_per_call(lambda: c_ser(*args_ser), 20000) for _ in range(3))
    gomp = min(_per_call(lambda: c_par(*args_par), 20000) for _ in range(3))
    pool = ThreadPoolExecutor(num_cores())

    def fan_out() -> None:
        for future in [pool.submit(c_ser, *args_ser) for _ in range(num_cores())]:
            future.result()

    threads = min(_per_call(fan_out, 2000) for _ in range(3))
    pool.shutdown()
    return (gomp - serial) * 1e6, (threads - serial) * 1e6


def main() -> None:
    from peak import measure_peak_gflops

    peak = measure_peak_gflops(seconds=0.2)
    lib = unity.build(vector_add(N))
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(N, dtype=np.float32), rng.standard_normal(N, dtype=np.float32)
    c = np.empty_like(a)
    timer = lib.time_evaluator("main", unity.cpu(), number=5, repeat=5)
    unity.runtime.set_num_threads(1)
    one_thread = timer(a, b, c).min
    unity.runtime.set_num_threads(0)
    ours = timer(a, b, c).min
    assert np.array_equal(c, a + b)
    theirs = min(_per_call(lambda: np.add(a, b, out=c), 5) for _ in range(5))
    gbs = 3 * 4 * N / 1e9
    flops = N / 1e9
    print(f"C = A + B, 2^24 float32 on {num_cores()} cores")
    print(
        f"  unity : {ours * 1e3:7.2f} ms  {gbs / ours:6.1f} GB/s  {flops / ours:5.2f} GFLOP/s "
        f"({100 * flops / ours / peak:.2f}% of {peak:.0f} GFLOP/s peak)"
    )
    print(f"  unity on one thread: {one_thread * 1e3:7.2f} ms  {gbs / one_thread:6.1f} GB/s")
    print(f"  numpy : {theirs * 1e3:7.2f} ms  {gbs / theirs:6.1f} GB/s")
    print(f"  ratio numpy/unity time: {theirs / ours:.2f}x (>1: unity is faster)")
    gomp, threads = launch_costs()
    print(
        f"parallel launch cost: GOMP_parallel {gomp:.1f} us, "
        f"Python threads + ctypes {threads:.1f} us"
    )


if __name__ == "__main__":
    main()
