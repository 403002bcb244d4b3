"""conv2d and conv2d_transpose vs numpy: layouts, groups, dilation, strides, asymmetric padding."""

from __future__ import annotations

import pytest

from tests.topi.run import check, rand
from unity import te, topi
from unity.topi.testing import conv2d_python, conv2d_transpose_python

CASES = [
    # (C, O, K, strides, padding, dilation, groups)
    (2, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1),
    (2, 2, 3, (2, 1), (0, 1, 2, 0), (1, 1), 1),
    (2, 4, 2, (1, 1), (1, 0, 0, 1), (2, 2), 2),
    (3, 3, 3, (2, 2), (1, 1, 1, 1), (1, 1), 3),  # depthwise
]  # fmt: skip


@pytest.mark.parametrize(("c", "o", "k", "strides", "padding", "dilation", "groups"), CASES)
def test_conv2d_nchw(c, o, k, strides, padding, dilation, groups):
    x_t = te.placeholder((1, c, 6, 5), name="x")
    w_t = te.placeholder((o, c // groups, k, k), name="w")
    out = topi.nn.conv2d(x_t, w_t, strides, padding, dilation, groups)
    x, w = rand((1, c, 6, 5)), rand((o, c // groups, k, k))
    want = conv2d_python(x, w, strides, padding, dilation, groups)
    check([x_t, w_t], out, [x, w], want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("groups", [1, 2])
def test_conv2d_nhwc_hwio_matches_nchw(groups):
    x_t = te.placeholder((1, 5, 5, 4), name="x")
    w_t = te.placeholder((3, 3, 4 // groups, 2), name="w")
    out = topi.nn.conv2d(x_t, w_t, 1, (1, 0, 1, 2), 1, groups, "NHWC", "HWIO")
    x, w = rand((1, 5, 5, 4)), rand((3, 3, 4 // groups, 2))
    want = conv2d_python(
        x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 1), (1, 0, 1, 2), (1, 1), groups
    )
    check([x_t, w_t], out, [x, w], want.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("layout", "kernel_layout", "strides", "padding"),
    [("NCHW", "OIHW", (2, 2), (0, 0, 0, 0)), ("NCHW", "OIHW", (2, 3), (1, 0, 0, 1)),
     ("NHWC", "HWIO", (2, 2), (0, 0, 1, 1))],
)  # fmt: skip
def test_strided_1x1_conv_reads_a_subsampled_copy(layout, kernel_layout, strides, padding):
    x_shape = (1, 7, 6, 4) if layout == "NHWC" else (1, 4, 7, 6)
    w_shape = (1, 1, 4, 3) if kernel_layout == "HWIO" else (3, 4, 1, 1)
    x_t, w_t = te.placeholder(x_shape, name="x"), te.placeholder(w_shape, name="w")
    out = topi.nn.conv2d(x_t, w_t, strides, padding, 1, 1, layout, kernel_layout)
    blocks = [out.op.name, *(t.op.name for t in out.op.input_tensors)]
    assert blocks == ["T_conv2d", "T_strided_data", "w"]
    x, w = rand(x_shape), rand(w_shape)
    x_nchw = x.transpose(0, 3, 1, 2) if layout == "NHWC" else x
    w_oihw = w.transpose(3, 2, 0, 1) if kernel_layout == "HWIO" else w
    want = conv2d_python(x_nchw, w_oihw, strides, padding)
    want = want.transpose(0, 2, 3, 1) if layout == "NHWC" else want
    check([x_t, w_t], out, [x, w], want, rtol=1e-4, atol=1e-4, build=True)


def test_conv2d_symbolic_batch_and_size():
    n, h = te.var("n"), te.var("h")
    x_t = te.placeholder((n, 2, h, h), name="x")
    w_t = te.placeholder((2, 2, 3, 3), name="w")
    out = topi.nn.conv2d(x_t, w_t, 2, 1)
    for batch, size in ((1, 4), (2, 7)):
        x, w = rand((batch, 2, size, size)), rand((2, 2, 3, 3))
        check(
            [x_t, w_t], out, [x, w], conv2d_python(x, w, (2, 2), (1, 1, 1, 1)), rtol=1e-4, atol=1e-4
        )


def test_conv2d_rejects_channel_mismatch():
    with pytest.raises(ValueError, match="data has 3 channels, kernel expects 2 x groups=1"):
        topi.nn.conv2d(
            te.placeholder((1, 3, 4, 4), name="x"), te.placeholder((2, 2, 1, 1), name="w")
        )


T_CASES = [
    # (C, Og, K, strides, padding, output_padding, dilation, groups)
    (2, 3, 3, (1, 1), (0, 0, 0, 0), (0, 0), (1, 1), 1),
    (2, 2, 3, (2, 2), (1, 1, 1, 1), (1, 0), (1, 1), 1),
    (4, 1, 2, (2, 1), (0, 1, 1, 0), (0, 0), (2, 1), 2),
]  # fmt: skip


@pytest.mark.parametrize(
    ("c", "og", "k", "strides", "padding", "out_pad", "dilation", "groups"), T_CASES
)
def test_conv2d_transpose(c, og, k, strides, padding, out_pad, dilation, groups):
    x_t = te.placeholder((1, c, 3, 4), name="x")
    w_t = te.placeholder((c, og, k, k), name="w")
    out = topi.nn.conv2d_transpose(x_t, w_t, strides, padding, out_pad, dilation, groups)
    x, w = rand((1, c, 3, 4)), rand((c, og, k, k))
    want = conv2d_transpose_python(x, w, strides, padding, out_pad, dilation, groups)
    check([x_t, w_t], out, [x, w], want, rtol=1e-4, atol=1e-4)


def _blocked(x, b):
    """NCHW -> NCHW{b}c."""
    n, c, h, w = x.shape
    return x.reshape(n, c // b, b, h, w).transpose(0, 1, 3, 4, 2).copy()


BLOCKED_CASES = [
    # (C, O, K, strides, padding, dilation, groups, block)
    (16, 32, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1, 8),
    (16, 16, 1, (1, 1), (0, 0, 0, 0), (1, 1), 1, 16),
    (8, 16, 3, (2, 1), (0, 1, 2, 0), (2, 1), 1, 8),
    (16, 16, 1, (2, 2), (0, 0, 0, 0), (1, 1), 1, 8),  # strided 1x1: subsampled copy
    (32, 16, 3, (1, 1), (1, 1, 1, 1), (1, 1), 2, 8),  # block-aligned groups
    (16, 16, 3, (2, 2), (1, 1, 1, 1), (1, 1), 16, 8),  # depthwise
]  # fmt: skip


@pytest.mark.parametrize(
    ("c", "o", "k", "strides", "padding", "dilation", "groups", "block"), BLOCKED_CASES
)
def test_conv2d_blocked_matches_nchw(c, o, k, strides, padding, dilation, groups, block):
    x_t = te.placeholder((1, c // block, 7, 6, block), name="x")
    w_t = te.placeholder((o, c // groups, k, k), name="w")
    layout = f"NCHW{block}c"
    out = topi.nn.conv2d(x_t, w_t, strides, padding, dilation, groups, layout, "OIHW")
    x, w = rand((1, c, 7, 6)), rand((o, c // groups, k, k))
    want = conv2d_python(x, w, strides, padding, dilation, groups)
    check([x_t, w_t], out, [_blocked(x, block), w], _blocked(want, block), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "groups", "kernel_layout", "message"),
    [((1, 2, 5, 5, 8), (12, 16, 1, 1), 1, "OIHW", "not a multiple of the block"),
     ((1, 4, 5, 5, 8), (16, 4, 1, 1), 8, "OIHW", "do not align"),
     ((1, 2, 5, 5), (16, 16, 1, 1), 1, "OIHW", "needs 5-D data"),
     ((1, 2, 5, 5, 8), (1, 1, 16, 16), 1, "HWIO", "takes an OIHW kernel")],
)  # fmt: skip
def test_conv2d_blocked_rejects_what_it_cannot_block(x_shape, w_shape, groups, kernel_layout,
                                                     message):  # fmt: skip
    x_t, w_t = te.placeholder(x_shape, name="x"), te.placeholder(w_shape, name="w")
    with pytest.raises(ValueError, match=message):
        topi.nn.conv2d(x_t, w_t, 1, 0, 1, groups, "NCHW8c", kernel_layout)


@pytest.mark.parametrize(
    ("c", "o", "k", "strides", "padding"),
    [(3, 16, 3, (2, 2), (1, 1, 1, 1)), (24, 8, 1, (1, 1), (0, 0, 0, 0)),
     (5, 16, 1, (2, 2), (0, 0, 0, 0))],
)  # fmt: skip
def test_conv2d_nchw_to_blocked_output(c, o, k, strides, padding):
    x_t, w_t = te.placeholder((1, c, 9, 7), name="x"), te.placeholder((o, c, k, k), name="w")
    out = topi.nn.conv2d(x_t, w_t, strides, padding, 1, 1, "NCHW", "OIHW", None, "NCHW8c")
    x, w = rand((1, c, 9, 7)), rand((o, c, k, k))
    want = _blocked(conv2d_python(x, w, strides, padding), 8)
    check([x_t, w_t], out, [x, w], want, rtol=1e-4, atol=1e-4)


def test_conv2d_blocked_out_layout_needs_nchw_data_and_no_groups():
    x_t, w_t = te.placeholder((1, 4, 5, 5), name="x"), te.placeholder((8, 2, 1, 1), name="w")
    with pytest.raises(ValueError, match="needs NCHW data, an OIHW kernel and groups=1"):
        topi.nn.conv2d(x_t, w_t, 1, 0, 1, 2, "NCHW", "OIHW", None, "NCHW8c")
