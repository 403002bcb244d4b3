"""max/avg pooling (padding, ceil_mode, count_include_pad, dilation, NHWC) and adaptive pooling."""

from __future__ import annotations

import pytest

from tests.topi.run import check, rand
from unity import te, topi
from unity.topi.testing import adaptive_avg_pool2d_python, from_blocked, pool2d_python, to_blocked

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


@pytest.mark.parametrize(("pool", "strides", "padding", "dilation", "ceil", "include"), CASES)
def test_pool2d_blocked_matches_nchw(pool, strides, padding, dilation, ceil, include):
    x_t = te.placeholder((2, 2, 6, 7, 4), name="x")  # NCHW4c of (2, 8, 6, 7)
    x = rand((2, 8, 6, 7))
    mx = topi.nn.max_pool2d(x_t, pool, strides, padding, dilation, ceil, layout="NCHW4c")
    avg = topi.nn.avg_pool2d(x_t, pool, strides, padding, dilation, ceil, include, "NCHW4c")
    want_max = pool2d_python(x, pool, strides, "max", padding, dilation, ceil)
    want_avg = pool2d_python(x, pool, strides, "avg", padding, dilation, ceil, include)
    wants = [to_blocked(want_max, 4), to_blocked(want_avg, 4)]
    check([x_t], [mx, avg], [to_blocked(x, 4)], wants, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("out_size", [(2, 3), (1, 1)])
def test_adaptive_avg_pool2d_blocked_matches_nchw(out_size):
    x_t = te.placeholder((1, 2, 5, 7, 8), name="x")
    x = rand((1, 16, 5, 7))
    out = topi.nn.adaptive_avg_pool2d(x_t, out_size, layout="NCHW8c")
    want = adaptive_avg_pool2d_python(x, out_size)
    check([x_t], out, [to_blocked(x, 8)], to_blocked(want, 8), rtol=1e-5, atol=1e-5)
    assert from_blocked(to_blocked(want, 8)).shape == want.shape


def test_pool2d_refuses_a_rank_that_does_not_match_the_layout():
    with pytest.raises(ValueError, match="layout NCHW16c takes 5-D input, got 4-D"):
        topi.nn.max_pool2d(te.placeholder((1, 16, 4, 4), name="x"), 2, layout="NCHW16c")
    with pytest.raises(ValueError, match="layout NCHW takes 4-D input, got 5-D"):
        topi.nn.adaptive_avg_pool2d(te.placeholder((1, 1, 4, 4, 16), name="x"), 1)
