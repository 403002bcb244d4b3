"""Reductions and scans: Reduce*, ArgMax/ArgMin, CumSum/CumProd, TopK.

Example:
    >>> "ReduceLogSumExp" in CONVERTERS
    True
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import sympy

from unity.relax import op as R
from unity.relax.expr import Expr, TupleGetItem
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter, axes_input
from unity.relax.frontend.onnx.ops.dynamic import host_call
from unity.relax.frontend.onnx.symbolic import make_value
from unity.relax.op import onnx_extra as X

_AXES_AS_INPUT = {"ReduceSum": 13}
"""Opset from which `axes` is an input (ReduceSum 13, the others 18)."""


def _axes(ctx: Context, node: NodeView, ndim: int) -> list[int] | None:
    if node.opset >= _AXES_AS_INPUT.get(node.op_type, 18):
        axes = None if node.input(1) is None else ctx.ints(node.input(1), "axes")
    else:
        axes = axes_input(ctx, node, 99)
    if not axes:
        return None
    return ctx.normalize_axes(axes, ndim)


def _reduce(body: Callable[[Context, Expr, list[int] | None, bool], Expr]) -> Converter:
    def convert(ctx: Context, node: NodeView) -> Value:
        x = ctx.expr(node.input(0))
        axes = _axes(ctx, node, ctx.ndim(x))
        if axes is None and node.attr("noop_with_empty_axes", 0):
            return x
        return body(ctx, x, axes, bool(node.attr("keepdims", 1)))

    return convert


def _simple(make: object) -> Converter:
    return _reduce(lambda ctx, x, axes, keep: ctx.emit(make(x, axes, keep)))  # type: ignore[operator]


def _l1(ctx: Context, x: Expr, axes: list[int] | None, keep: bool) -> Expr:
    return ctx.emit(R.sum(ctx.emit(R.abs(x)), axes, keep))


def _l2(ctx: Context, x: Expr, axes: list[int] | None, keep: bool) -> Expr:
    return ctx.emit(R.sqrt(_sum_square(ctx, x, axes, keep)))


def _sum_square(ctx: Context, x: Expr, axes: list[int] | None, keep: bool) -> Expr:
    return ctx.emit(R.sum(ctx.emit(R.square(x)), axes, keep))


def _log_sum(ctx: Context, x: Expr, axes: list[int] | None, keep: bool) -> Expr:
    return ctx.emit(R.log(ctx.emit(R.sum(x, axes, keep))))


def _log_sum_exp(ctx: Context, x: Expr, axes: list[int] | None, keep: bool) -> Expr:
    shape = ctx.shape(x)
    if any(shape[a] == 0 for a in (axes if axes is not None else range(len(shape)))):
        return _log_sum(ctx, ctx.emit(R.exp(x)), axes, keep)  # empty: no max to subtract
    peak = ctx.emit(R.max(x, axes, True))
    total = ctx.emit(R.sum(ctx.emit(R.exp(ctx.emit(R.subtract(x, peak)))), axes, keep))
    shift = peak if keep else ctx.emit(R.squeeze(peak, axes))
    return ctx.emit(R.add(ctx.emit(R.log(total)), shift))


def _flip(ctx: Context, x: Expr, axis: int) -> Expr:
    return ctx.emit(R.strided_slice(x, [axis], [-1], [-(2**63 - 1)], [-1]))


def _arg(make: object) -> Converter:
    def convert(ctx: Context, node: NodeView) -> Value:
        x = ctx.expr(node.input(0))
        axis = ctx.normalize_axes([node.attr("axis", 0)], ctx.ndim(x))[0]
        keep = bool(node.attr("keepdims", 1))
        if not node.attr("select_last_index", 0):
            return ctx.emit(make(x, axis, keep))  # type: ignore[operator]
        index = ctx.emit(make(_flip(ctx, x, axis), axis, keep))  # type: ignore[operator]
        last = ctx.scalar(0, "int64")
        dim = ctx.shape(x)[axis]
        if not dim.is_number:
            raise ctx.fail(f"select_last_index needs a static axis, got {dim}")
        last = ctx.scalar(int(dim) - 1, "int64")
        return ctx.emit(R.subtract(last, index))

    return convert


def _cum_axis(ctx: Context, node: NodeView, x: Expr) -> int:
    return ctx.normalize_axes([ctx.ints(node.input(1), "axis")[0]], ctx.ndim(x))[0]


def _cumsum(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    axis = _cum_axis(ctx, node, x)
    reverse = bool(node.attr("reverse", 0))
    src = _flip(ctx, x, axis) if reverse else x
    out = ctx.emit(R.cumsum(src, axis))
    if node.attr("exclusive", 0):
        out = ctx.emit(R.subtract(out, src))
    return _flip(ctx, out, axis) if reverse else out


def _cumprod(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    axis = _cum_axis(ctx, node, x)
    return ctx.emit(X.cumprod(x, axis, bool(node.attr("exclusive", 0)), bool(node.attr("reverse", 0))))


LONG_TOPK = 1024
"""Axes longer than this (or of symbolic length) sort on the host: the kernel ranks each
element by counting those before it, quadratic in the axis (a detector's 1.3M candidates,
a vocabulary)."""


def _topk(ctx: Context, node: NodeView) -> list[Value]:
    x = ctx.expr(node.input(0))
    k = ctx.dims(node.input(1), "k")[0] if node.opset >= 10 else sympy.Integer(node.attr("k"))
    axis = ctx.normalize_axes([node.attr("axis", -1)], ctx.ndim(x))[0]
    largest, ordered = bool(node.attr("largest", 1)), bool(node.attr("sorted", 1))
    shape = ctx.sinfo(x).shape
    if shape is None:  # an unknown shape: the op's inference decides later
        return _topk_kernel(ctx, x, k, axis, largest, ordered)
    size = shape[axis]
    if k.is_number and (int(k) < 0 or (size.is_number and int(k) > int(size))):
        raise ctx.fail(f"asks for k={k} elements of an axis of size {size}")
    if not k.is_number:  # Min(1000, n') of an axis of n: two NonZero counts of one mask
        k = sympy.Min(k, size)  # ONNX asks k <= size: the same k for a valid model
    if size.is_number and int(size) <= LONG_TOPK:
        return _topk_kernel(ctx, x, k, axis, largest, ordered)
    dims = [k if d == axis else dim for d, dim in enumerate(shape)]
    count = ctx.expr(make_value(np.array([k], dtype=object)))  # a constant, or k at run time
    flags = [ctx.scalar(v, "int64") for v in (axis, int(largest))]
    return host_call(ctx, "topk", [x, count, *flags], [(ctx.dtype(x), dims), ("int64", dims)])


def _topk_kernel(ctx: Context, x: Expr, k: sympy.Expr, axis: int, largest: bool,
                 ordered: bool) -> list[Value]:  # fmt: skip
    tup = ctx.emit(X.topk(x, k, axis, largest, ordered))
    return [ctx.emit(TupleGetItem(tup, 0)), ctx.emit(TupleGetItem(tup, 1))]


CONVERTERS: dict[str, Converter] = {
    "ReduceSum": _simple(R.sum), "ReduceMean": _simple(R.mean), "ReduceMax": _simple(R.max),
    "ReduceMin": _simple(R.min), "ReduceProd": _simple(R.prod), "ReduceL1": _reduce(_l1),
    "ReduceL2": _reduce(_l2), "ReduceSumSquare": _reduce(_sum_square),
    "ReduceLogSum": _reduce(_log_sum), "ReduceLogSumExp": _reduce(_log_sum_exp),
    "ArgMax": _arg(R.argmax), "ArgMin": _arg(R.argmin), "CumSum": _cumsum,
    "CumProd": _cumprod, "TopK": _topk,
}  # fmt: skip
