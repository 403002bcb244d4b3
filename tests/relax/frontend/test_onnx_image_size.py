"""A CNN whose image height and width are symbolic (``["N", 3, "H", "W"]``): compiled once
at the default optimization level, run at several sizes against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from unity.ir.transform import PassContext
from unity.relax.frontend.onnx import from_onnx

from .onnx_helpers import FLOAT, model, run_ort, tensor


def _cnn() -> object:
    """conv 3x3 s2 -> relu -> max pool 3x3 s2 p1 -> conv 1x1 -> conv 3x3 (+ residual) ->
    relu -> global average pool: ResNet's stem and block shapes at a small width."""
    rng = np.random.default_rng(0)
    weights = {
        "w0": rng.standard_normal((32, 3, 3, 3)) * 0.2, "b0": rng.standard_normal(32) * 0.1,
        "w1": rng.standard_normal((64, 32, 1, 1)) * 0.1, "w2": rng.standard_normal((64, 64, 3, 3)) * 0.05,
    }  # fmt: skip
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("MaxPool", ["r0"], ["p0"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["p0", "w1"], ["c1"]),
        helper.make_node("Conv", ["c1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "c1"], ["s"]),
        helper.make_node("Relu", ["s"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["y"]),
    ]
    inits = {k: v.astype(np.float32) for k, v in weights.items()}
    outputs = [tensor("y", FLOAT, [1, 64, 1, 1]), tensor("r", FLOAT, [1, 64, None, None])]
    return model(nodes, [tensor("x", FLOAT, [1, 3, "H", "W"])], outputs, inits)


@pytest.mark.parametrize("opt_level", [2, 3])
def test_a_cnn_over_a_symbolic_image_size_matches_onnxruntime(opt_level: int):
    """Compiled once; sizes odd and even, with fewer pixels than a conv's tile and more
    (max pooling's output size over a symbolic input once failed to compile); the pooled
    output and the feature map before it."""
    proto = _cnn()
    import unity
    from unity import relax

    with PassContext(opt_level=opt_level):
        ex = unity.compile(from_onnx(proto), target="llvm")
    vm = relax.VirtualMachine(ex, unity.cpu())
    rng = np.random.default_rng(1)
    for h, w in ((1, 1), (5, 3), (9, 13), (32, 32), (57, 23)):
        x = rng.standard_normal((1, 3, h, w)).astype(np.float32)
        got = vm["main"](x)
        for out, want in zip(got, run_ort(proto, {"x": x}), strict=True):
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-4)
