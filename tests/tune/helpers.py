"""Workloads and planted faulty spaces shared by the tuner tests."""

from __future__ import annotations

from unity import te, tir
from unity.tir.function import PrimFunc
from unity.tune.space import Space


def matmul(n: int, m: int | None = None, k: int | None = None) -> PrimFunc:
    """`C = A @ B` with no schedule."""
    m, k = m or n, k or n
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return te.create_prim_func([A, B, C])


def faulty_func(func: PrimFunc, mode: str) -> PrimFunc:
    """A function with `func`'s parameters whose body is right, wrong, crashes or hangs."""
    out = func.params[-1]
    i = tir.Var("i")
    if mode == "ok":
        return func
    if mode == "hang":
        body = tir.While(
            tir.const(True), tir.BufferStore(out, tir.const(1.0), (tir.const(0), tir.const(0)))
        )
    elif mode == "crash":  # stores ~1 GB past the buffer, far outside any mapping
        index = (i * tir.const(10_000_000), tir.const(0))
        body = tir.For(
            i,
            tir.const(0),
            tir.const(16),
            tir.ForKind.SERIAL,
            tir.BufferStore(out, tir.const(1.0), index),
        )
    else:  # "wrong": leaves C untouched
        body = tir.Evaluate(tir.const(0))
    return tir.PrimFunc(func.params, body)


def faulty_space(modes: tuple[str, ...] = ("ok", "wrong", "crash", "hang")) -> Space:
    """A space whose knob `mode` plants a faulty kernel."""

    def apply(func: PrimFunc, knobs: dict) -> tuple[PrimFunc, str]:
        return faulty_func(func, knobs["mode"]), f"faulty({knobs['mode']})"

    return Space("faulty", {"mode": modes}, apply)
