"""Activations: relu, gelu, silu, softmax, log_softmax, and dropout.

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 10), "float32"))
    >>> softmax(x).attrs.axis
    -1
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import RelaxOp, normalize_axis, register_op, tensor_arg, tuple_of
from unity.relax.op.unary import infer_unary_float
from unity.relax.struct_info import StructInfo


def _activation(name: str) -> RelaxOp:
    def make(op: RelaxOp, x: Expr) -> Call:
        return Call(op, (x,))

    make.__doc__ = f"Elementwise `{name}(x)`."
    return register_op(f"nn.{name}", infer=infer_unary_float)(make)


relu = _activation("relu")
gelu = _activation("gelu")
gelu_tanh = _activation("gelu_tanh")
silu = _activation("silu")


@dataclass(frozen=True, slots=True)
class SoftmaxAttrs(Attrs):
    """The axis softmax normalizes over.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> softmax(x, axis=1).attrs
        SoftmaxAttrs(axis=1)
    """

    axis: int = -1


def _infer_softmax(call: Call) -> StructInfo:
    sinfo = infer_unary_float(call)
    attrs = call.attrs
    assert isinstance(attrs, SoftmaxAttrs)
    normalize_axis(call, attrs.axis, sinfo.ndim)  # type: ignore[attr-defined]  # a tensor
    return sinfo


@register_op("nn.softmax", infer=_infer_softmax)
def softmax(op: RelaxOp, x: Expr, axis: int = -1) -> Call:
    """``exp(x) / sum(exp(x), axis)``.

    Example:
        >>> softmax(x, 1).attrs.axis  # doctest: +SKIP
        1
    """
    return Call(op, (x,), SoftmaxAttrs(axis))


@register_op("nn.log_softmax", infer=_infer_softmax)
def log_softmax(op: RelaxOp, x: Expr, axis: int = -1) -> Call:
    """``log(softmax(x, axis))``, computed stably.

    Example:
        >>> log_softmax(x).attrs.axis  # doctest: +SKIP
        -1
    """
    return Call(op, (x,), SoftmaxAttrs(axis))


@dataclass(frozen=True, slots=True)
class DropoutAttrs(Attrs):
    """The drop probability (inference: dropout is the identity).

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> dropout(x, rate=0.1).attrs
        DropoutAttrs(rate=0.1)
    """

    rate: float = 0.5


def _infer_dropout(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    return tuple_of([x, x])


@register_op("nn.dropout", infer=_infer_dropout)
def dropout(op: RelaxOp, x: Expr, rate: float = 0.5) -> Call:
    """Return ``(output, mask)``; at inference the output equals `x`.

    Example:
        >>> dropout(x, 0.1).attrs.rate  # doctest: +SKIP
        0.1
    """
    return Call(op, (x,), DropoutAttrs(rate))
