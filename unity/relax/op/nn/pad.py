"""`nn.pad`: pad each axis before and after with a constant (or edge/reflect values).

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 4), "float32"))
    >>> pad(x, [0, 0, 1, 1]).attrs.pad_width
    (0, 0, 1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import RelaxOp, fail, register_op, tensor_arg, with_shape
from unity.relax.struct_info import StructInfo


@dataclass(frozen=True, slots=True)
class PadAttrs(Attrs):
    """`pad_width` as (before_0, after_0, before_1, after_1, ...), value and mode.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> pad(x, (0, 0, 1, 1)).attrs
        PadAttrs(pad_width=(0, 0, 1, 1), pad_value=0.0, pad_mode='constant')
    """

    pad_width: tuple[int, ...]
    pad_value: float = 0.0
    pad_mode: str = "constant"


def _infer_pad(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, PadAttrs)
    if attrs.pad_mode not in ("constant", "edge", "reflect"):
        raise fail(call, f"has no pad_mode {attrs.pad_mode!r} (constant, edge or reflect)")
    if x.ndim >= 0 and len(attrs.pad_width) != 2 * x.ndim:
        got = len(attrs.pad_width)
        raise fail(call, f"expects {2 * x.ndim} pad widths for rank {x.ndim}, got {got}")
    if x.shape is None:
        return x
    widths = attrs.pad_width
    dims = [d + widths[2 * i] + widths[2 * i + 1] for i, d in enumerate(x.shape)]
    return with_shape(x, [sympy.expand(d) for d in dims])


@register_op("nn.pad", infer=_infer_pad)
def pad(
    op: RelaxOp, x: Expr, pad_width: Sequence[int], pad_value: float = 0.0,
    pad_mode: str = "constant",
) -> Call:  # fmt: skip
    """Pad `x`; `pad_width` lists (before, after) for each axis, flattened.

    Example:
        >>> pad(x, [0, 0, 2, 2], 1.0).attrs.pad_value  # doctest: +SKIP
        1.0
    """
    return Call(op, (x,), PadAttrs(tuple(int(w) for w in pad_width), float(pad_value), pad_mode))
