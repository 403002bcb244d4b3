"""lrn vs onnxruntime's LRN (onnx.reference's LRN loops over the batch axis, not channels)."""

from __future__ import annotations

import pytest

from tests.topi.run import check, rand
from unity import te, topi

onnx = pytest.importorskip("onnx")
from onnx import helper

ort = pytest.importorskip("onnxruntime")


@pytest.mark.parametrize(
    ("size", "alpha", "beta", "bias"),
    [(3, 1e-4, 0.75, 1.0), (5, 0.5, 0.5, 2.0), (1, 1.0, 1.0, 1.0)],
)
def test_lrn_matches_onnx(size, alpha, beta, bias):
    x_t = te.placeholder((2, 5, 3, 2), name="x")
    x = rand((2, 5, 3, 2))
    node = helper.make_node("LRN", ["X"], ["Y"], size=size, alpha=alpha, beta=beta, bias=bias)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, {"X": x})[0]
    check([x_t], topi.nn.lrn(x_t, size, 1, alpha, beta, bias), [x], want, rtol=1e-5, atol=1e-6)
