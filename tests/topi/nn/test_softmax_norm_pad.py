"""softmax / log_softmax, batch / layer / group norm and pad vs numpy."""

from __future__ import annotations

import numpy as np
import pytest

from tests.topi.run import check, rand
from unity import te, topi
from unity.topi.testing import (
    batch_norm_python,
    group_norm_python,
    layer_norm_python,
    softmax_python,
)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_and_log_softmax_are_stable(axis):
    x_t = te.placeholder((3, 4), name="x")
    x = rand((3, 4)) * 50  # large values: exp would overflow without the max shift
    wide = x.astype(np.float64)
    shifted = wide - wide.max(axis=axis, keepdims=True)
    log_want = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    check([x_t], [topi.nn.softmax(x_t, axis), topi.nn.log_softmax(x_t, axis)], [x],
          [softmax_python(x, axis), log_want], rtol=1e-4, atol=1e-4)  # fmt: skip


def test_softmax_symbolic_rows():
    n = te.var("n")
    x_t = te.placeholder((n, 5), name="x")
    out = topi.nn.softmax(x_t)
    for rows in (1, 4):
        x = rand((rows, 5))
        check([x_t], out, [x], softmax_python(x), rtol=1e-5, atol=1e-6)


def test_batch_norm_returns_stats():
    shapes = ((2, 3, 2, 2), (3,), (3,), (3,), (3,))
    ts = [te.placeholder(s, name=n) for s, n in zip(shapes, "xgbmv")]
    x, g, b, m, v = (rand(s) for s in shapes)
    v = np.abs(v) + 0.1
    outs = topi.nn.batch_norm(*ts, axis=1, epsilon=1e-3)
    check(
        ts,
        outs,
        [x, g, b, m, v],
        [batch_norm_python(x, g, b, m, v, 1, 1e-3), m, v],
        rtol=1e-4,
        atol=1e-5,
    )


def test_layer_norm_over_last_axes_with_symbolic_batch():
    n = te.var("n")
    x_t = te.placeholder((n, 3, 4), name="x")
    g_t, b_t = te.placeholder((4,), name="g"), te.placeholder((4,), name="b")
    out = topi.nn.layer_norm(x_t, g_t, b_t, axes=-1)
    for batch in (1, 2):
        x, g, b = rand((batch, 3, 4)), rand((4,)), rand((4,))
        check([x_t, g_t, b_t], out, [x, g, b], layer_norm_python(x, g, b), rtol=1e-4, atol=1e-5)


def test_layer_norm_over_two_axes():
    x_t = te.placeholder((2, 3, 4), name="x")
    g_t, b_t = te.placeholder((3, 4), name="g"), te.placeholder((3, 4), name="b")
    out = topi.nn.layer_norm(x_t, g_t, b_t, axes=[1, 2], epsilon=1e-3)
    x, g, b = rand((2, 3, 4)), rand((3, 4)), rand((3, 4))
    want = layer_norm_python(x.reshape(2, 12), g.reshape(12), b.reshape(12), epsilon=1e-3)
    check([x_t, g_t, b_t], out, [x, g, b], want.reshape(2, 3, 4), rtol=1e-4, atol=1e-5)


def test_group_norm():
    x_t = te.placeholder((2, 4, 3, 2), name="x")
    g_t, b_t = te.placeholder((4,), name="g"), te.placeholder((4,), name="b")
    x, g, b = rand((2, 4, 3, 2)), rand((4,)), rand((4,))
    check([x_t, g_t, b_t], topi.nn.group_norm(x_t, g_t, b_t, 2), [x, g, b], group_norm_python(x, g, b, 2),
          rtol=1e-4, atol=1e-5)  # fmt: skip


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_modes(mode):
    x_t = te.placeholder((3, 4), name="x")
    x = rand((3, 4))
    out = topi.nn.pad(x_t, [1, 2], [2, 1], 0.5 if mode == "constant" else 0.0, mode)
    kwargs = {"constant_values": 0.5} if mode == "constant" else {}
    check([x_t], out, [x], np.pad(x, ((1, 2), (2, 1)), mode=mode, **kwargs))
