"""Detection ops the ONNX frontend needs: `roi_align` (builder and struct-info inference).

Its legalization rule lives in `relax.transform.legalize_ops.detection`.

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
