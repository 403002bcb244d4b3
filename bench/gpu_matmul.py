"""4096^3 matmul on the GPU: the default GPU schedule and a hand-tuned one, vs the vendor library.

Each schedule is built with `unity.build(..., "cuda")` (CUDA C compiled by nvcc through
pycuda or cuda-python) and timed with CUDA events (`CUDAModule.time_evaluator`); the vendor figure is
`torch.matmul` or `cupy.matmul` in the same process when either is installed.  Prints
TFLOP/s (2 n^3 flops per call) and the largest error against numpy (float16 accumulates
in float16, so its error grows with n).

- default: `unity.schedule.default_gpu`.  float32 on the CUDA cores (at 4096^3:
  128x128 block tiles, 8x8 register tiles, k by 8; smaller GEMMs take 64x64 or 32x32
  tiles to fill the SMs); float16 on the tensor cores (`wmma` 16x16x16 fragments,
  128x128 block tiles of 8 warps, each 64x32 of C, k by 32);
- hand-tuned: float32 `schedule_matmul_tiled` with 128x128 block tiles, 8x8 register
  tiles, k by 16; float16 `schedule_matmul_wmma` with 128x128 block tiles of 4 warps,
  each 64x64 of C (16 accumulator fragments: more reuse of each loaded fragment).

Without a GPU (or without pycuda and cuda-python) it says so and exits.

Run: ``python bench/gpu_matmul.py [--n 4096] [--dtype float32 float16] [--number 10]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import numpy as np

import unity
from unity import te
from unity.ir.module import IRModule
from unity.runtime.cuda import CudaUnavailableError, driver
from unity.schedule import Schedule
from unity.schedule.default_gpu import apply_default_gpu_schedules
from unity.schedule.default_gpu.matmul import schedule_matmul_tiled
from unity.schedule.default_gpu.tensor_core import WmmaTile, schedule_matmul_wmma


def matmul_func(n: int, dtype: str):
    """`C = A @ B`, n x n, unscheduled."""
    A = te.placeholder((n, n), dtype, name="A")
    B = te.placeholder((n, n), dtype, name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def schedules(n: int, dtype: str) -> dict[str, IRModule]:
    """The default and the hand-tuned schedule of the matmul."""
    default = apply_default_gpu_schedules(IRModule({"main": matmul_func(n, dtype)}))
    sch = Schedule(matmul_func(n, dtype))
    if dtype == "float16":
        schedule_matmul_wmma(sch, "C", WmmaTile((2, 2), (4, 4)))
    else:
        schedule_matmul_tiled(sch, "C", threads=16, tm=8, bk=16)
    return {"default": default, "hand-tuned": sch.mod}


def vendor_seconds(a: np.ndarray, b: np.ndarray, number: int) -> tuple[str, float] | None:
    """Seconds per `matmul` of torch or cupy on the GPU, when one is installed."""
    try:
        import torch

        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        torch.matmul(ta, tb)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(number):
            torch.matmul(ta, tb)
        end.record()
        end.synchronize()
        return "torch", start.elapsed_time(end) / 1e3 / number
    except ImportError:
        pass
    try:
        import cupy

        ca, cb = cupy.asarray(a), cupy.asarray(b)
        cupy.matmul(ca, cb)
        cupy.cuda.Device().synchronize()
        start = time.perf_counter()
        for _ in range(number):
            cupy.matmul(ca, cb)
        cupy.cuda.Device().synchronize()
        return "cupy", (time.perf_counter() - start) / number
    except ImportError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--dtype", nargs="+", default=["float32", "float16"])
    parser.add_argument("--number", type=int, default=10)
    args = parser.parse_args()
    try:
        driver()
    except CudaUnavailableError as err:
        print(f"gpu_matmul: skipped, {err}")
        return
    n, flops = args.n, 2.0 * args.n**3
    rng = np.random.default_rng(0)
    for dtype in args.dtype:
        a = rng.standard_normal((n, n)).astype(dtype)
        b = rng.standard_normal((n, n)).astype(dtype)
        reference = a.astype("float32") @ b.astype("float32")
        for name, mod in schedules(n, dtype).items():
            lib = unity.build(mod, "cuda")
            c = np.zeros((n, n), dtype)
            seconds = lib.time_evaluator("main", number=args.number)(a, b, c).mean
            error = float(np.max(np.abs(c.astype("float32") - reference)))
            print(f"{dtype} {name:10s}: {flops / seconds / 1e12:7.2f} TFLOP/s  max |err| {error:.3g}")
        vendor = vendor_seconds(a, b, args.number)
        if vendor is not None:
            print(f"{dtype} {vendor[0]:10s}: {flops / vendor[1] / 1e12:7.2f} TFLOP/s")


if __name__ == "__main__":
    main()
