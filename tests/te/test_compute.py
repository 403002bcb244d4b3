"""`te.compute` workloads made into PrimFuncs and run in the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from unity import te, tir
from unity.topi import testing

RNG = np.random.default_rng(0)


def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype("float32")


def _blocks(func: tir.PrimFunc) -> list[tir.Block]:
    found: list[tir.Block] = []
    tir.post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, tir.Block) else None)
    return found


def test_matmul_matches_numpy() -> None:
    A = te.placeholder((16, 12), name="A")
    B = te.placeholder((12, 8), name="B")
    k = te.reduce_axis((0, 12), name="k")
    C = te.compute((16, 8), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    func = te.create_prim_func([A, B, C])
    a, b, c = _rand(16, 12), _rand(12, 8), np.zeros((16, 8), "float32")
    tir.interpret(func, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_matmul_block_structure() -> None:
    A = te.placeholder((4, 4), name="A")
    B = te.placeholder((4, 4), name="B")
    k = te.reduce_axis((0, 4), name="k")
    C = te.compute((4, 4), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    func = te.create_prim_func([A, B, C])
    assert func.params == (A.buffer, B.buffer, C.buffer)
    assert dict(func.attrs) == {"tir.noalias": True}
    (block,) = _blocks(func)
    assert block.name_hint == "C"
    assert [iv.iter_type for iv in block.iter_vars] == [tir.IterType.SPATIAL] * 2 + [
        tir.IterType.REDUCE
    ]
    vi, vj, vk = (iv.var for iv in block.iter_vars)
    assert [r.buffer for r in block.reads] == [A.buffer, B.buffer]
    assert [r.min for r in block.reads[0].region] == [vi, vk]
    assert [r.extent.value for r in block.reads[1].region] == [1, 1]
    assert block.writes[0].buffer is C.buffer
    assert isinstance(block.init, tir.BufferStore) and block.init.value.value == 0.0
    update = block.body
    assert isinstance(update, tir.BufferStore) and isinstance(update.value, tir.Add)
    assert update.value.a.buffer is C.buffer and update.value.a.indices == (vi, vj)


def _conv2d(n: int, c: int, hw: int, k: int, r: int, stride: int, pad: int):
    X = te.placeholder((n, c, hw, hw), name="X")
    W = te.placeholder((k, c, r, r), name="W")
    padded_hw = hw + 2 * pad

    def inside(h: tir.PrimExpr, w: tir.PrimExpr) -> tir.PrimExpr:
        return (h >= pad) & (h < hw + pad) & (w >= pad) & (w < hw + pad)

    P = te.compute(
        (n, c, padded_hw, padded_hw),
        lambda b, ch, h, w: te.if_then_else(inside(h, w), X[b, ch, h - pad, w - pad], 0.0),
        name="pad",
    )
    out_hw = (padded_hw - r) // stride + 1
    rc = te.reduce_axis((0, c), name="rc")
    ry = te.reduce_axis((0, r), name="ry")
    rx = te.reduce_axis((0, r), name="rx")
    Y = te.compute(
        (n, k, out_hw, out_hw),
        lambda b, f, y, x: te.sum(
            P[b, rc, y * stride + ry, x * stride + rx] * W[f, rc, ry, rx], axis=[rc, ry, rx]
        ),
        name="conv",
    )
    return X, W, P, Y


@pytest.mark.parametrize(("stride", "pad"), [(1, 1), (2, 1), (2, 0)])
def test_conv2d_nchw_with_stride_and_padding(stride: int, pad: int) -> None:
    X, W, P, Y = _conv2d(1, 3, 7, 4, 3, stride, pad)
    func = te.create_prim_func([X, W, Y])
    root = _blocks(func)[-1]
    assert root.alloc_buffers == (P.buffer,)
    x, w = _rand(1, 3, 7, 7), _rand(4, 3, 3, 3)
    y = np.zeros([int(d.value) for d in Y.shape], "float32")
    tir.interpret(func, x, w, y)
    expected = testing.conv2d_nchw_python(x, w, stride, pad)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


def _softmax(m: int, n: int):
    X = te.placeholder((m, n), name="X")
    k1 = te.reduce_axis((0, n), name="k1")
    mx = te.compute((m,), lambda i: te.max(X[i, k1], axis=k1), name="max")
    e = te.compute((m, n), lambda i, j: te.exp(X[i, j] - mx[i]), name="exp")
    k2 = te.reduce_axis((0, n), name="k2")
    s = te.compute((m,), lambda i: te.sum(e[i, k2], axis=k2), name="sum")
    out = te.compute((m, n), lambda i, j: e[i, j] / s[i], name="divide")
    return X, mx, e, s, out


def test_softmax_four_computes() -> None:
    X, mx, e, s, out = _softmax(5, 11)
    func = te.create_prim_func([X, out])
    names = [b.name_hint for b in _blocks(func)]
    assert names == ["max", "exp", "sum", "divide", "root"]  # root: it holds the temporaries
    assert _blocks(func)[-1].alloc_buffers == (mx.buffer, e.buffer, s.buffer)
    x, y = _rand(5, 11) * 4, np.zeros((5, 11), "float32")
    tir.interpret(func, x, y)
    np.testing.assert_allclose(y, testing.softmax_python(x), rtol=1e-5, atol=1e-6)


def test_layer_norm() -> None:
    m, n, eps = 4, 10, 1e-5
    X = te.placeholder((m, n), name="X")
    gamma = te.placeholder((n,), name="gamma")
    beta = te.placeholder((n,), name="beta")
    k1 = te.reduce_axis((0, n), name="k1")
    total = te.compute((m,), lambda i: te.sum(X[i, k1], axis=k1), name="total")
    mean = te.compute((m,), lambda i: total[i] / float(n), name="mean")
    k2 = te.reduce_axis((0, n), name="k2")
    sq = te.compute(
        (m,), lambda i: te.sum((X[i, k2] - mean[i]) * (X[i, k2] - mean[i]), axis=k2), name="sq"
    )
    out = te.compute(
        (m, n),
        lambda i, j: (X[i, j] - mean[i]) * te.rsqrt(sq[i] / float(n) + eps) * gamma[j] + beta[j],
        name="layer_norm",
    )
    func = te.create_prim_func([X, gamma, beta, out])
    x, g, b = _rand(m, n), _rand(n), _rand(n)
    y = np.zeros((m, n), "float32")
    tir.interpret(func, x, g, b, y)
    expected = testing.layer_norm_python(x, g, b, epsilon=eps)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


def test_sum_reduction_with_where() -> None:
    X = te.placeholder((6, 9), name="X")
    k = te.reduce_axis((0, 9), name="k")
    S = te.compute((6,), lambda i: te.sum(X[i, k], axis=k, where=X[i, k] > 0.0), name="S")
    x, s = _rand(6, 9), np.zeros(6, "float32")
    tir.interpret(te.create_prim_func([X, S]), x, s)
    np.testing.assert_allclose(s, np.where(x > 0, x, 0).sum(axis=1), rtol=1e-5, atol=1e-6)


def test_sum_over_two_axes_and_min_and_custom_reducer() -> None:
    X = te.placeholder((3, 4, 5), "int32", name="X")
    j = te.reduce_axis((0, 4), name="j")
    k = te.reduce_axis((0, 5), name="k")
    S = te.compute((3,), lambda i: te.sum(X[i, j, k], axis=[j, k]), name="S")
    j2 = te.reduce_axis((1, 4), name="j2")
    M = te.compute((3,), lambda i: te.min(X[i, j2, 0], axis=j2), name="M")
    absmax = te.comm_reducer(lambda a, b: tir.max(a, b), lambda t: tir.const(0, t), name="absmax")
    k3 = te.reduce_axis((0, 5), name="k3")
    A = te.compute((3,), lambda i: absmax(tir.abs(X[i, 0, k3]), axis=k3), name="A")
    x = RNG.integers(-50, 50, (3, 4, 5)).astype("int32")
    s, mn, am = (np.zeros(3, "int32") for _ in range(3))
    tir.interpret(te.create_prim_func([X, S, M, A]), x, s, mn, am)
    assert s.tolist() == x.sum(axis=(1, 2)).tolist()
    assert mn.tolist() == x[:, 1:, 0].min(axis=1).tolist()
    assert am.tolist() == np.abs(x[:, 0, :]).max(axis=1).tolist()


def test_symbolic_shape_runs_at_two_sizes() -> None:
    n = te.var("n")
    A = te.placeholder((n, 3), name="A")
    B = te.compute((n, 3), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    func = te.create_prim_func([A, B])
    assert func.shape_vars() == (n,)
    for size in (2, 7):
        a, b = _rand(size, 3), np.zeros((size, 3), "float32")
        tir.interpret(func, a, b)
        np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)
    with pytest.raises(tir.InterpretError, match="buffer B dim 0 must be 2"):
        tir.interpret(func, _rand(2, 3), np.zeros((3, 3), "float32"))


def test_stencil_read_region_is_the_hull_of_the_offsets() -> None:
    A = te.placeholder((10,), name="A")
    B = te.compute((8,), lambda i: A[i] + A[i + 1] + A[i + 2], name="B")
    func = te.create_prim_func([A, B])
    (region,) = _blocks(func)[0].reads
    assert region.region[0].min is _blocks(func)[0].iter_vars[0].var
    assert region.region[0].extent.value == 3
    a, b = _rand(10), np.zeros(8, "float32")
    tir.interpret(func, a, b)
    np.testing.assert_allclose(b, a[:-2] + a[1:-1] + a[2:], rtol=1e-6)


def test_wrong_arity_lambda_says_how_many_indices() -> None:
    A = te.placeholder((4, 4), name="A")
    with pytest.raises(ValueError, match=r"2 dimension\(s\).*take 2 index.*takes 1"):
        te.compute((4, 4), lambda i: A[i, i], name="bad")


def test_varargs_lambda_gets_all_indices() -> None:
    A = te.placeholder((2, 3), name="A")
    B = te.compute((2, 3), lambda *idx: A[idx] + 1.0, name="B")
    a, b = _rand(2, 3), np.zeros((2, 3), "float32")
    tir.interpret(te.create_prim_func([A, B]), a, b)
    np.testing.assert_allclose(b, a + 1, rtol=1e-6)


def test_missing_placeholder_is_reported() -> None:
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    with pytest.raises(ValueError, match="placeholder 'A' is read by 'B'"):
        te.create_prim_func([B])


def test_reduction_inside_larger_expression_is_rejected() -> None:
    X = te.placeholder((4, 4), name="X")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(ValueError, match="must be the whole body"):
        te.compute((4,), lambda i: te.sum(X[i, k], axis=k) * 2.0, name="bad")


def test_index_dtype_override_int64() -> None:
    A = te.placeholder((6, 5), "int32", name="A")
    k = te.reduce_axis((0, 5), name="k")
    S = te.compute((6,), lambda i: te.sum(A[i, k] * 2, axis=k), name="S")
    func = te.create_prim_func([A, S], index_dtype_override="int64")
    block = _blocks(func)[0]
    assert [iv.var.dtype for iv in block.iter_vars] == ["int64", "int64"]
    assert func.params[0].shape[1].dtype == "int64"
    assert func.params[1].dtype == "int32"
    a, s = RNG.integers(-9, 9, (6, 5)).astype("int32"), np.zeros(6, "int32")
    tir.interpret(func, a, s)
    assert s.tolist() == (a * 2).sum(axis=1).tolist()


def test_multi_output_compute() -> None:
    A = te.placeholder((5,), name="A")
    lo, hi = te.compute((5,), lambda i: (A[i] - 1.0, A[i] + 1.0), name="pm")
    func = te.create_prim_func([A, lo, hi])
    a, x, y = _rand(5), np.zeros(5, "float32"), np.zeros(5, "float32")
    tir.interpret(func, a, x, y)
    np.testing.assert_allclose(x, a - 1, rtol=1e-6)
    np.testing.assert_allclose(y, a + 1, rtol=1e-6)


def test_free_scalar_variable_must_be_an_argument() -> None:
    A = te.placeholder((4,), name="A")
    scale = te.var("scale", "float32")
    B = te.compute((4,), lambda i: A[i] * scale, name="B")
    with pytest.raises(ValueError, match="scale are used but are neither"):
        te.create_prim_func([A, B])
    func = te.create_prim_func([A, B, scale])
    a, b = _rand(4), np.zeros(4, "float32")
    tir.interpret(func, a, b, 3.0)
    np.testing.assert_allclose(b, a * 3, rtol=1e-6)


def test_argmax_with_a_two_value_reducer() -> None:
    def combine(x, y):  # noqa: ANN001, ANN202 - (index, value) pairs
        keep = x[1] >= y[1]
        return tir.select(keep, x[0], y[0]), tir.select(keep, x[1], y[1])

    def identity(index_dtype: str, value_dtype: str):  # noqa: ANN202
        return tir.const(-1, index_dtype), tir.min_value(value_dtype)

    argmax = te.comm_reducer(combine, identity, name="argmax")
    X = te.placeholder((4, 7), name="X")
    k = te.reduce_axis((0, 7), name="k")
    idx, val = te.compute((4,), lambda i: argmax((k.var, X[i, k]), axis=k), name="am")
    func = te.create_prim_func([X, idx, val])
    x, got_idx, got_val = _rand(4, 7), np.zeros(4, "int32"), np.zeros(4, "float32")
    tir.interpret(func, x, got_idx, got_val)
    assert got_idx.tolist() == x.argmax(axis=1).tolist()
    np.testing.assert_array_equal(got_val, x.max(axis=1))


def test_equality_in_a_compute_builds_the_comparison():
    """``j == 0`` was Python identity, silently False: the select always took its else side."""
    import unity
    from unity import tir

    n = tir.SizeVar("n", "int64")
    a = te.placeholder((n, 4), "float32", "a")
    b = te.compute((n, 4), lambda i, j: te.if_then_else(j == 0, a[i, 0], a[i, j] * 2.0)
                   + te.if_then_else(j != 3, 1.0, 0.0), "b")
    av = np.random.default_rng(0).random((3, 4)).astype("float32")
    out = np.zeros((3, 4), "float32")
    unity.build(te.create_prim_func([a, b]), "llvm")["main"](av, out)
    want = np.where(np.arange(4) == 0, av[:, :1], av * 2) + (np.arange(4) != 3)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    i = tir.Var("i")
    assert bool(i == i) and not bool(i == tir.Var("i")) and {i: 1}[i] == 1 and i in [tir.Var("k"), i]
