"""Cast and CastLike, to and from ONNX's narrow types (float8, float4, int4, int2...).

A tensor of a narrow type is held widened (`unity.runtime.narrow`): float8 and
float4 values in float32, int4 / int2 in int8, uint4 / uint2 in uint8.  A cast to a
narrow type computes its values in the holding type, as the ONNX reference does:

- float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz): rounded to the nearest value of the
  format, ties to even (`round_to_float`); `saturate` clamps what lies past the
  largest finite value, else it becomes inf or NaN;
- float4 e2m1: rounded likewise and always saturated; NaN becomes -0 (it has no NaN);
- float8 e8m0 (a bare exponent): the exponent of ``|x|``, rounded by `round_mode`
  ("up", "down", "nearest");
- int4 / int2 / uint4 / uint2: from an integer, its low bits (two's complement);
  from a float, truncated toward zero, and 0 where that lies outside the type.

A cast from a narrow type casts the held values.  The context remembers which
relax values hold a narrow type (`Context.onnx_dtype`) so that `CastLike` and
`QuantizeLinear` see the type the model declared.

Example:
    >>> sorted(CONVERTERS)
    ['Cast', 'CastLike']
"""

from __future__ import annotations

import numpy as np

from unity.ir import dtype as dt
from unity.relax import op as R
from unity.relax.expr import Expr
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter, cast
from unity.relax.op import onnx_extra as X
from unity.relax.op import onnx_misc as M
from unity.runtime.narrow import widened_dtype

_FLOATS = {  # name: (mantissa bits, smallest normal exponent, largest finite value, has inf)
    "float8_e4m3fn": (3, -6, 448.0, False), "float8_e4m3fnuz": (3, -7, 240.0, False),
    "float8_e5m2": (2, -14, 57344.0, True), "float8_e5m2fnuz": (2, -15, 57344.0, False),
    "float4_e2m1fn": (1, 0, 6.0, False),
}  # fmt: skip
"""The narrow float formats with a mantissa (ml_dtypes' names); the `fnuz` ones have
no negative zero."""

NARROW_INTS = {"int4": (-8, 7), "uint4": (0, 15), "int2": (-2, 1), "uint2": (0, 3)}
"""The narrow integer types and their ranges."""


def is_narrow_float(dtype: str) -> bool:
    """Whether `dtype` is a float8 or float4 format with a mantissa (held as float32).

    Example:
        >>> is_narrow_float("float8_e4m3fn"), is_narrow_float("float8_e8m0fnu"), is_narrow_float("int8")
        (True, False, False)
    """
    return dtype in _FLOATS


def round_to_float(ctx: Context, y: Expr, fmt: str, saturate: bool = True) -> Expr:
    """float32 `y` rounded to the nearest value of the float8 / float4 format `fmt`
    (ties to even), as float32.  With `saturate` values past the largest finite one
    (and infinities) become it; without, they become inf (e5m2) or NaN (the formats
    without inf), as ml_dtypes' casts do; NaN stays NaN.  float4 e2m1, which has
    neither, always saturates, and NaN becomes -0 (as the ONNX reference's cast).

    A value's quantum is ``2 ** (max(e, emin) - m)`` for its binary exponent `e` (read
    from its bits), the format's smallest normal exponent `emin` and `m` mantissa bits:
    ``round(y / q) * q`` is exact in float32 (`q` a power of two), subnormals included.

    Example:
        >>> round_to_float(ctx, x, "float8_e4m3fn")  # doctest: +SKIP
    """
    mant, emin, top, has_inf = _FLOATS[fmt]
    f32 = lambda v: ctx.scalar(v, "float32")  # noqa: E731
    i32 = lambda v: ctx.scalar(v, "int32")  # noqa: E731
    if fmt == "float4_e2m1fn":
        y, saturate = ctx.emit(R.where(ctx.emit(R.isnan(y)), f32(-0.0), y)), True
    if saturate:  # NaN stays NaN
        y = ctx.emit(R.where(ctx.emit(R.isnan(y)), y, ctx.emit(R.clip(y, -top, top))))
    bits = ctx.emit(M.bitcast(ctx.emit(R.abs(y)), "int32"))
    exponent = ctx.emit(R.subtract(ctx.emit(X.right_shift(bits, i32(23))), i32(127)))
    k = ctx.emit(R.subtract(ctx.emit(R.maximum(exponent, i32(emin))), i32(mant)))
    quantum = ctx.emit(M.bitcast(ctx.emit(R.multiply(ctx.emit(R.add(k, i32(127))), i32(1 << 23))), "float32"))
    out = ctx.emit(R.multiply(ctx.emit(R.round(ctx.emit(R.divide(y, quantum)))), quantum))
    if not saturate:
        over = ctx.emit(R.greater(ctx.emit(R.abs(out)), f32(top)))
        special = ctx.emit(R.multiply(ctx.emit(R.sign(out)), f32(np.inf))) if has_inf else f32(np.nan)
        out = ctx.emit(R.where(over, special, out))
    if fmt.endswith("fnuz"):
        out = ctx.emit(R.add(out, f32(0.0)))  # -0 + 0 = +0: no negative zero
    return out


def _to_e8m0(ctx: Context, y: Expr, saturate: bool, round_mode: str) -> Expr:
    """float32 `y` as float8 e8m0 (``2 ** (e - 127)`` for an 8-bit `e`; 255 is NaN), held
    as float32: the exponent field of ``|y|``, rounded by `round_mode` ("up": any
    fraction; "nearest": the ONNX reference's guard / round / sticky rule; "down":
    none); `saturate` keeps 254 from rounding to NaN."""
    i32 = lambda v: ctx.scalar(v, "int32")  # noqa: E731
    bits = ctx.emit(M.bitcast(y, "int32"))
    field = ctx.emit(R.bitwise_and(ctx.emit(X.right_shift(bits, i32(23))), i32(255)))
    normal = ctx.emit(R.not_equal(field, i32(255)))  # infinities and NaN stay NaN
    is_set = lambda mask: ctx.emit(R.not_equal(ctx.emit(R.bitwise_and(bits, i32(mask))), i32(0)))  # noqa: E731
    if round_mode == "up":
        up = is_set(0x7FFFFF)
    elif round_mode == "nearest":
        rest = ctx.emit(R.logical_or(ctx.emit(R.logical_or(is_set(0x200000), is_set(0x1FFFFF))),
                                     ctx.emit(R.greater(field, i32(0)))))  # fmt: skip
        up = ctx.emit(R.logical_and(is_set(0x400000), rest))
    elif round_mode == "down":
        up = None
    else:
        raise ctx.fail(f"round_mode {round_mode!r} is not one of up, down, nearest")
    if up is not None:
        up = ctx.emit(R.logical_and(up, normal))
        if saturate:
            up = ctx.emit(R.logical_and(up, ctx.emit(R.not_equal(field, i32(254)))))
        field = ctx.emit(R.add(field, cast(ctx, up, "int32")))
    field = ctx.emit(R.where(normal, field, i32(255)))
    # 2 ** (field - 127) as float32 bits: field 0 is a subnormal, 255 a quiet NaN
    value = ctx.emit(R.multiply(field, i32(1 << 23)))
    value = ctx.emit(R.where(ctx.emit(R.equal(field, i32(0))), i32(1 << 22), value))
    value = ctx.emit(R.where(ctx.emit(R.equal(field, i32(255))), i32(0x7FC00000), value))
    return ctx.emit(M.bitcast(value, "float32"))


def _to_narrow_int(ctx: Context, x: Expr, dtype: str) -> Expr:
    """`x` as the narrow integer type `dtype`, held widened (the module docstring)."""
    lo, hi = NARROW_INTS[dtype]
    held = widened_dtype(dtype)
    source = ctx.dtype(x)
    if dt.is_float(source):  # truncated; outside the type: 0
        inside = ctx.emit(R.logical_and(ctx.emit(R.greater(x, ctx.scalar(lo - 1, source))),
                                        ctx.emit(R.less(x, ctx.scalar(hi + 1, source)))))  # fmt: skip
        return cast(ctx, ctx.emit(R.where(inside, x, ctx.scalar(0, source))), held)
    wide = cast(ctx, x, "int64")  # the low bits, two's complement
    span = hi - lo + 1
    low = ctx.emit(R.bitwise_and(ctx.emit(R.subtract(wide, ctx.scalar(lo, "int64"))), ctx.scalar(span - 1, "int64")))
    return cast(ctx, ctx.emit(R.add(low, ctx.scalar(lo, "int64"))), held)


def cast_to(ctx: Context, value: Value, dtype: str, saturate: bool = True, round_mode: str = "up") -> Expr:
    """`value` cast to ONNX element type `dtype` (a unity dtype or a narrow type's
    ml_dtypes name), as the module docstring says; a narrow result is held widened
    and remembered as holding `dtype`.

    Example:
        >>> cast_to(ctx, x, "float8_e4m3fn")  # doctest: +SKIP
    """
    source = ctx.onnx_dtype(value)
    x = ctx.expr(value)
    if source == dtype:
        return x
    if widened_dtype(dtype) == dtype:
        return cast(ctx, x, dtype)
    if dtype in NARROW_INTS:
        out = _to_narrow_int(ctx, x, dtype)
    else:
        f = cast(ctx, x, "float32")
        out = _to_e8m0(ctx, f, saturate, round_mode) if dtype == "float8_e8m0fnu" else round_to_float(ctx, f, dtype, saturate)
    return ctx.hold(out, dtype)


def _cast(ctx: Context, node: NodeView) -> Value:
    from unity.relax.frontend.onnx.importer import elem_dtype

    dtype = elem_dtype(node.attr("to"), f'Cast node "{node.name}" target', narrow=True)
    return cast_to(ctx, node.input(0), dtype, bool(node.attr("saturate", 1)), node.attr("round_mode", "up"))  # type: ignore[arg-type]


def _cast_like(ctx: Context, node: NodeView) -> Value:
    like = ctx.onnx_dtype(node.input(1))
    return cast_to(ctx, node.input(0), like, bool(node.attr("saturate", 1)), node.attr("round_mode", "up"))  # type: ignore[arg-type]


CONVERTERS: dict[str, Converter] = {"Cast": _cast, "CastLike": _cast_like}
