"""Ops whose output shape depends on input values, in a model: host calls, fresh symbols,
the ops after them compiled for any size; against onnxruntime on the CPU, the emulated
GPU and through an exported file."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import unity
from unity import relax
from unity.relax.frontend.onnx import from_onnx
from unity.runtime.cuda.device_api import use_driver
from unity.runtime.cuda.emulated import EmulatedDriver

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _model():
    """The positive entries of x, doubled and summed per kept row, and the row count."""
    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["mask"]),
        helper.make_node("NonZero", ["mask"], ["where"]),                 # (2, n)
        helper.make_node("Transpose", ["where"], ["pairs"], perm=[1, 0]),  # (n, 2)
        helper.make_node("GatherND", ["x", "pairs"], ["picked"]),          # (n,)
        helper.make_node("Mul", ["picked", "two"], ["doubled"]),
        helper.make_node("ReduceSum", ["x", "axis1"], ["rows"], keepdims=0),
        helper.make_node("Greater", ["rows", "zero"], ["keep"]),
        helper.make_node("Compress", ["x", "keep"], ["kept"], axis=0),    # (m, 5)
        helper.make_node("Shape", ["kept"], ["kept_shape"]),                # (m, 5): a symbolic shape
        helper.make_node("ConstantOfShape", ["kept_shape"], ["ones"],
                         value=helper.make_tensor("v", F, [1], [1.0])),
        helper.make_node("Add", ["kept", "ones"], ["kept1"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", F, ["rows", 5])],
        [helper.make_tensor_value_info("doubled", F, ["n"]), helper.make_tensor_value_info("kept1", F, ["m", 5])],
        initializer=[helper.make_tensor("zero", F, [], [0.0]), helper.make_tensor("two", F, [], [2.0]),
                     helper.make_tensor("axis1", I64, [1], [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return model


def _inputs():
    rng = np.random.default_rng(5)
    return [rng.standard_normal((rows, 5)).astype("float32") for rows in (4, 9, 1)]


def _check(vm, model, x):
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    got = vm["main"](x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)


def test_data_dependent_sizes_on_the_cpu_for_several_inputs(tmp_path):
    model = _model()
    mod = from_onnx(model)
    text = mod.script()
    assert 'R.call_pure_packed(R.ExternFunc("unity.host.nonzero")' in text and "R.match_cast" in text
    ex = unity.compile(mod, target="llvm")
    vm = relax.VirtualMachine(ex, unity.cpu())
    for x in _inputs():
        _check(vm, model, x)
    path = str(tmp_path / "model.so")
    ex.export_library(path)
    loaded = relax.VirtualMachine(unity.runtime.load_module(path), unity.cpu())
    _check(loaded, model, _inputs()[1])


def test_data_dependent_sizes_on_the_emulated_gpu():
    model = _model()
    ex = unity.compile(from_onnx(model), target="cuda")
    with use_driver(EmulatedDriver()):
        vm = relax.VirtualMachine(ex, unity.cuda())
        for x in _inputs()[:2]:
            _check(vm, model, x)


def test_compress_needs_a_1d_bool_condition():
    node = helper.make_node("Compress", ["x", "c"], ["y"], name="pick", axis=0)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", F, [3, 2]),
                                            helper.make_tensor_value_info("c", F, [3])],
                              [helper.make_tensor_value_info("y", F, None)])
    with pytest.raises(unity.relax.frontend.onnx.OnnxImportError,
                       match=r"Compress node \"pick\": condition must be a 1-D bool tensor, got 1-D float32"):
        from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
