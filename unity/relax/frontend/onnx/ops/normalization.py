"""Normalization ONNX ops: BatchNormalization (inference), Instance/Layer/Group/RMS norms, LRN...

Example:
    >>> "LayerNormalization" in CONVERTERS
    True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from unity.relax import op as R
from unity.relax.expr import Expr
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter, const_like
from unity.relax.struct_info import prove_equal


def _per_channel(ctx: Context, value: Value, ndim: int) -> Expr:
    """Reshape a (C,) parameter to (C, 1, ..., 1) so it broadcasts over (N, C, spatial...)."""
    if isinstance(value, np.ndarray):
        return ctx.expr(value.reshape([-1] + [1] * (ndim - 2)))
    return ctx.emit(R.reshape(ctx.expr(value), [-1] + [1] * (ndim - 2)))


def _batch_norm(ctx: Context, node: NodeView) -> Value:
    if node.attr("training_mode", 0) or node.num_outputs > 1 and node.opset >= 14:
        raise ctx.fail("in training mode is not supported (inference only)")
    x = ctx.expr(node.input(0))
    scale, bias, mean, var = (node.input(i) for i in range(1, 5))
    eps = node.attr("epsilon", 1e-5)
    ndim = ctx.ndim(x)
    if all(isinstance(v, np.ndarray) for v in (scale, bias, mean, var)):
        mult = scale / np.sqrt(var + np.asarray(eps, var.dtype))  # type: ignore[operator]
        shift = bias - mean * mult  # type: ignore[operator]
        out = ctx.emit(R.multiply(x, _per_channel(ctx, mult.astype(ctx.dtype(x)), ndim)))
        return ctx.emit(R.add(out, _per_channel(ctx, shift.astype(ctx.dtype(x)), ndim)))
    var_eps = ctx.emit(R.add(ctx.expr(var), const_like(ctx, eps, var)))
    mult_e = ctx.emit(R.multiply(ctx.expr(scale), ctx.emit(R.rsqrt(var_eps))))
    centered = ctx.emit(R.subtract(x, _per_channel(ctx, mean, ndim)))  # type: ignore[arg-type]
    out = ctx.emit(R.multiply(centered, _per_channel(ctx, mult_e, ndim)))
    return ctx.emit(R.add(out, _per_channel(ctx, bias, ndim)))  # type: ignore[arg-type]


def _normalize(ctx: Context, x: Expr, axes: Sequence[int], eps: float) -> tuple[Expr, Expr, Expr]:
    """``(x - mean) / sqrt(var + eps)`` over `axes`, with the mean and 1/std (kept dims)."""
    mean = ctx.emit(R.mean(x, list(axes), keepdims=True))
    centered = ctx.emit(R.subtract(x, mean))
    var = ctx.emit(R.mean(ctx.emit(R.square(centered)), list(axes), keepdims=True))
    inv_std = ctx.emit(R.rsqrt(ctx.emit(R.add(var, const_like(ctx, eps, x)))))
    return ctx.emit(R.multiply(centered, inv_std)), mean, inv_std


def _instance_norm(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    ndim = ctx.ndim(x)
    normed, _, _ = _normalize(ctx, x, range(2, ndim), node.attr("epsilon", 1e-5))
    out = ctx.emit(R.multiply(normed, _per_channel(ctx, node.input(1), ndim)))  # type: ignore[arg-type]
    return ctx.emit(R.add(out, _per_channel(ctx, node.input(2), ndim)))  # type: ignore[arg-type]


def _layer_norm(ctx: Context, node: NodeView) -> list[Value]:
    x = ctx.expr(node.input(0))
    ndim = ctx.ndim(x)
    axis = ctx.normalize_axes([node.attr("axis", -1)], ndim)[0]
    eps = node.attr("epsilon", 1e-5)
    axes = list(range(axis, ndim))
    scale, bias = node.input(1), node.input(2)
    if node.num_outputs == 1 and _param_fits(ctx, x, scale, axes) and _param_fits(ctx, x, bias, axes):
        beta = ctx.expr(bias) if bias is not None else ctx.expr(np.zeros(ctx.sinfo(scale).shape, ctx.dtype(x)))
        return [ctx.emit(R.nn.layer_norm(x, ctx.expr(scale), beta, axes, eps))]
    normed, mean, inv_std = _normalize(ctx, x, axes, eps)
    out = ctx.emit(R.multiply(normed, ctx.expr(scale)))
    if bias is not None:
        out = ctx.emit(R.add(out, ctx.expr(bias)))
    return [out, mean, inv_std]


def _param_fits(ctx: Context, x: Expr, param: Value | None, axes: list[int]) -> bool:
    if param is None:
        return True
    shape, want = ctx.sinfo(param).shape, [ctx.shape(x)[a] for a in axes]
    return shape is not None and len(shape) == len(want) and all(
        prove_equal(a, b) for a, b in zip(shape, want, strict=True))  # fmt: skip


def _group_norm(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    shape = ctx.shape(x)
    groups = int(node.attr("num_groups"))
    n, c = shape[0], shape[1]
    grouped = ctx.emit(R.reshape(x, (n, groups, -1)))
    normed, _, _ = _normalize(ctx, grouped, [2], node.attr("epsilon", 1e-5))
    out = ctx.emit(R.reshape(normed, shape))
    scale, bias = node.input(1), node.input(2)
    if node.opset < 21:  # opset 18 gives one scale and bias per group
        scale, bias = (_repeat_groups(ctx, v, c, groups) for v in (scale, bias))
    out = ctx.emit(R.multiply(out, _per_channel(ctx, scale, len(shape))))  # type: ignore[arg-type]
    return ctx.emit(R.add(out, _per_channel(ctx, bias, len(shape))))  # type: ignore[arg-type]


def _repeat_groups(ctx: Context, value: Value | None, channels: object, groups: int) -> Value:
    per_group = int(channels) // groups  # type: ignore[call-overload]  # a sympy integer
    if isinstance(value, np.ndarray):
        return np.repeat(value, per_group)
    col = ctx.emit(R.expand_dims(ctx.expr(value), [1]))
    return ctx.emit(R.reshape(ctx.emit(R.broadcast_to(col, (groups, per_group))), (-1,)))


def _lrn(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    size = int(node.attr("size"))
    alpha, beta, bias = node.attr("alpha", 1e-4), node.attr("beta", 0.75), node.attr("bias", 1.0)
    ndim = ctx.ndim(x)
    channels = ctx.shape(x)[1]
    if not channels.is_number:
        raise ctx.fail(f"needs a static channel count, got {channels}")
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    width = [0, 0, before, after] + [0, 0] * (ndim - 2)
    padded = ctx.emit(R.nn.pad(ctx.emit(R.square(x)), width))
    total: Expr | None = None
    for i in range(size):
        part = ctx.emit(R.strided_slice(padded, [1], [i], [i + int(channels)]))
        total = part if total is None else ctx.emit(R.add(total, part))
    assert total is not None
    denom = ctx.emit(R.add(ctx.emit(R.multiply(total, const_like(ctx, alpha / size, x))), const_like(ctx, bias, x)))
    return ctx.emit(R.divide(x, ctx.emit(R.power(denom, const_like(ctx, beta, x)))))


def _mvn(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    axes = ctx.normalize_axes(list(node.attr("axes", [0, 2, 3])), ctx.ndim(x))
    mean = ctx.emit(R.mean(x, axes, keepdims=True))
    centered = ctx.emit(R.subtract(x, mean))
    var = ctx.emit(R.mean(ctx.emit(R.square(centered)), axes, keepdims=True))
    std = ctx.emit(R.add(ctx.emit(R.sqrt(var)), const_like(ctx, 1e-9, x)))
    return ctx.emit(R.divide(centered, std))


def _lp_norm(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    axis = ctx.normalize_axes([node.attr("axis", -1)], ctx.ndim(x))[0]
    p = node.attr("p", 2)
    if p == 1:
        norm = ctx.emit(R.sum(ctx.emit(R.abs(x)), [axis], keepdims=True))
    elif p == 2:
        norm = ctx.emit(R.sqrt(ctx.emit(R.sum(ctx.emit(R.square(x)), [axis], keepdims=True))))
    else:
        raise ctx.fail(f"expects p 1 or 2, got {p}")
    zero = ctx.emit(R.equal(norm, const_like(ctx, 0, x)))
    safe = ctx.emit(R.where(zero, const_like(ctx, 1, x), norm))  # 0 / 0 gives 0, as ONNX says
    return ctx.emit(R.divide(x, safe))


def _rms_norm(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    ndim = ctx.ndim(x)
    axis = ctx.normalize_axes([node.attr("axis", -1)], ndim)[0]
    eps = node.attr("epsilon", 1e-5)
    ms = ctx.emit(R.mean(ctx.emit(R.square(x)), list(range(axis, ndim)), keepdims=True))
    inv = ctx.emit(R.rsqrt(ctx.emit(R.add(ms, const_like(ctx, eps, x)))))
    return ctx.emit(R.multiply(ctx.emit(R.multiply(x, inv)), ctx.expr(node.input(1))))


CONVERTERS: dict[str, Converter] = {
    "BatchNormalization": _batch_norm, "InstanceNormalization": _instance_norm,
    "LayerNormalization": _layer_norm, "GroupNormalization": _group_norm, "LRN": _lrn,
    "MeanVarianceNormalization": _mvn, "LpNormalization": _lp_norm,
    "RMSNormalization": _rms_norm,
}  # fmt: skip
