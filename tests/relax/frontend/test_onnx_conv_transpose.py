"""2-D ConvTranspose through `from_onnx` and the default pipeline, whose
`DecomposeConvTranspose` runs it as one conv over the output phases, against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import unity
from unity import relax
from unity.relax.frontend.onnx import from_onnx
from unity.relax.transform import DecomposeConvTranspose

from .onnx_helpers import FLOAT, model, run_ort, run_unity, tensor

RNG = np.random.default_rng(8)

CASES = [  # input shape, weight shape (C, O/g, kh, kw), attributes
    ((1, 6, 5, 7), (6, 4, 4, 4), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),  # DCGAN
    ((2, 5, 6, 4), (5, 3, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}),
    ((1, 4, 5, 6), (4, 2, 5, 2), {"strides": [3, 2], "pads": [2, 0, 1, 1]}),
    ((1, 3, 4, 4), (3, 2, 1, 1), {"strides": [2, 2]}),  # kernel smaller than the stride
    ((1, 3, 4, 5), (3, 2, 3, 3), {}),  # stride 1
    ((1, 4, 5, 5), (4, 2, 2, 2), {"strides": [2, 2], "output_shape": [11, 11]}),
    ((1, 4, 5, 5), (4, 1, 3, 3), {"strides": [2, 2], "group": 4}),
    ((1, 3, 5, 5), (3, 2, 3, 3), {"strides": [2, 2], "dilations": [2, 1]}),
]  # fmt: skip


def _decomposed(mod) -> bool:
    return "R.nn.conv2d_transpose" not in DecomposeConvTranspose()(mod).script()


@pytest.mark.parametrize(("xshape", "wshape", "attrs"), CASES)
def test_conv_transpose_matches_onnxruntime(xshape, wshape, attrs):
    w = RNG.standard_normal(wshape).astype("float32")
    b = RNG.standard_normal(wshape[1] * attrs.get("group", 1)).astype("float32")
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)
    proto = model([node], [tensor("x", FLOAT, xshape)], [tensor("y", FLOAT, [None] * 4)], {"w": w, "b": b})
    mod = from_onnx(proto)
    assert _decomposed(mod)
    x = RNG.standard_normal(xshape).astype("float32")
    (want,) = run_ort(proto, {"x": x})
    (got,) = run_unity(mod, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _check_symbolic(kernel: int, batch: int | str = "n", **attrs) -> None:
    """A stride-2 ConvTranspose (`attrs`) over an input of symbolic height and width: the
    pass takes it, and two sizes run as onnxruntime runs them."""
    w = RNG.standard_normal((4, 3, kernel, kernel)).astype("float32")
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], **attrs)
    proto = model([node], [tensor("x", FLOAT, [batch, 4, "h", "w"])], [tensor("y", FLOAT, [None] * 4)], {"w": w})
    mod = from_onnx(proto)
    assert _decomposed(mod)
    vm = relax.VirtualMachine(unity.compile(mod), unity.cpu())
    for shape in ((1, 4, 3, 5), (1, 4, 6, 4)):
        x = RNG.standard_normal(shape).astype("float32")
        (want,) = run_ort(proto, {"x": x})
        got = vm["main"](x).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("kernel", "pads"), [(2, 0), (4, 1)])
def test_conv_transpose_over_a_symbolic_size(kernel, pads):
    """A 2x upsampling (kernel = stride) needs no crop; a padded one crops a symbolic size."""
    _check_symbolic(kernel, pads=[pads] * 4)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_conv_transpose_same_padding_over_a_symbolic_size(auto_pad):
    """SAME pads (output = size * stride) do not depend on the size: any size runs."""
    _check_symbolic(3, batch=1, auto_pad=auto_pad)
