"""RoiAlign through `from_onnx`: opsets 10 and 16, adaptive sampling, dynamic rois, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from unity.relax.frontend.onnx import OnnxImportError, from_onnx

from .onnx_helpers import FLOAT, INT64, model, run_unity, tensor

RNG = np.random.default_rng(0)


def _roi_align_model(x_shape, n_rois, out_shape, opset=16, **attrs):
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], name="ra", **attrs)
    inputs = [tensor("x", FLOAT, x_shape), tensor("rois", FLOAT, [n_rois, 4]),
              tensor("idx", INT64, [n_rois])]  # fmt: skip
    return model([node], inputs, [tensor("y", FLOAT, out_shape)], opset=opset)


def _rois(n: int) -> np.ndarray:
    corners = RNG.uniform(-3, 12, (n, 2, 2))
    return np.concatenate([corners.min(1), corners.max(1)], axis=1).astype("float32")


def _check_against_reference(proto, x, rois, idx, reference=None):
    feeds = {"x": x, "rois": rois, "idx": idx}
    want = ReferenceEvaluator(reference or proto).run(None, feeds)[0]
    (got,) = run_unity(from_onnx(proto), x, rois, idx)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["avg", "max"])
def test_opset16_adaptive_sampling_matches_the_reference(mode):
    proto = _roi_align_model([2, 3, 8, 9], 5, [5, 3, 3, 2], mode=mode, output_height=3,
                             output_width=2, spatial_scale=0.75)  # fmt: skip
    x = RNG.standard_normal((2, 3, 8, 9)).astype("float32")
    _check_against_reference(proto, x, _rois(5), np.array([0, 1, 0, 1, 1], np.int64))


def test_opset10_has_no_half_pixel_shift():
    attrs = {"output_height": 2, "output_width": 2, "sampling_ratio": 2}
    proto = _roi_align_model([1, 2, 6, 6], 4, [4, 2, 2, 2], opset=10, **attrs)
    reference = _roi_align_model([1, 2, 6, 6], 4, [4, 2, 2, 2], opset=16,
                                 coordinate_transformation_mode="output_half_pixel", **attrs)
    x = RNG.standard_normal((1, 2, 6, 6)).astype("float32")
    _check_against_reference(proto, x, _rois(4), np.zeros(4, np.int64), reference)


def test_dynamic_number_of_rois():
    proto = _roi_align_model([1, 2, 6, 6], "k", ["k", 2, 2, 2], output_height=2, output_width=2)
    mod = from_onnx(proto)
    assert str(mod["main"].ret_struct_info.shape) == "(k, 2, 2, 2)"
    x = RNG.standard_normal((1, 2, 6, 6)).astype("float32")
    for k in (1, 4):
        _check_against_reference(proto, x, _rois(k), np.zeros(k, np.int64))


def test_dynamic_image_size_with_adaptive_sampling():
    # the window of the adaptive grid is (H + 4) x (W + 4): symbolic here
    proto = _roi_align_model([1, 2, "h", "w"], 3, [3, 2, 2, 3], mode="max", output_height=2,
                             output_width=3)  # fmt: skip
    rois = np.array([[0, 0, 5, 4], [-10, -8, 20, 30], [1, 1, 3, 2]], np.float32)
    for h, w in ((5, 6), (9, 4)):
        x = RNG.standard_normal((1, 2, h, w)).astype("float32")
        _check_against_reference(proto, x, rois, np.zeros(3, np.int64))


def test_bad_mode_or_rois_name_the_node():
    proto = _roi_align_model([1, 2, 6, 6], 3, [3, 2, 1, 1], mode="sum")
    with pytest.raises(OnnxImportError, match=r'RoiAlign node "ra": has mode \'sum\'; allowed'):
        from_onnx(proto)
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], name="ra")
    inputs = [tensor("x", FLOAT, [1, 2, 6, 6]), tensor("rois", FLOAT, [3, 5]),
              tensor("idx", INT64, [3])]  # fmt: skip
    proto = model([node], inputs, [tensor("y", FLOAT, [3, 2, 1, 1])], opset=16)
    message = r'RoiAlign node "ra": expects rois of shape \(num_rois, 4\), got \(num_rois, 5\)'
    with pytest.raises(OnnxImportError, match=message):
        from_onnx(proto)
