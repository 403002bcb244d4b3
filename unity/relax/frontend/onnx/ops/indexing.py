"""Indexing ONNX ops: Gather*, Scatter*, OneHot (negative indices wrapped here).

Example:
    >>> sorted(CONVERTERS)[:3]
    ['Gather', 'GatherElements', 'GatherND']
"""

from __future__ import annotations

import numpy as np

from unity.relax import op as R
from unity.relax.expr import Call, Expr
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter, cast
from unity.relax.op import onnx_extra as X
from unity.relax.struct_info import Dim


def wrap_indices(ctx: Context, indices: Value | None, dim: Dim) -> Expr:
    """Indices with negative entries replaced by ``index + dim`` (as the data's axis allows).

    Example:
        >>> wrap_indices(ctx, np.array([-1, 0]), sympy.Integer(3)).data.tolist()  # doctest: +SKIP
        [2, 0]
    """
    if isinstance(indices, np.ndarray):
        if dim.is_number:
            return ctx.expr(np.where(indices < 0, indices + int(dim), indices).astype(indices.dtype))
        if (indices >= 0).all():
            return ctx.expr(indices)
    idx = ctx.expr(indices)
    if not dim.is_number:
        return idx  # a symbolic axis: negative run-time indices are not wrapped
    dtype = ctx.dtype(idx)
    negative = ctx.emit(R.less(idx, ctx.scalar(0, dtype)))
    return ctx.emit(R.where(negative, ctx.emit(R.add(idx, ctx.scalar(int(dim), dtype))), idx))


def _axis(ctx: Context, node: NodeView, x: Expr) -> int:
    return ctx.normalize_axes([node.attr("axis", 0)], ctx.ndim(x))[0]


def _gather(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    axis = _axis(ctx, node, x)
    idx = wrap_indices(ctx, node.input(1), ctx.shape(x)[axis])
    return ctx.emit(R.take(x, idx, axis))


def _gather_elements(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    axis = _axis(ctx, node, x)
    idx = wrap_indices(ctx, node.input(1), ctx.shape(x)[axis])
    return ctx.emit(R.gather_elements(x, idx, axis))


def _scatter_elements(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    axis = _axis(ctx, node, x)
    idx = wrap_indices(ctx, _row_indices(ctx, node.input(1), axis), ctx.shape(x)[axis])
    reduction = node.attr("reduction", "none")
    reduction = "update" if reduction == "none" else reduction
    return ctx.emit(R.scatter_elements(x, idx, ctx.expr(node.input(2)), axis, reduction))


def _row_indices(ctx: Context, indices: Value | None, axis: int) -> Value | None:
    """Indices expanded from one index per row (torchvision's RoI pooler scatters each
    level's results so: ``Expand(idx.view(-1, 1, 1, 1))``): the unexpanded ones, which
    `scatter_elements` broadcasts, finding each output row's update once per row rather
    than once per element."""
    if not isinstance(indices, Expr):
        return indices
    call = ctx.bb.lookup_binding(indices)  # type: ignore[arg-type]
    if not (isinstance(call, Call) and call.op is R.broadcast_to):
        return indices
    src = ctx.sinfo(call.args[0])
    if src.shape is None or len(src.shape) != ctx.ndim(indices):
        return indices
    rows = all(d == 1 for k, d in enumerate(src.shape) if k != axis)
    return call.args[0] if rows and src.shape[axis] == ctx.shape(indices)[axis] else indices


def _gather_nd(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    return ctx.emit(X.gather_nd(x, ctx.expr(node.input(1)), node.attr("batch_dims", 0)))


def _scatter_nd(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    reduction = node.attr("reduction", "none")
    reduction = "update" if reduction == "none" else reduction
    return ctx.emit(X.scatter_nd(x, ctx.expr(node.input(1)), ctx.expr(node.input(2)), reduction))


def _one_hot(ctx: Context, node: NodeView) -> Value:
    indices = ctx.expr(node.input(0))
    depth = int(ctx.const(node.input(1), "depth").reshape(-1)[0])
    values = node.input(2)
    ndim = ctx.ndim(indices)
    axis = ctx.normalize_axes([node.attr("axis", -1)], ndim + 1)[0]
    idx = cast(ctx, indices, "int64")
    negative = ctx.emit(R.less(idx, ctx.scalar(0, "int64")))
    idx = ctx.emit(R.where(negative, ctx.emit(R.add(idx, ctx.scalar(depth, "int64"))), idx))
    idx = ctx.emit(R.expand_dims(idx, [axis]))
    shape = [1] * (ndim + 1)
    shape[axis] = depth
    hot = ctx.emit(R.equal(idx, ctx.expr(np.arange(depth, dtype="int64").reshape(shape))))
    pair = ctx.expr(values)
    off = ctx.emit(R.take(pair, ctx.expr(np.array(0, "int64")), 0))
    on = ctx.emit(R.take(pair, ctx.expr(np.array(1, "int64")), 0))
    return ctx.emit(R.where(hot, on, off))


CONVERTERS: dict[str, Converter] = {
    "Gather": _gather, "GatherElements": _gather_elements, "GatherND": _gather_nd,
    "ScatterElements": _scatter_elements, "Scatter": _scatter_elements, "ScatterND": _scatter_nd,
    "OneHot": _one_hot,
}  # fmt: skip
