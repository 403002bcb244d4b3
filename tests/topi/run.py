"""Shared test helper: make a PrimFunc of TE tensors, run it, compare with numpy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from unity import te, tir

RNG = np.random.default_rng(0)


def rand(
    shape: Sequence[int], dtype: str = "float32", low: float = -2.0, high: float = 2.0
) -> np.ndarray:
    """Random array of `shape` (ints drawn in [low, high])."""
    if dtype.startswith(("int", "uint")):
        return RNG.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    return RNG.uniform(low, high, size=shape).astype(dtype)


def check(
    inputs: Sequence[te.Tensor],
    outputs: te.Tensor | Sequence[te.Tensor],
    arrays: Sequence[np.ndarray],
    expected: np.ndarray | Sequence[np.ndarray],
    rtol: float = 1e-5,
    atol: float = 1e-5,
    build: bool = False,
) -> None:
    """Interpret (and with `build`, compile for llvm) the function; outputs must match."""
    outs = [outputs] if isinstance(outputs, te.Tensor) else list(outputs)
    wants = [expected] if isinstance(expected, np.ndarray) else list(expected)
    func = te.create_prim_func([*inputs, *outs])
    got = [np.zeros(w.shape, t.dtype) for w, t in zip(wants, outs, strict=True)]
    tir.interpret(func, *arrays, *got)
    for g, w in zip(got, wants, strict=True):
        np.testing.assert_allclose(g, w.astype(g.dtype), rtol=rtol, atol=atol)
    if build:
        import unity

        lib = unity.build(func, target="llvm")
        compiled = [np.zeros(w.shape, t.dtype) for w, t in zip(wants, outs, strict=True)]
        lib["main"](*arrays, *compiled)
        for g, w in zip(compiled, wants, strict=True):
            np.testing.assert_allclose(g, w.astype(g.dtype), rtol=rtol, atol=atol)
