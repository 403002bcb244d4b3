"""max/avg pooling (padding, ceil_mode, count_include_pad, dilation, NHWC) and adaptive pooling."""

from __future__ import annotations

import pytest

from tests.topi.run import check, rand
from unity import te, topi
from unity.topi.testing import adaptive_avg_pool2d_python, pool2d_python

CASES = [
    # (pool, strides, padding, dilation, ceil_mode, count_include_pad)
    ((2, 2), (2, 2), (0, 0, 0, 0), (1, 1), False, False),
    ((3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False, True),
    ((3, 2), (2, 2), (1, 0, 0, 1), (1, 1), True, False),
    ((3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True, True),
    ((2, 2), (1, 1), (1, 1, 1, 1), (2, 2), False, False),
]  # fmt: skip


@pytest.mark.parametrize(("pool", "strides", "padding", "dilation", "ceil", "include"), CASES)
def test_pool2d_nchw(pool, strides, padding, dilation, ceil, include):
    x_t = te.placeholder((1, 2, 6, 7), name="x")
    x = rand((1, 2, 6, 7))
    mx = topi.nn.max_pool2d(x_t, pool, strides, padding, dilation, ceil)
    avg = topi.nn.avg_pool2d(x_t, pool, strides, padding, dilation, ceil, include)
    want_max = pool2d_python(x, pool, strides, "max", padding, dilation, ceil)
    want_avg = pool2d_python(x, pool, strides, "avg", padding, dilation, ceil, include)
    check([x_t], [mx, avg], [x], [want_max, want_avg], rtol=1e-5, atol=1e-5)


def test_pool2d_nhwc_symbolic_size():
    h = te.var("h")
    x_t = te.placeholder((1, h, h, 3), name="x")
    out = topi.nn.avg_pool2d(x_t, 3, 2, 1, layout="NHWC")
    for size in (3, 6):
        x = rand((1, size, size, 3))
        want = pool2d_python(x.transpose(0, 3, 1, 2), (3, 3), (2, 2), "avg", (1, 1, 1, 1))
        check([x_t], out, [x], want.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("size", "out_size"), [((5, 7), (2, 3)), ((4, 4), (1, 1)), ((3, 3), (3, 3))]
)
def test_adaptive_avg_pool2d(size, out_size):
    x_t = te.placeholder((1, 2, *size), name="x")
    x = rand((1, 2, *size))
    out = topi.nn.adaptive_avg_pool2d(x_t, out_size)
    check([x_t], out, [x], adaptive_avg_pool2d_python(x, out_size), rtol=1e-5, atol=1e-5)


def test_global_pool_of_symbolic_size():
    h = te.var("h")
    x_t = te.placeholder((1, 2, h, h), name="x")
    out = topi.nn.adaptive_avg_pool2d(x_t, 1)
    for s in (2, 5):
        x = rand((1, 2, s, s))
        check([x_t], out, [x], x.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-5)
