"""Tiny workloads and checks shared by the schedule tests.

Example:
    >>> func = matmul(4, 4, 4)  # doctest: +SKIP
    >>> check_same_result(func, Schedule(func).mod)  # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np

import unity.tir.printer  # noqa: F401 - registers the TIR printer used in error messages
from unity import te
from unity.ir.module import IRModule
from unity.ir.structural import assert_structural_equal
from unity.tir.function import PrimFunc
from unity.tir.interpreter import interpret


def elementwise(m: int = 8, n: int = 6) -> PrimFunc:
    """`B = A * 2; C = B + 1` with `B` an intermediate buffer."""
    a = te.placeholder((m, n), name="A")
    b = te.compute((m, n), lambda i, j: a[i, j] * 2.0, name="B")
    c = te.compute((m, n), lambda i, j: b[i, j] + 1.0, name="C")
    return te.create_prim_func([a, c])


def matmul(m: int = 16, n: int = 12, k: int = 8) -> PrimFunc:
    """`C[i, j] = sum_k A[i, k] * B[k, j]`."""
    a = te.placeholder((m, k), name="A")
    b = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    return te.create_prim_func([a, b, c])


def matmul_relu(m: int = 8, n: int = 8, k: int = 4) -> PrimFunc:
    """`D = relu(A @ B)`: a reduction followed by an elementwise block."""
    a = te.placeholder((m, k), name="A")
    b = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    d = te.compute((m, n), lambda i, j: te.max(c[i, j], te.const(0.0)), name="D")
    return te.create_prim_func([a, b, d])


def conv2d(n: int = 1, ci: int = 2, hw: int = 6, co: int = 3, kk: int = 3) -> PrimFunc:
    """NCHW conv2d, stride 1, no padding."""
    data = te.placeholder((n, ci, hw, hw), name="X")
    w = te.placeholder((co, ci, kk, kk), name="W")
    rc = te.reduce_axis((0, ci), name="rc")
    ry = te.reduce_axis((0, kk), name="ry")
    rx = te.reduce_axis((0, kk), name="rx")
    out = hw - kk + 1
    y = te.compute(
        (n, co, out, out),
        lambda b, c, h, x: te.sum(
            data[b, rc, h + ry, x + rx] * w[c, rc, ry, rx], axis=[rc, ry, rx]
        ),
        name="Y",
    )
    return te.create_prim_func([data, w, y])


def softmax(m: int = 4, n: int = 8) -> PrimFunc:
    """Row softmax in four blocks: max, exp, sum, divide."""
    a = te.placeholder((m, n), name="A")
    k1 = te.reduce_axis((0, n), name="k1")
    mx = te.compute((m,), lambda i: te.max(a[i, k1], axis=k1), name="M")
    e = te.compute((m, n), lambda i, j: te.exp(a[i, j] - mx[i]), name="E")
    k2 = te.reduce_axis((0, n), name="k2")
    s = te.compute((m,), lambda i: te.sum(e[i, k2], axis=k2), name="S")
    out = te.compute((m, n), lambda i, j: e[i, j] / s[i], name="O")
    return te.create_prim_func([a, out])


def run(func: PrimFunc | IRModule, seed: int = 0) -> list[np.ndarray]:
    """Run `func` in the reference interpreter on fixed random inputs; return every buffer.

    The first parameters are inputs (random), the last one is the output (zeros).
    """
    if isinstance(func, IRModule):
        func = func["main"]  # type: ignore[assignment]
    rng = np.random.default_rng(seed)
    params = func.buffer_params()
    arrays = [
        rng.standard_normal([int(d.value) for d in p.shape]).astype(p.dtype) for p in params[:-1]
    ]
    arrays.append(np.zeros([int(d.value) for d in params[-1].shape], params[-1].dtype))
    interpret(func, *arrays)
    return arrays


def check_same_result(before: PrimFunc | IRModule, after: PrimFunc | IRModule) -> None:
    """Assert that `before` and `after` compute the same output."""
    np.testing.assert_allclose(run(after)[-1], run(before)[-1], rtol=1e-5, atol=1e-5)


def assert_ir(actual: PrimFunc | IRModule, expected: str) -> None:
    """Compare `actual` with the script `expected`: structurally when the parser exists,
    else as printed text."""
    func = actual["main"] if isinstance(actual, IRModule) else actual
    try:
        from unity.script import from_source
    except ImportError:
        got = func.script().strip()
        assert got == _dedent(expected), f"got:\n{got}\nexpected:\n{_dedent(expected)}"
        return
    assert_structural_equal(func, from_source(_dedent(expected)))


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).strip()
