"""Build hand-written lowered-form PrimFuncs with `unity.build` and run them against numpy."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import unity
from unity import tir
from unity.tir import ForKind

RNG = np.random.default_rng(0)


def _loop(var: tir.Var, extent: object, body: tir.Stmt, kind: ForKind = ForKind.SERIAL) -> tir.For:
    return tir.For(var, tir.const(0, var.dtype), tir.const(extent, var.dtype), kind, body)


def _elementwise(dtype: str, n: int, combine) -> tir.PrimFunc:
    A, B, C = (tir.decl_buffer((n,), dtype, name) for name in "ABC")
    i = tir.Var("i")
    return tir.PrimFunc((A, B, C), _loop(i, n, tir.BufferStore(C, combine(A[i], B[i]), (i,))))


def _random(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    if dtype.startswith("int"):
        return RNG.integers(-50, 50, size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize(
    "dtype", ["float32", "float16", "float64", "int8", "int32", "int64", "uint8"]
)
def test_elementwise_add_matches_numpy(dtype: str):
    lib = unity.build(_elementwise(dtype, 37, lambda a, b: a + b))
    a, b = _random((37,), dtype), _random((37,), dtype)
    c = np.zeros(37, dtype)
    lib["main"](a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_bool_buffers_are_bytes():
    lib = unity.build(_elementwise("bool", 33, lambda a, b: (a | b) & ~(a & b)))
    a, b = _random((33,), "bool"), _random((33,), "bool")
    c = np.zeros(33, "bool")
    lib["main"](a, b, c)
    np.testing.assert_array_equal(c, a ^ b)


def test_symbolic_shape_runs_at_several_shapes():
    n, m = tir.SizeVar("n"), tir.SizeVar("m")
    A = tir.decl_buffer((n, m), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    i, j = tir.Var("i"), tir.Var("j")
    flat = tir.decl_buffer((n * m,), "float32", "A_flat", data=A.data)
    row_sum = tir.seq(
        tir.BufferStore(B, tir.const(0.0), (i,)),
        tir.For(
            j, tir.const(0), m, ForKind.SERIAL, tir.BufferStore(B, B[i] + flat[i * m + j], (i,))
        ),
    )
    lib = unity.build(tir.PrimFunc((A, B), tir.For(i, tir.const(0), n, ForKind.SERIAL, row_sum)))
    for rows, cols in [(1, 1), (3, 7), (16, 130)]:
        a = _random((rows, cols), "float32")
        b = np.zeros(rows, "float32")
        lib["main"](a, b)
        np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5, atol=1e-5)


def _parallel_vector_add(n: int, lanes: int) -> tir.PrimFunc:
    """`C = A + B` as lowering writes it: a parallel outer loop, vector body, scalar tail."""
    A, B, C = (tir.decl_buffer((n,), "float32", name) for name in "ABC")
    io, t = tir.Var("io"), tir.Var("t")
    idx = tir.Ramp(io * lanes, tir.const(1), lanes)
    vector = tir.BufferStore(C, A[idx] + B[idx], (idx,))
    main = _loop(io, n // lanes, vector, ForKind.PARALLEL)
    tail_i = t + (n // lanes) * lanes
    tail = _loop(t, n % lanes, tir.BufferStore(C, A[tail_i] + B[tail_i], (tail_i,)))
    return tir.PrimFunc((A, B, C), tir.seq(main, tail))


def test_parallel_vectorized_loop_with_tail():
    lib = unity.build(_parallel_vector_add(1000, 16))
    a, b = _random((1000,), "float32"), _random((1000,), "float32")
    c = np.zeros(1000, "float32")
    lib["main"](a, b, c)
    np.testing.assert_array_equal(c, a + b)
    source = lib.get_source("ll")
    assert "noalias" in source and "<16 x float>" in source and "@GOMP_parallel" in source


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_parallel_loop_covers_every_iteration(threads: int):
    n = 101
    A = tir.decl_buffer((n,), "int32", "A")
    i = tir.Var("i")
    lib = unity.build(
        tir.PrimFunc((A,), _loop(i, n, tir.BufferStore(A, i * 2, (i,)), ForKind.PARALLEL))
    )
    unity.runtime.set_num_threads(threads)
    try:
        a = np.full(n, -1, "int32")
        lib["main"](a)
    finally:
        unity.runtime.set_num_threads(0)
    np.testing.assert_array_equal(a, np.arange(n) * 2)


def test_vector_gather_select_and_broadcast():
    A, B = tir.decl_buffer((64,), "float32", "A"), tir.decl_buffer((32,), "float32", "B")
    i = tir.Var("i")
    strided = tir.Ramp(i * 16, tir.const(2), 8)  # A[16i], A[16i+2], ...: a gather
    dense = tir.Ramp(i * 8, tir.const(1), 8)
    value = A[strided]
    zero = tir.Broadcast(tir.const(0.0), 8)
    body = tir.BufferStore(B, tir.Select(tir.gt(value, zero), value, zero), (dense,))
    lib = unity.build(tir.PrimFunc((A, B), _loop(i, 4, body)))
    a, b = _random((64,), "float32"), np.zeros(32, "float32")
    lib["main"](a, b)
    np.testing.assert_array_equal(b, np.maximum(a.reshape(4, 16)[:, ::2].ravel(), 0))


@pytest.mark.parametrize("start", [-20, -3, 0, 2, 5, 30])
@pytest.mark.parametrize("clamp_order", ["max_min", "min_max"])
@pytest.mark.parametrize("bounds", [(0, 9), (7, 2)])  # (7, 2): lo > hi, one element
def test_clamped_vector_load_matches_numpy_clip(start: int, clamp_order: str, bounds):
    """`A[row + clamp(Ramp(start, 1, 16), lo, hi)]` (a padded tensor's border load) reads
    the lanes inside the row with one masked load and repeats the edge elements for the
    lanes outside it, below and above, without reading past the row."""
    A, B = tir.decl_buffer((40,), "float32", "A"), tir.decl_buffer((32,), "float32", "B")
    i = tir.Var("i")
    ramp = tir.Ramp(tir.const(start), tir.const(1), 16)
    lo, hi = (tir.Broadcast(tir.const(b), 16) for b in bounds)
    if clamp_order == "max_min":
        clamp = tir.Max(tir.Min(ramp, hi), lo)
    else:
        clamp = tir.Min(tir.Max(ramp, lo), hi)
    value = A[tir.Broadcast(i * 10 + 10, 16) + clamp]  # rows 1 and 2 of a 4 x 10 buffer
    body = tir.BufferStore(B, value, (tir.Ramp(i * 16, tir.const(1), 16),))
    lib = unity.build(tir.PrimFunc((A, B), _loop(i, 2, body)))
    if bounds == (0, 9) and -16 < start < 10:  # some lanes inside (else LLVM drops the load)
        assert "llvm.masked.load" in lib.get_source("ll")
    a, b = _random((40,), "float32"), np.zeros(32, "float32")
    lib["main"](a, b)
    x = np.arange(start, start + 16)
    if clamp_order == "max_min":
        cols = np.maximum(np.minimum(x, bounds[1]), bounds[0])
    else:
        cols = np.minimum(np.maximum(x, bounds[0]), bounds[1])
    np.testing.assert_array_equal(b, np.concatenate([a[10 + cols], a[20 + cols]]))


@pytest.mark.parametrize("start", [-9, -1, 0, 3, 8, 30])
@pytest.mark.parametrize("stride", [2, 3])
@pytest.mark.parametrize("sides", ["both", "low", "high"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_strided_clamped_load_matches_numpy(start: int, stride: int, sides: str, index_dtype):
    """`A[row + clamp(Ramp(start, s, 8), lo, hi)]` with a short stride (a stride-2 pooling
    window over a padded row) or one side of the clamp only: one masked load of the span
    and a shuffle, no gather; the edge lanes repeat the edge elements."""
    A, B = tir.decl_buffer((80,), "float32", "A"), tir.decl_buffer((16,), "float32", "B")
    i = tir.Var("i", index_dtype)
    c = lambda v: tir.const(v, index_dtype)  # noqa: E731
    ramp = tir.Ramp(c(start), c(stride), 8)
    lo, hi = tir.Broadcast(c(0), 8), tir.Broadcast(c(19), 8)
    clamp = {"both": tir.Max(tir.Min(ramp, hi), lo), "low": tir.Max(ramp, lo),
             "high": tir.Min(ramp, hi)}[sides]  # fmt: skip
    value = A[tir.Broadcast(i * 20 + 20, 8) + clamp]  # rows 1 and 2 of a 4 x 20 buffer
    body = tir.BufferStore(B, value, (tir.Ramp(i * 8, c(1), 8),))
    cols = np.arange(start, start + 8 * stride, stride)
    cols = {"both": np.clip(cols, 0, 19), "low": np.maximum(cols, 0),
            "high": np.minimum(cols, 19)}[sides]  # fmt: skip
    if cols.min() < -20 or cols.max() >= 40:
        return  # one side only: the unclamped lanes would leave the buffer
    lib = unity.build(tir.PrimFunc((A, B), _loop(i, 2, body)))
    if start <= 19 and start + 7 * stride >= 0:  # some lanes inside (else LLVM drops the load)
        assert "llvm.masked.load" in lib.get_source("ll")
    a, b = _random((80,), "float32"), np.zeros(16, "float32")
    lib["main"](a, b)
    np.testing.assert_array_equal(b, np.concatenate([a[20 + cols], a[40 + cols]]))


@pytest.mark.parametrize("shape", [(3, 14, 14), (2, 5, 7)])
def test_zero_padding_copy_tests_its_row_once_and_matches_numpy(shape):
    """A vectorized pad copy's condition ``row in bounds && column in bounds``: the row's
    half is one scalar test, not a lane mask built per vector from a broadcast bool."""
    from unity import te, topi
    from unity.schedule.default import RuleContext, schedule_primfunc

    x = te.placeholder(shape, name="x")
    func = te.create_prim_func([x, topi.nn.pad(x, [0, 1, 1], [0, 1, 1])])
    lib = unity.build(schedule_primfunc(func, RuleContext(lanes=8, num_cores=2)))
    assert "shufflevector <16 x i1>" not in lib.get_source("ll")  # no broadcast of the row test
    a = _random(shape, "float32")
    out = np.zeros((shape[0], shape[1] + 2, shape[2] + 2), "float32")
    lib["main"](a, out)
    np.testing.assert_array_equal(out, np.pad(a, [(0, 0), (1, 1), (1, 1)]))


@pytest.mark.parametrize("lanes", [7, 12, 14, 28])
def test_vectors_of_any_lane_count_load_and_store_contiguously(lanes: int):
    """A lane count that is not a power of two (a 14-column register tile) is loaded and
    stored in power-of-two pieces where it is wider than a register: same values."""
    n = 3 * lanes
    A, B = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((n,), "float32", "B")
    i = tir.Var("i")
    idx = tir.Ramp(i * lanes, tir.const(1), lanes)
    body = tir.BufferStore(B, A[idx] * tir.Broadcast(tir.const(2.0), lanes), (idx,))
    lib = unity.build(tir.PrimFunc((A, B), _loop(i, 3, body)))
    a, b = _random((n,), "float32"), np.zeros(n, "float32")
    lib["main"](a, b)
    np.testing.assert_array_equal(b, a * 2)


@pytest.mark.parametrize(
    "size, scope",
    [(16, "global"), (1 << 16, "global"), (16, "local"), (1 << 22, "local")],
)  # stack, then heap; a 16 MiB "local" buffer too (on the stack it overflowed: a crash)
def test_allocate_intermediate_buffer(size: int, scope: str):
    A, B = tir.decl_buffer((size,), "float32", "A"), tir.decl_buffer((size,), "float32", "B")
    T = tir.decl_buffer((size,), "float32", "T", scope=scope)
    i, j = tir.Var("i"), tir.Var("j")
    body = tir.seq(
        _loop(i, size, tir.BufferStore(T, A[i] * tir.const(2.0), (i,))),
        _loop(j, size, tir.BufferStore(B, T[size - 1 - j] + tir.const(1.0), (j,))),
    )
    lib = unity.build(tir.PrimFunc((A, B), tir.Allocate(T, body)))
    a, b = _random((size,), "float32"), np.zeros(size, "float32")
    lib["main"](a, b)
    np.testing.assert_array_equal(b, a[::-1] * 2 + 1)


def test_allocate_inside_parallel_loop_with_symbolic_size():
    n = tir.SizeVar("n")
    A, B = tir.decl_buffer((4, n), "float32", "A"), tir.decl_buffer((4, n), "float32", "B")
    T = tir.decl_buffer((n,), "float32", "T")
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    body = tir.Allocate(
        T,
        tir.seq(
            tir.For(
                j,
                tir.const(0),
                n,
                ForKind.SERIAL,
                tir.BufferStore(T, A[i, j] + tir.const(1.0), (j,)),
            ),
            tir.For(k, tir.const(0), n, ForKind.SERIAL, tir.BufferStore(B, T[k] * T[k], (i, k))),
        ),
    )
    lib = unity.build(tir.PrimFunc((A, B), _loop(i, 4, body, ForKind.PARALLEL)))
    a = _random((4, 300), "float32")
    b = np.zeros_like(a)
    lib["main"](a, b)
    np.testing.assert_allclose(b, (a + 1) ** 2, rtol=1e-6)


def _main_ir(lib) -> str:
    """The optimized LLVM IR of the kernel `main` alone (not its outlined loop bodies)."""
    source = lib.get_source("ll")
    start = re.search(r"^define [^@]*@\"?main\"?\(", source, re.M)
    assert start is not None
    main = source[start.start() :]
    return main[: main.index("\n}\n")]


@pytest.mark.parametrize("n", [1, 100, 8192, 100_000])
def test_a_parallel_loop_of_symbolic_size_runs_small_sizes_on_the_calling_thread(n: int):
    """`n * 4` stores below 2^13 (`PARALLEL_MIN_WORK`) run the loop body on this thread,
    decided at each call; larger ones wake the team.  Either way every store happens,
    and an assertion failing inside still raises."""
    size = tir.SizeVar("size")
    A = tir.decl_buffer((size, 4), "int32", "A")
    i, j = tir.Var("i"), tir.Var("j")
    store = tir.AssertStmt(tir.ge(A[i, j], 0), "negative", tir.BufferStore(A, i * 4 + j, (i, j)))
    body = _loop(i, size, tir.For(j, tir.const(0), tir.const(4), ForKind.SERIAL, store), ForKind.PARALLEL)
    lib = unity.build(tir.PrimFunc((A,), body))
    main = _main_ir(lib)  # the loop body inlined into main: the serial arm
    assert main.count("@GOMP_parallel") == 1 and "for.head.j" in main
    a = np.zeros((n, 4), "int32")
    lib["main"](a)
    np.testing.assert_array_equal(a.ravel(), np.arange(n * 4))
    a[n // 2, 1] = -1
    with pytest.raises(RuntimeError, match="negative"):
        lib["main"](a)
    constant = _main_ir(unity.build(_parallel_vector_add(1000, 16)))  # the schedule chose
    assert constant.count("@GOMP_parallel") == 1 and "for.head.io" not in constant


def test_failed_assert_raises_its_message():
    n = tir.SizeVar("n")
    A = tir.decl_buffer((n,), "int32", "A")
    i = tir.Var("i")
    store = tir.AssertStmt(
        tir.ge(A[i], 0), "A must be non-negative", tir.BufferStore(A, A[i] + 1, (i,))
    )
    lib = unity.build(tir.PrimFunc((A,), tir.For(i, tir.const(0), n, ForKind.SERIAL, store)))
    ok = np.arange(5, dtype="int32")
    lib["main"](ok)
    np.testing.assert_array_equal(ok, np.arange(1, 6))
    with pytest.raises(RuntimeError, match="A must be non-negative"):
        lib["main"](np.array([1, -1], "int32"))


def test_failed_assert_inside_parallel_loop():
    A = tir.decl_buffer((64,), "int32", "A")
    i = tir.Var("i")
    body = tir.AssertStmt(tir.lt(A[i], 100), "too big", tir.BufferStore(A, A[i] * 2, (i,)))
    lib = unity.build(tir.PrimFunc((A,), _loop(i, 64, body, ForKind.PARALLEL)))
    a = np.arange(64, dtype="int32")
    a[50] = 1000
    with pytest.raises(RuntimeError, match="too big"):
        lib["main"](a)


def test_floor_division_and_modulo_of_negative_ints():
    A, Q, R = (tir.decl_buffer((16,), "int32", name) for name in "AQR")
    i = tir.Var("i")
    b = tir.const(-3) + i % 7 * 0 + tir.const(0)
    body = tir.seq(tir.BufferStore(Q, A[i] // 5, (i,)), tir.BufferStore(R, A[i] % b, (i,)))
    lib = unity.build(tir.PrimFunc((A, Q, R), _loop(i, 16, body)))
    a = np.arange(-8, 8, dtype="int32")
    q, r = np.zeros(16, "int32"), np.zeros(16, "int32")
    lib["main"](a, q, r)
    np.testing.assert_array_equal(q, a // 5)
    np.testing.assert_array_equal(r, a % -3)


def test_casts_and_scalar_params():
    A = tir.decl_buffer((8,), "float32", "A")
    B = tir.decl_buffer((8,), "int8", "B")
    H = tir.decl_buffer((8,), "bfloat16", "H")
    scale, flag = tir.Var("scale", "float32"), tir.Var("flag", "bool")
    i = tir.Var("i")
    value = tir.Select(flag, A[i] * scale, A[i])
    body = tir.seq(
        tir.BufferStore(B, value.astype("int8"), (i,)),
        tir.BufferStore(H, value.astype("bfloat16"), (i,)),
    )
    lib = unity.build(tir.PrimFunc((A, B, H, scale, flag), _loop(i, 8, body)))
    a = np.array([0.5, -1.5, 2.25, 3.0, -7.9, 10.1, 0.0, 1.0], "float32")
    b, h = np.zeros(8, "int8"), np.zeros(8, ml_dtypes.bfloat16)
    lib["main"](a, b, h, 2.0, True)
    np.testing.assert_array_equal(b, (a * 2).astype("int8"))
    np.testing.assert_array_equal(h.astype("float32"), (a * 2).astype(h.dtype).astype("float32"))


@pytest.mark.parametrize("packed", [False, True])
def test_packed_entry_reads_every_kind_of_argument_from_its_slots(packed: bool):
    """Each function has a packed entry taking one pointer to 8-byte slots (buffers and
    integers as int64, floats as double, bool as a byte) that calls it: the same results
    as the per-argument entry, for pointers, float16/float32/float64, int8/int32/uint64,
    bool and a shape variable, with a negative int and a float that rounds in float32."""
    import ctypes
    import struct

    n = tir.SizeVar("n")
    A, B = (tir.decl_buffer((n,), "float64", name) for name in "AB")
    f16, f32, f64 = (tir.Var(f"s{d}", f"float{d}") for d in (16, 32, 64))
    i8, i32, u64 = tir.Var("i8", "int8"), tir.Var("i32", "int32"), tir.Var("u64", "uint64")
    flag = tir.Var("flag", "bool")
    i = tir.Var("i")
    ints = i8.astype("float64") * 1000.0 + i32.astype("float64") + u64.astype("float64")
    floats = f16.astype("float64") + f32.astype("float64") * 100.0 + f64
    value = tir.Select(flag, A[i] * 2.0 + ints + floats, A[i])
    params = (A, B, f16, f32, f64, i8, i32, u64, flag)
    func = unity.build(tir.PrimFunc(params, _loop(i, n, tir.BufferStore(B, value, (i,)))))["main"]
    a, b = RNG.standard_normal(7), np.zeros(7)
    scalars = (0.5, 0.1, 2.25, -3, -70000, 2**40, True)
    if packed:
        slots = (ctypes.c_int64 * 16)()
        c_args = [a.ctypes.data, b.ctypes.data, *scalars, 7]
        struct.pack_into(func.packed_format, slots, 0, *c_args)
        assert func.packed_function(ctypes.addressof(slots)) == 0
    else:
        func(a, b, *scalars)
    ints_ref = -3000.0 - 70000 + 2**40
    floats_ref = 0.5 + float(np.float32(0.1)) * 100.0 + 2.25
    np.testing.assert_array_equal(b, a * 2.0 + ints_ref + floats_ref)


@pytest.mark.parametrize("lanes", [1, 16])
def test_math_intrinsics(lanes: int):
    A, B = tir.decl_buffer((64,), "float32", "A"), tir.decl_buffer((64,), "float32", "B")
    i = tir.Var("i")
    idx = tir.Ramp(i * lanes, tir.const(1), lanes) if lanes > 1 else i
    x = A[idx]
    value = tir.exp(x) + tir.sqrt(tir.fabs(x)) + tir.tanh(x) + tir.sigmoid(x) + tir.erf(x)
    lib = unity.build(
        tir.PrimFunc((A, B), _loop(i, 64 // lanes, tir.BufferStore(B, value, (idx,))))
    )
    a, b = _random((64,), "float32"), np.zeros(64, "float32")
    lib["main"](a, b)
    from math import erf

    expected = (
        np.exp(a) + np.sqrt(np.abs(a)) + np.tanh(a) + 1 / (1 + np.exp(-a)) + np.vectorize(erf)(a)
    )
    np.testing.assert_allclose(b, expected, rtol=1e-5, atol=1e-6)


def test_module_with_two_functions_and_tensors():
    mod = unity.IRModule(
        {
            "add": _elementwise("float32", 8, lambda a, b: a + b),
            "mul": _elementwise("float32", 8, lambda a, b: a * b),
        }
    )
    lib = unity.build(mod, target="llvm -num-cores=2")
    dev = unity.cpu()
    a, b = (
        unity.runtime.tensor(_random((8,), "float32"), dev),
        unity.runtime.tensor(_random((8,), "float32"), dev),
    )
    c = unity.runtime.empty((8,), "float32", dev)
    lib["mul"](a, b, c)
    np.testing.assert_array_equal(c.numpy(), a.numpy() * b.numpy())
    assert sorted(lib.function_names) == ["add", "mul"]
    assert "vfmadd" in lib.get_source("asm") or "vmulps" in lib.get_source("asm")


@pytest.mark.parametrize("dtype", ["float16", "int8", "bool", "bfloat16"])
def test_vector_code_in_narrow_dtypes(dtype: str):
    A, B = tir.decl_buffer((64,), dtype, "A"), tir.decl_buffer((64,), dtype, "B")
    i = tir.Var("i")
    idx = tir.Ramp(i * 16, tir.const(1), 16)
    value = ~A[idx] if dtype == "bool" else A[idx] * tir.Broadcast(tir.const(2, dtype), 16)
    lib = unity.build(tir.PrimFunc((A, B), _loop(i, 4, tir.BufferStore(B, value, (idx,)))))
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    a = _random((64,), "float32" if dtype == "bfloat16" else dtype).astype(np_dtype)
    b = np.zeros(64, np_dtype)
    lib["main"](a, b)
    np.testing.assert_array_equal(b, ~a if dtype == "bool" else a * np.array(2, np_dtype))
    memory = {"float16": "half", "int8": "i8", "bool": "i8", "bfloat16": "i16"}[dtype]
    assert f"<16 x {memory}>" in lib.get_source("ll")


@pytest.mark.parametrize("n", [300, 15000, 40000])
def test_symbolic_scratch_goes_on_the_stack_when_small_and_is_released_each_iteration(n: int):
    """A buffer of symbolic size allocated in each iteration of a loop: on the stack when
    its size at run time is within the stack limit (restored at the end of each
    iteration: 4000 iterations of 60 KiB would overflow the stack otherwise), on the
    heap above it (160 KiB); the same values either way."""
    from unity.codegen.llvm import STACK_LIMIT_BYTES

    m = tir.SizeVar("m")
    A, B = tir.decl_buffer((m,), "float32", "A"), tir.decl_buffer((4000,), "float32", "B")
    T = tir.decl_buffer((m,), "float32", "T")
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    fill = _loop(j, m, tir.BufferStore(T, A[j] + i.astype("float32"), (j,)))
    body = tir.Allocate(T, tir.seq(fill, tir.BufferStore(B, T[m - 1] + T[i % m], (i,))))
    lib = unity.build(tir.PrimFunc((A, B), _loop(i, 4000, body)))
    source = lib.get_source("ll")
    assert "llvm.stacksave" in source and "aligned_alloc" in source
    a = _random((n,), "float32")
    b = np.zeros(4000, "float32")
    lib["main"](a, b)
    iters = np.arange(4000, dtype="float32")
    np.testing.assert_allclose(b, a[-1] + iters + a[np.arange(4000) % n] + iters, rtol=1e-6)
    assert (n * 4 <= STACK_LIMIT_BYTES) == (n < 40000)


def test_kernel_named_like_a_c_function_gets_its_own_symbol():
    A = tir.decl_buffer((1 << 15,), "float32", "A")
    T = tir.decl_buffer((1 << 15,), "float32", "T")  # 128 KiB: on the heap, so `free` is called
    i = tir.Var("i")
    body = tir.Allocate(T, _loop(i, 1 << 15, tir.BufferStore(A, tir.erf(A[i]), (i,))))
    lib = unity.build(tir.PrimFunc((A,), body), name="free")
    a = np.zeros(1 << 15, "float32")
    lib["free"](a)
    assert "@__unity_fn_free(" in lib.get_source("ll")


def test_undefined_variable_is_a_diagnostic_naming_the_function():
    A = tir.decl_buffer((4,), "float32", "A")
    i, k = tir.Var("i"), tir.Var("k")
    body = _loop(i, 4, tir.BufferStore(A, A[i] + k.astype("float32"), (i,)))
    message = r"codegen llvm, in @main: variable k is used but not defined"
    with pytest.raises(Exception, match=message):
        unity.build(tir.PrimFunc((A,), body))


@pytest.mark.parametrize(("source", "target"), [("int32", "float32"), ("float64", "int64")])
@pytest.mark.parametrize("kind", [ForKind.SERIAL, ForKind.VECTORIZED])
def test_reinterpret_keeps_the_bits(source: str, target: str, kind: ForKind):
    """`tir.reinterpret` is a bitcast, scalar or vector: numpy's `view`, in the build and
    in the interpreter."""
    A, B = tir.decl_buffer((16,), source, "A"), tir.decl_buffer((16,), target, "B")
    i = tir.Var("i")
    body = tir.BufferStore(B, tir.reinterpret(A[i]), (i,))
    func = tir.PrimFunc((A, B), _loop(i, 16, body, kind))
    if kind is ForKind.VECTORIZED:
        from unity.ir.module import IRModule
        from unity.tir.transform import VectorizeLoop

        func = VectorizeLoop()(IRModule({"main": func}))["main"]
    a = (RNG.standard_normal(16) * 1e3).astype(source)
    want = a.view(target)
    for run in (lambda f, *args: unity.build(f)["main"](*args), tir.interpret):
        out = np.zeros(16, target)
        run(func, a, out)
        np.testing.assert_array_equal(out, want)
    with pytest.raises(TypeError, match="reinterpret takes int32, float32, int64 or float64"):
        tir.reinterpret(tir.const(1, "int8"))


_SCALEF_TARGETS = ["llvm", "llvm -mattr=-avx512f"]
"""The host (AVX-512's `vscalefps` where it has it) and a target without AVX-512 (the
two exponent-field products)."""


@pytest.mark.parametrize("target", _SCALEF_TARGETS)
@pytest.mark.parametrize("kind", [ForKind.SERIAL, ForKind.VECTORIZED])
def test_ldexp_matches_numpy_on_its_range(target: str, kind: ForKind):
    """`tir.ldexp` is exact for every exponent exp needs, subnormal and overflowing
    results included, in the build (either lowering) and in the interpreter."""
    A = tir.decl_buffer((64,), "float32", "A")
    N, B = tir.decl_buffer((64,), "int32", "N"), tir.decl_buffer((64,), "float32", "B")
    i = tir.Var("i")
    body = tir.BufferStore(B, tir.ldexp(A[i], N[i]), (i,))
    func = tir.PrimFunc((A, N, B), _loop(i, 64, body, kind))
    if kind is ForKind.VECTORIZED:
        from unity.ir.module import IRModule
        from unity.tir.transform import VectorizeLoop

        func = VectorizeLoop()(IRModule({"main": func}))["main"]
    a = (RNG.standard_normal(64) * 4).astype("float32")
    n = RNG.integers(-252, 255, size=64).astype("int32")
    a[:6], n[:6] = [1.0, 1.5, 1.0, -3.0, np.nan, np.inf], [-149, -140, 127, 128, 3, -3]
    with np.errstate(over="ignore"):
        want = np.ldexp(a, n).astype("float32")
        for run in (lambda f, *args: unity.build(f, target=target)["main"](*args), tir.interpret):
            out = np.zeros(64, "float32")
            run(func, a, n, out)
            np.testing.assert_array_equal(out, want)
    with pytest.raises(TypeError, match="ldexp takes float32 x and int32 n"):
        tir.ldexp(tir.const(1.0, "float64"), tir.const(1, "int32"))


@pytest.mark.parametrize("target", _SCALEF_TARGETS)
def test_vector_exp_is_within_two_ulps_and_flushes_the_subnormals(target: str):
    """Within two ulps from -87 up; 0 below (exp's subnormal results, a microcode assist
    per lane when computed)."""
    A, B = tir.decl_buffer((4096,), "float32", "A"), tir.decl_buffer((4096,), "float32", "B")
    i = tir.Var("i")
    idx = tir.Ramp(i * 16, tir.const(1), 16)
    lib = unity.build(tir.PrimFunc((A, B), _loop(i, 256, tir.BufferStore(B, tir.exp(A[idx]), (idx,)))),
                      target=target)  # fmt: skip
    scalef = unity.target.Target(target).has_feature("avx512f")
    assert ("vscalefps" in lib.get_source("asm")) is scalef
    a = np.linspace(-103, 88.7, 4096).astype("float32")
    a[:4] = [np.inf, -np.inf, np.nan, -200.0]
    out = np.zeros(4096, "float32")
    lib["main"](a, out)
    np.testing.assert_array_equal(out[:4], [np.inf, 0.0, np.nan, 0.0])
    a, out = a[4:], out[4:]
    normal = a >= -87.0
    np.testing.assert_array_equal(out[~normal], 0.0)
    want = np.exp(a[normal].astype("float64"))
    ulps = np.abs(out[normal] - want) / np.spacing(want.astype("float32"))
    assert ulps.max() <= 2.0
