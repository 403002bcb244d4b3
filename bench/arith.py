"""Time `Analyzer.simplify` on 10,000 index expressions from split/fuse of 2-4 levels.

Each case makes fresh loop variables with bound ranges (as a schedule primitive would),
builds the index expressions a split or fuse chain leaves behind, and simplifies them.

Run: ``python bench/arith.py [count]``
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from unity import tir
from unity.tir.arith import Analyzer


def _split_case(rng: random.Random, levels: int) -> tuple[dict[tir.Var, int], list[tir.PrimExpr]]:
    """`i` split into `levels` loops: the index, and the outer loop recovered by // and %."""
    factors = [rng.choice([2, 4, 8, 16, 32]) for _ in range(levels)]
    loops = {tir.Var(f"i{k}"): f for k, f in enumerate(factors)}
    index: tir.PrimExpr = tir.const(0)
    for var, f in loops.items():
        index = index * f + var
    inner = factors[-1]
    return loops, [index, index // inner, index % inner, (index + rng.randint(0, 3)) // inner]


def _fuse_case(rng: random.Random, levels: int) -> tuple[dict[tir.Var, int], list[tir.PrimExpr]]:
    """`levels` loops fused, the fused loop split again: each original index recovered."""
    extents = [rng.choice([3, 4, 8, 16, 64]) for _ in range(levels)]
    total = 1
    for e in extents:
        total *= e
    factor = rng.choice([2, 4, 8, 16])
    outer, inner = tir.Var("fo"), tir.Var("fi")
    loops = {outer: -(-total // factor), inner: factor}
    fused = outer * factor + inner
    exprs, stride = [], total
    for e in extents:
        stride //= e
        exprs.append(fused // stride % e)
    return loops, exprs


def generate(count: int, seed: int = 0) -> list[tuple[dict[tir.Var, int], list[tir.PrimExpr]]]:
    """Cases totalling at least `count` expressions."""
    rng = random.Random(seed)
    cases, n = [], 0
    while n < count:
        make = _split_case if rng.random() < 0.5 else _fuse_case
        case = make(rng, rng.randint(2, 4))
        cases.append(case)
        n += len(case[1])
    return cases


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    cases = generate(count)
    n_exprs = sum(len(exprs) for _, exprs in cases)
    simplify_s = total_s = 0.0
    cpu0 = time.process_time()
    for loops, exprs in cases:
        t0 = time.perf_counter()
        ana = Analyzer()
        for var, extent in loops.items():
            ana.bind(var, tir.Range.from_min_extent(0, extent))
        t1 = time.perf_counter()
        for e in exprs:
            ana.simplify(e)
        t2 = time.perf_counter()
        simplify_s += t2 - t1
        total_s += t2 - t0
    cpu_s = time.process_time() - cpu0
    print(f"expressions: {n_exprs} in {len(cases)} cases")
    print(f"simplify:          {simplify_s:.3f} s total, {simplify_s / n_exprs * 1e6:.1f} us/expr")
    print(f"bind + simplify:   {total_s:.3f} s total, {total_s / n_exprs * 1e6:.1f} us/expr")
    print(f"bind + simplify, process CPU time: {cpu_s / n_exprs * 1e6:.1f} us/expr")


if __name__ == "__main__":
    main()
