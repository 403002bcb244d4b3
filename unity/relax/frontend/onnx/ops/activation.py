"""Activation ONNX ops: the ReLU family, Gelu, softmax-likes, and inference-time Dropout.

Example:
    >>> "LeakyRelu" in CONVERTERS and "Softmax" in CONVERTERS
    True
"""

from __future__ import annotations

import numpy as np

from unity.relax import op as R
from unity.relax.expr import Expr
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter, cast, const_like, unary
from unity.relax.op.base import product


def _x(ctx: Context, node: NodeView) -> Expr:
    return ctx.expr(node.input(0))


def _leaky_relu(ctx: Context, node: NodeView) -> Value:
    x = _x(ctx, node)
    scaled = ctx.emit(R.multiply(x, const_like(ctx, node.attr("alpha", 0.01), x)))
    return ctx.emit(R.where(ctx.emit(R.less(x, const_like(ctx, 0, x))), scaled, x))


def _elu(ctx: Context, node: NodeView) -> Value:
    x = _x(ctx, node)
    alpha = const_like(ctx, node.attr("alpha", 1.0), x)
    neg = ctx.emit(R.multiply(alpha, ctx.emit(R.subtract(ctx.emit(R.exp(x)), const_like(ctx, 1, x)))))
    return ctx.emit(R.where(ctx.emit(R.less(x, const_like(ctx, 0, x))), neg, x))


def _selu(ctx: Context, node: NodeView) -> Value:
    x = _x(ctx, node)
    alpha = node.attr("alpha", 1.67326319217681884765625)
    gamma = node.attr("gamma", 1.05070102519302368164062)
    neg = ctx.emit(R.subtract(ctx.emit(R.multiply(ctx.emit(R.exp(x)), const_like(ctx, alpha, x))),
                              const_like(ctx, alpha, x)))  # fmt: skip
    picked = ctx.emit(R.where(ctx.emit(R.less_equal(x, const_like(ctx, 0, x))), neg, x))
    return ctx.emit(R.multiply(picked, const_like(ctx, gamma, x)))


def _celu(ctx: Context, node: NodeView) -> Value:
    x = _x(ctx, node)
    alpha = const_like(ctx, node.attr("alpha", 1.0), x)
    zero = const_like(ctx, 0, x)
    expm1 = ctx.emit(R.subtract(ctx.emit(R.exp(ctx.emit(R.divide(x, alpha)))), const_like(ctx, 1, x)))
    neg = ctx.emit(R.minimum(zero, ctx.emit(R.multiply(alpha, expm1))))
    return ctx.emit(R.add(ctx.emit(R.maximum(zero, x)), neg))


def _thresholded_relu(ctx: Context, node: NodeView) -> Value:
    x = _x(ctx, node)
    above = ctx.emit(R.greater(x, const_like(ctx, node.attr("alpha", 1.0), x)))
    return ctx.emit(R.where(above, x, const_like(ctx, 0, x)))


def _hard_sigmoid_of(ctx: Context, x: Expr, alpha: float, beta: float) -> Expr:
    lin = ctx.emit(R.add(ctx.emit(R.multiply(x, const_like(ctx, alpha, x))), const_like(ctx, beta, x)))
    return ctx.emit(R.clip(lin, 0.0, 1.0))


def _hard_sigmoid(ctx: Context, node: NodeView) -> Value:
    return _hard_sigmoid_of(ctx, _x(ctx, node), node.attr("alpha", 0.2), node.attr("beta", 0.5))


def _hard_swish(ctx: Context, node: NodeView) -> Value:
    x = _x(ctx, node)
    return ctx.emit(R.multiply(x, _hard_sigmoid_of(ctx, x, 1.0 / 6.0, 0.5)))


def _softplus_of(ctx: Context, x: Expr) -> Expr:
    return ctx.emit(R.log(ctx.emit(R.add(ctx.emit(R.exp(x)), const_like(ctx, 1, x)))))


def _softplus(ctx: Context, node: NodeView) -> Value:
    return _softplus_of(ctx, _x(ctx, node))


def _softsign(ctx: Context, node: NodeView) -> Value:
    x = _x(ctx, node)
    return ctx.emit(R.divide(x, ctx.emit(R.add(ctx.emit(R.abs(x)), const_like(ctx, 1, x)))))


def _mish(ctx: Context, node: NodeView) -> Value:
    x = _x(ctx, node)
    return ctx.emit(R.multiply(x, ctx.emit(R.tanh(_softplus_of(ctx, x)))))


def _swish(ctx: Context, node: NodeView) -> Value:
    x = _x(ctx, node)
    scaled = ctx.emit(R.multiply(x, const_like(ctx, node.attr("alpha", 1.0), x)))
    return ctx.emit(R.multiply(x, ctx.emit(R.sigmoid(scaled))))


def _gelu(ctx: Context, node: NodeView) -> Value:
    approximate = node.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise ctx.fail(f"expects approximate 'none' or 'tanh', got {approximate!r}")
    x = _x(ctx, node)
    return ctx.emit(R.nn.gelu(x) if approximate == "none" else R.nn.gelu_tanh(x))


def _prelu(ctx: Context, node: NodeView) -> Value:
    x, slope = _x(ctx, node), ctx.expr(node.input(1))
    neg = ctx.emit(R.multiply(x, slope))
    out = ctx.emit(R.where(ctx.emit(R.less(x, const_like(ctx, 0, x))), neg, x))
    return out


def _shrink(ctx: Context, node: NodeView) -> Value:
    x = _x(ctx, node)
    lambd, bias = node.attr("lambd", 0.5), node.attr("bias", 0.0)
    low = ctx.emit(R.where(ctx.emit(R.less(x, const_like(ctx, -lambd, x))),
                           ctx.emit(R.add(x, const_like(ctx, bias, x))), const_like(ctx, 0, x)))  # fmt: skip
    high = ctx.emit(R.subtract(x, const_like(ctx, bias, x)))
    return ctx.emit(R.where(ctx.emit(R.greater(x, const_like(ctx, lambd, x))), high, low))


def _coerced_2d(ctx: Context, node: NodeView, default_new: int) -> tuple[Expr, int, bool]:
    """Opsets before 13 apply softmax-likes to the input flattened to 2-D at `axis`."""
    x = _x(ctx, node)
    ndim = ctx.ndim(x)
    if node.opset >= 13:
        return x, ctx.normalize_axes([node.attr("axis", default_new)], ndim)[0], False
    axis = ctx.normalize_axes([node.attr("axis", 1)], ndim)[0] if ndim else 0
    if axis == ndim - 1:
        return x, axis, False
    shape = ctx.shape(x)
    flat = ctx.emit(R.reshape(x, (product(shape[:axis]), product(shape[axis:]))))
    return flat, 1, True


def _softmax_like(make: object) -> Converter:
    def convert(ctx: Context, node: NodeView) -> Value:
        x, axis, reshaped = _coerced_2d(ctx, node, -1)
        out = ctx.emit(make(x, axis))  # type: ignore[operator]  # a relax op
        return ctx.emit(R.reshape(out, ctx.shape(_x(ctx, node)))) if reshaped else out

    return convert


def _hardmax(ctx: Context, node: NodeView) -> Value:
    x, axis, reshaped = _coerced_2d(ctx, node, -1)
    shape = ctx.shape(x)
    dim = shape[axis]
    if not dim.is_number:
        raise ctx.fail(f"needs a static size on axis {axis}, got {dim}")
    best = ctx.emit(R.argmax(x, axis, keepdims=True))
    index_shape = [1] * len(shape)
    index_shape[axis] = int(dim)
    positions = ctx.expr(np.arange(int(dim), dtype="int64").reshape(index_shape))
    out = cast(ctx, ctx.emit(R.equal(best, positions)), ctx.dtype(x))
    return ctx.emit(R.reshape(out, ctx.shape(_x(ctx, node)))) if reshaped else out


def _dropout(ctx: Context, node: NodeView) -> list[Value]:
    x = _x(ctx, node)
    training = node.input(2)
    if training is not None and bool(ctx.const(training, "training_mode").reshape(-1)[0]):
        raise ctx.fail("in training mode is random; only inference (training_mode=False) is supported")
    outputs: list[Value] = [x]
    if node.num_outputs > 1:
        outputs.append(ctx.emit(R.ones(ctx.shape(x), "bool")))
    return outputs


CONVERTERS: dict[str, Converter] = {
    "Relu": unary(R.nn.relu), "LeakyRelu": _leaky_relu, "Elu": _elu, "Selu": _selu,
    "Celu": _celu, "ThresholdedRelu": _thresholded_relu, "HardSigmoid": _hard_sigmoid,
    "HardSwish": _hard_swish, "Softplus": _softplus, "Softsign": _softsign, "Mish": _mish,
    "Swish": _swish, "Gelu": _gelu, "PRelu": _prelu, "Shrink": _shrink,
    "Softmax": _softmax_like(R.nn.softmax), "LogSoftmax": _softmax_like(R.nn.log_softmax),
    "Hardmax": _hardmax, "Dropout": _dropout,
}  # fmt: skip
