"""Resize and Upsample: output sizes resolved at import time, then one `resize` op.

Example:
    >>> sorted(CONVERTERS)
    ['Resize', 'Upsample']
"""

from __future__ import annotations

import math

from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter
from unity.relax.op import onnx_extra as X


def _static(ctx: Context, x: Value) -> list[int]:
    shape = ctx.shape(x)
    if not all(d.is_number for d in shape):
        raise ctx.fail(f"needs a static input shape, got {list(shape)}")
    return [int(d) for d in shape]


def _resize(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    shape = _static(ctx, x)
    if node.op_type == "Upsample" or node.opset < 11:
        scales_v = node.attr("scales") if node.opset < 9 else ctx.const(node.input(1), "scales")
        roi: list[float] = []
        sizes = None
        scales = [float(s) for s in scales_v]  # type: ignore[union-attr]
    else:
        roi = [] if node.input(1) is None else [float(v) for v in ctx.const(node.input(1), "roi").reshape(-1)]
        scales_in, sizes_in = node.input(2), node.input(3)
        scales = [] if scales_in is None else [float(v) for v in ctx.const(scales_in, "scales").reshape(-1)]
        sizes = None if sizes_in is None else ctx.ints(sizes_in, "sizes")
    axes = list(node.attr("axes", range(len(shape))))
    axes = ctx.normalize_axes(axes, len(shape))
    in_sizes = [shape[a] for a in axes]
    if sizes:
        sizes, scales = _apply_policy(ctx, node, in_sizes, sizes)
    else:
        if len(scales) != len(axes):
            raise ctx.fail(f"expects {len(axes)} scales, got {len(scales)}")
        sizes = [math.floor(n * s) for n, s in zip(in_sizes, scales, strict=True)]
    mode = node.attr("mode", "nearest")
    coord = node.attr("coordinate_transformation_mode", "half_pixel" if node.opset >= 11 else "asymmetric")
    nearest = node.attr("nearest_mode", "round_prefer_floor" if node.opset >= 11 else "floor")
    attrs = X.ResizeAttrs(tuple(axes), tuple(sizes), tuple(scales), mode, coord, nearest,
                          node.attr("cubic_coeff_a", -0.75), bool(node.attr("exclude_outside", 0)),
                          node.attr("extrapolation_value", 0.0), tuple(roi),
                          bool(node.attr("antialias", 0)) and mode in ("linear", "cubic"))  # fmt: skip
    return ctx.emit(X.resize(x, attrs))


def _apply_policy(ctx: Context, node: NodeView, in_sizes: list[int], sizes: list[int]) -> tuple[list[int], list[float]]:
    policy = node.attr("keep_aspect_ratio_policy", "stretch")
    if policy == "stretch":
        return sizes, [o / i for o, i in zip(sizes, in_sizes, strict=True)]
    ratios = [o / i for o, i in zip(sizes, in_sizes, strict=True)]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    out = [math.floor(i * scale + 0.5) for i in in_sizes]
    return out, [scale] * len(in_sizes)


CONVERTERS: dict[str, Converter] = {"Resize": _resize, "Upsample": _resize}
