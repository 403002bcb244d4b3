"""Elementwise unary ops: the result has the input's struct info (predicates give bool).

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 4), "float32"))
    >>> exp(x).op is exp
    True
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import RelaxOp, fail, infer_elementwise, register_op, tensor_arg
from unity.relax.struct_info import StructInfo


def infer_unary(call: Call) -> StructInfo:
    """The struct info of the single tensor argument.

    Example:
        >>> infer_unary(exp(x)).shape  # doctest: +SKIP
        (n, 4)
    """
    return tensor_arg(call, 0, "input")


def infer_unary_float(call: Call) -> StructInfo:
    """Like `infer_unary`, but the input must be floating point.

    Example:
        >>> infer_unary_float(sqrt(x)).dtype  # doctest: +SKIP
        'float32'
    """
    sinfo = tensor_arg(call, 0, "input")
    if sinfo.dtype.startswith(("int", "uint", "bool")):
        raise fail(call, f"expects a floating-point tensor, got dtype {sinfo.dtype}")
    return sinfo


def infer_predicate(call: Call) -> StructInfo:
    """The input's shape with dtype bool.

    Example:
        >>> infer_predicate(isnan(x)).dtype  # doctest: +SKIP
        'bool'
    """
    return infer_elementwise(call, out_dtype="bool")


def _unary(name: str, infer: object = infer_unary) -> RelaxOp:
    def make(op: RelaxOp, x: Expr) -> Call:
        return Call(op, (x,))

    make.__doc__ = f"Elementwise `{name}(x)`."
    return register_op(name, infer=infer)(make)  # type: ignore[arg-type]  # an InferFn


abs = _unary("abs")
negative = _unary("negative")
sign = _unary("sign")
square = _unary("square")
floor = _unary("floor")
ceil = _unary("ceil")
round = _unary("round")
exp = _unary("exp", infer_unary_float)
log = _unary("log", infer_unary_float)
sqrt = _unary("sqrt", infer_unary_float)
rsqrt = _unary("rsqrt", infer_unary_float)
sin = _unary("sin", infer_unary_float)
cos = _unary("cos", infer_unary_float)
tan = _unary("tan", infer_unary_float)
tanh = _unary("tanh", infer_unary_float)
sigmoid = _unary("sigmoid", infer_unary_float)
erf = _unary("erf", infer_unary_float)
logical_not = _unary("logical_not", infer_predicate)
bitwise_not = _unary("bitwise_not")
isnan = _unary("isnan", infer_predicate)
isinf = _unary("isinf", infer_predicate)
isfinite = _unary("isfinite", infer_predicate)


@dataclass(frozen=True, slots=True)
class ClipAttrs(Attrs):
    """Bounds of `clip`.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> clip(x, 0.0, 6.0).attrs
        ClipAttrs(min=0.0, max=6.0)
    """

    min: float
    max: float


def _infer_clip(call: Call) -> StructInfo:
    attrs = call.attrs
    assert isinstance(attrs, ClipAttrs)
    if attrs.min > attrs.max:
        raise fail(call, f"expects min <= max, got min={attrs.min} and max={attrs.max}")
    return tensor_arg(call, 0, "input")


@register_op("clip", infer=_infer_clip)
def clip(op: RelaxOp, x: Expr, min: float, max: float) -> Call:
    """Clamp each element of `x` into ``[min, max]``.

    Example:
        >>> clip(x, 0.0, 6.0).attrs.max  # doctest: +SKIP
        6.0
    """
    return Call(op, (x,), ClipAttrs(float(min), float(max)))


__all__ = [
    "abs", "bitwise_not", "ceil", "clip", "cos", "erf", "exp", "floor",
    "isfinite", "isinf", "isnan", "log", "logical_not", "negative", "round", "rsqrt", "sigmoid",
    "sign", "sin", "sqrt", "square", "tan", "tanh",
]  # fmt: skip
