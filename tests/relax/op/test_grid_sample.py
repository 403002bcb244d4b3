"""Struct info of `grid_sample`: output (N, C, *grid's point dims); errors name the op."""

import pytest

from unity.ir.diagnostics import DiagnosticError
from unity.relax.op.onnx_extra import GridSampleAttrs, grid_sample

from .helpers import infer, shape_of, tensor


def test_output_takes_batch_and_channels_from_input_and_points_from_grid():
    x, grid = tensor("x", ("n", 3, "h", "w")), tensor("grid", ("n", 5, 6, 2))
    assert shape_of(grid_sample(x, grid, GridSampleAttrs())) == ("n", "3", "5", "6")
    x3, grid3 = tensor("x", (1, 2, 4, 4, 4), "float16"), tensor("grid", (1, 2, 3, 5, 3))
    sinfo = infer(grid_sample(x3, grid3, GridSampleAttrs("nearest", "border", True)))
    assert sinfo.shape == (1, 2, 2, 3, 5) and sinfo.dtype == "float16"


def test_bad_grid_or_attributes_raise_naming_the_op():
    x = tensor("x", (1, 3, 4, 4))
    with pytest.raises(DiagnosticError, match="needs a grid of 2 coordinates per point"):
        infer(grid_sample(x, tensor("grid", (1, 5, 5, 3)), GridSampleAttrs()))
    with pytest.raises(DiagnosticError, match="got ranks 4 and 3"):
        infer(grid_sample(x, tensor("grid", (1, 5, 2)), GridSampleAttrs()))
    with pytest.raises(DiagnosticError, match="has no mode 'bilinear'"):
        infer(grid_sample(x, tensor("grid", (1, 5, 5, 2)), GridSampleAttrs("bilinear")))
    with pytest.raises(DiagnosticError, match="expects a float grid, got int64"):
        infer(grid_sample(x, tensor("grid", (1, 5, 5, 2), "int64"), GridSampleAttrs()))
