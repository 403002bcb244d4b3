"""GridSample through `from_onnx`: the opset 16 / 20 spellings, dynamic shapes, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from unity.relax.frontend.onnx import OnnxImportError, from_onnx

from .onnx_helpers import FLOAT, model, run_unity, tensor

RNG = np.random.default_rng(0)


def _grid_sample_model(x_shape, grid_shape, out_shape, opset=22, **attrs):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs", **attrs)
    inputs = [tensor("x", FLOAT, x_shape), tensor("grid", FLOAT, grid_shape)]
    return model([node], inputs, [tensor("y", FLOAT, out_shape)], opset=opset)


def _check_against_reference(proto, x, grid, reference=None):
    want = ReferenceEvaluator(reference or proto).run(None, {"x": x, "grid": grid})[0]
    (got,) = run_unity(from_onnx(proto), x, grid)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_opset16_bicubic_spelling_runs_as_cubic():
    shapes = [1, 2, 4, 5], [1, 3, 3, 2], [1, 2, 3, 3]
    proto = _grid_sample_model(*shapes, opset=16, mode="bicubic", padding_mode="reflection")
    # the reference implementation knows only the opset-20 spelling
    reference = _grid_sample_model(*shapes, mode="cubic", padding_mode="reflection")
    x = RNG.standard_normal((1, 2, 4, 5)).astype("float32")
    grid = RNG.uniform(-1.5, 1.5, (1, 3, 3, 2)).astype("float32")
    _check_against_reference(proto, x, grid, reference)


def test_dynamic_batch_and_image_size():
    proto = _grid_sample_model(["n", 2, "h", "w"], ["n", 3, 4, 2], ["n", 2, 3, 4],
                               mode="linear", padding_mode="border", align_corners=1)  # fmt: skip
    mod = from_onnx(proto)
    assert str(mod["main"].ret_struct_info.shape) == "(n, 2, 3, 4)"
    for n, h, w in ((1, 3, 5), (2, 6, 2)):
        x = RNG.standard_normal((n, 2, h, w)).astype("float32")
        grid = RNG.uniform(-1.3, 1.3, (n, 3, 4, 2)).astype("float32")
        _check_against_reference(proto, x, grid)


def test_grid_of_the_wrong_width_names_the_node():
    proto = _grid_sample_model([1, 2, 4, 5], [1, 3, 3, 3], [1, 2, 3, 3])
    message = (r'GridSample node "gs": expects a grid whose last dim is the number of spatial '
               r"axes of X \(2\), got grid shape \(1, 3, 3, 3\)")
    with pytest.raises(OnnxImportError, match=message):
        from_onnx(proto)


def test_unknown_or_renamed_mode_names_the_node():
    proto = _grid_sample_model([1, 2, 4, 5], [1, 3, 3, 2], [1, 2, 3, 3], mode="bilinear")
    with pytest.raises(OnnxImportError, match=r"GridSample node \"gs\": has mode 'bilinear'; "
                       "opset 22 allows linear, nearest, cubic"):
        from_onnx(proto)
    proto = _grid_sample_model([1, 2, 4, 5], [1, 3, 3, 2], [1, 2, 3, 3], padding_mode="wrap")
    with pytest.raises(OnnxImportError, match="GridSample node \"gs\": has padding_mode 'wrap'"):
        from_onnx(proto)


def test_grid_of_another_rank_or_batch_names_the_node():
    proto = _grid_sample_model([1, 2, 4, 5], [1, 3, 2], [1, 2, 3])
    with pytest.raises(OnnxImportError, match=r'GridSample node "gs": expects a rank-4 grid'):
        from_onnx(proto)
    proto = _grid_sample_model([2, 2, 4, 5], [3, 3, 3, 2], [2, 2, 3, 3])
    with pytest.raises(OnnxImportError, match="one batch size, got 2 and 3"):
        from_onnx(proto)
