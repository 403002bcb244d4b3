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


def _check_against_onnxruntime(op: str, xshape, wshape, channels: int, attrs: dict) -> None:
    """One `op` node (weight `wshape`, a bias of `channels`) on random data, vs onnxruntime."""
    w = RNG.standard_normal(wshape).astype("float32")
    b = RNG.standard_normal(channels).astype("float32")
    node = helper.make_node(op, ["x", "w", "b"], ["y"], **attrs)
    proto = model([node], [tensor("x", FLOAT, xshape)], [tensor("y", FLOAT, [None] * 5)],
                  {"w": w, "b": b})  # fmt: skip
    x = RNG.standard_normal(xshape).astype("float32")
    (want,) = run_ort(proto, {"x": x})
    (got,) = run_unity(from_onnx(proto), x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("xshape", "wshape", "attrs"), CASES)
def test_conv3d_matches_onnxruntime(xshape, wshape, attrs):
    _check_against_onnxruntime("Conv", xshape, wshape, wshape[0], attrs)


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


TRANSPOSED = [  # input shape, weight shape (C, O/g, kd, kh, kw), attributes
    ((1, 8, 3, 4, 4), (8, 4, 2, 2, 2), {"strides": [2, 2, 2]}),  # a 3-D U-Net's upsampling
    ((2, 4, 4, 3, 5), (4, 3, 3, 3, 3), {"strides": [2, 1, 2], "pads": [1, 1, 1, 1, 0, 1],
                                        "output_padding": [1, 0, 1]}),
    ((1, 4, 3, 4, 4), (4, 1, 3, 2, 2), {"group": 2, "dilations": [2, 1, 1]}),
    ((1, 2, 3, 3, 3), (2, 2, 2, 3, 3), {"strides": [2, 2, 2], "output_shape": [7, 7, 7]}),
]  # fmt: skip


@pytest.mark.parametrize(("xshape", "wshape", "attrs"), TRANSPOSED)
def test_conv_transpose3d_matches_onnxruntime(xshape, wshape, attrs):
    _check_against_onnxruntime("ConvTranspose", xshape, wshape, wshape[1] * attrs.get("group", 1), attrs)


def test_a_small_3d_unet_matches_onnxruntime():
    """Conv3D -> ReLU -> MaxPool3D -> Conv3D -> ConvTranspose3D -> Concat with the skip."""
    ws = {"w1": RNG.standard_normal((8, 2, 3, 3, 3)).astype("float32") / 7,
          "w2": RNG.standard_normal((16, 8, 3, 3, 3)).astype("float32") / 10,
          "wt": RNG.standard_normal((16, 8, 2, 2, 2)).astype("float32") / 6}  # fmt: skip
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1] * 6),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1] * 6),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("ConvTranspose", ["r2", "wt"], ["up"], strides=[2, 2, 2]),
        helper.make_node("Concat", ["up", "r1"], ["y"], axis=1),
    ]
    proto = model(nodes, [tensor("x", FLOAT, ["n", 2, 8, 12, 12])], [tensor("y", FLOAT, [None] * 5)], ws)
    vm = relax.VirtualMachine(unity.compile(from_onnx(proto)), unity.cpu())
    for batch in (1, 2):
        x = RNG.standard_normal((batch, 2, 8, 12, 12)).astype("float32")
        (want,) = run_ort(proto, {"x": x})
        np.testing.assert_allclose(vm["main"](x).numpy(), want, rtol=1e-4, atol=1e-4)
