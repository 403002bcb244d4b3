"""A detection head's post-processing as exporters write it (RetinaNet / SSD per level):
scores over a threshold (NonZero twice over one mask), the top min(k, n) of them, and a
split into one part; against onnxruntime for several inputs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import unity
from unity import relax
from unity.relax.frontend.onnx import from_onnx

from .onnx_helpers import run_ort

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _model() -> onnx.ModelProto:
    const = {"thr": np.array(0.3, np.float32), "k": np.array([4], np.int64), "zero": np.array([0], np.int64),
             "one": np.array([1], np.int64)}  # fmt: skip
    nodes = [
        helper.make_node("Greater", ["scores", "thr"], ["mask"]),
        helper.make_node("NonZero", ["mask"], ["where"]),             # scores[mask]: (1, n)
        helper.make_node("Squeeze", ["where", "zero"], ["idx"]),
        helper.make_node("Gather", ["scores", "idx"], ["kept"]),
        helper.make_node("NonZero", ["mask"], ["where2"]),            # torch.where(mask): (1, n')
        helper.make_node("Shape", ["where2"], ["s"], start=1),
        helper.make_node("Concat", ["k", "s"], ["both"], axis=0),
        helper.make_node("ReduceMin", ["both"], ["num"], keepdims=1),  # min(k, n')
        helper.make_node("TopK", ["kept", "num"], ["top", "order"]),
        helper.make_node("Gather", ["idx", "order"], ["picked"]),
        helper.make_node("Unsqueeze", ["top", "zero"], ["top2"]),
        helper.make_node("Split", ["top2"], ["part"], axis=0, num_outputs=1),  # one part
        helper.make_node("Squeeze", ["part", "zero"], ["best"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("scores", F, ["anchors"])],
        [helper.make_tensor_value_info("best", F, [None]), helper.make_tensor_value_info("picked", I64, [None])],
        initializer=[onnx.numpy_helper.from_array(v, k) for k, v in const.items()])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    return model


def test_top_k_of_the_scores_over_a_threshold():
    model = _model()
    vm = relax.VirtualMachine(unity.compile(from_onnx(model), target="llvm"), unity.cpu())
    rng = np.random.default_rng(2)
    for anchors in (12, 7, 3):  # more kept than k, fewer, and a few
        scores = rng.random(anchors).astype(np.float32)
        got = vm["main"](scores)
        want = run_ort(model, {"scores": scores})
        assert got[0].numpy().shape == want[0].shape
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g.numpy(), w)


@pytest.mark.parametrize("k", [5, 2])
def test_top_k_of_a_symbolic_k_larger_than_a_static_axis_is_named(k):
    # a static axis of 3 and k = 5 or 2: 5 is named, 2 runs
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [3])],
                              [helper.make_tensor_value_info("v", F, [None]),
                               helper.make_tensor_value_info("i", I64, [None])],
                              initializer=[helper.make_tensor("k", I64, [1], [k])])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    if k > 3:
        with pytest.raises(Exception, match="k=5 elements of an axis of size 3"):
            from_onnx(model)
        return
    x = np.array([0.5, 2.0, 1.0], np.float32)
    got = relax.VirtualMachine(unity.compile(from_onnx(model), target="llvm"), unity.cpu())["main"](x)
    assert got[0].numpy().tolist() == [2.0, 1.0] and got[1].numpy().tolist() == [1, 2]


@pytest.mark.parametrize("length", [3000, "n"])
def test_top_k_over_a_long_or_symbolic_axis_sorts_on_the_host(length):
    # a vocabulary or a detector's candidates: the kernel's counting sort is quadratic
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"], largest=1)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, length])],
                              [helper.make_tensor_value_info("v", F, [2, 5]),
                               helper.make_tensor_value_info("i", I64, [2, 5])],
                              initializer=[helper.make_tensor("k", I64, [1], [5])])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    mod = from_onnx(model)
    assert '"unity.host.topk"' in mod.script() and "R.topk" not in mod.script()
    vm = relax.VirtualMachine(unity.compile(mod, target="llvm"), unity.cpu())
    x = np.random.default_rng(4).integers(0, 50, (2, 3000)).astype(np.float32)  # ties
    got = vm["main"](x)
    for g, w in zip(got, run_ort(model, {"x": x}), strict=True):
        np.testing.assert_array_equal(g.numpy(), w)
