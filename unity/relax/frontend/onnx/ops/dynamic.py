"""Ops whose output shape depends on input values: a host function call (numpy, see
`unity.runtime.host_functions`), then a `match_cast` giving each data-dependent
dimension a fresh symbol, so that the ops after it compile for any size.

    >>> # NonZero(x), x: (2, 3) float32
    >>> # lv = R.call_pure_packed("unity.host.nonzero", x, sinfo_args=R.Tensor(ndim=2, dtype="int64"))
    >>> # gv = R.match_cast(lv, R.Tensor((2, NonZero_0_n0), "int64"))

(`Range` and `ConstantOfShape` do not: their sizes are usually shape values given as
inputs, which must be constants or shape-derived symbols, so that the sizes after them
stay expressions of the same symbols.)

Example:
    >>> sorted(CONVERTERS)
    ['Compress', 'NonMaxSuppression', 'NonZero', 'Unique']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy

from unity.relax import op as R
from unity.relax.expr import Constant, ExternFunc, TupleGetItem
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter
from unity.relax.struct_info import Dim, ShapeStructInfo, TensorStructInfo, TupleStructInfo, sym

OutSpec = tuple[str, Sequence[Dim | None]]
"""An output's dtype and dims (None: a dimension known only at run time)."""


def host_call(ctx: Context, name: str, args: Sequence[Value], outs: Sequence[OutSpec]) -> list[Value]:
    """Call host function ``unity.host.<name>`` and bind each output's unknown dims to
    fresh symbols (named after the node).

    Example:
        >>> (y,) = host_call(ctx, "nonzero", [x], [("int64", (2, None))])  # doctest: +SKIP
    """
    exprs = [ctx.expr(a) for a in args]
    loose = [TensorStructInfo(None, dtype, ndim=len(dims)) for dtype, dims in outs]
    sinfo = loose[0] if len(outs) == 1 else TupleStructInfo(tuple(loose))
    call = ctx.emit(R.call_pure_packed(ExternFunc(f"unity.host.{name}"), *exprs, sinfo_args=sinfo))
    parts = [call] if len(outs) == 1 else [ctx.emit(TupleGetItem(call, k)) for k in range(len(outs))]
    base = ctx.symbol_base(name)
    results = []
    for k, (part, (dtype, dims)) in enumerate(zip(parts, outs, strict=True)):
        shape = tuple(sym(f"{base}_n{k}_{d}") if dim is None else dim for d, dim in enumerate(dims))
        results.append(ctx.bb.match_cast(part, TensorStructInfo(shape, dtype)))
    return results


def run_time_dims(ctx: Context, value: Value, what: str) -> list[Dim]:
    """A 1-D integer tensor of lengths as dims: its values where known at import time
    (constants, shape-derived symbols, `Context.entries`), else fresh symbols bound when
    the program runs (``unity.host.tensor_to_shape`` reads the tensor; a `match_cast`
    binds the symbols and checks the known entries).

    Example:
        >>> run_time_dims(ctx, sizes, "sizes")  # doctest: +SKIP
        [1, 17, Resize_0_sizes2, Resize_0_sizes3]
    """
    if ctx.is_known(value):
        return ctx.dims(value, what)
    expr = ctx.expr(value)
    sinfo = ctx.sinfo(expr)
    if "int" not in sinfo.dtype or sinfo.shape is None or len(sinfo.shape) != 1 or not sinfo.shape[0].is_number:
        raise ctx.fail(f"{what} must be a 1-D integer tensor of static length, got {sinfo.dtype} "
                       f"of shape {sinfo.shape}")  # fmt: skip
    length = int(sinfo.shape[0])
    known = ctx.entries.get(expr) or [None] * length
    base = ctx.symbol_base(what)
    dims = [sym(f"{base}_{what}{k}") if d is None else sympy.sympify(d) for k, d in enumerate(known)]
    call = ctx.emit(R.call_pure_packed(ExternFunc("unity.host.tensor_to_shape"), expr,
                                       sinfo_args=ShapeStructInfo(ndim=length)))  # fmt: skip
    ctx.bb.match_cast(call, ShapeStructInfo(tuple(dims)))
    return dims


def _scalar(value: float, dtype: str = "float32") -> Constant:
    return Constant(np.array(value, dtype))


def _nonzero(ctx: Context, node: NodeView) -> Value:
    x = node.input(0)
    return host_call(ctx, "nonzero", [x], [("int64", (ctx.ndim(x), None))])[0]


def _compress(ctx: Context, node: NodeView) -> Value:
    x, cond = node.input(0), node.input(1)
    if ctx.dtype(cond) != "bool" or ctx.ndim(cond) != 1:
        raise ctx.fail(f"condition must be a 1-D bool tensor, got {ctx.ndim(cond)}-D {ctx.dtype(cond)}")
    axis = node.attr("axis")
    shape = list(ctx.shape(x))
    if axis is None:
        dims: list[Dim | None] = [None]
    else:
        axis = ctx.normalize_axes([axis], len(shape))[0]
        dims = [None if k == axis else d for k, d in enumerate(shape)]
    flag = np.nan if axis is None else float(axis)
    return host_call(ctx, "compress", [x, cond, _scalar(flag)], [(ctx.dtype(x), dims)])[0]


def _unique(ctx: Context, node: NodeView) -> list[Value]:
    x = node.input(0)
    shape = list(ctx.shape(x))
    axis = node.attr("axis")
    if axis is None:  # unique elements of x flattened
        values: list[Dim | None] = [None]
        inverse: list[Dim | None] = [sympy.Mul(*shape)]
    else:  # unique slices along axis
        axis = ctx.normalize_axes([axis], len(shape))[0]
        values = [None if k == axis else d for k, d in enumerate(shape)]
        inverse = [shape[axis]]
    flag = np.nan if axis is None else float(axis)
    outs = host_call(ctx, "unique", [x, _scalar(flag), _scalar(int(node.attr("sorted", 1)), "int64")],
                     [(ctx.dtype(x), values), ("int64", [None]), ("int64", inverse), ("int64", [None])])
    return outs[:max(node.num_outputs, 1)]


def _non_max_suppression(ctx: Context, node: NodeView) -> Value:
    boxes, scores = node.input(0), node.input(1)
    if ctx.ndim(boxes) != 3 or ctx.ndim(scores) != 3:
        raise ctx.fail(f"needs boxes (batch, n, 4) and scores (batch, classes, n), got ranks "
                       f"{ctx.ndim(boxes)} and {ctx.ndim(scores)}")
    defaults = [_scalar(0, "int64"), _scalar(0.0), _scalar(-np.inf)]
    extra = [node.input(k) if node.input(k) is not None else defaults[k - 2] for k in (2, 3, 4)]
    center = _scalar(int(node.attr("center_point_box", 0)), "int64")
    return host_call(ctx, "nonmax_suppression", [boxes, scores, *extra, center], [("int64", (None, 3))])[0]


CONVERTERS: dict[str, Converter] = {
    "NonZero": _nonzero, "Compress": _compress, "Unique": _unique, "NonMaxSuppression": _non_max_suppression,
}  # fmt: skip
