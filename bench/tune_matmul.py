"""Tuned vs default schedule of a float32 matmul, next to numpy and the FMA peak.

Runs `unity.tune` on an `n x n x n` matmul (default 256, 32 trials; the database goes
to `--work-dir`, so a second run resumes and only re-times), then times three kernels
in interleaved rounds in this process: the default schedule (`unity.schedule.default`),
the tuned one (`ApplyTuningDatabase`), and numpy's `matmul`; each as a share of the
FMA peak measured by `peak.py` in the same rounds.

Run: ``python bench/tune_matmul.py [--n N] [--trials T] [--work-dir DIR] [--rounds R]``
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np

import unity
from unity.ir.module import IRModule
from unity.schedule.default import apply_default_schedules
from unity.tune import ApplyTuningDatabase, Database, workload_key


def main() -> None:
    from matmul import matmul
    from peak import measure_peak_gflops

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256, help="matrix size (default 256)")
    parser.add_argument("--trials", type=int, default=32, help="tuning trials (default 32)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--work-dir", default="tune_logs/bench_matmul", help="database folder")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds")
    args = parser.parse_args()
    n = args.n
    func = matmul(n)

    start = time.perf_counter()
    path = unity.tune(
        func, "llvm", trials=args.trials, work_dir=args.work_dir, num_workers=args.workers
    )
    tune_s = time.perf_counter() - start
    db = Database(path)
    records = db.of(workload_key(func))
    best = db.best(workload_key(func))

    mod = IRModule({"main": func})
    libs = {
        "default": unity.build(apply_default_schedules(mod, "llvm"), "llvm"),
        "tuned": unity.build(ApplyTuningDatabase(path)(mod), "llvm"),
    }
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    c = np.empty((n, n), np.float32)
    for lib in libs.values():
        lib["main"](a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    timers = {who: lib.time_evaluator("main", unity.cpu(), number=1, repeat=3, min_repeat_ms=50)
              for who, lib in libs.items()}  # fmt: skip
    times = {who: float("inf") for who in (*libs, "numpy")}
    peak = measure_peak_gflops()  # a full-length measurement; short ones in the rounds
    for _ in range(args.rounds):  # interleaved: each round sees about the same load
        peak = max(peak, measure_peak_gflops(seconds=0.03, tries=2))
        for who, timer in timers.items():
            times[who] = min(times[who], timer(a, b, c).min)
        times["numpy"] = min(times["numpy"], _time(lambda: np.matmul(a, b, out=c)))

    status = collections.Counter(r.status for r in records)
    flops = 2 * n**3 / 1e9
    print(f"matmul {n}^3 float32; FMA peak {peak:.0f} GFLOP/s (best of {args.rounds} rounds)")
    print(f"## tuned results ({path})")
    print(f"  tuning: {sum(v for k, v in status.items() if k != 'invalid')} trials in the database "
          f"({dict(status)}), this run {tune_s:.1f} s")  # fmt: skip
    print(f"  best: {best.candidate_id if best else None}")
    for who, seconds in times.items():
        gflops = flops / seconds
        print(
            f"  {who:8s}: {seconds * 1e3:8.3f} ms  {gflops:7.1f} GFLOP/s  {100 * gflops / peak:5.1f}% of peak"
        )
    print(f"  tuned / default speed: {times['default'] / times['tuned']:.2f}x; "
          f"tuned / numpy speed: {times['numpy'] / times['tuned']:.2f}x")  # fmt: skip


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
