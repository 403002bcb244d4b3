"""RoiAlign and DeformConv: attributes and input shapes checked, then one op each.

RoiAlign: opset 10 has no ``coordinate_transformation_mode`` and behaves as opset 16's
``output_half_pixel`` (no half-pixel shift); opset 16 defaults to ``half_pixel``.
DeformConv: 2-D only (a ``deform_conv2d`` op), its bias added after.

Example:
    >>> sorted(CONVERTERS)
    ['DeformConv', 'RoiAlign']
"""

from __future__ import annotations

from unity.relax import op as R
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


def _deform_conv(ctx: Context, node: NodeView) -> Value:
    x, w, offset = (ctx.expr(node.input(i)) for i in range(3))
    if ctx.ndim(x) != 4:
        raise ctx.fail(f"supports 2-D images only (X of rank 4), got X of rank {ctx.ndim(x)}")
    kernel = [int(d) for d in ctx.shape(w)[2:] if d.is_number]
    if node.attr("kernel_shape") is not None and list(node.attr("kernel_shape")) != kernel:
        raise ctx.fail(f"has kernel_shape {list(node.attr('kernel_shape'))}, but W's kernel is "
                       f"{[str(d) for d in ctx.shape(w)[2:]]}")  # fmt: skip
    attrs = D.DeformConv2DAttrs(
        _ints(ctx, node, "strides", [1, 1]), _ints(ctx, node, "pads", [0, 0, 0, 0]),
        _ints(ctx, node, "dilations", [1, 1]), node.attr("group", 1), node.attr("offset_group", 1),
    )  # fmt: skip
    mask = node.input(4)
    out = ctx.emit(D.deform_conv2d(x, w, offset, None if mask is None else ctx.expr(mask), attrs))
    bias = node.input(3)
    if bias is None:
        return out
    return ctx.emit(R.add(out, ctx.emit(R.reshape(ctx.expr(bias), [-1, 1, 1]))))


def _ints(ctx: Context, node: NodeView, name: str, default: list[int]) -> tuple[int, ...]:
    values = [int(v) for v in node.attr(name, default)]
    if len(values) != len(default) or min(values) < (0 if name == "pads" else 1):
        least = "0" if name == "pads" else "1"
        raise ctx.fail(f"needs {len(default)} {name} of at least {least}, got {values}")
    return tuple(values)


CONVERTERS: dict[str, Converter] = {"DeformConv": _deform_conv, "RoiAlign": _roi_align}
