"""Small operator workloads shared by the default-schedule tests and the bench.

Each entry builds a PrimFunc from TOPI (as `LegalizeOps` would); the tests run the
default schedule built with `unity.build` against the reference interpreter.
"""

from __future__ import annotations

from collections.abc import Callable

from unity import te, tir, topi


def _ph(shape, name, dtype="float32"):
    return te.placeholder(shape, dtype=dtype, name=name)


def conv(n, c, h, w, o, k, stride=1, pad=0, groups=1, dilation=1):
    """conv2d NCHW/OIHW."""
    x, wt = _ph((n, c, h, w), "x"), _ph((o, c // groups, k, k), "w")
    return te.create_prim_func([x, wt, topi.nn.conv2d(x, wt, stride, pad, dilation, groups)])


def conv_blocked(c, h, w, o, k, stride=1, pad=0, groups=1, block=8, bias_relu=False):
    """conv2d on NCHW{block}c data (OIHW kernel), optionally + bias + relu."""
    x = _ph((1, c // block, h, w, block), "x")
    wt = _ph((o, c // groups, k, k), "w")
    y = topi.nn.conv2d(x, wt, stride, pad, 1, groups, f"NCHW{block}c", "OIHW")
    if not bias_relu:
        return te.create_prim_func([x, wt, y])
    b = _ph((1, o // block, 1, 1, block), "b")
    return te.create_prim_func([x, wt, b, topi.nn.relu(topi.add(y, b))])


def conv_pointwise_grouped(c, h, w, o, groups):
    """A grouped 1x1 conv + bias + residual + relu (ShuffleNet's), channels per group not
    a multiple of 8."""
    x, wt = _ph((1, c, h, w), "x"), _ph((o, c // groups, 1, 1), "w")
    b, r = _ph((o, 1, 1), "b"), _ph((1, o, h, w), "r")
    y = topi.nn.conv2d(x, wt, 1, 0, 1, groups)
    return te.create_prim_func([x, wt, b, r, topi.nn.relu(topi.add(topi.add(y, b), r))])


def conv_to_blocked(c, h, w, o, k, stride=1, pad=0, block=8):
    """conv2d of NCHW data (an image) written NCHW{block}c, + bias + relu."""
    x, wt = _ph((1, c, h, w), "x"), _ph((o, c, k, k), "w")
    y = topi.nn.conv2d(x, wt, stride, pad, 1, 1, "NCHW", "OIHW", None, f"NCHW{block}c")
    b = _ph((1, o // block, 1, 1, block), "b")
    return te.create_prim_func([x, wt, b, topi.nn.relu(topi.add(y, b))])


def conv_bias_relu(n, c, h, w, o, k, stride=1, pad=0):
    """conv2d + bias + relu in one PrimFunc (what FuseTIR makes)."""
    x, wt, b = _ph((n, c, h, w), "x"), _ph((o, c, k, k), "w"), _ph((1, o, 1, 1), "b")
    y = topi.nn.relu(topi.add(topi.nn.conv2d(x, wt, stride, pad), b))
    return te.create_prim_func([x, wt, b, y])


def matmul(shape_a, shape_b):
    """numpy-style matmul (batch dims broadcast)."""
    a, b = _ph(shape_a, "a"), _ph(shape_b, "b")
    return te.create_prim_func([a, b, topi.matmul(a, b)])


def dense_bias_relu(m, k, n):
    """dense + bias + relu."""
    x, w, b = _ph((m, k), "x"), _ph((n, k), "w"), _ph((n,), "b")
    return te.create_prim_func([x, w, b, topi.nn.relu(topi.add(topi.nn.dense(x, w), b))])


def softmax(shape, axis=-1):
    """softmax."""
    x = _ph(shape, "x")
    return te.create_prim_func([x, topi.nn.softmax(x, axis)])


def layer_norm(shape):
    """layer norm over the last axis."""
    x, g, b = _ph(shape, "x"), _ph(shape[-1:], "g"), _ph(shape[-1:], "b")
    return te.create_prim_func([x, g, b, topi.nn.layer_norm(x, g, b, axes=-1)])


def mean(shape, axis):
    """mean with keepdims."""
    x = _ph(shape, "x")
    return te.create_prim_func([x, topi.mean(x, axis, keepdims=True)])


def max_pool(shape, k, s, p):
    """max_pool2d NCHW."""
    x = _ph(shape, "x")
    return te.create_prim_func([x, topi.nn.max_pool2d(x, k, s, p)])


def avg_pool(shape, k, s, p):
    """avg_pool2d NCHW."""
    x = _ph(shape, "x")
    return te.create_prim_func([x, topi.nn.avg_pool2d(x, k, s, p)])


def global_avg_pool(shape):
    """adaptive_avg_pool2d to 1x1."""
    x = _ph(shape, "x")
    return te.create_prim_func([x, topi.nn.adaptive_avg_pool2d(x, 1)])


def add_broadcast(sa, sb):
    """broadcasting add."""
    a, b = _ph(sa, "a"), _ph(sb, "b")
    return te.create_prim_func([a, b, topi.add(a, b)])


def add_relu_chain(shape):
    """exp(a) * 2 + b, then relu: a chain of injective blocks."""
    a, b = _ph(shape, "a"), _ph(shape, "b")
    y = topi.nn.relu(topi.add(topi.multiply(topi.exp(a), 2.0), b))
    return te.create_prim_func([a, b, y])


def transpose(shape, axes):
    """transpose."""
    x = _ph(shape, "x")
    return te.create_prim_func([x, topi.transpose(x, axes)])


def reshape_transpose_symbolic(heads, dim):
    """attention's K^T: [seq, heads * dim] -> [seq, heads, dim] -> [heads, dim, seq]."""
    seq = tir.SizeVar("seq", "int64")
    x = _ph((seq, heads * dim), "x")
    y = topi.transpose(topi.reshape(x, (seq, heads, dim)), (1, 2, 0))
    return te.create_prim_func([x, y])


def symbolic_matmul(k, n):
    """matmul with a symbolic batch: [b, 7, k] x [k, n]."""
    b = tir.SizeVar("batch", "int64")
    x, w = _ph((b, 7, k), "x"), _ph((k, n), "w")
    return te.create_prim_func([x, w, topi.matmul(x, w)])


def symbolic_columns_matmul(m, k):
    """matmul with constant rows and a symbolic column count: [m, k] x [k, seq]."""
    seq = tir.SizeVar("seq", "int64")
    a, b = _ph((m, k), "a"), _ph((k, seq), "b")
    return te.create_prim_func([a, b, topi.matmul(a, b)])


def symbolic_conv(c, h, w, o, k, pad):
    """conv2d + bias + relu with a symbolic batch."""
    n = tir.SizeVar("n", "int64")
    x, wt, b = _ph((n, c, h, w), "x"), _ph((o, c, k, k), "w"), _ph((1, o, 1, 1), "b")
    return te.create_prim_func([x, wt, b, topi.nn.relu(topi.add(topi.nn.conv2d(x, wt, 1, pad), b))])


def symbolic_length_softmax(rows):
    """softmax over rows of a symbolic length (attention scores: ``[rows, seq]``)."""
    n = tir.SizeVar("seq", "int64")
    x = _ph((rows, n), "x")
    return te.create_prim_func([x, topi.nn.softmax(x, -1)])


def attention_scores(heads, dim):
    """Q K^T and P V over a symbolic batch and sequence: ``[b, h, s, d] x [b, h, d, s]``
    (symbolic columns) and ``[b, h, s, s] x [b, h, s, d]`` (symbolic reduction)."""
    b, n = tir.SizeVar("batch", "int64"), tir.SizeVar("seq", "int64")
    q, kt = _ph((b, heads, n, dim), "q"), _ph((b, heads, dim, n), "kt")
    return te.create_prim_func([q, kt, topi.matmul(q, kt)])


def attention_values(heads, dim):
    """P V over a symbolic batch and sequence (a symbolic reduction)."""
    b, n = tir.SizeVar("batch", "int64"), tir.SizeVar("seq", "int64")
    p, v = _ph((b, heads, n, n), "p"), _ph((b, heads, n, dim), "v")
    return te.create_prim_func([p, v, topi.matmul(p, v)])


def symbolic_softmax(m):
    """softmax over rows of a symbolic count."""
    n = tir.SizeVar("n", "int64")
    x = _ph((n, m), "x")
    return te.create_prim_func([x, topi.nn.softmax(x, -1)])


WORKLOADS: dict[str, Callable[[], tir.PrimFunc]] = {
    "conv7x7s2": lambda: conv(1, 3, 20, 20, 8, 7, stride=2, pad=3),
    "conv3x3": lambda: conv(1, 8, 10, 10, 16, 3, pad=1),
    "conv3x3s2": lambda: conv(2, 4, 9, 9, 6, 3, stride=2, pad=1),
    "conv1x1": lambda: conv(1, 16, 7, 7, 24, 1),
    "conv1x1s2": lambda: conv(1, 32, 13, 13, 48, 1, stride=2),
    "conv_depthwise": lambda: conv(1, 8, 10, 10, 8, 3, pad=1, groups=8),
    "conv_grouped": lambda: conv(1, 8, 6, 6, 12, 3, pad=1, groups=4),
    "conv_grouped_vector": lambda: conv(1, 16, 5, 5, 64, 3, pad=1, groups=2),
    "conv1x1_prime_width": lambda: conv(1, 8, 13, 13, 24, 1),
    "conv_grouped_odd": lambda: conv(1, 8, 7, 7, 20, 3, pad=1, groups=2),
    "conv1x1_grouped_pixels": lambda: conv_pointwise_grouped(12, 8, 6, 18, 3),
    "conv_dilated": lambda: conv(1, 4, 9, 9, 4, 3, pad=2, dilation=2),
    "conv_bias_relu": lambda: conv_bias_relu(1, 8, 12, 12, 16, 3, pad=1),
    "conv_blocked3x3": lambda: conv_blocked(16, 9, 9, 32, 3, pad=1, bias_relu=True),
    "conv_blocked1x1": lambda: conv_blocked(16, 7, 11, 24, 1, block=8),
    "conv_blocked1x1s2": lambda: conv_blocked(16, 9, 9, 16, 1, stride=2),
    "conv_blocked_grouped": lambda: conv_blocked(32, 6, 6, 32, 3, pad=1, groups=2),
    "conv_blocked_depthwise": lambda: conv_blocked(16, 9, 9, 16, 3, pad=1, groups=16),
    "conv_image_to_blocked": lambda: conv_to_blocked(3, 11, 11, 16, 3, stride=2, pad=1),
    "conv_blocked_depthwise_s2": lambda: conv_blocked(16, 10, 10, 16, 3, 2, 1, 16, 8, True),
    "matmul_odd": lambda: matmul((13, 29), (29, 7)),
    "matmul_tiled": lambda: matmul((64, 96), (96, 64)),
    "matmul_k512": lambda: matmul((16, 512), (512, 32)),
    "batch_matmul": lambda: matmul((3, 16, 24), (3, 24, 32)),
    "matmul_bcast": lambda: matmul((2, 8, 24), (24, 16)),
    "matmul_unit_batch": lambda: matmul((1, 16, 24), (24, 64)),
    "matmul_symbolic_columns": lambda: symbolic_columns_matmul(64, 32),
    "dense_bias_relu": lambda: dense_bias_relu(32, 40, 48),
    "gemv": lambda: dense_bias_relu(1, 64, 100),
    "gemv_kn": lambda: matmul((1, 96), (96, 64)),
    "dense_few_rows": lambda: dense_bias_relu(3, 40, 48),
    "matmul_symbolic_batch": lambda: symbolic_matmul(12, 32),
    "softmax": lambda: softmax((6, 37)),
    "softmax_rows_vectorized": lambda: softmax((3, 5, 64)),
    "softmax_symbolic_rows": lambda: symbolic_softmax(48),
    "softmax_symbolic_length": lambda: symbolic_length_softmax(5),
    "attention_scores": lambda: attention_scores(2, 8),
    "attention_values": lambda: attention_values(2, 32),
    "conv_symbolic_batch": lambda: symbolic_conv(4, 9, 9, 16, 3, 1),
    "softmax_axis0": lambda: softmax((9, 5), axis=0),
    "layer_norm": lambda: layer_norm((5, 48)),
    "mean_last": lambda: mean((4, 6, 33), -1),
    "mean_spatial": lambda: mean((2, 8, 5, 5), (2, 3)),
    "max_pool3x3s2": lambda: max_pool((1, 4, 21, 21), 3, 2, 1),
    "avg_pool2x2": lambda: avg_pool((2, 3, 8, 8), 2, 2, 0),
    "global_avg_pool": lambda: global_avg_pool((1, 16, 7, 7)),
    "add_broadcast": lambda: add_broadcast((4, 1, 33), (5, 33)),
    "add_relu_chain": lambda: add_relu_chain((3, 70)),
    "transpose": lambda: transpose((5, 6, 7), (2, 0, 1)),
    "transpose_nhwc_nchw": lambda: transpose((1, 5, 7, 32), (0, 3, 1, 2)),
    "reshape_transpose_symbolic": lambda: reshape_transpose_symbolic(3, 32),
}
