"""DeformConv through `from_onnx`: bias and mask, groups, dynamic batch, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from unity.relax.frontend.onnx import OnnxImportError, from_onnx

from .onnx_helpers import FLOAT, model, run_unity, tensor

RNG = np.random.default_rng(0)


def _deform_model(shapes, out_shape, inputs=("x", "w", "o", "b", "m"), **attrs):
    node = helper.make_node("DeformConv", list(inputs), ["y"], name="dc", **attrs)
    declared = [tensor(k, FLOAT, shapes[k]) for k in inputs if k]
    return model([node], declared, [tensor("y", FLOAT, out_shape)], opset=19)


def _check_against_reference(proto, feeds):
    want = ReferenceEvaluator(proto).run(None, feeds)[0]
    (got,) = run_unity(from_onnx(proto), *feeds.values())
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def _feeds(shapes):
    return {k: RNG.uniform(-1.5, 1.5, s).astype("float32") for k, s in shapes.items()}


def test_bias_mask_groups_and_strides_match_the_reference():
    shapes = {"x": [2, 4, 6, 5], "w": [6, 2, 3, 3], "o": [2, 36, 3, 3], "b": [6],
              "m": [2, 18, 3, 3]}  # fmt: skip
    proto = _deform_model(shapes, [2, 6, 3, 3], group=2, offset_group=2, strides=[2, 2],
                          pads=[1, 1, 1, 1])  # fmt: skip
    _check_against_reference(proto, _feeds(shapes))


def test_without_bias_or_mask_and_a_dynamic_batch():
    shapes = {"x": ["n", 2, 5, 5], "w": [3, 2, 2, 2], "o": ["n", 8, 4, 2]}
    proto = _deform_model(shapes, ["n", 3, 4, 2], inputs=("x", "w", "o"), dilations=[1, 3])
    assert str(from_onnx(proto)["main"].ret_struct_info.shape) == "(n, 3, 4, 2)"
    for n in (1, 3):
        concrete = {k: [n if d == "n" else d for d in s] for k, s in shapes.items()}
        _check_against_reference(proto, _feeds(concrete))


def test_offsets_that_do_not_fit_name_the_node():
    shapes = {"x": [1, 2, 5, 5], "w": [3, 2, 2, 2], "o": [1, 6, 4, 4]}
    proto = _deform_model(shapes, [1, 3, 4, 4], inputs=("x", "w", "o"))
    with pytest.raises(OnnxImportError, match='DeformConv node "dc": .*needs an offset of 8'):
        from_onnx(proto)
    shapes = {"x": [1, 2, 5, 5, 5], "w": [3, 2, 2, 2, 2], "o": [1, 24, 4, 4, 4]}
    proto = _deform_model(shapes, [1, 3, 4, 4, 4], inputs=("x", "w", "o"))
    with pytest.raises(OnnxImportError, match='DeformConv node "dc": supports 2-D images only'):
        from_onnx(proto)
