"""Sequence ONNX ops, resolved at import time: a sequence is its list of tensors (`SeqValue`).

A model that builds a sequence from tensors (`SequenceConstruct`, `SplitToSequence`),
edits it at positions known at import time (`SequenceInsert`, `SequenceErase`) and
reads it back (`SequenceAt`, `ConcatFromSequence`, `SequenceLength`) compiles to plain
tensor ops; a sequence that is a graph output becomes a tuple.  Sequence graph inputs,
positions computed at run time and sequences carried by `Loop` are not supported.

Example:
    >>> sorted(CONVERTERS)[:2]
    ['ConcatFromSequence', 'SequenceAt']
"""

from __future__ import annotations

import numpy as np

from unity.relax import op as R
from unity.relax.frontend.onnx.context import Context, NodeView, SeqValue, Value
from unity.relax.frontend.onnx.ops.common import Converter
from unity.relax.frontend.onnx.ops.shape import split_parts


def _sequence(ctx: Context, node: NodeView, index: int = 0) -> SeqValue:
    value = node.input(index)
    if not isinstance(value, SeqValue):
        raise ctx.fail(f"expects a sequence as input {index}, got a tensor")
    return value


def _position(ctx: Context, node: NodeView, length: int, default: int, inserting: bool = False) -> int:
    """Input 1 (or 2 for `SequenceInsert`) as a position in ``[-n, n)`` (``[-n, n]`` to
    insert), made non-negative; `default` when it is absent."""
    value = node.input(2 if inserting else 1)
    if value is None:
        return default
    pos = int(ctx.const(value, "position").reshape(-1)[0])
    top = length + 1 if inserting else length
    if not -length <= pos < top:
        raise ctx.fail(f"position {pos} is outside [{-length}, {top - 1}] for a sequence of {length}")
    return pos + length if pos < 0 else pos


def _checked(ctx: Context, items: list[Value], dtype: str | None) -> SeqValue:
    dtypes = {ctx.dtype(v) for v in items}
    if dtype is not None:
        dtypes.add(dtype)
    if len(dtypes) > 1:
        raise ctx.fail(f"makes a sequence of tensors of several dtypes {sorted(dtypes)}")
    return SeqValue(tuple(items), dtypes.pop() if dtypes else "float32")


def _construct(ctx: Context, node: NodeView) -> Value:
    items = [v for v in node.inputs if v is not None]
    if not items:
        raise ctx.fail("needs at least one tensor")
    return _checked(ctx, items, None)


def _empty(ctx: Context, node: NodeView) -> Value:
    from unity.relax.frontend.onnx.importer import elem_dtype

    return SeqValue((), elem_dtype(node.attr("dtype", 1), f'SequenceEmpty node "{node.name}" dtype'))


def _at(ctx: Context, node: NodeView) -> Value:
    seq = _sequence(ctx, node)
    if not seq.items:
        raise ctx.fail("reads an empty sequence")
    return seq.items[_position(ctx, node, len(seq.items), 0)]


def _insert(ctx: Context, node: NodeView) -> Value:
    seq = _sequence(ctx, node)
    items = list(seq.items)
    items.insert(_position(ctx, node, len(items), len(items), inserting=True), node.input(1))
    return _checked(ctx, items, seq.dtype)


def _erase(ctx: Context, node: NodeView) -> Value:
    seq = _sequence(ctx, node)
    if not seq.items:
        raise ctx.fail("erases from an empty sequence")
    items = list(seq.items)
    del items[_position(ctx, node, len(items), len(items) - 1)]
    return SeqValue(tuple(items), seq.dtype)


def _length(ctx: Context, node: NodeView) -> Value:
    return np.array(len(_sequence(ctx, node).items), dtype="int64")


def _split_to_sequence(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    axis = ctx.normalize_axes([node.attr("axis", 0)], ctx.ndim(x))[0]
    dim = ctx.shape(x)[axis]
    if not dim.is_number:
        raise ctx.fail(f"splits axis {axis} of symbolic length {dim}: the sequence's length must be known")
    n, split = int(dim), node.input(1)
    if split is None:
        sizes = [1] * n
    else:
        given = ctx.const(split, "split").astype("int64")
        if given.ndim == 0:
            chunk = int(given)
            sizes = [chunk] * (n // chunk) + ([n % chunk] if n % chunk else [])
        else:
            sizes = [int(s) for s in given]
        if sum(sizes) != n or min(sizes, default=1) < 0:
            raise ctx.fail(f"split {sizes} does not cover axis {axis} of length {n}")
    parts = split_parts(ctx, x, sizes, axis)
    if split is None and not node.attr("keepdims", 1):
        parts = [ctx.emit(R.squeeze(p, [axis])) for p in parts]
    return SeqValue(tuple(parts), ctx.dtype(x))


def _concat_from_sequence(ctx: Context, node: NodeView) -> Value:
    seq = _sequence(ctx, node)
    if not seq.items:
        raise ctx.fail("concatenates an empty sequence")
    items = [ctx.expr(v) for v in seq.items]
    new_axis = bool(node.attr("new_axis", 0))
    rank = ctx.ndim(items[0]) + int(new_axis)
    axis = ctx.normalize_axes([node.attr("axis")], rank)[0]
    if new_axis:
        items = [ctx.emit(R.expand_dims(v, [axis])) for v in items]
    return items[0] if len(items) == 1 else ctx.emit(R.concat(items, axis))


CONVERTERS: dict[str, Converter] = {
    "SequenceConstruct": _construct, "SequenceEmpty": _empty, "SequenceAt": _at,
    "SequenceInsert": _insert, "SequenceErase": _erase, "SequenceLength": _length,
    "SplitToSequence": _split_to_sequence, "ConcatFromSequence": _concat_from_sequence,
}  # fmt: skip
