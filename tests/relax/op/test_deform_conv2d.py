"""Struct info of `deform_conv2d`: output (N, O, *offset's spatial dims); errors name the op."""

import pytest

from unity.ir.diagnostics import DiagnosticError
from unity.relax.op.detection import DeformConv2DAttrs, deform_conv2d

from .helpers import infer, shape_of, tensor


def test_output_takes_batch_from_input_channels_from_weight_and_size_from_offset():
    x, w = tensor("x", ("n", 4, 6, 6)), tensor("w", (8, 2, 3, 3))
    attrs = DeformConv2DAttrs(padding=(1, 1, 1, 1), groups=2, offset_groups=2)
    offset, mask = tensor("o", ("n", 36, 6, 6)), tensor("m", ("n", 18, 6, 6))
    assert shape_of(deform_conv2d(x, w, offset, mask, attrs)) == ("n", "8", "6", "6")
    sinfo = infer(deform_conv2d(tensor("x", (1, 2, 5, 5), "float16"), tensor("w", (3, 2, 2, 2)),
                                tensor("o", (1, 8, 2, 4)), None, DeformConv2DAttrs((2, 1))))
    assert sinfo.shape == (1, 3, 2, 4) and sinfo.dtype == "float16"


def test_bad_groups_offsets_or_mask_raise_naming_the_op():
    x, w, offset = tensor("x", (1, 4, 6, 6)), tensor("w", (8, 4, 3, 3)), tensor("o", (1, 18, 4, 4))
    with pytest.raises(DiagnosticError, match="do not split into 2 groups of 4 inputs"):
        infer(deform_conv2d(x, w, offset, None, DeformConv2DAttrs(groups=2)))
    with pytest.raises(DiagnosticError, match="needs groups, offset groups, .* got 1, 0,"):
        infer(deform_conv2d(x, w, offset, None, DeformConv2DAttrs(offset_groups=0)))
    with pytest.raises(DiagnosticError, match="needs an offset of 36 channels"):
        infer(deform_conv2d(x, w, offset, None, DeformConv2DAttrs(offset_groups=2)))
    with pytest.raises(DiagnosticError, match="offset of spatial size 5 on axis 2; .* has 4"):
        infer(deform_conv2d(x, w, tensor("o", (1, 18, 5, 4)), None, DeformConv2DAttrs()))
    with pytest.raises(DiagnosticError, match=r"needs a mask of shape \(1, 9, 4, 4\)"):
        infer(deform_conv2d(x, w, offset, tensor("m", (1, 18, 4, 4)), DeformConv2DAttrs()))
