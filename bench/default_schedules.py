"""Default CPU schedules, per operator: scheduled vs unscheduled vs numpy, and launch cost.

For each operator (the shapes of ResNet-50 / transformer layers), the PrimFunc that
`LegalizeOps` makes is built twice, unscheduled and with `unity.schedule.default`, and
timed next to numpy where numpy has the same operation (matmul, elementwise, softmax,
mean).  GFLOP/s figures count multiply-adds as two flops and are given as a share of the
FMA peak of `peak.py`, measured in the same run.  Then the 1024^3 matmul's default
schedule as a share of peak (target: >= 70%), and the cost of launching an empty
parallel loop on the thread pool.

The machine is shared: each figure is the best of `--repeat` runs.  While other jobs
hold the cores, a parallel loop waits for a descheduled worker (milliseconds); run with
``--threads 1`` to see the kernels' single-core speed under load.

Run: ``python bench/default_schedules.py [--repeat R] [--no-naive] [--only NAME] [--threads T]``
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "schedule" / "default"))

import numpy as np
from default_workloads import (
    add_broadcast,
    avg_pool,
    conv,
    conv_bias_relu,
    dense_bias_relu,
    global_avg_pool,
    layer_norm,
    matmul,
    max_pool,
    mean,
    softmax,
)  # fmt: skip

import unity
from unity import tir
from unity.runtime import thread_pool
from unity.schedule.default import schedule_primfunc


def _np_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _np_layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * g + b


# name -> (PrimFunc factory, flops or None, numpy equivalent or None, unscheduled is cheap)
CASES: dict[str, tuple[Callable[[], tir.PrimFunc], float | None, Callable | None, bool]] = {
    "conv 7x7/2 3->64 @224": (
        lambda: conv(1, 3, 224, 224, 64, 7, 2, 3),
        2 * 3 * 64 * 49 * 112**2,
        None,
        False,
    ),
    "conv 3x3 64->64 @56 +bias+relu": (
        lambda: conv_bias_relu(1, 64, 56, 56, 64, 3, pad=1),
        2 * 64 * 64 * 9 * 56**2,
        None,
        False,
    ),
    "conv 1x1 256->64 @56": (
        lambda: conv(1, 256, 56, 56, 64, 1),
        2 * 256 * 64 * 56**2,
        None,
        False,
    ),
    "conv 3x3/2 128->128 @57": (
        lambda: conv(1, 128, 57, 57, 128, 3, 2),
        2 * 128 * 128 * 9 * 28**2,
        None,
        False,
    ),
    "conv 3x3 512->512 @7": (
        lambda: conv(1, 512, 7, 7, 512, 3, pad=1),
        2 * 512 * 512 * 9 * 49,
        None,
        False,
    ),
    "conv depthwise 3x3 256 @28": (
        lambda: conv(1, 256, 28, 28, 256, 3, pad=1, groups=256),
        2 * 256 * 9 * 28**2,
        None,
        True,
    ),
    "matmul 1024^3": (lambda: matmul((1024, 1024), (1024, 1024)), 2 * 1024**3, np.matmul, False),
    "matmul 100x768x768": (
        lambda: matmul((100, 768), (768, 768)),
        2 * 100 * 768**2,
        np.matmul,
        False,
    ),
    "batch matmul 12x128x64x128": (
        lambda: matmul((12, 128, 64), (12, 64, 128)),
        2 * 12 * 128 * 64 * 128,
        np.matmul,
        True,
    ),
    "dense+bias+relu 128x768->3072": (
        lambda: dense_bias_relu(128, 768, 3072),
        2 * 128 * 768 * 3072,
        lambda x, w, b: np.maximum(x @ w.T + b, 0),
        False,
    ),
    "dense 1x2048->1000 (gemv)": (
        lambda: dense_bias_relu(1, 2048, 1000),
        2 * 2048 * 1000,
        lambda x, w, b: np.maximum(x @ w.T + b, 0),
        True,
    ),
    "softmax 12x128x128": (lambda: softmax((12, 128, 128)), None, _np_softmax, True),
    "layer norm 128x768": (lambda: layer_norm((128, 768)), None, _np_layer_norm, True),
    "mean 64x3136 (last axis)": (
        lambda: mean((64, 3136), -1),
        None,
        lambda x: x.mean(-1, keepdims=True),
        True,
    ),
    "global avg pool 2048x7x7": (
        lambda: global_avg_pool((1, 2048, 7, 7)),
        None,
        lambda x: x.mean((2, 3), keepdims=True),
        True,
    ),
    "max pool 3x3/2 64 @112": (lambda: max_pool((1, 64, 112, 112), 3, 2, 1), None, None, True),
    "avg pool 2x2/2 64 @56": (lambda: avg_pool((1, 64, 56, 56), 2, 2, 0), None, None, True),
    "add broadcast 64x56x56 + 64x1x1": (
        lambda: add_broadcast((1, 64, 56, 56), (1, 64, 1, 1)),
        None,
        np.add,
        True,
    ),
}


def _args(func: tir.PrimFunc) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [
        rng.standard_normal([int(d.value) for d in p.shape]).astype(p.dtype)
        for p in func.buffer_params()
    ]


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _kernel_time(lib, args: list[np.ndarray], repeat: int) -> float:
    return lib.time_evaluator("main", unity.cpu(), number=1, repeat=repeat)(*args).min


def launch_cost_us(repeat: int = 20) -> tuple[float, float]:
    """(parallel, serial) microseconds per call of a kernel whose loop does nothing.

    Example:
        >>> par, ser = launch_cost_us(3)  # doctest: +SKIP
    """
    from unity.runtime.thread_pool import num_cores

    out = []
    for kind in (tir.ForKind.PARALLEL, tir.ForKind.SERIAL):
        a = tir.decl_buffer((num_cores(),), "float32", "A")
        i = tir.Var("i")
        body = tir.For(
            i, tir.const(0), tir.const(num_cores()), kind, tir.BufferStore(a, tir.const(1.0), (i,))
        )
        lib = unity.build(tir.PrimFunc((a,), body))
        arr = np.zeros(num_cores(), "float32")
        ev = lib.time_evaluator("main", unity.cpu(), number=2000, repeat=repeat)
        out.append(ev(arr).min * 1e6)
    return out[0], out[1]


def main() -> None:
    from peak import measure_peak_gflops

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="timed runs per figure (best kept)")
    parser.add_argument("--no-naive", action="store_true", help="skip the unscheduled builds")
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument(
        "--threads", type=int, default=0, help="threads for parallel loops (0: one per core)"
    )
    args = parser.parse_args()
    thread_pool.set_num_threads(args.threads)
    threads = args.threads or None
    peak = max(measure_peak_gflops(seconds=0.05, threads=threads, tries=3) for _ in range(3))
    cores = f"{args.threads} thread(s)" if args.threads else "all cores"
    print(f"FMA peak {peak:.0f} GFLOP/s on {cores}; times are the best of {args.repeat} runs")
    print(f"{'operator':34s} {'default':>10s} {'unsched':>10s} {'numpy':>10s} {'speedup':>8s} "
          f"{'vs np':>6s} {'GFLOP/s':>8s} {'%peak':>6s} {'sched s':>7s}")  # fmt: skip
    for name, (factory, flops, ref, cheap_naive) in CASES.items():
        if args.only and args.only not in name:
            continue
        func = factory()
        data = _args(func)
        start = time.perf_counter()
        scheduled = schedule_primfunc(func)
        sched_s = time.perf_counter() - start
        lib = unity.build(scheduled)
        t_default = _kernel_time(lib, data, args.repeat)
        expected = [a.copy() for a in data]
        t_naive = None
        if not args.no_naive:
            naive = unity.build(func)
            t_naive = _kernel_time(naive, expected, 1 if not cheap_naive else 3)
            out = [a.copy() for a in data]
            lib["main"](*out)
            np.testing.assert_allclose(out[-1], expected[-1], rtol=1e-3, atol=1e-3, err_msg=name)
        t_np = _best(lambda r=ref, d=data: r(*d[:-1]), args.repeat) if ref is not None else None
        gflops = flops / t_default / 1e9 if flops else None
        print(
            f"{name:34s} {t_default * 1e3:8.3f}ms "
            f"{_ms(t_naive):>10s} {_ms(t_np):>10s} "
            f"{_ratio(t_naive, t_default):>8s} {_ratio(t_np, t_default):>6s} "
            f"{'' if gflops is None else f'{gflops:8.1f}':>8s} "
            f"{'' if gflops is None else f'{100 * gflops / peak:5.1f}%':>6s} {sched_s:7.3f}"
        )
    par, ser = launch_cost_us()
    print(
        f"parallel launch cost: {par:.2f} us per empty parallel loop (serial loop: {ser:.2f} us per call)"
    )
    mm = matmul((1024, 1024), (1024, 1024))
    lib = unity.build(schedule_primfunc(mm))
    data = _args(mm)
    best_t, best_peak = float("inf"), 0.0
    for _ in range(max(3, args.repeat // 2)):  # interleaved with the peak: same load
        best_peak = max(best_peak, measure_peak_gflops(seconds=0.03, threads=threads, tries=2))
        best_t = min(best_t, _kernel_time(lib, data, 3))
    g = 2 * 1024**3 / best_t / 1e9
    print(f"default schedule, matmul 1024^3: {best_t * 1e3:.2f} ms, {g:.1f} GFLOP/s, "
          f"{100 * g / best_peak:.1f}% of peak (target >= 70%)")  # fmt: skip


def _ms(t: float | None) -> str:
    return "" if t is None else f"{t * 1e3:8.3f}ms"


def _ratio(a: float | None, b: float) -> str:
    return "" if a is None else f"{a / b:.1f}x"


if __name__ == "__main__":
    main()
