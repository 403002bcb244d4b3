"""Ops the ONNX frontend needs beyond the core families: builders and struct-info inference.

`shape_to_tensor` turns a (possibly symbolic) shape into an int64 tensor; the
trigonometric and bitwise ops are elementwise; `topk`, `gather_nd`,
`scatter_nd`, `cumprod`, `resize` and `grid_sample` follow the ONNX operators of the same
name.  Their legalization rules live in `relax.transform.legalize_ops.onnx_extra`, like every
op family's.

Example:
    >>> from unity.relax.expr import ShapeExpr
    >>> shape_to_tensor(ShapeExpr(("n", 4))).op.name
    'relax.shape_to_tensor'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import (
    RelaxOp, fail, infer_elementwise, normalize_axis, register_op, shape_arg, tensor_arg,
    tuple_of, unify_dtype, with_shape,
)  # fmt: skip
from unity.relax.op.unary import infer_unary_float
from unity.relax.struct_info import StructInfo, TensorStructInfo


@dataclass(frozen=True, slots=True)
class DtypeAttrs(Attrs):
    """A result dtype.

    Example:
        >>> from unity.relax.expr import ShapeExpr
        >>> shape_to_tensor(ShapeExpr((2, 3)), "int32").attrs
        DtypeAttrs(dtype='int32')
    """

    dtype: str = "int64"


def _infer_shape_to_tensor(call: Call) -> StructInfo:
    values = shape_arg(call, 0)
    attrs = call.attrs
    assert isinstance(attrs, DtypeAttrs)
    ndim = call.args[0].struct_info.ndim  # type: ignore[attr-defined]  # a ShapeStructInfo
    length = len(values) if values is not None else ndim
    return TensorStructInfo(None if length < 0 else (length,), attrs.dtype, 1)


@register_op("shape_to_tensor", infer=_infer_shape_to_tensor)
def shape_to_tensor(op: RelaxOp, shape: Expr, dtype: str = "int64") -> Call:
    """A 1-D tensor holding the values of `shape` (symbols bound at run time).

    Example:
        >>> shape_to_tensor(ShapeExpr((2,))).attrs.dtype  # doctest: +SKIP
        'int64'
    """
    return Call(op, (shape,), DtypeAttrs(dtype))


def _unary_float(name: str) -> RelaxOp:
    def make(op: RelaxOp, x: Expr) -> Call:
        return Call(op, (x,))

    make.__doc__ = f"Elementwise `{name}(x)`."
    return register_op(name, infer=infer_unary_float)(make)


asin = _unary_float("asin")
acos = _unary_float("acos")
atan = _unary_float("atan")


def _binary_int(name: str) -> RelaxOp:
    def make(op: RelaxOp, x1: Expr, x2: Expr) -> Call:
        return Call(op, (x1, x2))

    make.__doc__ = f"Elementwise `{name}(x1, x2)` with broadcasting."
    return register_op(name, infer=infer_elementwise, broadcasts=True)(make)  # type: ignore[arg-type]


bitwise_xor = _binary_int("bitwise_xor")
left_shift = _binary_int("left_shift")
right_shift = _binary_int("right_shift")


@dataclass(frozen=True, slots=True)
class TopKAttrs(Attrs):
    """`k`, the axis, largest-or-smallest, and the index dtype.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> topk(x, 2).attrs
        TopKAttrs(k=2, axis=-1, largest=True, sorted=True)
    """

    k: int | sympy.Expr
    axis: int = -1
    largest: bool = True
    sorted: bool = True


def _infer_topk(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, TopKAttrs)
    if x.shape is None:
        part = TensorStructInfo(None, x.dtype, x.ndim)
        return tuple_of([part, TensorStructInfo(None, "int64", x.ndim)])
    axis = normalize_axis(call, attrs.axis, x.ndim)
    dims = list(x.shape)
    k = sympy.sympify(attrs.k)
    if k.is_number and dims[axis].is_number and int(dims[axis]) < int(k):
        raise fail(call, f"asks for k={k} elements of an axis of size {dims[axis]}")
    if not k.is_number and sympy.Min(k, dims[axis]) != k:
        raise fail(call, f"needs k={k} to be provably at most the axis size {dims[axis]}")
    dims[axis] = k
    return tuple_of([with_shape(x, dims), TensorStructInfo(tuple(dims), "int64")])


@register_op("topk", infer=_infer_topk)
def topk(op: RelaxOp, x: Expr, k: int | sympy.Expr, axis: int = -1, largest: bool = True,
         sorted: bool = True) -> Call:  # fmt: skip
    """``(values, indices)`` of the `k` largest (or smallest) entries along `axis` (`k` may
    be symbolic when it is provably at most the axis: ``Min(300, n)`` of a data-dependent n).

    Example:
        >>> topk(x, 2).attrs.k  # doctest: +SKIP
        2
    """
    return Call(op, (x,), TopKAttrs(k, axis, largest, sorted))


@dataclass(frozen=True, slots=True)
class BatchDimsAttrs(Attrs):
    """Leading batch dims shared by data and indices (`gather_nd`, `scatter_nd`).

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> idx = relax.Var("idx", relax.TensorStructInfo((2, 1), "int64"))
        >>> gather_nd(x, idx, batch_dims=0).attrs
        BatchDimsAttrs(batch_dims=0, reduction='update')
    """

    batch_dims: int = 0
    reduction: str = "update"


def _infer_gather_nd(call: Call) -> StructInfo:
    x, idx = tensor_arg(call, 0, "data"), tensor_arg(call, 1, "indices")
    attrs = call.attrs
    assert isinstance(attrs, BatchDimsAttrs)
    if x.shape is None or idx.shape is None or not idx.shape[-1].is_number:
        return TensorStructInfo(None, x.dtype, -1)
    depth, b = int(idx.shape[-1]), attrs.batch_dims
    if depth > x.ndim - b:
        raise fail(call, f"indexes {depth} dims of a rank-{x.ndim} tensor with {b} batch dims")
    return with_shape(x, [*idx.shape[:-1], *x.shape[b + depth :]])


@register_op("gather_nd", infer=_infer_gather_nd)
def gather_nd(op: RelaxOp, data: Expr, indices: Expr, batch_dims: int = 0) -> Call:
    """Gather slices of `data` at the index tuples in the last axis of `indices` (ONNX GatherND).

    Example:
        >>> gather_nd(x, i).attrs.batch_dims  # doctest: +SKIP
        0
    """
    return Call(op, (data, indices), BatchDimsAttrs(batch_dims))


def _infer_scatter_nd(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "data")
    tensor_arg(call, 1, "indices")
    unify_dtype(call, [x.dtype, tensor_arg(call, 2, "updates").dtype])
    return x


@register_op("scatter_nd", infer=_infer_scatter_nd)
def scatter_nd(op: RelaxOp, data: Expr, indices: Expr, updates: Expr, reduction: str = "update") -> Call:
    """Copy of `data` with `updates` written (or reduced) at index tuples (ONNX ScatterND).

    Example:
        >>> scatter_nd(x, i, u).attrs.reduction  # doctest: +SKIP
        'update'
    """
    return Call(op, (data, indices, updates), BatchDimsAttrs(0, reduction))


@dataclass(frozen=True, slots=True)
class CumAttrs(Attrs):
    """Axis, and the exclusive / reverse flags of an ONNX cumulative op.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> cumprod(x, axis=1, reverse=True).attrs
        CumAttrs(axis=1, exclusive=False, reverse=True)
    """

    axis: int
    exclusive: bool = False
    reverse: bool = False


def _infer_cum(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, CumAttrs)
    normalize_axis(call, attrs.axis, x.ndim)
    return x


@register_op("cumprod", infer=_infer_cum)
def cumprod(op: RelaxOp, x: Expr, axis: int, exclusive: bool = False, reverse: bool = False) -> Call:
    """Cumulative product along `axis` (ONNX CumProd semantics).

    Example:
        >>> cumprod(x, 0).attrs.axis  # doctest: +SKIP
        0
    """
    return Call(op, (x,), CumAttrs(axis, exclusive, reverse))


@dataclass(frozen=True, slots=True)
class ResizeAttrs(Attrs):
    """Output size of the resized axes and the ONNX Resize options.

    Example:
        >>> from unity import relax
        >>> img = relax.Var("img", relax.TensorStructInfo((1, 4, 8, 8), "float32"))
        >>> attrs = ResizeAttrs((2, 3), (16, 16), (2.0, 2.0))
        >>> resize(img, attrs).attrs.mode, attrs.coordinate_transformation_mode
        ('nearest', 'half_pixel')
    """

    axes: tuple[int, ...]
    size: tuple[int | sympy.Expr, ...]
    """The output lengths of `axes` (symbolic where the input's are)."""
    scales: tuple[float, ...]
    mode: str = "nearest"
    coordinate_transformation_mode: str = "half_pixel"
    nearest_mode: str = "round_prefer_floor"
    cubic_coeff_a: float = -0.75
    exclude_outside: bool = False
    extrapolation_value: float = 0.0
    roi: tuple[float, ...] = ()
    antialias: bool = False
    """Linear and cubic: stretch the filter by `1 / scale` when downscaling (opset 18)."""


def _infer_resize(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, ResizeAttrs)
    if attrs.mode not in ("nearest", "linear", "cubic"):
        raise fail(call, f"has no mode {attrs.mode!r} (nearest, linear or cubic)")
    if x.shape is None:
        return x
    dims = list(x.shape)
    for axis, size in zip(attrs.axes, attrs.size, strict=True):
        dims[normalize_axis(call, axis, x.ndim)] = sympy.sympify(size)
    return with_shape(x, dims)


@register_op("resize", infer=_infer_resize)
def resize(op: RelaxOp, x: Expr, attrs: ResizeAttrs) -> Call:
    """Resample `x` on `attrs.axes` to `attrs.size` (ONNX Resize semantics).

    Example:
        >>> resize(x, ResizeAttrs((2, 3), (8, 8), (2.0, 2.0))).attrs.mode  # doctest: +SKIP
        'nearest'
    """
    return Call(op, (x,), attrs)


@dataclass(frozen=True, slots=True)
class GridSampleAttrs(Attrs):
    """Interpolation method, padding mode and corner alignment of ONNX GridSample.

    Example:
        >>> from unity import relax
        >>> img = relax.Var("img", relax.TensorStructInfo((1, 3, 8, 8), "float32"))
        >>> grid = relax.Var("grid", relax.TensorStructInfo((1, 4, 5, 2), "float32"))
        >>> _infer_grid_sample(grid_sample(img, grid, GridSampleAttrs("cubic"))).shape
        (1, 3, 4, 5)
    """

    mode: str = "linear"
    padding_mode: str = "zeros"
    align_corners: bool = False


def _infer_grid_sample(call: Call) -> StructInfo:
    x, grid = tensor_arg(call, 0, "input"), tensor_arg(call, 1, "grid")
    attrs = call.attrs
    assert isinstance(attrs, GridSampleAttrs)
    if attrs.mode not in ("nearest", "linear", "cubic"):
        raise fail(call, f"has no mode {attrs.mode!r} (nearest, linear or cubic)")
    if attrs.padding_mode not in ("zeros", "border", "reflection"):
        padding = attrs.padding_mode
        raise fail(call, f"has no padding mode {padding!r} (zeros, border or reflection)")
    for sinfo, what in ((x, "input"), (grid, "grid")):
        if not sinfo.dtype.startswith(("float", "bfloat")):
            raise fail(call, f"expects a float {what}, got {sinfo.dtype}")
    if x.ndim < 0 or grid.ndim < 0:
        return TensorStructInfo(None, x.dtype, max(x.ndim, grid.ndim))
    if x.ndim < 3 or grid.ndim != x.ndim:
        raise fail(call, f"expects an (N, C, D1.., Dr) input and an (N, O1.., Or, r) grid of the "
                         f"same rank, got ranks {x.ndim} and {grid.ndim}")  # fmt: skip
    if x.shape is None or grid.shape is None:
        return TensorStructInfo(None, x.dtype, x.ndim)
    last, rank = grid.shape[-1], x.ndim - 2
    if last.is_number and int(last) != rank:
        raise fail(call, f"needs a grid of {rank} coordinates per point, got {last}")
    return with_shape(x, [x.shape[0], x.shape[1], *grid.shape[1:-1]])


@register_op("grid_sample", infer=_infer_grid_sample)
def grid_sample(op: RelaxOp, x: Expr, grid: Expr, attrs: GridSampleAttrs) -> Call:
    """Sample `x` at the normalized points of `grid` (ONNX GridSample semantics).

    Example:
        >>> grid_sample(x, grid, GridSampleAttrs("nearest")).attrs.mode  # doctest: +SKIP
        'nearest'
    """
    return Call(op, (x, grid), attrs)


def seq(values: Sequence[int]) -> tuple[int, ...]:
    """A tuple of ints (helper for attrs).

    Example:
        >>> seq([1, 2])
        (1, 2)
    """
    return tuple(int(v) for v in values)
