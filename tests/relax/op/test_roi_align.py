"""Struct info of `roi_align`: output (R, C, output_height, output_width); errors name the op."""

import pytest

from unity.ir.diagnostics import DiagnosticError
from unity.relax.op.detection import RoiAlignAttrs, roi_align

from .helpers import infer, shape_of, tensor


def test_output_takes_rois_and_channels_and_the_output_size():
    x, rois = tensor("x", ("n", 3, "h", "w")), tensor("r", ("k", 4))
    idx = tensor("i", ("k",), "int64")
    assert shape_of(roi_align(x, rois, idx, RoiAlignAttrs((2, 5)))) == ("k", "3", "2", "5")
    x16 = tensor("x", (1, 2, 4, 4), "float16")
    sinfo = infer(roi_align(x16, tensor("r", (3, 4)), tensor("i", (3,), "int32"), RoiAlignAttrs()))
    assert sinfo.shape == (3, 2, 1, 1) and sinfo.dtype == "float16"


def test_bad_rois_or_attributes_raise_naming_the_op():
    x, idx = tensor("x", (1, 3, 4, 4)), tensor("i", (5,), "int64")
    with pytest.raises(DiagnosticError, match=r"expects rois of shape \(R, 4\), got \(R, 5\)"):
        infer(roi_align(x, tensor("r", (5, 5)), idx, RoiAlignAttrs()))
    with pytest.raises(DiagnosticError, match="has no mode 'sum'"):
        infer(roi_align(x, tensor("r", (5, 4)), idx, RoiAlignAttrs(mode="sum")))
    with pytest.raises(DiagnosticError, match="expects integer batch_indices, got float32"):
        infer(roi_align(x, tensor("r", (5, 4)), tensor("i", (5,)), RoiAlignAttrs()))
    with pytest.raises(DiagnosticError, match=r"expects input \(N, C, H, W\), got rank 3"):
        infer(roi_align(tensor("x", (3, 4, 4)), tensor("r", (5, 4)), idx, RoiAlignAttrs()))
