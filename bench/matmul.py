"""1024^3 float32 matmul, unscheduled (the TE definition as is), vs numpy in the same run.

The schedule issue adds the tuned version; this is the baseline a plain `unity.build`
gives.  Speeds are reported as GFLOP/s and as a share of the FMA peak of `peak.py`.

Run: ``python bench/matmul.py``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np

import unity
from unity import te, tir

N = 1024


def matmul(n: int) -> tir.PrimFunc:
    """`C[i, j] = sum_k A[i, k] * B[k, j]` with no schedule."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def main() -> None:
    from peak import measure_peak_gflops

    peak = measure_peak_gflops(seconds=0.2)
    start = time.perf_counter()
    lib = unity.build(matmul(N))
    build_s = time.perf_counter() - start
    rng = np.random.default_rng(0)
    a, b = (
        rng.standard_normal((N, N), dtype=np.float32),
        rng.standard_normal((N, N), dtype=np.float32),
    )
    c = np.empty((N, N), "float32")
    ours = lib.time_evaluator("main", unity.cpu(), number=1, repeat=1)(a, b, c).min
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    theirs = min(_time(lambda: np.matmul(a, b, out=c)) for _ in range(5))
    flops = 2 * N**3 / 1e9
    print(f"matmul {N}^3 float32, unscheduled (build {build_s:.2f} s); peak {peak:.0f} GFLOP/s")
    for who, seconds in (("unity", ours), ("numpy", theirs)):
        gflops = flops / seconds
        share = 100 * gflops / peak
        print(f"  {who} : {seconds * 1e3:8.1f} ms  {gflops:7.1f} GFLOP/s  {share:5.1f}% of peak")


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
