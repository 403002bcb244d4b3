import ctypes
import math

import numpy as np
import pytest

import unity
from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.script import tir as T
from unity.tir import Call, ForKind
from unity.tir import op as top
from unity.tir.transform import LowerIntrinsics, VectorizeLoop

from ._workloads import collect, loop, module


def test_docstring_example():
    @T.prim_func
    def before(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in T.serial(4):
            B[i] = T.sigmoid(A[i])

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in T.serial(4):
            B[i] = T.float32(1) / (T.float32(1) + T.exp(T.float32(0) - A[i]))

    after = LowerIntrinsics(fast_exp=False)(module(before))
    assert_structural_equal(after["main"], expected)


N = 512


def _unary(fn, dtype="float32", kind=ForKind.SERIAL) -> tir.PrimFunc:
    A = tir.decl_buffer((N,), dtype, "A")
    B = tir.decl_buffer((N,), "float32" if fn in (tir.isnan, tir.isinf) else dtype, "B")
    i = tir.Var("i")
    value = fn(A[i])
    if value.dtype.startswith("bool"):
        value = tir.select(value, tir.const(1.0), tir.const(0.0))
    return tir.PrimFunc((A, B), loop(i, N, tir.BufferStore(B, value, (i,)), kind))


def test_sigmoid_becomes_exp_and_arithmetic():
    before = _unary(tir.sigmoid)
    A, B = before.params
    i = before.body.loop_var
    one, zero = tir.const(1.0), tir.const(0.0)
    expected_value = one / (one + tir.exp(zero - A[i]))
    expected = tir.PrimFunc((A, B), loop(i, N, tir.BufferStore(B, expected_value, (i,))))
    assert_structural_equal(LowerIntrinsics(fast_exp=False)(module(before))["main"], expected)


_CASES = [
    (tir.sigmoid, lambda x: 1 / (1 + np.exp(-x)), (-30, 30)),
    (tir.tanh, np.tanh, (-12, 12)),
    (tir.erf, None, (-5, 5)),
    (tir.rsqrt, lambda x: 1 / np.sqrt(x), (1e-3, 100)),
    (tir.atan, np.arctan, (-50, 50)),
    (tir.asin, np.arcsin, (-1, 1)),
    (tir.acos, np.arccos, (-1, 1)),
    (tir.sinh, np.sinh, (-10, 10)),
    (tir.cosh, np.cosh, (-10, 10)),
    (tir.tan, np.tan, (-1.4, 1.4)),
]


@pytest.mark.parametrize("fn,ref,bounds", _CASES, ids=[c[0].__name__ for c in _CASES])
def test_lowered_math_matches_numpy(fn, ref, bounds):
    if ref is None:
        import math

        ref = np.vectorize(math.erf)
    x = np.linspace(*bounds, N).astype("float32")
    x[N // 2] = 0.0 if bounds[0] < 0 else x[N // 2]
    x[1] = 1e-4 if bounds[0] < 0 else x[1]
    lowered = LowerIntrinsics()(module(_unary(fn)))
    allowed = {"tir.floor", "tir.sqrt", "tir.fabs", "tir.sin", "tir.cos", "tir.reinterpret", "tir.ldexp"}
    assert _remaining_ops(lowered) <= allowed
    out = np.zeros(N, "float32")
    tir.interpret(lowered, x, out)
    expected = ref(x.astype("float64"))
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-6 * np.abs(expected).max())


def test_isnan_isinf_atan2_fmod():
    x = np.array([0.0, np.nan, np.inf, -np.inf, 1.5, -2.0] * (N // 6) + [0.0] * (N % 6), "float32")
    for fn, ref in ((tir.isnan, np.isnan), (tir.isinf, np.isinf)):
        out = np.zeros(N, "float32")
        tir.interpret(LowerIntrinsics()(module(_unary(fn))), x, out)
        np.testing.assert_array_equal(out, ref(x).astype("float32"))
    rng = np.random.default_rng(0)
    y, z = rng.standard_normal(N).astype("float32"), rng.standard_normal(N).astype("float32")
    z[:4] = [0.0, 0.0, -1.0, -1.0]
    y[:4] = [1.0, -1.0, 0.0, -0.5]
    for fn, ref in ((tir.atan2, np.arctan2), (tir.fmod, np.fmod)):
        Y, Z, O = (tir.decl_buffer((N,), "float32", n) for n in "YZO")
        i = tir.Var("i")
        func = tir.PrimFunc((Y, Z, O), loop(i, N, tir.BufferStore(O, fn(Y[i], Z[i]), (i,))))
        out = np.zeros(N, "float32")
        with np.errstate(all="ignore"):
            tir.interpret(LowerIntrinsics()(module(func)), y, z, out)
            expected = ref(y, z)
        np.testing.assert_allclose(out, expected, rtol=3e-6, atol=3e-6)


def test_vector_calls_are_lowered_lane_wise():
    vectorized = VectorizeLoop()(module(_unary(tir.tanh, kind=ForKind.VECTORIZED)))
    lowered = LowerIntrinsics()(vectorized)
    assert _remaining_ops(lowered) == {"tir.fabs", "tir.reinterpret", "tir.ldexp"}
    x = np.linspace(-4, 4, N).astype("float32")
    out = np.zeros(N, "float32")
    tir.interpret(lowered, x, out)
    np.testing.assert_allclose(out, np.tanh(x), rtol=2e-6, atol=1e-7)


def test_fast_exp_is_within_two_ulps_and_handles_inf_and_nan():
    x = np.linspace(-87, 88, N).astype("float32")
    x[:4] = [np.inf, -np.inf, np.nan, -200.0]
    lowered = LowerIntrinsics()(module(_unary(tir.exp)))
    assert _remaining_ops(lowered) == {"tir.reinterpret", "tir.ldexp"}  # no rounding, no conversion
    out = np.zeros(N, "float32")
    tir.interpret(lowered, x, out)
    np.testing.assert_array_equal(out[:4], [np.inf, 0.0, np.nan, 0.0])
    want = np.exp(x[4:].astype("float64"))
    ulps = np.abs(out[4:] - want) / np.spacing(want.astype("float32"))
    assert ulps.max() <= 2.0


def test_erf_is_a_rational_within_seven_ulps_and_saturates():
    x = np.linspace(-4.5, 4.5, N).astype("float32")
    x[:6] = [np.inf, -np.inf, np.nan, 0.0, 1e-30, -1e-5]
    lowered = LowerIntrinsics()(module(_unary(tir.erf)))
    assert _remaining_ops(lowered) == set()  # no exp, no fabs: two selects and arithmetic
    out = np.zeros(N, "float32")
    tir.interpret(lowered, x, out)
    np.testing.assert_array_equal(out[:3], [1.0, -1.0, np.nan])
    want = np.vectorize(math.erf)(x[3:].astype("float64"))
    ulps = np.abs(out[3:] - want) / np.spacing(np.abs(want).astype("float32"))
    assert ulps.max() <= 7.0
    build = unity.build(lowered)  # the compiled code agrees (LLVM keeps the NaN through the clamp)
    compiled = np.zeros(N, "float32")
    build["main"](x, compiled)
    np.testing.assert_allclose(compiled, out, rtol=1e-6, atol=0)


def test_nothing_to_do_returns_same_module():
    mod = module(_unary(tir.exp, dtype="float64"))
    assert LowerIntrinsics()(mod) is mod
    mod = module(_unary(tir.sqrt))
    assert LowerIntrinsics()(mod) is mod


def _remaining_ops(mod) -> set[str]:
    names = {call.op.name for call in collect(mod["main"].body, Call)}
    for name in names:
        assert top.UNARY_MATH.get(name.removeprefix("tir."), None) is None or \
            top.UNARY_MATH[name.removeprefix("tir.")].attrs["llvm"] is not None
    return names


@pytest.mark.parametrize("exponent", [1.0, 2.0, 3.0, -1.0, -2.0, 0.5, 0.25, 0.75, -0.5, 1.3])
def test_pow_with_a_constant_exponent_uses_products_and_roots(exponent):
    func = _unary(lambda x: tir.power(x, tir.const(exponent, "float32")), kind=ForKind.VECTORIZED)
    lowered = LowerIntrinsics()(VectorizeLoop()(module(func)))
    assert ("tir.pow" in _remaining_ops(lowered)) == (exponent == 1.3)  # only 1.3 stays libm
    special = [0, -0.0, np.inf, np.nan, 1, 4, -2] + ([-np.inf] if exponent != 1.3 else [])
    x = np.concatenate([np.linspace(1e-3, 50, N - len(special)), special]).astype("float32")
    out = np.zeros(N, "float32")
    with np.errstate(all="ignore"):
        tir.interpret(lowered, x, out)
    c_pow = ctypes.CDLL(None).pow  # C's pow is the reference (numpy's differs at -inf)
    c_pow.restype, c_pow.argtypes = ctypes.c_double, [ctypes.c_double, ctypes.c_double]
    expected = np.array([c_pow(float(v), exponent) for v in x], "float32")
    np.testing.assert_allclose(out, expected, rtol=4e-7, atol=0)


def test_fast_exp_flushes_below_minus_87_and_never_scales_into_the_subnormals():
    """exp of -87 and up is a normal float within two ulps; below, 0 (its subnormal
    results cost a microcode assist per lane: a causally masked softmax ran 7x slower);
    built with LLVM, a softmax over a mask of -1e4, finfo.min and -inf matches numpy."""
    x = np.concatenate([np.linspace(-87.0, -80.0, 64), np.linspace(-104.0, -87.01, 64)]).astype("float32")
    lowered = LowerIntrinsics()(module(_unary(tir.exp)))
    out = np.zeros(N, "float32")
    tir.interpret(lowered, np.resize(x, N), out)
    out = out[:128]
    want = np.exp(x[:64].astype("float64"))
    assert (out[:64] >= np.finfo(np.float32).tiny).all()  # normal
    assert (np.abs(out[:64] - want) / np.spacing(want.astype("float32"))).max() <= 2.0
    np.testing.assert_array_equal(out[64:], 0.0)
    from unity import te, topi

    scores = te.placeholder((4, 37), name="scores")
    func = te.create_prim_func([scores, topi.nn.softmax(scores, -1)])
    s = np.random.default_rng(0).standard_normal((4, 37)).astype("float32")
    s[0, 20:], s[1, 10:], s[2, 30:] = -1e4, np.finfo(np.float32).min, -np.inf
    got = np.zeros_like(s)
    unity.build(func)["main"](s, got)
    e = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)
