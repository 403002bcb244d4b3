"""2-D ConvTranspose through `from_onnx`: one conv over the output phases (the direct form
only for groups, dilations and crops of a symbolic size), against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import unity
from unity import relax
from unity.relax.frontend.onnx import from_onnx

from .onnx_helpers import FLOAT, model, run_ort, run_unity, tensor

RNG = np.random.default_rng(8)

CASES = [  # input shape, weight shape (C, O/g, kh, kw), attributes, direct form kept
    ((1, 6, 5, 7), (6, 4, 4, 4), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, False),  # DCGAN
    ((2, 5, 6, 4), (5, 3, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}, False),
    ((1, 4, 5, 6), (4, 2, 5, 2), {"strides": [3, 2], "pads": [2, 0, 1, 1]}, False),
    ((1, 3, 4, 4), (3, 2, 1, 1), {"strides": [2, 2]}, False),  # kernel smaller than the stride
    ((1, 3, 4, 5), (3, 2, 3, 3), {}, False),  # stride 1
    ((1, 4, 5, 5), (4, 2, 2, 2), {"strides": [2, 2], "output_shape": [11, 11]}, False),
    ((1, 4, 5, 5), (4, 1, 3, 3), {"strides": [2, 2], "group": 4}, True),
    ((1, 3, 5, 5), (3, 2, 3, 3), {"strides": [2, 2], "dilations": [2, 1]}, True),
]  # fmt: skip


@pytest.mark.parametrize(("xshape", "wshape", "attrs", "direct"), CASES)
def test_conv_transpose_matches_onnxruntime(xshape, wshape, attrs, direct):
    w = RNG.standard_normal(wshape).astype("float32")
    b = RNG.standard_normal(wshape[1] * attrs.get("group", 1)).astype("float32")
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)
    proto = model([node], [tensor("x", FLOAT, xshape)], [tensor("y", FLOAT, [None] * 4)], {"w": w, "b": b})
    mod = from_onnx(proto)
    assert ("R.nn.conv2d_transpose" in mod.script()) is direct
    x = RNG.standard_normal(xshape).astype("float32")
    (want,) = run_ort(proto, {"x": x})
    (got,) = run_unity(mod, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("kernel", "pads", "direct"), [(2, 0, False), (4, 1, True)])
def test_conv_transpose_over_a_symbolic_size(kernel, pads, direct):
    """A 2x upsampling (kernel = stride) needs no crop and takes any size; a padded one
    keeps the direct form there."""
    w = RNG.standard_normal((4, 3, kernel, kernel)).astype("float32")
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], pads=[pads] * 4)
    proto = model([node], [tensor("x", FLOAT, ["n", 4, "h", "w"])], [tensor("y", FLOAT, [None] * 4)], {"w": w})
    mod = from_onnx(proto)
    assert ("R.nn.conv2d_transpose" in mod.script()) is direct
    vm = relax.VirtualMachine(unity.compile(mod), unity.cpu())
    for shape in ((1, 4, 3, 5), (2, 4, 6, 4)):
        x = RNG.standard_normal(shape).astype("float32")
        (want,) = run_ort(proto, {"x": x})
        np.testing.assert_allclose(vm["main"](x).numpy(), want, rtol=1e-4, atol=1e-4)
