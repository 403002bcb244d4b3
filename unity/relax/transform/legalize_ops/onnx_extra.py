"""Legalize the ops of `relax.op.onnx_extra` (what the ONNX frontend needs beyond the core):
trigonometry, topk, gather_nd, scatter_nd, cumprod, resize, grid_sample, bit shifts,
shape_to_tensor.

Example:
    >>> from unity.relax.op import onnx_extra as X
    >>> X.topk.get_attr("legalize").__name__
    'legalize_topk'
"""

from __future__ import annotations

import sympy

from unity import te, tir, topi
from unity.ir import dtype as dt
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import Call, Expr, ShapeExpr
from unity.relax.op import onnx_extra as X
from unity.relax.op.call_tir import call_tir
from unity.relax.struct_info import ShapeStructInfo, TensorStructInfo
from unity.relax.transform.legalize_ops.common import (
    attrs_rule, call_te, register_legalize, te_rule,
)  # fmt: skip
from unity.relax.utils import sympy_to_tir
from unity.tir.expr import PrimExpr, const


def legalize_resize(bb: BlockBuilder, call: Call) -> Expr:
    """`resize(x, ResizeAttrs)` -> `topi.image.resize` on the listed axes.

    Example:
        >>> legalize_resize(bb, X.resize(x, attrs))  # doctest: +SKIP
    """
    a = call.attrs
    assert isinstance(a, X.ResizeAttrs)
    rank = call.args[0].struct_info.ndim  # type: ignore[attr-defined]  # a tensor
    axes = [ax % rank for ax in a.axes]
    roi = list(a.roi)
    if len(roi) == 2 * rank and len(axes) != rank:
        roi = [roi[ax] for ax in axes] + [roi[rank + ax] for ax in axes]
    scales = list(a.scales) if len(a.scales) == len(axes) else None
    method = "nearest_neighbor" if a.mode == "nearest" else a.mode
    return call_te(
        bb, call, topi.image.resize, call.args[0], axes, list(a.size), method,
        a.coordinate_transformation_mode, a.nearest_mode, a.cubic_coeff_a, a.exclude_outside,
        scales, roi or None, a.extrapolation_value, None, a.antialias,
    )  # fmt: skip


def legalize_grid_sample(bb: BlockBuilder, call: Call) -> Expr:
    """`grid_sample(x, grid, GridSampleAttrs)` -> `topi.image.grid_sample`.

    Example:
        >>> legalize_grid_sample(bb, X.grid_sample(x, grid, X.GridSampleAttrs()))  # doctest: +SKIP
    """
    a = call.attrs
    assert isinstance(a, X.GridSampleAttrs)
    return call_te(bb, call, topi.image.grid_sample, call.args[0], call.args[1], a.mode,
                   a.padding_mode, a.align_corners)  # fmt: skip


def _shift(left: bool) -> object:
    """A TE bit shift with numpy's answer for every amount: outside `[0, bits)` (and, for a
    signed right shift, at `bits - 1`) a left shift gives 0 and a right shift the sign
    fill, where LLVM's shifts would be undefined."""

    def shift(x: te.Tensor, s: te.Tensor) -> te.Tensor:
        def fn(v: PrimExpr, amount: PrimExpr) -> PrimExpr:
            width, signed = dt.bits(v.dtype), not dt.is_uint(v.dtype)
            top = width - 1 if signed and not left else width
            taken = tir.logical_and(amount >= 0, amount < top)
            exponent = tir.select(taken, amount, 0).astype("float64")
            factor = tir.power(const(2.0, "float64"), exponent)
            if left:  # in the unsigned type: the product may set the sign bit
                unsigned = f"uint{width}"
                moved = (v.astype(unsigned) * factor.astype(unsigned)).astype(v.dtype)
                return tir.select(taken, moved, const(0, v.dtype))
            zero = const(0, v.dtype)
            fill = tir.select(v < 0, const(-1, v.dtype), zero) if signed else zero
            return tir.select(taken, v // factor.astype(v.dtype), fill)

        return topi.broadcast.broadcast_binary(x, s, fn, "T_left_shift" if left else "T_right_shift")

    shift.__name__ = "left_shift" if left else "right_shift"
    return shift


def legalize_shape_to_tensor(bb: BlockBuilder, call: Call) -> Expr:
    """`shape_to_tensor(shape)` -> a PrimFunc writing the dims (symbols passed as scalars).

    Example:
        >>> legalize_shape_to_tensor(bb, X.shape_to_tensor(ShapeExpr(("n", 4))))  # doctest: +SKIP
    """
    sinfo = call.args[0].struct_info
    if not isinstance(sinfo, ShapeStructInfo) or sinfo.values is None:
        return call
    dtype = call.attrs.dtype  # type: ignore[union-attr]
    symbols: dict[sympy.Symbol, tir.Var] = {}
    dims = [sympy_to_tir(d, symbols) for d in sinfo.values]

    def body(i: PrimExpr) -> PrimExpr:
        out = const(0, dtype)
        for k in range(len(dims) - 1, -1, -1):
            out = tir.select(tir.eq(i, k), dims[k].astype(dtype), out)
        return out

    tensor = te.compute((len(dims),), body, name="T_shape")
    names = sorted(symbols, key=str)
    prim = te.create_prim_func([tensor, *(symbols[s] for s in names)])
    gv = bb.add_func(prim, "shape_to_tensor")
    out = TensorStructInfo((len(dims),), dtype)
    return call_tir(gv, [], out, tir_vars=ShapeExpr(tuple(names)) if names else None)


for _name in ("asin", "acos", "atan"):
    register_legalize(getattr(X, _name), te_rule(getattr(topi, _name)))
register_legalize(X.topk, attrs_rule(
    topi.topk, lambda a: {"k": a.k, "axis": a.axis, "largest": a.largest}))
register_legalize(X.gather_nd, attrs_rule(topi.gather_nd, lambda a: {"batch_dims": a.batch_dims}))
register_legalize(X.scatter_nd, attrs_rule(topi.scatter_nd, lambda a: {"reduction": a.reduction}))
register_legalize(X.cumprod, attrs_rule(
    topi.cumprod, lambda a: {"axis": a.axis, "exclusive": a.exclusive, "reverse": a.reverse}))
register_legalize(X.resize, legalize_resize)
register_legalize(X.grid_sample, legalize_grid_sample)
register_legalize(X.left_shift, te_rule(_shift(left=True)))  # type: ignore[arg-type]  # a TE fn
register_legalize(X.right_shift, te_rule(_shift(left=False)))  # type: ignore[arg-type]  # a TE fn
register_legalize(X.bitwise_xor, te_rule(topi.bitwise_xor))
register_legalize(X.shape_to_tensor, legalize_shape_to_tensor)
