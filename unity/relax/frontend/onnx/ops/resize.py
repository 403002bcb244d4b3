"""Resize and Upsample: output sizes resolved at import time (symbolic where the input's
are), then one `resize` op.

Example:
    >>> sorted(CONVERTERS)
    ['Resize', 'Upsample']
"""

from __future__ import annotations

import math

import sympy

from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter
from unity.relax.frontend.onnx.ops.dynamic import run_time_dims
from unity.relax.op import onnx_extra as X
from unity.relax.struct_info import Dim


def _resize(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    shape = list(ctx.shape(x))
    if node.op_type == "Upsample" or node.opset < 11:
        scales_v = node.attr("scales") if node.opset < 9 else ctx.const(node.input(1), "scales")
        roi: list[float] = []
        sizes = None
        scales = [float(s) for s in scales_v]  # type: ignore[union-attr]
    else:
        roi = [] if node.input(1) is None else [float(v) for v in ctx.const(node.input(1), "roi").reshape(-1)]
        scales_in, sizes_in = node.input(2), node.input(3)
        scales = [] if scales_in is None else [float(v) for v in ctx.const(scales_in, "scales").reshape(-1)]
        sizes = None if sizes_in is None else _sizes(ctx, node, sizes_in)
    axes = list(node.attr("axes", range(len(shape))))
    axes = ctx.normalize_axes(axes, len(shape))
    in_sizes = [shape[a] for a in axes]
    if sizes:
        sizes, scales = _apply_policy(ctx, node, in_sizes, sizes)
    else:
        if len(scales) != len(axes):
            raise ctx.fail(f"expects {len(axes)} scales, got {len(scales)}")
        sizes = [_scaled(n, s) for n, s in zip(in_sizes, scales, strict=True)]
    mode = node.attr("mode", "nearest")
    antialias = bool(node.attr("antialias", 0)) and mode in ("linear", "cubic")
    if antialias and not scales and not all(d.is_number for d in (*in_sizes, *sizes)):
        raise ctx.fail(f"needs static lengths or scales for antialias, got {in_sizes} -> {sizes}")
    coord = node.attr("coordinate_transformation_mode", "half_pixel" if node.opset >= 11 else "asymmetric")
    nearest = node.attr("nearest_mode", "round_prefer_floor" if node.opset >= 11 else "floor")
    attrs = X.ResizeAttrs(tuple(axes), tuple(sizes), tuple(scales), mode, coord, nearest,
                          node.attr("cubic_coeff_a", -0.75), bool(node.attr("exclude_outside", 0)),
                          node.attr("extrapolation_value", 0.0), tuple(roi), antialias)  # fmt: skip
    return ctx.emit(X.resize(x, attrs))


def _sizes(ctx: Context, node: NodeView, sizes: Value) -> list[Dim]:
    """The output lengths: computed at run time where need be, but known at import time
    for antialiasing and aspect-ratio policies (which need the scales now)."""
    antialias = node.attr("antialias", 0) and node.attr("mode", "nearest") in ("linear", "cubic")
    if antialias or node.attr("keep_aspect_ratio_policy", "stretch") != "stretch":
        return ctx.dims(sizes, "sizes")
    return run_time_dims(ctx, sizes, "sizes")


def _scaled(size: Dim, scale: float) -> Dim:
    """ONNX's output length ``floor(size * scale)``; a symbolic size times the scale as an
    exact fraction."""
    if size.is_number:
        return sympy.Integer(math.floor(int(size) * scale))
    return sympy.floor(size * sympy.Rational(scale))


def _apply_policy(ctx: Context, node: NodeView, in_sizes: list[Dim],
                  sizes: list[Dim]) -> tuple[list[Dim], list[float]]:  # fmt: skip
    policy = node.attr("keep_aspect_ratio_policy", "stretch")
    if not all(d.is_number for d in (*in_sizes, *sizes)):
        if policy != "stretch":
            raise ctx.fail(f"needs static lengths for keep_aspect_ratio_policy={policy!r}, "
                           f"got {in_sizes} -> {sizes}")
        return sizes, []  # the scales follow from the lengths at run time
    ratios = [int(o) / int(i) for o, i in zip(sizes, in_sizes, strict=True)]
    if policy == "stretch":
        return sizes, ratios
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    out = [sympy.Integer(math.floor(int(i) * scale + 0.5)) for i in in_sizes]
    return out, [scale] * len(in_sizes)


CONVERTERS: dict[str, Converter] = {"Resize": _resize, "Upsample": _resize}
