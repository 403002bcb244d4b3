"""The reference interpreter on hand-built TIR: memory aliasing, vectors, integer and
float semantics, control flow, blocks, and argument errors."""

from __future__ import annotations

import numpy as np
import pytest

from unity import tir
from unity.tir import ForKind


def _loop(var: tir.Var, extent: int, body: tir.Stmt, kind: ForKind = ForKind.SERIAL) -> tir.For:
    return tir.For(var, tir.const(0), tir.const(extent), kind, body)


def _unary_func(dtype_in: str, dtype_out: str, n: int, fn) -> tir.PrimFunc:  # noqa: ANN001
    A = tir.decl_buffer((n,), dtype_in, "A")
    B = tir.decl_buffer((n,), dtype_out, "B")
    i = tir.Var("i")
    return tir.PrimFunc((A, B), _loop(i, n, tir.BufferStore(B, fn(A[i]), (i,))))


def test_allocate_and_flattened_aliases_share_memory() -> None:
    A = tir.decl_buffer((4, 4), "float32", "A")
    B = tir.decl_buffer((4, 4), "float32", "B")
    A_flat = tir.decl_buffer((16,), "float32", "A_flat", data=A.data)
    B_flat = tir.decl_buffer((16,), "float32", "B_flat", data=B.data)
    tmp = tir.decl_buffer((2, 8), "float32", "tmp")
    tmp_flat = tir.decl_buffer((16,), "float32", "tmp_flat", data=tmp.data)
    i, j = tir.Var("i"), tir.Var("j")
    fill = _loop(i, 16, tir.BufferStore(tmp_flat, A_flat[i] * 2.0, (i,)))
    read = _loop(j, 16, tir.BufferStore(B_flat, tmp[j // 8, j % 8] + 1.0, (j,)))
    func = tir.PrimFunc((A, B), tir.Allocate(tmp, tir.seq(fill, read)))
    a = np.arange(16, dtype="float32").reshape(4, 4)
    b = np.zeros((4, 4), "float32")
    tir.interpret(func, a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)


def test_vector_ramp_loads_and_stores() -> None:
    A = tir.decl_buffer((16,), "float32", "A")
    B = tir.decl_buffer((16,), "float32", "B")
    C = tir.decl_buffer((4,), "float32", "C")
    i = tir.Var("i")
    lanes = tir.Ramp(i * 4, tir.const(1), 4)
    store = tir.BufferStore(B, A[lanes] + tir.Broadcast(tir.const(1.0), 4), (lanes,))
    every_fourth = tir.Ramp(tir.const(0), tir.const(4), 4)
    gather = tir.BufferStore(C, A[every_fourth], (tir.Ramp(tir.const(0), tir.const(1), 4),))
    func = tir.PrimFunc((A, B, C), tir.seq(_loop(i, 4, store, ForKind.VECTORIZED), gather))
    a = np.arange(16, dtype="float32")
    b, c = np.zeros(16, "float32"), np.zeros(4, "float32")
    tir.interpret(func, a, b, c)
    np.testing.assert_array_equal(b, a + 1)
    np.testing.assert_array_equal(c, a[::4])


def test_truncdiv_and_floordiv_on_negatives() -> None:
    values = np.array([-7, 7, -8, 5, -1], "int32")
    cases = {
        "truncdiv": (lambda x: tir.truncdiv(x, 2), [-3, 3, -4, 2, 0]),
        "truncmod": (lambda x: tir.truncmod(x, 2), [-1, 1, 0, 1, -1]),
        "floordiv": (lambda x: x // 2, [-4, 3, -4, 2, -1]),
        "floormod": (lambda x: x % 2, [1, 1, 0, 1, 1]),
        "truncdiv_neg_divisor": (lambda x: tir.truncdiv(x, -2), [3, -3, 4, -2, 0]),
    }
    for name, (fn, expected) in cases.items():
        out = np.zeros(5, "int32")
        tir.interpret(_unary_func("int32", "int32", 5, fn), values, out)
        assert out.tolist() == expected, name


def test_int8_wraps_around_and_casts_follow_c() -> None:
    out = np.zeros(3, "int8")
    doubled = _unary_func("int8", "int8", 3, lambda x: x + x)
    tir.interpret(doubled, np.array([100, -100, 3], "int8"), out)
    assert out.tolist() == [-56, 56, 6]
    narrowed = np.zeros(3, "int8")
    func = _unary_func("int32", "int8", 3, lambda x: tir.cast("int8", x))
    tir.interpret(func, np.array([300, -129, 5], "int32"), narrowed)
    assert narrowed.tolist() == [44, 127, 5]
    truncated = np.zeros(3, "int32")
    func = _unary_func("float32", "int32", 3, lambda x: tir.cast("int32", x))
    tir.interpret(func, np.array([-2.7, 2.7, -0.5], "float32"), truncated)
    assert truncated.tolist() == [-2, 2, 0]


def test_float16_arithmetic_rounds_in_float16() -> None:
    a = np.array([0.1, 100.0, 3.3, 49.1], "float16")
    out = np.zeros(4, "float16")
    tir.interpret(_unary_func("float16", "float16", 4, lambda x: x * x + x), a, out)
    np.testing.assert_array_equal(out, a * a + a)


def test_float32_accumulation_is_float32() -> None:
    A = tir.decl_buffer((1,), "float32", "A")
    i = tir.Var("i")
    body = _loop(i, 10, tir.BufferStore(A, A[0] + 1.0, (tir.const(0),)))
    a = np.array([2.0**24], "float32")
    tir.interpret(tir.PrimFunc((A,), body), a)
    assert a[0] == np.float32(2.0**24)  # each +1 rounds away in float32


def test_control_flow_let_while_select_and_intrinsics() -> None:
    A = tir.decl_buffer((6,), "float32", "A")
    B = tir.decl_buffer((6,), "float32", "B")
    C = tir.decl_buffer((1,), "int32", "C")
    i, x, n = tir.Var("i"), tir.Var("x", "float32"), tir.Var("n")
    value = tir.Let(x, A[i] * 2.0, tir.select(x > 0.0, tir.exp(x), x))
    loop = _loop(i, 6, tir.LetStmt(n, i + 1, tir.IfThenElse(
        n > 3, tir.BufferStore(B, value, (i,)), tir.BufferStore(B, tir.const(-1.0), (i,)))))
    count = tir.While(C[0] < 100, tir.BufferStore(C, C[0] * 3, (tir.const(0),)))
    func = tir.PrimFunc((A, B, C), tir.seq(loop, count))
    a = np.array([0.5, -1, 0.25, 0.5, -2, 0.1], "float32")
    b, c = np.zeros(6, "float32"), np.array([1], "int32")
    tir.interpret(func, a, b, c)
    expected = np.where(np.arange(6) + 1 > 3, np.where(a * 2 > 0, np.exp(a * 2), a * 2), -1)
    np.testing.assert_allclose(b, expected, rtol=1e-6)
    assert c[0] == 243


def test_assert_raises_with_its_message() -> None:
    A = tir.decl_buffer((1,), "int32", "A")
    check = tir.AssertStmt(A[0] > 0, "A[0] must be positive", tir.Evaluate(tir.const(0)))
    func = tir.PrimFunc((A,), check)
    tir.interpret(func, np.array([1], "int32"))
    with pytest.raises(tir.InterpretError, match=r"A\[0\] must be positive"):
        tir.interpret(func, np.array([0], "int32"))


def test_block_with_init_and_predicate() -> None:
    A = tir.decl_buffer((10,), "float32", "A")
    B = tir.decl_buffer((3,), "float32", "B")
    i, k = tir.Var("i"), tir.Var("k")
    vi, vk = tir.Var("vi"), tir.Var("vk")
    block = tir.Block(
        (tir.IterVar(vi, tir.Range.from_min_extent(0, 3)),
         tir.IterVar(vk, tir.Range.from_min_extent(0, 4), tir.IterType.REDUCE)),
        (), (), "B", tir.BufferStore(B, B[vi] + A[vi * 4 + vk], (vi,)),
        init=tir.BufferStore(B, tir.const(0.0), (vi,)),
    )  # fmt: skip
    realize = tir.BlockRealize((i, k), i * 4 + k < 10, block)
    func = tir.PrimFunc((A, B), _loop(i, 3, _loop(k, 4, realize)))
    a, b = np.arange(10, dtype="float32"), np.full(3, 99, "float32")
    tir.interpret(func, a, b)
    assert b.tolist() == [6.0, 22.0, 17.0]


def test_scalar_params_strides_and_non_contiguous_outputs() -> None:
    n = tir.Var("n")
    s = tir.Var("s")
    A = tir.decl_buffer((n, 3), "float32", "A", strides=(s, 1))
    B = tir.decl_buffer((n, 3), "float32", "B")
    alpha = tir.Var("alpha", "float32")
    i, j = tir.Var("i"), tir.Var("j")
    body = tir.For(i, tir.const(0), n, ForKind.PARALLEL,
                   _loop(j, 3, tir.BufferStore(B, A[i, j] * alpha, (i, j))))  # fmt: skip
    func = tir.PrimFunc((A, B, alpha), body)
    a = np.arange(12, dtype="float32").reshape(4, 3)
    big = np.zeros((4, 6), "float32")
    out = big[:, ::2]  # not contiguous: written back in place
    tir.interpret(func, a, out, 0.5)
    np.testing.assert_array_equal(big[:, ::2], a * 0.5)


def test_argument_errors_name_the_parameter() -> None:
    func = _unary_func("float32", "float32", 4, lambda x: x)
    with pytest.raises(tir.InterpretError, match="takes 2 arguments, got 1"):
        tir.interpret(func, np.zeros(4, "float32"))
    with pytest.raises(tir.InterpretError, match=r"argument 1 \(B\) must be float32, got float64"):
        tir.interpret(func, np.zeros(4, "float32"), np.zeros(4))
    with pytest.raises(tir.InterpretError, match="buffer A dim 0 must be 4, but the array has 5"):
        tir.interpret(func, np.zeros(5, "float32"), np.zeros(4, "float32"))


def test_matmul_64_is_interpreted_once_and_cached() -> None:
    from unity import te
    from unity.tir.interpreter import interpret_source

    A = te.placeholder((64, 64), name="A")
    B = te.placeholder((64, 64), name="B")
    k = te.reduce_axis((0, 64), name="k")
    C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    func = te.create_prim_func([A, B, C])
    rng = np.random.default_rng(1)
    a, b = rng.random((64, 64), "float32"), rng.random((64, 64), "float32")
    c = np.zeros((64, 64), "float32")
    tir.interpret(func, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    assert interpret_source(func) is interpret_source(func)


def test_loops_nested_deeper_than_python_allows() -> None:
    A = tir.decl_buffer((1,), "int32", "A")
    loop_vars = [tir.Var(f"i{k}") for k in range(30)]
    body: tir.Stmt = tir.BufferStore(A, A[0] + 1, (tir.const(0),))
    for v in reversed(loop_vars):
        body = _loop(v, 1 if v is not loop_vars[-1] else 3, body)
    a = np.zeros(1, "int32")
    tir.interpret(tir.PrimFunc((A,), body), a)
    assert a[0] == 3


def test_negative_index_is_an_error_not_a_wraparound() -> None:
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i")
    func = tir.PrimFunc((A,), _loop(i, 4, tir.BufferStore(A, tir.const(1.0), (i - 1,))))
    with pytest.raises(tir.InterpretError, match=r"out-of-bounds access A\[-1\]"):
        tir.interpret(func, np.zeros(4, "float32"))
    past_end = tir.PrimFunc((A,), _loop(i, 5, tir.BufferStore(A, tir.const(1.0), (i,))))
    with pytest.raises(tir.InterpretError, match="out-of-bounds"):
        tir.interpret(past_end, np.zeros(4, "float32"))


def test_vector_select_does_not_fault_on_the_branch_not_taken() -> None:
    A = tir.decl_buffer((4,), "float32", "A")
    B = tir.decl_buffer((4,), "float32", "B")
    lanes = tir.Ramp(tir.const(0), tir.const(1), 4)
    shifted = tir.Ramp(tir.const(-1), tir.const(1), 4)
    inside = tir.Broadcast(tir.const(0), 4) < lanes
    value = tir.Select(inside, A[shifted], tir.Broadcast(tir.const(0.0), 4))
    func = tir.PrimFunc((A, B), tir.BufferStore(B, value, (lanes,)))
    b = np.zeros(4, "float32")
    tir.interpret(func, np.array([1, 2, 3, 4], "float32"), b)
    assert b.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_match_buffer_is_a_view_of_its_source_region() -> None:
    A = tir.decl_buffer((4, 4), "float32", "A")
    sub = tir.decl_buffer((2, 2), "float32", "sub", strides=(tir.Var("s0"), tir.Var("s1")),
                          elem_offset=tir.Var("off"))  # fmt: skip
    i, j = tir.Var("i"), tir.Var("j")
    region = tir.BufferRegion(A, (tir.Range.from_min_extent(1, 2), tir.Range.from_min_extent(2, 2)))
    fill = _loop(i, 2, _loop(j, 2, tir.BufferStore(sub, tir.const(7.0), (i, j))))
    block = tir.Block((), (), (), "fill", fill, match_buffers=(tir.MatchBufferRegion(sub, region),))
    func = tir.PrimFunc((A,), tir.BlockRealize((), tir.const(True), block))
    a = np.zeros((4, 4), "float32")
    tir.interpret(func, a)
    expected = np.zeros((4, 4), "float32")
    expected[1:3, 2:4] = 7
    np.testing.assert_array_equal(a, expected)


def test_zero_dim_buffers_bools_and_thread_bound_loops() -> None:
    A = tir.decl_buffer((), "float32", "A")
    M = tir.decl_buffer((8,), "bool", "M")
    U = tir.decl_buffer((8,), "uint8", "U")
    i = tir.Var("i")
    body = tir.For(i, tir.const(0), tir.const(8), ForKind.THREAD_BINDING, tir.seq(
        tir.BufferStore(M, tir.ge(i, 4) | tir.eq(i, 1), (i,)),
        tir.BufferStore(U, U[i] - tir.const(1, "uint8"), (i,)),
        tir.IfThenElse(M[i], tir.BufferStore(A, A[()] + 1.0, ())),
    ), thread_binding="threadIdx.x")  # fmt: skip
    a, m, u = np.zeros((), "float32"), np.zeros(8, bool), np.zeros(8, "uint8")
    tir.interpret(tir.PrimFunc((A, M, U), body), a, m, u)
    assert float(a) == 5.0
    assert m.tolist() == [False, True, False, False, True, True, True, True]
    assert u.tolist() == [255] * 8
