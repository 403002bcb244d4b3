"""RoiAlign: attributes and input shapes checked, then one `roi_align` op.

Opset 10 has no ``coordinate_transformation_mode`` and behaves as opset 16's
``output_half_pixel`` (no half-pixel shift); opset 16 defaults to ``half_pixel``.

Example:
    >>> sorted(CONVERTERS)
    ['RoiAlign']
"""

from __future__ import annotations

from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter
from unity.relax.op import detection as D

_COORDINATE_MODES = ("half_pixel", "output_half_pixel")


def _roi_align(ctx: Context, node: NodeView) -> Value:
    x, rois, idx = (ctx.expr(node.input(i)) for i in range(3))
    _check_inputs(ctx, x, rois, idx)
    mode = node.attr("mode", "avg")
    if mode not in ("avg", "max"):
        raise ctx.fail(f"has mode {mode!r}; allowed: avg, max")
    size = (node.attr("output_height", 1), node.attr("output_width", 1))
    if min(size) < 1:
        raise ctx.fail(f"needs output_height and output_width >= 1, got {size[0]} and {size[1]}")
    ratio = node.attr("sampling_ratio", 0)
    if ratio < 0:
        raise ctx.fail(f"needs sampling_ratio >= 0 (0: adaptive), got {ratio}")
    attrs = D.RoiAlignAttrs(size, float(node.attr("spatial_scale", 1.0)), ratio, mode,
                            _half_pixel(ctx, node))  # fmt: skip
    return ctx.emit(D.roi_align(x, rois, idx, attrs))


def _half_pixel(ctx: Context, node: NodeView) -> bool:
    if node.opset < 16:
        return False
    mode = node.attr("coordinate_transformation_mode", "half_pixel")
    if mode not in _COORDINATE_MODES:
        raise ctx.fail(f"has coordinate_transformation_mode {mode!r}; "
                       f"allowed: {', '.join(_COORDINATE_MODES)}")  # fmt: skip
    return mode == "half_pixel"


def _check_inputs(ctx: Context, x: Value, rois: Value, idx: Value) -> None:
    for value, what in ((x, "X"), (rois, "rois")):
        dtype = ctx.dtype(value)
        if not dtype.startswith(("float", "bfloat")):
            raise ctx.fail(f"expects a float {what}, got {dtype}")
    if not ctx.dtype(idx).startswith("int"):
        raise ctx.fail(f"expects integer batch_indices, got {ctx.dtype(idx)}")
    expected = ((x, 4, "X of shape (N, C, H, W)"), (rois, 2, "rois of shape (num_rois, 4)"),
                (idx, 1, "batch_indices of shape (num_rois,)"))  # fmt: skip
    for value, rank, what in expected:
        if ctx.ndim(value) != rank:
            raise ctx.fail(f"expects {what}, got rank {ctx.ndim(value)}")
    width, count, n_idx = ctx.shape(rois)[1], ctx.shape(rois)[0], ctx.shape(idx)[0]
    if width.is_number and int(width) != 4:
        raise ctx.fail(f"expects rois of shape (num_rois, 4), got (num_rois, {width})")
    if count.is_number and n_idx.is_number and int(count) != int(n_idx):
        raise ctx.fail(f"expects one batch index per roi, got {count} rois and {n_idx} indices")


CONVERTERS: dict[str, Converter] = {"RoiAlign": _roi_align}
