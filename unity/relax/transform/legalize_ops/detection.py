"""Legalize the ops of `relax.op.detection`: `roi_align` -> `topi.image.roi_align`,
`deform_conv2d` -> `topi.nn.deform_conv2d`.

Example:
    >>> from unity.relax.op import detection as D
    >>> D.roi_align.get_attr("legalize").__name__
    'legalize_roi_align'
"""

from __future__ import annotations

from unity import topi
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import Call, Expr
from unity.relax.op import detection as D
from unity.relax.transform.legalize_ops.common import call_te, register_legalize


def legalize_roi_align(bb: BlockBuilder, call: Call) -> Expr:
    """`roi_align(x, rois, batch_indices, RoiAlignAttrs)` -> `topi.image.roi_align`.

    Example:
        >>> legalize_roi_align(bb, D.roi_align(x, rois, idx, D.RoiAlignAttrs()))  # doctest: +SKIP
    """
    a = call.attrs
    assert isinstance(a, D.RoiAlignAttrs)
    return call_te(bb, call, topi.image.roi_align, *call.args, a.output_size, a.spatial_scale,
                   a.sampling_ratio, a.mode, a.half_pixel)  # fmt: skip


def legalize_deform_conv2d(bb: BlockBuilder, call: Call) -> Expr:
    """`deform_conv2d(x, w, offset[, mask], DeformConv2DAttrs)` -> `topi.nn.deform_conv2d`.

    Example:
        >>> legalize_deform_conv2d(bb, D.deform_conv2d(x, w, off, None, attrs))  # doctest: +SKIP
    """
    a = call.attrs
    assert isinstance(a, D.DeformConv2DAttrs)
    x, w, offset, *mask = call.args
    return call_te(bb, call, topi.nn.deform_conv2d, x, w, offset, mask[0] if mask else None,
                   a.strides, a.padding, a.dilation, a.groups, a.offset_groups)  # fmt: skip


register_legalize(D.roi_align, legalize_roi_align)
register_legalize(D.deform_conv2d, legalize_deform_conv2d)
