"""Elementwise unary operators: math functions, predicates, activations, `clip`, `cast`.

Each takes a `te.Tensor` and returns a tensor of the same shape, computed point by point.

Example:
    >>> from unity import te, topi
    >>> x = te.placeholder((te.var("n"), 4), name="x")
    >>> topi.exp(x).op.name, topi.nn.relu(x).dtype
    ('T_exp', 'float32')
"""

from __future__ import annotations

import math
from collections.abc import Callable

from unity import te, tir
from unity.ir import dtype as dt
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.utils import as_float

ScalarFn = Callable[[PrimExpr], PrimExpr]
"""The per-element function of a unary op."""


def elemwise(x: Tensor, fn: ScalarFn, name: str) -> Tensor:
    """`out[i...] = fn(x[i...])` over the shape of `x`.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((3,), name="x")
        >>> elemwise(x, lambda v: v * 2.0, "T_double").op.name
        'T_double'
    """
    return te.compute(x.shape, lambda *i: fn(x[i]), name=name)


def _unary(short: str, fn: ScalarFn, doc: str) -> Callable[[Tensor], Tensor]:
    def op(x: Tensor) -> Tensor:
        return elemwise(x, fn, f"T_{short}")

    op.__name__ = short
    op.__doc__ = (
        f"Elementwise {doc}.\n\nExample:\n    >>> from unity import te\n"
        f"    >>> {short}(te.placeholder((2,), name='x')).shape[0].value\n    2\n"
    )
    return op


def _float_math(fn: ScalarFn) -> ScalarFn:
    """Apply a float intrinsic; integer inputs go through float32 and back."""

    def apply(v: PrimExpr) -> PrimExpr:
        out = fn(as_float(v))
        return out if out.dtype == v.dtype else out.astype(v.dtype)

    return apply


def _sign(v: PrimExpr) -> PrimExpr:
    zero, one = const(0, v.dtype), const(1, v.dtype)
    if dt.is_bool(v.dtype):
        return v
    neg = -one if not v.dtype.startswith("uint") else zero
    return tir.select(v > zero, one, tir.select(v < zero, neg, zero))


def _round_int_safe(fn: ScalarFn) -> ScalarFn:
    """floor/ceil/round are the identity on integers."""
    return lambda v: fn(v) if dt.is_float(v.dtype) else v


def _is_finite(v: PrimExpr) -> PrimExpr:
    if not dt.is_float(v.dtype):
        return const(True)
    return tir.logical_and(tir.Not(tir.isnan(v)), tir.Not(tir.isinf(v)))


def _predicate(fn: ScalarFn) -> ScalarFn:
    return lambda v: fn(v) if dt.is_float(v.dtype) else const(False)


def _logical_not(v: PrimExpr) -> PrimExpr:
    return tir.Not(v if dt.is_bool(v.dtype) else tir.ne(v, const(0, v.dtype)))


exp = _unary("exp", _float_math(tir.exp), "`e ** x`")
log = _unary("log", _float_math(tir.log), "natural logarithm")
sqrt = _unary("sqrt", _float_math(tir.sqrt), "square root")
rsqrt = _unary("rsqrt", _float_math(lambda v: const(1.0, v.dtype) / tir.sqrt(v)), "`1 / sqrt(x)`")
sin = _unary("sin", _float_math(tir.sin), "sine")
cos = _unary("cos", _float_math(tir.cos), "cosine")
tan = _unary("tan", _float_math(tir.tan), "tangent")
tanh = _unary("tanh", _float_math(tir.tanh), "hyperbolic tangent")
sigmoid = _unary("sigmoid", _float_math(tir.sigmoid), "logistic `1 / (1 + exp(-x))`")
erf = _unary("erf", _float_math(tir.erf), "error function")
abs = _unary("abs", tir.abs, "absolute value")
negative = _unary("negative", lambda v: -v, "negation")
sign = _unary("sign", _sign, "sign (-1, 0 or 1)")
square = _unary("square", lambda v: v * v, "`x * x`")
floor = _unary("floor", _round_int_safe(tir.floor), "floor")
ceil = _unary("ceil", _round_int_safe(tir.ceil), "ceiling")
round = _unary("round", _round_int_safe(tir.round), "round half to even (numpy `rint`)")
trunc = _unary("trunc", _round_int_safe(tir.trunc), "round toward zero")
asin = _unary("asin", _float_math(tir.asin), "arc sine")
acos = _unary("acos", _float_math(tir.acos), "arc cosine")
atan = _unary("atan", _float_math(tir.atan), "arc tangent")
sinh = _unary("sinh", _float_math(tir.sinh), "hyperbolic sine")
cosh = _unary("cosh", _float_math(tir.cosh), "hyperbolic cosine")
exp2 = _unary("exp2", _float_math(tir.exp2), "`2 ** x`")
log2 = _unary("log2", _float_math(tir.log2), "base-2 logarithm")
log10 = _unary("log10", _float_math(tir.log10), "base-10 logarithm")
reciprocal = _unary("reciprocal", lambda v: const(1, v.dtype) / v, "`1 / x`")
isnan = _unary("isnan", _predicate(tir.isnan), "NaN test (bool result)")
isinf = _unary("isinf", _predicate(tir.isinf), "infinity test (bool result)")
isfinite = _unary("isfinite", _is_finite, "finiteness test (bool result)")
logical_not = _unary("logical_not", _logical_not, "logical not (bool result)")
identity = _unary("identity", lambda v: v, "copy")


def relu(x: Tensor) -> Tensor:
    """`max(x, 0)`.

    Example:
        >>> from unity import te
        >>> relu(te.placeholder((2,), name="x")).op.name
        'T_relu'
    """
    return elemwise(x, lambda v: tir.max(v, const(0, v.dtype)), "T_relu")


def gelu(x: Tensor) -> Tensor:
    """Gaussian error linear unit, exact form: `0.5 * x * (1 + erf(x / sqrt(2)))`.

    Example:
        >>> from unity import te
        >>> gelu(te.placeholder((2,), name="x")).op.name
        'T_gelu'
    """

    def fn(v: PrimExpr) -> PrimExpr:
        half = const(0.5, v.dtype)
        return half * v * (const(1.0, v.dtype) + tir.erf(v * const(1 / math.sqrt(2), v.dtype)))

    return elemwise(x, fn, "T_gelu")


def gelu_tanh(x: Tensor) -> Tensor:
    """GELU, tanh approximation: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.

    Example:
        >>> from unity import te
        >>> gelu_tanh(te.placeholder((2,), name="x")).op.name
        'T_gelu_tanh'
    """

    def fn(v: PrimExpr) -> PrimExpr:
        c = const(math.sqrt(2 / math.pi), v.dtype)
        inner = c * (v + const(0.044715, v.dtype) * v * v * v)
        return const(0.5, v.dtype) * v * (const(1.0, v.dtype) + tir.tanh(inner))

    return elemwise(x, fn, "T_gelu_tanh")


def silu(x: Tensor) -> Tensor:
    """`x * sigmoid(x)` (swish).

    Example:
        >>> from unity import te
        >>> silu(te.placeholder((2,), name="x")).op.name
        'T_silu'
    """
    return elemwise(x, lambda v: v * tir.sigmoid(v), "T_silu")


def leaky_relu(x: Tensor, alpha: float = 0.01) -> Tensor:
    """`x` where positive, else `alpha * x`.

    Example:
        >>> from unity import te
        >>> leaky_relu(te.placeholder((2,), name="x"), 0.1).op.name
        'T_leaky_relu'
    """
    return elemwise(x, lambda v: tir.select(v > const(0, v.dtype), v, v * const(alpha, v.dtype)),
                    "T_leaky_relu")  # fmt: skip


def clip(x: Tensor, a_min: float, a_max: float) -> Tensor:
    """Clamp each element into ``[a_min, a_max]``.

    Raises:
        ValueError: `a_min > a_max`.

    Example:
        >>> from unity import te
        >>> clip(te.placeholder((2,), name="x"), 0.0, 6.0).op.name
        'T_clip'
    """
    if a_min > a_max:
        raise ValueError(f"clip: a_min {a_min} is larger than a_max {a_max}")

    def fn(v: PrimExpr) -> PrimExpr:
        lo, hi = _bound(a_min, v.dtype, True), _bound(a_max, v.dtype, False)
        return tir.min(tir.max(v, lo), hi)

    return elemwise(x, fn, "T_clip")


def _bound(value: float, dtype: str, lower: bool) -> PrimExpr:
    """`value` as a `dtype` constant; for integers rounded into the range and saturated."""
    if dt.is_float(dtype):
        return const(float(value), dtype)
    lo, hi = tir.min_value(dtype), tir.max_value(dtype)
    inward = math.ceil(value) if lower else math.floor(value)
    return const(min(max(inward, lo.value), hi.value), dtype)  # type: ignore[attr-defined]  # IntImm


def cast(x: Tensor, dtype: str) -> Tensor:
    """Convert every element to `dtype` (float -> int truncates, as in C and numpy).

    Example:
        >>> from unity import te
        >>> cast(te.placeholder((2,), name="x"), "int8").dtype
        'int8'
    """
    dt.check(dtype)
    if dtype == "bool":
        return elemwise(x, lambda v: tir.ne(v, const(0, v.dtype)), "T_cast")
    return elemwise(x, lambda v: v.astype(dtype), "T_cast")
