"""3-D convolution (video and volume models) through `from_onnx`: one 2-D conv over
stacked depth taps, against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import unity
from unity import relax
from unity.relax.frontend.onnx import OnnxImportError, from_onnx

from .onnx_helpers import FLOAT, model, run_ort, run_unity, tensor

RNG = np.random.default_rng(3)

CASES = [  # input shape, weight shape, attributes
    ((1, 4, 6, 7, 5), (8, 4, 3, 3, 3), {"pads": [1, 1, 1, 1, 1, 1]}),
    ((2, 6, 9, 8, 8), (4, 3, 3, 1, 2), {"group": 2, "strides": [2, 1, 2], "pads": [0, 1, 1, 2, 0, 0]}),
    ((1, 3, 8, 6, 6), (5, 3, 2, 3, 3), {"dilations": [3, 1, 2], "pads": [2, 0, 1, 1, 0, 2]}),
    ((1, 3, 7, 6, 5), (2, 3, 3, 3, 2), {"strides": [2, 2, 1], "auto_pad": "SAME_UPPER"}),
    ((1, 4, 5, 5, 5), (4, 1, 3, 3, 3), {"group": 4, "strides": [1, 2, 2]}),  # depthwise
]  # fmt: skip


@pytest.mark.parametrize(("xshape", "wshape", "attrs"), CASES)
def test_conv3d_matches_onnxruntime(xshape, wshape, attrs):
    w = RNG.standard_normal(wshape).astype("float32")
    b = RNG.standard_normal(wshape[0]).astype("float32")
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)
    proto = model([node], [tensor("x", FLOAT, xshape)], [tensor("y", FLOAT, [None] * 5)], {"w": w, "b": b})
    x = RNG.standard_normal(xshape).astype("float32")
    (want,) = run_ort(proto, {"x": x})
    (got,) = run_unity(from_onnx(proto), x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_conv3d_over_a_symbolic_batch_and_size():
    w = RNG.standard_normal((6, 3, 3, 3, 3)).astype("float32")
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1] * 6)
    proto = model([node], [tensor("x", FLOAT, ["n", 3, 4, "h", "w"])], [tensor("y", FLOAT, [None] * 5)], {"w": w})
    vm = relax.VirtualMachine(unity.compile(from_onnx(proto)), unity.cpu())
    for shape in ((1, 3, 4, 5, 6), (3, 3, 4, 9, 7)):
        x = RNG.standard_normal(shape).astype("float32")
        (want,) = run_ort(proto, {"x": x})
        np.testing.assert_allclose(vm["main"](x).numpy(), want, rtol=1e-4, atol=1e-4)


def test_conv3d_needs_a_static_depth():
    w = RNG.standard_normal((2, 3, 3, 3, 3)).astype("float32")
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="c3")
    proto = model([node], [tensor("x", FLOAT, [1, 3, "d", 8, 8])], [tensor("y", FLOAT, [None] * 5)], {"w": w})
    with pytest.raises(OnnxImportError, match=r'Conv node "c3": 3-D convolution needs a static depth'):
        from_onnx(proto)
