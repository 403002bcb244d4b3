"""TE workloads lowered by `unity.tir.lower`, built for `llvm`, vs numpy and the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import te, tir
from unity.topi.testing import conv2d_nchw_python, layer_norm_python, softmax_python

RNG = np.random.default_rng(1)


def _check(
    func: tir.PrimFunc,
    inputs: list[np.ndarray],
    out_shape: tuple[int, ...],
    expected: np.ndarray,
    rtol: float = 1e-5,
) -> None:
    """Run `func` compiled and interpreted; both must match `expected`."""
    lib = unity.build(func)
    compiled = np.zeros(out_shape, "float32")
    lib["main"](*inputs, compiled)
    np.testing.assert_allclose(compiled, expected, rtol=rtol, atol=1e-5)
    interpreted = np.zeros(out_shape, "float32")
    tir.interpret(func, *inputs, interpreted)
    np.testing.assert_allclose(compiled, interpreted, rtol=rtol, atol=1e-5)


def test_matmul_with_symbolic_rows():
    n = te.var("n")
    A = te.placeholder((n, 24), name="A")
    B = te.placeholder((24, 16), name="B")
    k = te.reduce_axis((0, 24), name="k")
    C = te.compute((n, 16), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    func = te.create_prim_func([A, B, C])
    for rows in (1, 9):
        a = RNG.standard_normal((rows, 24)).astype("float32")
        b = RNG.standard_normal((24, 16)).astype("float32")
        _check(func, [a, b], (rows, 16), a @ b)


def test_conv2d_nchw_with_padding():
    data = te.placeholder((1, 3, 8, 8), name="data")
    kernel = te.placeholder((4, 3, 3, 3), name="kernel")
    padded = te.compute(
        (1, 3, 10, 10),
        lambda n, c, h, w: te.if_then_else(
            (h >= 1) & (h < 9) & (w >= 1) & (w < 9), data[n, c, h - 1, w - 1], te.const(0.0)
        ),
        name="pad",
    )
    rc, ry, rx = (
        te.reduce_axis((0, 3), "rc"),
        te.reduce_axis((0, 3), "ry"),
        te.reduce_axis((0, 3), "rx"),
    )
    out = te.compute(
        (1, 4, 8, 8),
        lambda n, f, y, x: te.sum(
            padded[n, rc, y + ry, x + rx] * kernel[f, rc, ry, rx], axis=[rc, ry, rx]
        ),
        name="conv",
    )
    d = RNG.standard_normal((1, 3, 8, 8)).astype("float32")
    w = RNG.standard_normal((4, 3, 3, 3)).astype("float32")
    _check(
        te.create_prim_func([data, kernel, out]),
        [d, w],
        (1, 4, 8, 8),
        conv2d_nchw_python(d, w, 1, 1),
        rtol=1e-4,
    )


def test_softmax_rows():
    X = te.placeholder((4, 33), name="X")
    k1, k2 = te.reduce_axis((0, 33), "k1"), te.reduce_axis((0, 33), "k2")
    mx = te.compute((4,), lambda i: te.max(X[i, k1], axis=k1), name="mx")
    ex = te.compute((4, 33), lambda i, j: te.exp(X[i, j] - mx[i]), name="ex")
    sm = te.compute((4,), lambda i: te.sum(ex[i, k2], axis=k2), name="sm")
    Y = te.compute((4, 33), lambda i, j: ex[i, j] / sm[i], name="Y")
    x = RNG.standard_normal((4, 33)).astype("float32")
    _check(te.create_prim_func([X, Y]), [x], (4, 33), softmax_python(x))


def test_layer_norm():
    X = te.placeholder((3, 64), name="X")
    G, Bt = te.placeholder((64,), name="gamma"), te.placeholder((64,), name="beta")
    k1, k2 = te.reduce_axis((0, 64), "k1"), te.reduce_axis((0, 64), "k2")
    total = te.compute((3,), lambda i: te.sum(X[i, k1], axis=k1), name="total")
    mean = te.compute((3,), lambda i: total[i] / te.const(64.0), name="mean")
    sq = te.compute(
        (3,), lambda i: te.sum((X[i, k2] - mean[i]) * (X[i, k2] - mean[i]), axis=k2), name="sq"
    )
    Y = te.compute(
        (3, 64),
        lambda i, j: (
            (X[i, j] - mean[i]) * te.rsqrt(sq[i] / te.const(64.0) + te.const(1e-5)) * G[j] + Bt[j]
        ),
        name="Y",
    )
    x = RNG.standard_normal((3, 64)).astype("float32")
    g, b = RNG.standard_normal(64).astype("float32"), RNG.standard_normal(64).astype("float32")
    _check(
        te.create_prim_func([X, G, Bt, Y]),
        [x, g, b],
        (3, 64),
        layer_norm_python(x, g, b),
        rtol=1e-4,
    )


@pytest.mark.parametrize("kind", [tir.ForKind.PARALLEL, tir.ForKind.VECTORIZED])
def test_annotated_loop_kinds_from_te(kind: tir.ForKind):
    """An elementwise TE function whose loop is made parallel / vectorized by hand."""
    A = te.placeholder((64,), name="A")
    B = te.compute((64,), lambda i: A[i] * te.const(3.0), name="B")
    func = te.create_prim_func([A, B])
    body = func.body
    loops = []
    tir.post_order_visit(body, lambda n: loops.append(n) if isinstance(n, tir.For) else None)
    func = func.replace(
        body=tir.substitute(body, {}) if not loops else _rekind(body, loops[0], kind)
    )
    a = RNG.standard_normal(64).astype("float32")
    _check(func, [a], (64,), a * 3)


def _rekind(body: tir.Stmt, loop: tir.For, kind: tir.ForKind) -> tir.Stmt:
    class Rekind(tir.StmtExprMutator):
        def visit_for_(self, stmt: tir.For) -> tir.Stmt:
            new = self.visit_stmt_(stmt)
            return new.replace(kind=kind) if stmt is loop else new

    return Rekind().visit_stmt(body)
