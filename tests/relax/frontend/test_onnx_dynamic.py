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


def _mask_model():
    """A padding mask from run-time lengths: ``arange(max(lengths)) < lengths[:, None]``
    (Range's limit is data); and `scale` reshaped to a shape that is itself an input,
    then doubled."""
    nodes = [
        helper.make_node("ReduceMax", ["lengths"], ["maxlen"], keepdims=0),
        helper.make_node("Range", ["zero", "maxlen", "one"], ["pos"], name="positions"),
        helper.make_node("Unsqueeze", ["pos", "ax0"], ["pos2"]),
        helper.make_node("Unsqueeze", ["lengths", "ax1"], ["len2"]),
        helper.make_node("Less", ["pos2", "len2"], ["mask"]),
        helper.make_node("Cast", ["mask"], ["maskf"], to=F),
        helper.make_node("Reshape", ["scale", "shape"], ["scale2"], name="by_shape"),
        helper.make_node("Add", ["scale2", "scale2"], ["doubled"]),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("lengths", I64, ["b"]),
         helper.make_tensor_value_info("scale", F, ["s"]),
         helper.make_tensor_value_info("shape", I64, [2])],
        [helper.make_tensor_value_info("maskf", F, ["b", "t"]),
         helper.make_tensor_value_info("doubled", F, ["r", "c"])],
        initializer=[helper.make_tensor("zero", I64, [], [0]), helper.make_tensor("one", I64, [], [1]),
                     helper.make_tensor("ax0", I64, [1], [0]), helper.make_tensor("ax1", I64, [1], [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def test_shape_inputs_computed_from_data_run_on_the_host(tmp_path):
    model = _mask_model()
    mod = from_onnx(model)
    text = mod.script()
    assert text.count('R.ExternFunc("unity.host.onnx_node")') == 2  # Range and Reshape
    assert "positions_n0_0" in text  # the arange's length: a fresh symbol
    ex = unity.compile(mod, target="llvm")
    vm = relax.VirtualMachine(ex, unity.cpu())
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    cases = [
        (np.array([3, 5, 1], "int64"), np.array([1.0, 2.0, 3.0], "float32"), np.array([3, 1], "int64")),
        (np.array([2, 7], "int64"), np.array([0.5, 4.0], "float32"), np.array([2, 1], "int64")),
        (np.array([4], "int64"), np.arange(4, dtype="float32"), np.array([1, 4], "int64")),
    ]
    path = str(tmp_path / "mask.so")
    ex.export_library(path)
    loaded = relax.VirtualMachine(unity.runtime.load_module(path), unity.cpu())
    for machine in (vm, loaded):
        for lengths, scale, shape in cases:
            want = session.run(None, {"lengths": lengths, "scale": scale, "shape": shape})
            got = machine["main"](lengths, scale, shape)
            for g, w in zip(got, want, strict=True):
                assert g.numpy().shape == w.shape
                np.testing.assert_array_equal(g.numpy(), w)


def test_a_run_time_shape_of_unknown_length_keeps_the_import_error():
    node = helper.make_node("Reshape", ["x", "shape"], ["y"], name="r")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", F, [6]),
                                            helper.make_tensor_value_info("shape", I64, ["k"])],
                              [helper.make_tensor_value_info("y", F, None)])
    with pytest.raises(unity.relax.frontend.onnx.ConstantInputRequired,
                       match=r'Reshape node "r": input shape must be known at import time .* from shape'):
        from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))


def test_unrelated_symbolic_dims_that_broadcast_are_taken_equal_and_checked():
    """Inputs of dims ``n``, ``m`` and ``k`` (tf2onnx names every unknown dim apart):
    ``a + b`` is ``(n,)`` with ``m == n`` checked at run time, the `Where` over the
    condition of dim ``k`` then ``(k,)`` (its first operand's).  A wrong size at run
    time is an error naming the node and its operand."""
    nodes = [helper.make_node("Add", ["a", "b"], ["s"], name="add"),
             helper.make_node("Where", ["c", "s", "a"], ["y"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("a", F, ["n"]), helper.make_tensor_value_info("b", F, ["m"]),
         helper.make_tensor_value_info("c", TensorProto.BOOL, ["k"])],
        [helper.make_tensor_value_info("y", F, None)])
    mod = from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert str(mod["main"].ret_struct_info.shape) == "(k,)"
    vm = relax.VirtualMachine(unity.compile(mod), unity.cpu())
    a, b = np.arange(3, dtype="float32"), np.full(3, 10, "float32")
    c = np.array([True, False, True])
    np.testing.assert_array_equal(vm["main"](a, b, c).numpy(), np.where(c, a + b, a))
    with pytest.raises(ValueError, match=r"match_cast of add_operand1_broadcast: .* got \(2,\): "
                                         r"dim 0 must be n = 3"):
        vm["main"](a, b[:2], c)


def test_a_concat_of_many_run_time_lengths_joins_groups_of_parts():
    """20 classes' kept scores (Compress by a threshold: run-time lengths) joined twice, as
    SSDlite joins its boxes, scores and labels: groups of 8 parts first, each group's
    length one symbol shared by both concats (so their sum adds up)."""
    parts = 20
    nodes = []
    for k in range(parts):
        nodes += [helper.make_node("Gather", ["x", f"k{k}"], [f"row{k}"], axis=0),
                  helper.make_node("Greater", [f"row{k}", "half"], [f"keep{k}"]),
                  helper.make_node("Compress", [f"row{k}", f"keep{k}"], [f"part{k}"], axis=0),
                  helper.make_node("Neg", [f"part{k}"], [f"neg{k}"])]
    nodes += [helper.make_node("Concat", [f"part{k}" for k in range(parts)], ["all"], axis=0, name="join"),
              helper.make_node("Concat", [f"neg{k}" for k in range(parts)], ["negs"], axis=0, name="join_neg"),
              helper.make_node("Add", ["all", "negs"], ["zeros"]), helper.make_node("Exp", ["all"], ["y"])]
    inits = [helper.make_tensor(f"k{k}", I64, [], [k]) for k in range(parts)]
    inits.append(helper.make_tensor("half", F, [], [0.5]))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [parts, 6])],
                              [helper.make_tensor_value_info("y", F, ["n"]), helper.make_tensor_value_info("zeros", F, ["n"])],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    mod = from_onnx(model)
    casts = [b for blk in mod["main"].body.blocks for b in blk.bindings if isinstance(b, relax.MatchCast)]
    groups = sorted({str(d) for b in casts for d in b.struct_info.shape if "group" in str(d)})
    assert groups == ["join_group0", "join_group1", "join_group2"]  # 8 + 8 + 4 parts, shared
    vm = relax.VirtualMachine(unity.compile(mod), unity.cpu())
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    for _ in range(3):
        x = rng.random((parts, 6), dtype=np.float32)
        x[3] = 0.0  # a class with nothing kept
        got = [o.numpy() for o in vm["main"](x)]
        for g, w in zip(got, sess.run(None, {"x": x}), strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def _run_against_ort(model, feeds_list):
    vm = relax.VirtualMachine(unity.compile(from_onnx(model)), unity.cpu())
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for feeds in feeds_list:
        got = vm["main"](*feeds.values())
        got = got if isinstance(got, tuple | list) else (got,)
        for g, w in zip(got, sess.run(None, feeds), strict=True):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)


def test_tile_by_the_batch_and_a_float_range_over_the_sequence():
    """DETR tiles its queries by the batch (repeats from Shape); Funnel's relative
    positions are ``arange(-2 * seq, 2 * seq)`` in float, ends cast from the shape."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Slice", ["shape", "zero", "one"], ["batch"]),
        helper.make_node("Concat", ["batch", "one"], ["reps"], axis=0),
        helper.make_node("Tile", ["q", "reps"], ["tiled"]),                   # (b * 2, 3)
        helper.make_node("Gather", ["shape", "one_s"], ["seq"]),
        helper.make_node("Mul", ["seq", "two"], ["end"]), helper.make_node("Neg", ["end"], ["start"]),
        helper.make_node("Cast", ["start"], ["start_f"], to=F), helper.make_node("Cast", ["end"], ["end_f"], to=F),
        helper.make_node("Range", ["start_f", "end_f", "step"], ["pos"]),    # (4 * seq,)
    ]
    inits = [helper.make_tensor("zero", I64, [1], [0]), helper.make_tensor("one", I64, [1], [1]),
             helper.make_tensor("one_s", I64, [], [1]), helper.make_tensor("two", I64, [], [2]),
             helper.make_tensor("step", F, [], [1.0]), helper.make_tensor("q", F, [2, 3], [0, 1, 2, 3, 4, 5])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, ["b", "s"])],
                              [helper.make_tensor_value_info("tiled", F, [None, 3]),
                               helper.make_tensor_value_info("pos", F, [None])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    _run_against_ort(model, [{"x": np.zeros((b, s), np.float32)} for b, s in ((1, 2), (3, 5))])
