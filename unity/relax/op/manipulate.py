"""Shape manipulation: reshape, permute_dims, concat, split, squeeze, expand_dims, flatten,
broadcast_to, strided_slice, take, gather_elements, scatter_elements.

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 4), "float32"))
    >>> reshape(x, (-1,)).args[1].values
    (-1,)
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import (
    RelaxOp, as_shape_expr, as_tuple_expr, broadcast_shapes, fail, normalize_axis, product,
    register_op, shape_arg, tensor_arg, tuple_of, unify_dtype, with_shape,
)  # fmt: skip
from unity.relax.struct_info import (
    Dim, StructInfo, TensorStructInfo, TupleStructInfo, format_shape, prove_equal,
    prove_not_equal, simplify_dim,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class AxisAttrs(Attrs):
    """A single axis (concat, take, gather/scatter, cumsum...).

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> concat([x, x], axis=1).attrs
        AxisAttrs(axis=1)
    """

    axis: int = 0


@dataclass(frozen=True, slots=True)
class AxesAttrs(Attrs):
    """A list of axes, None meaning all (permute_dims, squeeze, expand_dims).

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> permute_dims(x, [1, 0]).attrs
        AxesAttrs(axes=(1, 0))
    """

    axes: tuple[int, ...] | None = None


# -- reshape --------------------------------------------------------------------------------


def _infer_reshape(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    target = shape_arg(call, 1)
    if target is None:
        return TensorStructInfo(None, x.dtype, -1)
    holes = [i for i, d in enumerate(target) if d == -1]
    if len(holes) > 1:
        raise fail(call, f"accepts at most one -1 in the new shape, got {format_shape(target)}")
    if x.shape is None:
        return TensorStructInfo(None if holes else target, x.dtype, len(target))
    total = product(x.shape)
    if holes:
        known = product([d for d in target if d != -1])
        inferred = simplify_dim(total / known)
        if not inferred.is_integer:
            msg = f"cannot reshape {format_shape(x.shape)} to {format_shape(target)}"
            raise fail(call, f"{msg}: {total} elements do not divide by {known}")
        target = tuple(inferred if d == -1 else d for d in target)
    elif prove_not_equal(total, product(target)):
        msg = f"cannot reshape {format_shape(x.shape)} ({total} elements)"
        raise fail(call, f"{msg} to {format_shape(target)} ({product(target)} elements)")
    return with_shape(x, target)


@register_op("reshape", infer=_infer_reshape)
def reshape(op: RelaxOp, x: Expr, shape: Sequence[object] | Expr) -> Call:
    """Reshape `x`; one dim may be -1 (inferred), dims may be symbolic.

    Example:
        >>> reshape(x, ("n", 2, 2)).op is reshape  # doctest: +SKIP
        True
    """
    return Call(op, (x, as_shape_expr(shape)))


# -- permute_dims / squeeze / expand_dims / flatten ------------------------------------------


def _infer_permute(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, AxesAttrs)
    if x.ndim < 0:
        return x
    axes = tuple(range(x.ndim))[::-1] if attrs.axes is None else attrs.axes
    axes = tuple(normalize_axis(call, a, x.ndim) for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise fail(call, f"expects a permutation of {x.ndim} axes, got {attrs.axes}")
    return x if x.shape is None else with_shape(x, [x.shape[a] for a in axes])


@register_op("permute_dims", infer=_infer_permute)
def permute_dims(op: RelaxOp, x: Expr, axes: Sequence[int] | None = None) -> Call:
    """Permute the axes of `x` (reverse them when `axes` is None).

    Example:
        >>> permute_dims(x, [1, 0]).attrs.axes  # doctest: +SKIP
        (1, 0)
    """
    return Call(op, (x,), AxesAttrs(None if axes is None else tuple(axes)))


def _infer_squeeze(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, AxesAttrs)
    if x.shape is None:
        ndim = -1 if attrs.axes is None or x.ndim < 0 else x.ndim - len(attrs.axes)
        return TensorStructInfo(None, x.dtype, ndim)
    if attrs.axes is None:
        return with_shape(x, [d for d in x.shape if d != 1])
    axes = {normalize_axis(call, a, x.ndim) for a in attrs.axes}
    for a in axes:
        if prove_not_equal(x.shape[a], 1):
            raise fail(call, f"cannot squeeze axis {a} of size {x.shape[a]} (expected 1)")
    return with_shape(x, [d for i, d in enumerate(x.shape) if i not in axes])


@register_op("squeeze", infer=_infer_squeeze)
def squeeze(op: RelaxOp, x: Expr, axis: Sequence[int] | int | None = None) -> Call:
    """Remove axes of size 1 (all of them when `axis` is None).

    Example:
        >>> squeeze(x, 0).attrs.axes  # doctest: +SKIP
        (0,)
    """
    axes = (axis,) if isinstance(axis, int) else (None if axis is None else tuple(axis))
    return Call(op, (x,), AxesAttrs(axes))


def _infer_expand_dims(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, AxesAttrs) and attrs.axes is not None
    if x.shape is None:
        return TensorStructInfo(None, x.dtype, -1 if x.ndim < 0 else x.ndim + len(attrs.axes))
    rank = x.ndim + len(attrs.axes)
    axes = {normalize_axis(call, a, rank) for a in attrs.axes}
    dims = iter(x.shape)
    return with_shape(x, [sympy.Integer(1) if i in axes else next(dims) for i in range(rank)])


@register_op("expand_dims", infer=_infer_expand_dims)
def expand_dims(op: RelaxOp, x: Expr, axis: Sequence[int] | int) -> Call:
    """Insert axes of size 1 at positions `axis` (of the result).

    Example:
        >>> expand_dims(x, 0).attrs.axes  # doctest: +SKIP
        (0,)
    """
    return Call(op, (x,), AxesAttrs((axis,) if isinstance(axis, int) else tuple(axis)))


def _infer_flatten(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    return TensorStructInfo(None, x.dtype, 1) if x.shape is None else with_shape(x, [product(x.shape)])


@register_op("flatten", infer=_infer_flatten)
def flatten(op: RelaxOp, x: Expr) -> Call:
    """Flatten `x` to one dimension.

    Example:
        >>> flatten(x).op is flatten  # doctest: +SKIP
        True
    """
    return Call(op, (x,))


# -- concat / split ------------------------------------------------------------------------


def _infer_concat(call: Call) -> StructInfo:
    tup = call.args[0].struct_info
    if not isinstance(tup, TupleStructInfo) or not tup.fields:
        raise fail(call, "expects a non-empty tuple of tensors")
    infos = [f for f in tup.fields if isinstance(f, TensorStructInfo)]
    if len(infos) != len(tup.fields):
        raise fail(call, "expects every field of its tuple to be a tensor")
    dtype = unify_dtype(call, [s.dtype for s in infos])
    attrs = call.attrs
    assert isinstance(attrs, AxisAttrs)
    if any(s.shape is None for s in infos):
        return TensorStructInfo(None, dtype, max(s.ndim for s in infos))
    ranks = {s.ndim for s in infos}
    if len(ranks) > 1:
        raise fail(call, f"expects tensors of one rank, got ranks {sorted(ranks)}")
    axis = normalize_axis(call, attrs.axis, infos[0].ndim)
    first = infos[0].shape
    assert first is not None
    for s in infos[1:]:
        for i, (a, b) in enumerate(zip(first, s.shape, strict=True)):  # type: ignore[arg-type]
            if i != axis and prove_not_equal(a, b):
                got = f"{format_shape(first)} and {format_shape(s.shape)}"
                raise fail(call, f"expects equal dims off axis {axis}, got {got}")
    dims = list(first)
    dims[axis] = sympy.Add(*(s.shape[axis] for s in infos))  # type: ignore[index]  # known
    return with_shape(TensorStructInfo(first, dtype), dims)


@register_op("concat", infer=_infer_concat)
def concat(op: RelaxOp, tensors: Sequence[Expr] | Expr, axis: int = 0) -> Call:
    """Concatenate `tensors` along `axis`.

    Example:
        >>> concat([x, x], axis=1).attrs.axis  # doctest: +SKIP
        1
    """
    return Call(op, (as_tuple_expr(tensors),), AxisAttrs(axis))


@dataclass(frozen=True, slots=True)
class SplitAttrs(Attrs):
    """`indices_or_sections`: a count of equal parts, or the split points.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> split(x, 3, axis=1).attrs
        SplitAttrs(indices_or_sections=3, axis=1)
    """

    indices_or_sections: int | tuple[int, ...]
    axis: int = 0


def _clamp_index(index: Dim, dim: Dim) -> Dim:
    """A slice bound of an axis of size `dim` in ``[0, dim]`` (negative counts from the end)."""
    return sympy.Max(index + dim, 0) if index < 0 else sympy.Min(index, dim)


def _infer_split(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, SplitAttrs)
    parts = attrs.indices_or_sections
    count = parts if isinstance(parts, int) else len(parts) + 1
    if x.shape is None:
        return tuple_of([TensorStructInfo(None, x.dtype, x.ndim)] * count)
    axis = normalize_axis(call, attrs.axis, x.ndim)
    dim = x.shape[axis]
    if isinstance(parts, int):
        if dim.is_number and int(dim) % parts:
            raise fail(call, f"cannot split axis {axis} of size {dim} into {parts} equal parts")
        size = sympy.ceiling(dim / parts)  # parts of `size`, the last ones shorter (or empty)
        points = [sympy.Min(size * k, dim) for k in range(parts)] + [dim]
        sizes = [b - a for a, b in itertools.pairwise(points)]
    else:  # numpy: part k is x[p[k-1]:p[k]], Python slice rules (clamped, negatives from the end)
        points = [sympy.Integer(0), *(_clamp_index(sympy.Integer(p), dim) for p in parts), dim]
        sizes = [sympy.Max(b - a, 0) for a, b in itertools.pairwise(points)]
    return tuple_of([with_shape(x, [*x.shape[:axis], s, *x.shape[axis + 1 :]]) for s in sizes])


@register_op("split", infer=_infer_split)
def split(op: RelaxOp, x: Expr, indices_or_sections: int | Sequence[int], axis: int = 0) -> Call:
    """Split `x` along `axis` into equal sections or at the given indices.

    Example:
        >>> split(x, 2, axis=1).attrs.indices_or_sections  # doctest: +SKIP
        2
    """
    parts = indices_or_sections if isinstance(indices_or_sections, int) else tuple(indices_or_sections)
    return Call(op, (x,), SplitAttrs(parts, axis))


# -- broadcast_to / strided_slice -----------------------------------------------------------


def _infer_broadcast_to(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    target = shape_arg(call, 1)
    if target is None:
        return TensorStructInfo(None, x.dtype, -1)
    if x.shape is not None:
        if x.ndim > len(target):
            raise fail(call, f"cannot broadcast rank {x.ndim} to {format_shape(target)}")
        out = broadcast_shapes(call, [x.shape, target])
        if out is not None and not all(prove_equal(a, b) for a, b in zip(out, target, strict=True)):
            raise fail(call, f"cannot broadcast {format_shape(x.shape)} to {format_shape(target)}")
    return with_shape(x, target)


@register_op("broadcast_to", infer=_infer_broadcast_to)
def broadcast_to(op: RelaxOp, x: Expr, shape: Sequence[object] | Expr) -> Call:
    """Broadcast `x` to `shape`.

    Example:
        >>> broadcast_to(x, ("n", 4)).op is broadcast_to  # doctest: +SKIP
        True
    """
    return Call(op, (x, as_shape_expr(shape)))


@dataclass(frozen=True, slots=True)
class StridedSliceAttrs(Attrs):
    """Python-style slicing of `axes` with `begin`, `end`, `strides` (ends are clamped).

    A bound may also be a symbolic expression (``seq``, ``past + seq``): it must be
    non-negative (it is not counted from the end), is clamped to the axis, and needs a
    positive stride.  ``[0:seq]`` of an axis of 128 is ``min(seq, 128)`` long.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> strided_slice(x, axes=[1], begin=[0], end=[2]).attrs
        StridedSliceAttrs(axes=(1,), begin=(0,), end=(2,), strides=(1,))
    """

    axes: tuple[int, ...]
    begin: tuple[int | sympy.Expr, ...]
    end: tuple[int | sympy.Expr, ...]
    strides: tuple[int, ...]


_TO_END = 2**31 - 1
"""An `end` at least this large means "to the end of the axis" (ONNX writes INT64_MAX)."""


def _is_symbolic(bound: int | sympy.Expr) -> bool:
    return isinstance(bound, sympy.Basic) and not bound.is_number


def _slice_len(dim: Dim, begin: int | Dim, end: int | Dim, stride: int) -> Dim:
    """The length of ``[begin:end:stride]`` on an axis of size `dim` (Python slice rules).

    Symbolic dims follow the same rules symbolically: a negative bound becomes
    ``max(bound + dim, lo)``, a non-negative one ``min(bound, hi)``, where ``[lo, hi]`` is
    ``[0, dim]`` for positive strides and ``[-1, dim - 1]`` for negative ones.  A symbolic
    bound is a non-negative index: ``min(bound, hi)``.  A symbolic `dim` is a size, never
    negative, so ``min(0, dim)`` is 0.
    """
    if dim.is_number and not (_is_symbolic(begin) or _is_symbolic(end)):
        begin, end = int(begin), int(end)
        return sympy.Integer(len(range(*slice(begin, end, stride).indices(int(dim)))))
    size = dim if dim.is_number else sympy.Dummy("size", integer=True, nonnegative=True)
    start, stop = _slice_bounds(size, begin, end, stride)  # a size is never negative:
    span = stop - start if stride > 0 else start - stop  # min(0, size) is 0
    return sympy.Max(sympy.ceiling(span / abs(stride)), 0).xreplace({size: dim})


def _slice_bounds(dim: Dim, begin: int | Dim, end: int | Dim, stride: int) -> tuple[Dim, Dim]:
    """The normalized start and stop of ``[begin:end:stride]`` on an axis of size `dim`.

    Bounds at or past ``±2**31 - 1`` mean "from/to the end of the axis" (ONNX writes INT64_MAX).

    Example:
        >>> from unity.relax.struct_info import sym
        >>> _slice_bounds(sym("n"), -1, 2**63 - 1, 1)
        (n - 1, n)
    """
    lo, hi = (sympy.Integer(0), dim) if stride > 0 else (sympy.Integer(-1), dim - 1)

    def clamp(bound: int | Dim) -> Dim:
        if _is_symbolic(bound):
            return sympy.Min(bound, hi)  # a non-negative index
        bound = int(bound)
        if bound >= _TO_END:
            return hi
        if bound <= -_TO_END:
            return lo
        return sympy.Max(bound + dim, lo) if bound < 0 else sympy.Min(sympy.Integer(bound), hi)

    return clamp(begin), clamp(end)


def _infer_strided_slice(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, StridedSliceAttrs)
    lengths = {len(attrs.axes), len(attrs.begin), len(attrs.end), len(attrs.strides)}
    if len(lengths) != 1:
        raise fail(call, "expects axes, begin, end and strides of one length")
    if any(s == 0 for s in attrs.strides):
        raise fail(call, "expects nonzero strides")
    for b, e, s in zip(attrs.begin, attrs.end, attrs.strides, strict=True):
        if s < 0 and (_is_symbolic(b) or _is_symbolic(e)):
            raise fail(call, f"symbolic bounds [{b}:{e}] need a positive stride, got {s}")
    if x.shape is None:
        return x
    dims = list(x.shape)
    for axis, b, e, s in zip(attrs.axes, attrs.begin, attrs.end, attrs.strides, strict=True):
        axis = normalize_axis(call, axis, x.ndim)
        dims[axis] = _slice_len(dims[axis], b, e, s)
    return with_shape(x, dims)


@register_op("strided_slice", infer=_infer_strided_slice)
def strided_slice(
    op: RelaxOp,
    x: Expr,
    axes: Sequence[int],
    begin: Sequence[int],
    end: Sequence[int],
    strides: Sequence[int] | None = None,
) -> Call:
    """Slice `x[begin:end:stride]` on each of `axes`.

    Example:
        >>> strided_slice(x, [1], [0], [2]).attrs.strides  # doctest: +SKIP
        (1,)
    """
    strides = (1,) * len(axes) if strides is None else tuple(strides)
    return Call(op, (x,), StridedSliceAttrs(tuple(axes), tuple(begin), tuple(end), strides))


# -- take / gather_elements / scatter_elements ----------------------------------------------


def _index_arg(call: Call, index: int) -> TensorStructInfo:
    sinfo = tensor_arg(call, index, "indices")
    if not sinfo.dtype.startswith(("int", "uint")) and sinfo.dtype != "void":
        raise fail(call, f"expects integer indices, got dtype {sinfo.dtype}")
    return sinfo


def _infer_take(call: Call) -> StructInfo:
    x, idx = tensor_arg(call, 0, "input"), _index_arg(call, 1)
    attrs = call.attrs
    assert isinstance(attrs, AxisAttrs)
    if x.shape is None or idx.shape is None:
        ndim = -1 if x.ndim < 0 or idx.ndim < 0 else x.ndim - 1 + idx.ndim
        return TensorStructInfo(None, x.dtype, ndim)
    axis = normalize_axis(call, attrs.axis, x.ndim)
    return with_shape(x, [*x.shape[:axis], *idx.shape, *x.shape[axis + 1 :]])


@register_op("take", infer=_infer_take)
def take(op: RelaxOp, x: Expr, indices: Expr, axis: int = 0) -> Call:
    """Take entries of `x` along `axis` at `indices`.

    Example:
        >>> take(x, i, axis=0).attrs.axis  # doctest: +SKIP
        0
    """
    return Call(op, (x, indices), AxisAttrs(axis))


def _infer_gather(call: Call) -> StructInfo:
    x, idx = tensor_arg(call, 0, "input"), _index_arg(call, 1)
    attrs = call.attrs
    assert isinstance(attrs, AxisAttrs)
    if x.ndim >= 0 and idx.ndim >= 0 and x.ndim != idx.ndim:
        raise fail(call, f"expects indices of the input's rank {x.ndim}, got rank {idx.ndim}")
    normalize_axis(call, attrs.axis, x.ndim)
    return TensorStructInfo(idx.shape, x.dtype, idx.ndim)


@register_op("gather_elements", infer=_infer_gather)
def gather_elements(op: RelaxOp, x: Expr, indices: Expr, axis: int = 0) -> Call:
    """``out[i][j] = x[indices[i][j]][j]`` for axis 0 (and likewise for others).

    Example:
        >>> gather_elements(x, i, 1).attrs.axis  # doctest: +SKIP
        1
    """
    return Call(op, (x, indices), AxisAttrs(axis))


@dataclass(frozen=True, slots=True)
class ScatterElementsAttrs(Attrs):
    """Axis and reduction (`update`, `add`, `mul`, `min`, `max`) of `scatter_elements`.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> idx = relax.Var("idx", relax.TensorStructInfo((2, 3), "int64"))
        >>> scatter_elements(x, idx, x, axis=1, reduction="add").attrs
        ScatterElementsAttrs(axis=1, reduction='add')
    """

    axis: int = 0
    reduction: str = "update"


def _infer_scatter(call: Call) -> StructInfo:
    x, idx, upd = tensor_arg(call, 0, "input"), _index_arg(call, 1), tensor_arg(call, 2, "updates")
    attrs = call.attrs
    assert isinstance(attrs, ScatterElementsAttrs)
    if attrs.reduction not in ("update", "add", "mul", "min", "max"):
        raise fail(call, f"has no reduction {attrs.reduction!r}")
    unify_dtype(call, [x.dtype, upd.dtype])
    axis = normalize_axis(call, attrs.axis, x.ndim)
    if idx.shape is not None and upd.shape is not None:
        for k, (a, b) in enumerate(zip(idx.shape, upd.shape, strict=False)):
            if (prove_not_equal(a, b) and (k == axis or a != 1)) or idx.ndim != upd.ndim:
                got = f"{format_shape(idx.shape)} vs {format_shape(upd.shape)}"
                raise fail(call, "expects indices of the updates' shape (or of length 1 off the axis: one "
                           f"index per row), got {got}")
    return x


@register_op("scatter_elements", infer=_infer_scatter)
def scatter_elements(
    op: RelaxOp, x: Expr, indices: Expr, updates: Expr, axis: int = 0, reduction: str = "update"
) -> Call:
    """Copy of `x` with `updates` written (or reduced) at `indices` along `axis`.

    Example:
        >>> scatter_elements(x, i, u, 0).attrs.reduction  # doctest: +SKIP
        'update'
    """
    return Call(op, (x, indices, updates), ScatterElementsAttrs(axis, reduction))


__all__ = [
    "broadcast_to", "concat", "expand_dims", "flatten", "gather_elements",
    "permute_dims", "reshape", "scatter_elements", "split", "squeeze", "strided_slice", "take",
]  # fmt: skip
