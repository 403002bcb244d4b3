"""Unary TOPI ops vs numpy, through the reference interpreter (static and symbolic shapes)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.topi.run import check, rand
from unity import te, topi

_ERF = np.vectorize(math.erf)

UNARY = [
    (topi.exp, np.exp), (topi.log, lambda a: np.log(np.abs(a) + 0.5)), (topi.sqrt, None),
    (topi.rsqrt, None), (topi.sin, np.sin), (topi.cos, np.cos), (topi.tan, np.tan),
    (topi.tanh, np.tanh), (topi.sigmoid, lambda a: 1 / (1 + np.exp(-a))), (topi.erf, _ERF),
    (topi.abs, np.abs), (topi.negative, np.negative), (topi.sign, np.sign),
    (topi.square, np.square), (topi.floor, np.floor), (topi.ceil, np.ceil),
    (topi.round, np.rint), (topi.trunc, np.trunc),
]  # fmt: skip


@pytest.mark.parametrize(("op", "ref"), UNARY, ids=[o.__name__ for o, _ in UNARY])
def test_unary_matches_numpy(op, ref):
    x = te.placeholder((3, 5), name="x")
    a = rand((3, 5))
    if op is topi.log:
        a = np.abs(a) + 0.5
        ref = np.log
    if op in (topi.sqrt, topi.rsqrt):
        a = np.abs(a) + 0.1
        ref = np.sqrt if op is topi.sqrt else (lambda v: 1 / np.sqrt(v))
    check([x], op(x), [a], ref(a).astype("float32"), rtol=1e-5, atol=1e-6)


def test_predicates_on_nan_and_inf():
    x = te.placeholder((4,), name="x")
    a = np.array([1.0, np.nan, np.inf, -np.inf], "float32")
    check([x], [topi.isnan(x), topi.isinf(x), topi.isfinite(x)], [a],
          [np.isnan(a), np.isinf(a), np.isfinite(a)])  # fmt: skip


def test_integer_unary_ops_keep_integers():
    x = te.placeholder((6,), "int32", name="x")
    a = np.array([-3, -1, 0, 2, 5, 7], "int32")
    check([x], [topi.abs(x), topi.sign(x), topi.negative(x), topi.logical_not(x)], [a],
          [np.abs(a), np.sign(a), -a, np.logical_not(a)])  # fmt: skip


def test_activations_with_symbolic_rows():
    n = te.var("n")
    x = te.placeholder((n, 4), name="x")
    outs = [topi.nn.relu(x), topi.nn.gelu(x), topi.nn.gelu_tanh(x), topi.nn.silu(x),
            topi.clip(x, -0.5, 0.75), topi.nn.leaky_relu(x, 0.1)]  # fmt: skip
    for rows in (1, 5):
        a = rand((rows, 4), low=-3, high=3)
        gelu = 0.5 * a * (1 + _ERF(a / np.sqrt(2)))
        tanh_gelu = 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a**3)))
        silu = a / (1 + np.exp(-a))
        want = [
            np.maximum(a, 0),
            gelu,
            tanh_gelu,
            silu,
            np.clip(a, -0.5, 0.75),
            np.where(a > 0, a, 0.1 * a),
        ]
        check([x], outs, [a], [w.astype("float32") for w in want], rtol=1e-5, atol=1e-6)


def test_cast_truncates_and_bool_tests_nonzero():
    x = te.placeholder((4,), name="x")
    a = np.array([-1.7, -0.2, 0.0, 2.9], "float32")
    check([x], [topi.cast(x, "int32"), topi.cast(x, "bool"), topi.cast(x, "float64")], [a],
          [a.astype("int32"), a != 0, a.astype("float64")])  # fmt: skip


def test_clip_rejects_inverted_bounds():
    with pytest.raises(ValueError, match="a_min 2.0 is larger than a_max 1.0"):
        topi.clip(te.placeholder((2,), name="x"), 2.0, 1.0)


def test_integer_clip_rounds_bounds_into_the_range():
    x = te.placeholder((5,), "int8", name="x")
    a = np.array([-128, -1, 0, 2, 127], "int8")
    check([x], [topi.clip(x, 0.5, 2.5), topi.clip(x, -1000.0, 1000.0)], [a], [np.clip(a, 1, 2), a])


MORE_UNARY = [
    (topi.asin, np.arcsin), (topi.acos, np.arccos), (topi.atan, np.arctan), (topi.sinh, np.sinh),
    (topi.cosh, np.cosh), (topi.exp2, np.exp2), (topi.reciprocal, np.reciprocal),
]  # fmt: skip


@pytest.mark.parametrize(("op", "ref"), MORE_UNARY, ids=[o.__name__ for o, _ in MORE_UNARY])
def test_more_unary_math(op, ref):
    x = te.placeholder((6,), name="x")
    a = rand((6,), low=-0.9, high=0.9)
    check([x], op(x), [a], ref(a), rtol=1e-5, atol=1e-6)


def test_logarithms_of_positive_values():
    x = te.placeholder((4,), name="x")
    a = rand((4,), low=0.1, high=5)
    check([x], [topi.log2(x), topi.log10(x)], [a], [np.log2(a), np.log10(a)], rtol=1e-5, atol=1e-6)


def test_onnx_activations():
    x = te.placeholder((2, 5), name="x")
    s = te.placeholder((5,), name="s")
    a, slope = rand((2, 5), low=-30, high=30), rand((5,))
    a[0, :3] = [0.3, -0.2, 1.5]
    softplus = np.logaddexp(0, a.astype(np.float64))
    outs = [topi.nn.elu(x, 0.5), topi.nn.selu(x), topi.nn.celu(x, 2.0), topi.nn.softplus(x),
            topi.nn.softsign(x), topi.nn.hard_sigmoid(x), topi.nn.hard_swish(x), topi.nn.mish(x),
            topi.nn.thresholded_relu(x, 0.5), topi.nn.prelu(x, s)]  # fmt: skip
    alpha, gamma = 1.67326319217681884765625, 1.05070102214813232421875
    want = [np.where(a > 0, a, 0.5 * np.expm1(a)), gamma * np.where(a > 0, a, alpha * np.expm1(a)),
            np.maximum(a, 0) + np.minimum(0, 2.0 * np.expm1(a / 2.0)), softplus, a / (1 + np.abs(a)),
            np.clip(0.2 * a + 0.5, 0, 1), a * np.clip(a / 6 + 0.5, 0, 1), a * np.tanh(softplus),
            np.where(a > 0.5, a, 0), np.where(a > 0, a, slope * a)]  # fmt: skip
    check([x, s], outs, [a, slope], want, rtol=1e-5, atol=1e-5)
