"""Detection ops the ONNX frontend needs (torchvision.ops' family): `roi_align` and
`deform_conv2d`, builders and struct-info inference.

Their legalization rules live in `relax.transform.legalize_ops.detection`.

Example:
    >>> from unity import relax
    >>> x = relax.Var("x", relax.TensorStructInfo((1, 3, 8, 8), "float32"))
    >>> rois = relax.Var("rois", relax.TensorStructInfo(("r", 4), "float32"))
    >>> idx = relax.Var("idx", relax.TensorStructInfo(("r",), "int64"))
    >>> roi_align(x, rois, idx, RoiAlignAttrs((2, 2))).op.name
    'relax.roi_align'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import RelaxOp, fail, register_op, tensor_arg, with_shape
from unity.relax.struct_info import StructInfo, TensorStructInfo


@dataclass(frozen=True, slots=True)
class RoiAlignAttrs(Attrs):
    """Output size, scale, samples per bin, pooling mode and roi shift of ONNX RoiAlign.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((1, 3, 8, 8), "float32"))
        >>> rois = relax.Var("rois", relax.TensorStructInfo((5, 4), "float32"))
        >>> idx = relax.Var("idx", relax.TensorStructInfo((5,), "int64"))
        >>> _infer_roi_align(roi_align(x, rois, idx, RoiAlignAttrs((2, 3)))).shape
        (5, 3, 2, 3)
    """

    output_size: tuple[int, int] = (1, 1)
    spatial_scale: float = 1.0
    sampling_ratio: int = 0
    mode: str = "avg"
    half_pixel: bool = True


def _infer_roi_align(call: Call) -> StructInfo:
    x, rois = tensor_arg(call, 0, "input"), tensor_arg(call, 1, "rois")
    idx = tensor_arg(call, 2, "batch_indices")
    attrs = call.attrs
    assert isinstance(attrs, RoiAlignAttrs)
    if attrs.mode not in ("avg", "max"):
        raise fail(call, f"has no mode {attrs.mode!r} (avg or max)")
    if attrs.sampling_ratio < 0 or min(attrs.output_size) < 1:
        raise fail(call, f"needs output sizes >= 1 and a sampling ratio >= 0, got "
                         f"{attrs.output_size} and {attrs.sampling_ratio}")  # fmt: skip
    for sinfo, what in ((x, "input"), (rois, "rois")):
        if not sinfo.dtype.startswith(("float", "bfloat")):
            raise fail(call, f"expects a float {what}, got {sinfo.dtype}")
    if not idx.dtype.startswith(("int", "uint")):
        raise fail(call, f"expects integer batch_indices, got {idx.dtype}")
    for sinfo, rank, what in ((x, 4, "input (N, C, H, W)"), (rois, 2, "rois (R, 4)"),
                              (idx, 1, "batch_indices (R,)")):  # fmt: skip
        if sinfo.ndim not in (-1, rank):
            raise fail(call, f"expects {what}, got rank {sinfo.ndim}")
    if x.shape is None or rois.shape is None:
        return TensorStructInfo(None, x.dtype, 4)
    if rois.shape[1].is_number and int(rois.shape[1]) != 4:
        raise fail(call, f"expects rois of shape (R, 4), got (R, {rois.shape[1]})")
    return with_shape(x, [rois.shape[0], x.shape[1], *attrs.output_size])


@register_op("roi_align", infer=_infer_roi_align)
def roi_align(op: RelaxOp, x: Expr, rois: Expr, batch_indices: Expr, attrs: RoiAlignAttrs) -> Call:
    """Pool each roi of `x` to a fixed grid of bins (ONNX RoiAlign semantics).

    Example:
        >>> roi_align(x, rois, idx, RoiAlignAttrs((7, 7), 0.25)).attrs.mode  # doctest: +SKIP
        'avg'
    """
    return Call(op, (x, rois, batch_indices), attrs)


@dataclass(frozen=True, slots=True)
class DeformConv2DAttrs(Attrs):
    """Strides, padding (top, left, bottom, right), dilation and the two group counts.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((1, 4, 6, 6), "float32"))
        >>> w = relax.Var("w", relax.TensorStructInfo((8, 4, 3, 3), "float32"))
        >>> off = relax.Var("off", relax.TensorStructInfo((1, 18, 4, 4), "float32"))
        >>> _infer_deform_conv2d(deform_conv2d(x, w, off, None, DeformConv2DAttrs())).shape
        (1, 8, 4, 4)
    """

    strides: tuple[int, int] = (1, 1)
    padding: tuple[int, int, int, int] = (0, 0, 0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1
    offset_groups: int = 1


def _infer_deform_conv2d(call: Call) -> StructInfo:
    x, w = tensor_arg(call, 0, "input"), tensor_arg(call, 1, "weight")
    offset = tensor_arg(call, 2, "offset")
    attrs = call.attrs
    assert isinstance(attrs, DeformConv2DAttrs)
    if min(attrs.groups, attrs.offset_groups, *attrs.strides, *attrs.dilation) < 1:
        raise fail(call, f"needs groups, offset groups, strides and dilation >= 1, got "
                         f"{attrs.groups}, {attrs.offset_groups}, {attrs.strides} and "
                         f"{attrs.dilation}")  # fmt: skip
    args = [x, w, offset, *(tensor_arg(call, 3, "mask") for _ in call.args[3:])]
    for sinfo in args:
        if not sinfo.dtype.startswith(("float", "bfloat")):
            raise fail(call, f"expects float tensors, got {sinfo.dtype}")
        if sinfo.ndim not in (-1, 4):
            raise fail(call, f"expects 4-D input, weight, offset and mask, got rank {sinfo.ndim}")
    if x.shape is None or w.shape is None or offset.shape is None:
        return TensorStructInfo(None, x.dtype, 4)
    _check_conv_shapes(call, x.shape, w.shape, offset.shape, attrs)
    if len(args) == 4 and args[3].shape is not None:
        _check_mask(call, args[3].shape, offset.shape)
    return with_shape(x, [x.shape[0], w.shape[0], *offset.shape[2:]])


def _check_conv_shapes(call: Call, x: tuple[Any, ...], w: tuple[Any, ...],
                       offset: tuple[Any, ...], attrs: DeformConv2DAttrs) -> None:  # fmt: skip
    """Channels that split into the groups, and an offset of the convolution's output size."""
    dims = [x[1], *w, offset[1]]
    if not all(d.is_number for d in dims):
        raise fail(call, "needs static channel counts and kernel sizes")
    channels, (out_channels, per_group, kh, kw) = int(x[1]), (int(d) for d in w)
    if channels != per_group * attrs.groups or out_channels % attrs.groups:
        raise fail(call, f"has {channels} input and {out_channels} output channels, which do not "
                         f"split into {attrs.groups} groups of {per_group} inputs")  # fmt: skip
    taps = attrs.offset_groups * kh * kw
    if channels % attrs.offset_groups or int(offset[1]) != 2 * taps:
        raise fail(call, f"needs an offset of {2 * taps} channels and {channels} channels "
                         f"divisible by {attrs.offset_groups} offset groups, got offset "
                         f"channels {offset[1]}")  # fmt: skip
    for axis in (0, 1):
        size, got = x[2 + axis], offset[2 + axis]
        if not (size.is_number and got.is_number):
            continue
        span = (int((kh, kw)[axis]) - 1) * attrs.dilation[axis] + 1
        pads = attrs.padding[axis] + attrs.padding[axis + 2]
        want = (int(size) + pads - span) // attrs.strides[axis] + 1
        if int(got) != want:
            raise fail(call, f"has an offset of spatial size {got} on axis {2 + axis}; the "
                             f"convolution's output has {want}")  # fmt: skip


def _check_mask(call: Call, mask: tuple[Any, ...], offset: tuple[Any, ...]) -> None:
    """A mask of one channel per offset pair and the offset's batch and spatial size."""
    want = (offset[0], offset[1] / 2, *offset[2:])
    for got, expected in zip(mask, want, strict=True):
        if got.is_number and expected.is_number and got != expected:
            dims = ", ".join(str(d) for d in want)
            raise fail(call, f"needs a mask of shape ({dims}), half the offset's channels, "
                             f"got ({', '.join(str(d) for d in mask)})")  # fmt: skip


@register_op("deform_conv2d", infer=_infer_deform_conv2d)
def deform_conv2d(op: RelaxOp, x: Expr, weight: Expr, offset: Expr, mask: Expr | None,
                  attrs: DeformConv2DAttrs) -> Call:  # fmt: skip
    """Deformable 2-D convolution, NCHW / OIHW, no bias (ONNX DeformConv semantics).

    Example:
        >>> deform_conv2d(x, w, off, None, DeformConv2DAttrs()).attrs.groups  # doctest: +SKIP
        1
    """
    args = (x, weight, offset) if mask is None else (x, weight, offset, mask)
    return Call(op, args, attrs)
