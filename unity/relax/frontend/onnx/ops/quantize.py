"""Quantization ONNX ops, composed from casts and arithmetic: (De)QuantizeLinear, QLinear*.

8-bit floats (the FP8 QDQ models of NVIDIA's ModelOpt, opset 19+) are held as float32
carrying float8 values (`unity.runtime.narrow`): `QuantizeLinear` to a float8 (or
float4) zero point rounds to that format's grid (and saturates) in float32
(`ops.cast.round_to_float`), so the `DequantizeLinear` after it computes exactly what
a float8 round trip would.  4- and 2-bit integers (int4 weights blocked by
`block_size`) are held as int8 / uint8.

Example:
    >>> sorted(CONVERTERS)[:2]
    ['DequantizeLinear', 'DynamicQuantizeLinear']
"""

from __future__ import annotations

import numpy as np

from unity.relax import op as R
from unity.relax.expr import Expr
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.cast import NARROW_INTS, is_narrow_float, round_to_float
from unity.relax.frontend.onnx.ops.common import Converter, cast, const_like
from unity.runtime.narrow import widened_dtype

_RANGES = {"uint8": (0, 255), "int8": (-128, 127), "uint16": (0, 65535), "int16": (-32768, 32767),
           "int32": (-(2**31), 2**31 - 1), "uint32": (0, 2**32 - 1), **NARROW_INTS}  # fmt: skip
"""Each integer type's range (4- and 2-bit types held widened: `widened_dtype`)."""

def _along(ctx: Context, param: Value, x: Expr, axis: int, block: int) -> Expr:
    """A scale / zero point reshaped (and repeated for blocks) to broadcast against `x`."""
    pshape = ctx.sinfo(param).shape
    ndim = ctx.ndim(x)
    if pshape is None or len(pshape) == 0 or (len(pshape) == 1 and pshape[0] == 1 and block == 0):
        return ctx.expr(param)
    axis = ctx.normalize_axes([axis], ndim)[0]
    if block:
        values = ctx.const(param, "block scale")
        return ctx.expr(np.repeat(values, block, axis=axis)[tuple(slice(0, int(d)) for d in ctx.shape(x))])
    shape = [1] * ndim
    shape[axis] = -1
    return ctx.emit(R.reshape(ctx.expr(param), shape))


def dequantize(ctx: Context, x: Value, scale: Value, zero: Value | None, axis: int = 1, block: int = 0) -> Expr:
    """``(x - zero) * scale`` in the scale's dtype.

    Example:
        >>> dequantize(ctx, q, s, z)  # doctest: +SKIP
    """
    xe = ctx.expr(x)
    dtype = ctx.dtype(scale)
    kind = "float32" if ctx.dtype(x) == "float32" else "int32"  # float8 values: held as float32
    wide = cast(ctx, xe, kind)
    if zero is not None:
        wide = ctx.emit(R.subtract(wide, cast(ctx, _along(ctx, zero, xe, axis, block), kind)))
    return ctx.emit(R.multiply(cast(ctx, wide, dtype), _along(ctx, scale, xe, axis, block)))


def quantize(ctx: Context, x: Expr, scale: Value, zero: Value | None, dtype: str, axis: int = 1,
             block: int = 0, saturate: bool = True) -> Expr:  # fmt: skip
    """``saturate(round(x / scale) + zero)`` as `dtype` (a float8 / float4 `dtype`: ``x /
    scale + zero`` rounded to its grid, as float32; `saturate` as `round_to_float`).

    Example:
        >>> quantize(ctx, y, s, z, "uint8")  # doctest: +SKIP
    """
    if is_narrow_float(dtype):
        y = ctx.emit(R.divide(cast(ctx, x, "float32"), cast(ctx, _along(ctx, scale, x, axis, block), "float32")))
        if zero is not None:
            y = ctx.emit(R.add(y, cast(ctx, _along(ctx, zero, x, axis, block), "float32")))
        return ctx.hold(round_to_float(ctx, y, dtype, saturate), dtype)
    if dtype not in _RANGES:
        raise ctx.fail(f"quantizes to {dtype}, which is not supported")
    scaled = ctx.emit(R.round(ctx.emit(R.divide(x, cast(ctx, _along(ctx, scale, x, axis, block), ctx.dtype(x))))))
    if zero is not None:
        scaled = ctx.emit(R.add(scaled, cast(ctx, _along(ctx, zero, x, axis, block), ctx.dtype(x))))
    lo, hi = _RANGES[dtype]
    return ctx.hold(cast(ctx, ctx.emit(R.clip(scaled, lo, hi)), widened_dtype(dtype)), dtype)


def _quantize_linear(ctx: Context, node: NodeView) -> Value:
    from unity.relax.frontend.onnx.importer import elem_dtype

    x = ctx.expr(node.input(0))
    zero = node.input(2)
    to = node.attr("output_dtype", 0)
    dtype = elem_dtype(to, "output_dtype", narrow=True) if to else ctx.onnx_dtype(zero) if zero is not None else "uint8"
    return quantize(ctx, x, node.input(1), zero, dtype, node.attr("axis", 1), node.attr("block_size", 0),  # type: ignore[arg-type]
                    bool(node.attr("saturate", 1)))  # fmt: skip


def _dequantize_linear(ctx: Context, node: NodeView) -> Value:
    return dequantize(ctx, node.input(0), node.input(1), node.input(2), node.attr("axis", 1),  # type: ignore[arg-type]
                      node.attr("block_size", 0))  # fmt: skip


def _dynamic_quantize(ctx: Context, node: NodeView) -> list[Value]:
    x = ctx.expr(node.input(0))
    zero_f = const_like(ctx, 0, x)
    hi = ctx.emit(R.maximum(ctx.emit(R.max(x)), zero_f))
    lo = ctx.emit(R.minimum(ctx.emit(R.min(x)), zero_f))
    scale = ctx.emit(R.divide(ctx.emit(R.subtract(hi, lo)), const_like(ctx, 255, x)))
    zp_f = ctx.emit(R.clip(ctx.emit(R.round(ctx.emit(R.divide(ctx.emit(R.negative(lo)), scale)))), 0, 255))
    zp = cast(ctx, zp_f, "uint8")
    return [quantize(ctx, x, scale, zp, "uint8"), scale, zp]


def _qlinear_matmul(ctx: Context, node: NodeView) -> Value:
    a = dequantize(ctx, node.input(0), node.input(1), node.input(2), axis=-1)  # type: ignore[arg-type]
    b = dequantize(ctx, node.input(3), node.input(4), node.input(5), axis=-1)  # type: ignore[arg-type]
    out = ctx.emit(R.matmul(cast(ctx, a, "float32"), cast(ctx, b, "float32")))
    zero = node.input(7)
    return quantize(ctx, out, node.input(6), zero, ctx.dtype(zero) if zero is not None else "uint8")  # type: ignore[arg-type]


def _qlinear_conv(ctx: Context, node: NodeView) -> Value:
    from unity.relax.frontend.onnx.context import NodeView as View
    from unity.relax.frontend.onnx.ops.conv_pool import _conv_core

    x = dequantize(ctx, node.input(0), node.input(1), node.input(2))  # type: ignore[arg-type]
    w = dequantize(ctx, node.input(3), node.input(4), node.input(5), axis=0)  # type: ignore[arg-type]
    bias = node.input(8)
    conv_node = View(node.name, "Conv", [None, None, None], node.attrs, node.opset, 1)
    out = _conv_core(ctx, conv_node, x, w, None)
    if bias is not None:
        scale = ctx.emit(R.multiply(ctx.expr(node.input(1)), ctx.expr(node.input(4))))
        b = ctx.emit(R.multiply(cast(ctx, ctx.expr(bias), ctx.dtype(scale)), scale))
        out = ctx.emit(R.add(out, ctx.emit(R.reshape(b, [-1] + [1] * (ctx.ndim(out) - 2)))))
    zero = node.input(7)
    return quantize(ctx, out, node.input(6), zero, ctx.dtype(zero) if zero is not None else "uint8")  # type: ignore[arg-type]


CONVERTERS: dict[str, Converter] = {
    "QuantizeLinear": _quantize_linear, "DequantizeLinear": _dequantize_linear,
    "DynamicQuantizeLinear": _dynamic_quantize, "QLinearMatMul": _qlinear_matmul,
    "QLinearConv": _qlinear_conv,
}  # fmt: skip
