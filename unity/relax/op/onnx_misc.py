"""More ONNX-only ops (beside `onnx_extra`): builders and struct-info inference.

`bitcast` reads the bits of each element as another dtype (ONNX BitCast); `col2im` sums
sliding-window columns into an image (ONNX Col2Im); `reverse_sequence` and `tensor_scatter`
work per sample along a time axis (ONNX ReverseSequence, TensorScatter); `max_unpool` puts
pooled values back at their MaxPool indices (ONNX MaxUnpool), and `max_pool_indices` finds
them (MaxPool's second output).  Their legalization rules live in
`relax.transform.legalize_ops.onnx_misc`.

Example:
    >>> from unity import relax
    >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    >>> bitcast(x, "int32").op.name
    'relax.bitcast'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import (
    RelaxOp, fail, normalize_axis, register_op, tensor_arg, unify_dtype, with_shape,
)  # fmt: skip
from unity.relax.op.onnx_extra import DtypeAttrs
from unity.relax.struct_info import (
    UNKNOWN_DTYPE, StructInfo, TensorStructInfo, format_shape, prove_not_equal,
)  # fmt: skip
from unity.topi.bitcast import can_bitcast
from unity.topi.nn.col2im import col2im_blocks
from unity.topi.nn.unpool import unpool_shape


def _infer_bitcast(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, DtypeAttrs)
    if x.dtype != UNKNOWN_DTYPE:
        why = can_bitcast(x.dtype, attrs.dtype)
        if why is not None:
            raise fail(call, f"cannot read {x.dtype} as {attrs.dtype}: {why}")
    return TensorStructInfo(x.shape, attrs.dtype, x.ndim)


@register_op("bitcast", infer=_infer_bitcast)
def bitcast(op: RelaxOp, x: Expr, dtype: str) -> Call:
    """The bits of every element of `x` read as `dtype` of the same width (ONNX BitCast).

    Example:
        >>> bitcast(x, "int32").attrs.dtype  # doctest: +SKIP
        'int32'
    """
    return Call(op, (x,), DtypeAttrs(dtype))


@dataclass(frozen=True, slots=True)
class Col2ImAttrs(Attrs):
    """Image and block (kernel) shapes, dilations, pads (all begins, then all ends), strides.

    Example:
        >>> Col2ImAttrs((4, 4), (2, 2), (1, 1), (0, 0, 0, 0), (1, 1)).image
        (4, 4)
    """

    image: tuple[int, ...]
    block: tuple[int, ...]
    dilations: tuple[int, ...]
    pads: tuple[int, ...]
    strides: tuple[int, ...]


def _infer_col2im(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    a = call.attrs
    assert isinstance(a, Col2ImAttrs)
    if x.ndim not in (-1, 3):
        raise fail(call, f"expects a (N, C * prod(block), L) input, got rank {x.ndim}")
    blocks = col2im_blocks(a.image, a.block, a.dilations, a.pads, a.strides)
    if min(blocks) < 1:
        raise fail(call, f"leaves no window: block {list(a.block)} on image {list(a.image)}")
    if x.shape is None:
        return TensorStructInfo(None, x.dtype, 2 + len(a.image))
    size, count = math.prod(a.block), math.prod(blocks)
    rows, length = x.shape[1], x.shape[2]
    if not rows.is_number or int(rows) % size != 0:
        raise fail(call, f"expects input dim 1 a multiple of prod(block) = {size}, got {rows}")
    if not length.is_number or int(length) != count:
        raise fail(call, f"expects input dim 2 = {count} windows {blocks}, got {length}")
    return with_shape(x, [x.shape[0], int(rows) // size, *a.image])


@register_op("col2im", infer=_infer_col2im)
def col2im(op: RelaxOp, x: Expr, attrs: Col2ImAttrs) -> Call:
    """Sum the columns of `x` into images ``(N, C, *attrs.image)`` (ONNX Col2Im).

    Example:
        >>> attrs = Col2ImAttrs((4, 4), (2, 2), (1, 1), (0,) * 4, (1, 1))
        >>> col2im(x, attrs).op.name  # doctest: +SKIP
        'relax.col2im'
    """
    return Call(op, (x,), attrs)


def _index_vector(call: Call, index: int, what: str) -> TensorStructInfo:
    """Argument `index`: a 1-D integer tensor (per-sample lengths or positions)."""
    sinfo = tensor_arg(call, index, what)
    if sinfo.dtype not in (UNKNOWN_DTYPE, "int32", "int64"):
        raise fail(call, f"expects {what} of dtype int32 or int64, got {sinfo.dtype}")
    if sinfo.ndim not in (-1, 1):
        raise fail(call, f"expects 1-D {what}, got rank {sinfo.ndim}")
    return sinfo


def _check_batch(
    call: Call, per_sample: TensorStructInfo, x: TensorStructInfo, batch: int, what: str
) -> None:
    if per_sample.shape is None or x.shape is None:
        return
    if prove_not_equal(per_sample.shape[0], x.shape[batch]):
        raise fail(
            call,
            f"expects one {what} entry per sample ({x.shape[batch]}), got {per_sample.shape[0]}",
        )


@dataclass(frozen=True, slots=True)
class ReverseSequenceAttrs(Attrs):
    """The batch axis (one length per sample) and the time axis reversed.

    Example:
        >>> ReverseSequenceAttrs(batch_axis=0, time_axis=1).time_axis
        1
    """

    batch_axis: int = 1
    time_axis: int = 0


def _infer_reverse_sequence(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    lengths = _index_vector(call, 1, "sequence lengths")
    a = call.attrs
    assert isinstance(a, ReverseSequenceAttrs)
    if x.ndim < 0:
        return x
    batch, time = (
        normalize_axis(call, a.batch_axis, x.ndim),
        normalize_axis(call, a.time_axis, x.ndim),
    )
    if batch == time:
        raise fail(call, f"expects different batch and time axes, got {batch} for both")
    _check_batch(call, lengths, x, batch, "sequence length")
    return x


@register_op("reverse_sequence", infer=_infer_reverse_sequence)
def reverse_sequence(
    op: RelaxOp, x: Expr, lengths: Expr, batch_axis: int = 1, time_axis: int = 0
) -> Call:
    """Reverse the first ``lengths[b]`` steps of each sample along `time_axis` (ReverseSequence).

    Example:
        >>> reverse_sequence(x, lens, 0, 1).attrs.time_axis  # doctest: +SKIP
        1
    """
    return Call(op, (x, lengths), ReverseSequenceAttrs(batch_axis, time_axis))


@dataclass(frozen=True, slots=True)
class TensorScatterAttrs(Attrs):
    """The sequence axis of a cache, and whether writes wrap around it.

    Example:
        >>> TensorScatterAttrs(axis=-2, circular=True).circular
        True
    """

    axis: int = -2
    circular: bool = False


def _infer_tensor_scatter(call: Call) -> StructInfo:
    past, update = tensor_arg(call, 0, "past cache"), tensor_arg(call, 1, "update")
    a = call.attrs
    assert isinstance(a, TensorScatterAttrs)
    unify_dtype(call, [past.dtype, update.dtype])
    if len(call.args) > 2:
        _check_batch(call, _index_vector(call, 2, "write indices"), past, 0, "write index")
    if past.ndim < 0 or update.ndim < 0:
        return past
    if past.ndim != update.ndim:
        raise fail(
            call, f"expects a cache and an update of one rank, got {past.ndim} and {update.ndim}"
        )
    axis = normalize_axis(call, a.axis, past.ndim)
    if axis == 0:
        raise fail(call, "expects a sequence axis after the batch axis 0, got axis 0")
    if past.shape is None or update.shape is None:
        return past
    for k, (p, u) in enumerate(zip(past.shape, update.shape, strict=True)):
        longer = k == axis and p.is_number and u.is_number and int(u) > int(p)
        if longer or (k != axis and prove_not_equal(p, u)):
            shapes = f"{format_shape(past.shape)} and {format_shape(update.shape)}"
            raise fail(call, f"cannot write an update into the cache along axis {axis}: {shapes}")
    return past


@register_op("tensor_scatter", infer=_infer_tensor_scatter)
def tensor_scatter(
    op: RelaxOp,
    past: Expr,
    update: Expr,
    write_indices: Expr | None = None,
    axis: int = -2,
    circular: bool = False,
) -> Call:
    """`past` with `update` written along `axis` from ``write_indices[b]`` on (TensorScatter).

    Example:
        >>> tensor_scatter(cache, new, pos, circular=True).attrs.circular  # doctest: +SKIP
        True
    """
    args = (past, update) if write_indices is None else (past, update, write_indices)
    return Call(op, args, TensorScatterAttrs(axis, circular))


@dataclass(frozen=True, slots=True)
class MaxUnpoolAttrs(Attrs):
    """The pooling window (kernel, strides, pads: all begins, then all ends) and the output's
    spatial shape (empty: the shape the window infers).

    Example:
        >>> MaxUnpoolAttrs((2, 2), (2, 2), (0, 0, 0, 0)).output
        ()
    """

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    pads: tuple[int, ...]
    output: tuple[int, ...] = ()


def _infer_max_unpool(call: Call) -> StructInfo:
    x, idx = tensor_arg(call, 0, "values"), tensor_arg(call, 1, "indices")
    a = call.attrs
    assert isinstance(a, MaxUnpoolAttrs)
    rank = len(a.kernel)
    if idx.dtype not in (UNKNOWN_DTYPE, "int64"):
        raise fail(call, f"expects int64 indices, got {idx.dtype}")
    if x.shape is None or len(x.shape) != rank + 2 or not all(d.is_number for d in x.shape[2:]):
        raise fail(
            call, f"expects values of shape (N, C, {rank} static dims), got {format_shape(x.shape)}"
        )
    if idx.shape is not None and any(
        prove_not_equal(p, q) for p, q in zip(x.shape, idx.shape, strict=False)
    ):
        raise fail(call, f"expects indices shaped like the values, got {format_shape(idx.shape)}")
    inferred = unpool_shape([int(d) for d in x.shape[2:]], a.kernel, a.strides, a.pads)
    output = list(a.output or inferred)
    if min(inferred) < 1 or any(o < i for o, i in zip(output, inferred, strict=True)):
        raise fail(
            call, f"has an output spatial shape {output} smaller than the inferred {inferred}"
        )
    return with_shape(x, [x.shape[0], x.shape[1], *output])


@register_op("max_unpool", infer=_infer_max_unpool)
def max_unpool(op: RelaxOp, x: Expr, indices: Expr, attrs: MaxUnpoolAttrs) -> Call:
    """Zeros with `x` written at the flat positions `indices` (ONNX MaxUnpool).

    Example:
        >>> max_unpool(x, i, MaxUnpoolAttrs((2, 2), (2, 2), (0,) * 4)).op.name  # doctest: +SKIP
        'relax.max_unpool'
    """
    return Call(op, (x, indices), attrs)


@dataclass(frozen=True, slots=True)
class MaxPoolIndicesAttrs(Attrs):
    """The pooling window (kernel, strides, begin pads, dilations), the output's spatial shape,
    and the index order within a plane (0: row-major, 1: column-major).

    Example:
        >>> MaxPoolIndicesAttrs((2, 2), (2, 2), (0, 0), (1, 1), (4, 4)).storage_order
        0
    """

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    pads_begin: tuple[int, ...]
    dilations: tuple[int, ...]
    output: tuple[int, ...]
    storage_order: int = 0


def _infer_max_pool_indices(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    a = call.attrs
    assert isinstance(a, MaxPoolIndicesAttrs)
    rank = len(a.kernel)
    if x.shape is None or len(x.shape) != rank + 2 or not all(d.is_number for d in x.shape[2:]):
        raise fail(
            call,
            f"expects an input of shape (N, C, {rank} static dims), got {format_shape(x.shape)}",
        )
    if a.storage_order not in (0, 1):
        raise fail(
            call, f"has storage_order {a.storage_order}, not 0 (row-major) or 1 (column-major)"
        )
    return TensorStructInfo((x.shape[0], x.shape[1], *a.output), "int64")


@register_op("max_pool_indices", infer=_infer_max_pool_indices)
def max_pool_indices(op: RelaxOp, x: Expr, attrs: MaxPoolIndicesAttrs) -> Call:
    """The flat index of each max-pooling window's maximum (ONNX MaxPool's `Indices`).

    Example:
        >>> attrs = MaxPoolIndicesAttrs((2,), (2,), (0,), (1,), (3,))
        >>> max_pool_indices(x, attrs).op.name  # doctest: +SKIP
        'relax.max_pool_indices'
    """
    return Call(op, (x,), attrs)
