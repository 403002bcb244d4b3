"""Legalize shape manipulation: reshape, permute_dims, concat, split, squeeze, expand_dims,
flatten, broadcast_to, strided_slice, take, gather_elements, scatter_elements.

Target shapes come from the call's inferred struct info, so `-1` is already resolved.

Example:
    >>> from unity.relax import op
    >>> op.reshape.get_attr("legalize").__name__
    'legalize_reshape'
"""

from __future__ import annotations

from unity import topi
from unity.relax import op
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import Call, Expr, Tuple, TupleGetItem
from unity.relax.struct_info import TupleStructInfo
from unity.relax.transform.legalize_ops.common import (
    attrs_rule, call_te, known_shape, register_legalize,
)  # fmt: skip


def legalize_reshape(bb: BlockBuilder, call: Call) -> Expr:
    """`reshape(x, shape)` -> `topi.reshape` to the inferred shape.

    Example:
        >>> legalize_reshape(bb, op.reshape(x, (-1,)))  # doctest: +SKIP
    """
    return call_te(bb, call, topi.reshape, call.args[0], known_shape(call))


def legalize_broadcast_to(bb: BlockBuilder, call: Call) -> Expr:
    """`broadcast_to(x, shape)` -> `topi.broadcast_to`.

    Example:
        >>> legalize_broadcast_to(bb, op.broadcast_to(x, (2, 3)))  # doctest: +SKIP
    """
    return call_te(bb, call, topi.broadcast_to, call.args[0], known_shape(call))


def tuple_fields(bb: BlockBuilder, value: Expr) -> list[Expr]:
    """The fields of a tuple-valued expression (a `Tuple`, or `TupleGetItem`s of a var).

    Example:
        >>> tuple_fields(bb, Tuple((x, y)))  # doctest: +SKIP
        [x, y]
    """
    if isinstance(value, Tuple):
        return list(value.fields)
    sinfo = value.struct_info
    assert isinstance(sinfo, TupleStructInfo)
    return [bb.normalize(TupleGetItem(value, k)) for k in range(len(sinfo.fields))]


def legalize_concat(bb: BlockBuilder, call: Call) -> Expr:
    """`concat((a, b, ...), axis)` -> `topi.concatenate`.

    Example:
        >>> legalize_concat(bb, op.concat([x, y], 1))  # doctest: +SKIP
    """
    return call_te(bb, call, topi.concatenate, tuple_fields(bb, call.args[0]), axis=call.attrs.axis)  # type: ignore[union-attr]


register_legalize(op.reshape, legalize_reshape)
register_legalize(op.broadcast_to, legalize_broadcast_to)
register_legalize(op.concat, legalize_concat)
register_legalize(op.flatten, attrs_rule(topi.flatten, lambda a: {}))
register_legalize(op.permute_dims, attrs_rule(topi.transpose, lambda a: {"axes": a.axes}))
register_legalize(op.squeeze, attrs_rule(topi.squeeze, lambda a: {"axis": a.axes}))
register_legalize(op.expand_dims, attrs_rule(topi.expand_dims, lambda a: {"axis": a.axes}))
register_legalize(
    op.split,
    attrs_rule(
        topi.split, lambda a: {"indices_or_sections": a.indices_or_sections, "axis": a.axis}
    ),
)
register_legalize(op.strided_slice, attrs_rule(
    topi.strided_slice,
    lambda a: {"begin": a.begin, "end": a.end, "strides": a.strides, "axes": a.axes},
))  # fmt: skip
register_legalize(op.take, attrs_rule(topi.take, lambda a: {"axis": a.axis}))
register_legalize(op.gather_elements, attrs_rule(topi.gather_elements, lambda a: {"axis": a.axis}))
register_legalize(
    op.scatter_elements,
    attrs_rule(topi.scatter_elements, lambda a: {"axis": a.axis, "reduction": a.reduction}),
)
