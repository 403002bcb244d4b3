"""ONNX `If`: inlined when its condition is known at import time, a relax `If` otherwise;
each model checked against onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import unity
from unity import relax
from unity.relax import analysis
from unity.relax.expr import DataflowBlock, If
from unity.relax.frontend.onnx import ConstantInputRequired, OnnxImportError, from_onnx

F = TensorProto.FLOAT


def _graph(nodes, name, outputs, inputs=(), initializers=()):
    return helper.make_graph(nodes, name, list(inputs),
                             [helper.make_tensor_value_info(o, F, None) for o in outputs],
                             initializer=list(initializers))


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def _run(model, feeds):
    vm = relax.VirtualMachine(unity.compile(from_onnx(model)), unity.cpu())
    out = vm["main"](*feeds.values())
    outs = out if isinstance(out, tuple | list) else (out,)
    return [o.numpy() for o in outs]


def _reference(model, feeds):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _ifs(mod):
    return [b.value for blk in mod["main"].body.blocks for b in blk.bindings if isinstance(b.value, If)]


def _two_output_if_model():
    """y, z = x * 2, x + w if sum(x) > 0 else -x, x - w   (w: outer initializer)."""
    then_g = _graph([helper.make_node("Add", ["x", "x"], ["t0"]),
                     helper.make_node("Add", ["x", "w"], ["t1"])], "then", ["t0", "t1"])
    else_g = _graph([helper.make_node("Neg", ["x"], ["e0"]),
                     helper.make_node("Sub", ["x", "w"], ["e1"])], "else", ["e0", "e1"])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["y", "z"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Relu", ["y"], ["r"]),
    ]
    inits = [helper.make_tensor("zero", F, [], [0.0]),
             helper.make_tensor("w", F, [3], [1.0, 2.0, 3.0])]
    return _model(nodes, [helper.make_tensor_value_info("x", F, [2, 3])],
                  [helper.make_tensor_value_info("r", F, [2, 3]), helper.make_tensor_value_info("z", F, [2, 3])],
                  inits)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_runtime_condition_becomes_a_relax_if_and_runs_both_ways(sign):
    model = _two_output_if_model()
    mod = from_onnx(model)
    assert len(_ifs(mod)) == 1  # outside any dataflow block; the ops around it in dataflow blocks
    kinds = [type(blk).__name__ for blk in mod["main"].body.blocks]
    assert kinds == ["DataflowBlock", "BindingBlock", "DataflowBlock"]
    assert analysis.well_formed(mod)
    x = (np.random.default_rng(0).random((2, 3), dtype=np.float32) + 0.1) * sign
    got = _run(model, {"x": x})
    want = _reference(model, {"x": x})
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_a_condition_known_at_import_time_inlines_the_branch():
    # 2-D or 3-D path chosen from the input's rank, as exported models do
    then_g = _graph([helper.make_node("Mul", ["x", "x"], ["t"])], "then", ["t"])
    else_g = _graph([helper.make_node("Neg", ["x"], ["e"])], "else", ["e"])
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Size", ["shape"], ["rank"]),
        helper.make_node("Equal", ["rank", "two"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, ["n", 3])],
                   [helper.make_tensor_value_info("y", F, ["n", 3])],
                   [helper.make_tensor("two", TensorProto.INT64, [], [2])])
    mod = from_onnx(model)
    assert not _ifs(mod)
    assert all(isinstance(blk, DataflowBlock) for blk in mod["main"].body.blocks)
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(_run(model, {"x": x})[0], _reference(model, {"x": x})[0], rtol=1e-6)


def test_nested_runtime_ifs():
    inner_then = _graph([helper.make_node("Exp", ["x"], ["it"])], "inner_then", ["it"])
    inner_else = _graph([helper.make_node("Abs", ["x"], ["ie"])], "inner_else", ["ie"])
    then_g = _graph([helper.make_node("If", ["c2"], ["tv"], then_branch=inner_then, else_branch=inner_else)],
                    "then", ["tv"])
    else_g = _graph([helper.make_node("Neg", ["x"], ["ev"])], "else", ["ev"])
    nodes = [helper.make_node("If", ["c1"], ["y"], then_branch=then_g, else_branch=else_g)]
    b = TensorProto.BOOL
    model = _model(nodes, [helper.make_tensor_value_info("c1", b, []), helper.make_tensor_value_info("c2", b, [1]),
                           helper.make_tensor_value_info("x", F, [5])],
                   [helper.make_tensor_value_info("y", F, [5])])
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    for c1 in (True, False):
        for c2 in (True, False):
            feeds = {"c1": np.array(c1), "c2": np.array([c2]), "x": x}
            np.testing.assert_allclose(_run(model, feeds)[0], _reference(model, feeds)[0], rtol=1e-6)


def test_branches_with_different_output_counts_name_the_node():
    then_g = _graph([helper.make_node("Neg", ["x"], ["t"])], "then", ["t"])
    else_g = _graph([helper.make_node("Neg", ["x"], ["e0"]), helper.make_node("Abs", ["x"], ["e1"])],
                    "else", ["e0", "e1"])
    node = helper.make_node("If", ["c"], ["y"], name="pick", then_branch=then_g, else_branch=else_g)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                                            helper.make_tensor_value_info("x", F, [2])],
                              [helper.make_tensor_value_info("y", F, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match=r"If node \"pick\".*branch 'else' has 2 outputs; the If has 1"):
        from_onnx(model)


def test_branches_of_different_dtypes_name_the_node():
    then_g = _graph([helper.make_node("Neg", ["x"], ["t"])], "then", ["t"])
    else_g = helper.make_graph([helper.make_node("Cast", ["x"], ["e"], to=TensorProto.INT32)], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.INT32, None)])
    node = helper.make_node("If", ["c"], ["y"], name="pick", then_branch=then_g, else_branch=else_g)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                                            helper.make_tensor_value_info("x", F, [2])],
                              [helper.make_tensor_value_info("y", F, [2])])
    with pytest.raises(OnnxImportError, match=r"pick.*branches disagree on the dtype of output 0: float32 and int32"):
        from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_a_non_scalar_runtime_condition_is_rejected():
    then_g = _graph([helper.make_node("Neg", ["x"], ["t"])], "then", ["t"])
    else_g = _graph([helper.make_node("Abs", ["x"], ["e"])], "else", ["e"])
    node = helper.make_node("If", ["c"], ["y"], name="pick", then_branch=then_g, else_branch=else_g)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, [2]),
                                            helper.make_tensor_value_info("x", F, [2])],
                              [helper.make_tensor_value_info("y", F, [2])])
    with pytest.raises(OnnxImportError, match=r"pick.*condition must have one element, got shape \(2,\)"):
        from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_a_shape_computed_from_an_input_is_evaluated_at_run_time():
    """The Reshape runs on the host (`unity.host.onnx_node`); its output, of fresh
    symbols, takes each run's shape."""
    nodes = [helper.make_node("Abs", ["s"], ["s2"]), helper.make_node("Reshape", ["x", "s2"], ["y"], name="r")]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [6]),
                           helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
                   [helper.make_tensor_value_info("y", F, [2, 3])])
    vm = relax.VirtualMachine(unity.compile(from_onnx(model)), unity.cpu())
    x = np.arange(6, dtype="float32")
    for shape in ([-2, 3], [3, -2], [1, -6]):
        got = vm["main"](x, np.array(shape, "int64")).numpy()
        np.testing.assert_array_equal(got, x.reshape(np.abs(shape)))


def _scan_model(steps=6, reverse=0, axis=1):
    """A running sum over axis `axis` of x (a state) and each step's state * 2 (a scan output)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]), helper.make_node("Add", ["s_out", "s_out"], ["y_t"])],
        "body", [helper.make_tensor_value_info("s_in", F, [3]), helper.make_tensor_value_info("x_t", F, [3])],
        [helper.make_tensor_value_info("s_out", F, [3]), helper.make_tensor_value_info("y_t", F, [3])])
    shape = [3, steps] if axis == 1 else [steps, 3]
    node = helper.make_node("Scan", ["s0", "x"], ["s", "y"], body=body, num_scan_inputs=1,
                            scan_input_axes=[axis], scan_input_directions=[reverse],
                            scan_output_directions=[reverse])
    return _model([node], [helper.make_tensor_value_info("s0", F, [3]), helper.make_tensor_value_info("x", F, shape)],
                  [helper.make_tensor_value_info("s", F, [3]), helper.make_tensor_value_info("y", F, [steps, 3])])


@pytest.mark.parametrize(("reverse", "axis"), [(0, 0), (1, 1)])
def test_scan_is_unrolled_over_its_static_length(reverse, axis):
    model = _scan_model(reverse=reverse, axis=axis)
    rng = np.random.default_rng(4)
    feeds = {"s0": rng.standard_normal(3).astype("float32"),
             "x": rng.standard_normal((6, 3) if axis == 0 else (3, 6)).astype("float32")}
    for got, want in zip(_run(model, feeds), _reference(model, feeds), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _loop_model(trip_input=False, data_cond=False):
    """y = x + 0 + 1 + ... + (M - 1) carried, each step's y kept (M = 5)."""
    cond_out = ([helper.make_node("ReduceSum", ["y_out"], ["total"], keepdims=0),
                 helper.make_node("Less", ["total", "limit"], ["cond_out"])] if data_cond
                else [helper.make_node("Identity", ["cond_in"], ["cond_out"])])
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["i_f"], to=F), helper.make_node("Add", ["y_in", "i_f"], ["y_out"]),
         *cond_out, helper.make_node("Identity", ["y_out"], ["keep"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("y_in", F, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_out", F, [2]), helper.make_tensor_value_info("keep", F, [2])])
    node = helper.make_node("Loop", ["M", "", "x"], ["y", "ys"], name="loop", body=body)
    inputs = [helper.make_tensor_value_info("x", F, [2])]
    inits = [helper.make_tensor("limit", F, [], [100.0])]
    if trip_input:
        inputs.append(helper.make_tensor_value_info("M", TensorProto.INT64, []))
    else:
        inits.append(helper.make_tensor("M", TensorProto.INT64, [], [5]))
    return _model([node], inputs, [helper.make_tensor_value_info("y", F, [2]), helper.make_tensor_value_info("ys", F, [5, 2])],
                  inits)


def test_a_loop_with_a_known_trip_count_is_unrolled():
    model = _loop_model()
    feeds = {"x": np.array([1.0, -2.0], "float32")}
    got, want = _run(model, feeds), _reference(model, feeds)
    assert got[1].shape == (5, 2)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w)


def _loop_functions(mod):
    return sorted(gv.name_hint for gv, f in mod.functions.items()
                  if isinstance(f, relax.Function) and gv.name_hint != "main")


@pytest.mark.parametrize("trips", [(0, 3, 7)])
def test_a_trip_count_given_at_run_time_runs_a_recursive_function(trips):
    model = _loop_model(trip_input=True)
    mod = from_onnx(model)
    assert _loop_functions(mod) == ["loop_loop"]
    vm = relax.VirtualMachine(unity.compile(mod), unity.cpu())
    x = np.array([1.0, -2.0], "float32")
    for m in trips:
        got = [o.numpy() for o in vm["main"](x, np.array(m, "int64"))]
        want = _reference(model, {"x": x, "M": np.array(m, "int64")})
        assert got[1].shape == (m, 2)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w)


def test_a_condition_computed_from_data_stops_the_loop_at_run_time():
    # M = 5 caps it; the sum of y passing 100 stops it earlier for a large x
    model = _loop_model(data_cond=True)
    vm = relax.VirtualMachine(unity.compile(from_onnx(model)), unity.cpu())
    for x in ([1.0, -2.0], [40.0, 30.0], [90.0, 20.0]):
        x = np.array(x, "float32")
        got = [o.numpy() for o in vm["main"](x)]
        want = _reference(model, {"x": x})
        assert got[1].shape == want[1].shape
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w)


def test_a_long_loop_jumps_back_instead_of_recursing():
    """3000 steps: deeper than Python's recursion limit if each step were a call."""
    model = _loop_model(trip_input=True)
    ex = unity.compile(from_onnx(model))
    vm = relax.VirtualMachine(ex, unity.cpu())
    x = np.array([1.0, -2.0], "float32")
    assert "= TC; continue" in vm._namespace["__source__"]  # the self-call is a jump
    got = [o.numpy() for o in vm["main"](x, np.array(3000, "int64"))]
    np.testing.assert_allclose(got[0], x + np.arange(3000).sum())
    np.testing.assert_allclose(got[1][-1], got[0])
    assert got[1].shape == (3000, 2)


def _growing_loop_model():
    """Each step appends a row w * (i + 1) to the carried (k, n) matrix `acc` (starting
    from x), and keeps acc's row count: n is symbolic, w an input the body reads."""
    i64 = TensorProto.INT64
    body = helper.make_graph(
        [helper.make_node("Add", ["i", "one"], ["i1"]), helper.make_node("Cast", ["i1"], ["f"], to=F),
         helper.make_node("Mul", ["w", "f"], ["row"]), helper.make_node("Unsqueeze", ["row", "zero"], ["row2"]),
         helper.make_node("Concat", ["acc_in", "row2"], ["acc_out"], axis=0),
         helper.make_node("Shape", ["acc_out"], ["shape"]),
         helper.make_node("Gather", ["shape", "zero"], ["rows"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [helper.make_tensor_value_info("i", i64, []), helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("acc_in", F, [None, None])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), helper.make_tensor_value_info("acc_out", F, [None, None]),
         helper.make_tensor_value_info("rows", i64, [1])],
        initializer=[helper.make_tensor("one", i64, [], [1]), helper.make_tensor("zero", i64, [1], [0])])
    node = helper.make_node("Loop", ["M", "", "x"], ["y", "rows"], name="grow", body=body)
    return _model([node], [helper.make_tensor_value_info("M", i64, []), helper.make_tensor_value_info("x", F, [2, "n"]),
                           helper.make_tensor_value_info("w", F, ["n"])],
                  [helper.make_tensor_value_info("y", F, [None, "n"]), helper.make_tensor_value_info("rows", i64, [None, 1])])


def test_a_carried_value_that_grows_gets_fresh_dims():
    model = _growing_loop_model()
    mod = from_onnx(model)
    y_sinfo = mod["main"].ret_struct_info.fields[0]
    assert str(y_sinfo.shape[1]) == "n" and not y_sinfo.shape[0].is_number  # the width stays n
    vm = relax.VirtualMachine(unity.compile(mod), unity.cpu())
    rng = np.random.default_rng(5)
    for m, n in ((4, 3), (0, 5), (2, 1)):
        feeds = {"M": np.array(m, "int64"), "x": rng.standard_normal((2, n)).astype("float32"),
                 "w": rng.standard_normal(n).astype("float32")}
        got = [o.numpy() for o in vm["main"](*feeds.values())]
        want = _reference(model, feeds)
        assert got[0].shape == (2 + m, n)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_a_value_the_body_only_appends_rows_to_grows_on_the_host():
    """``out = cat([out, row])`` (TorchScript's idiom; Mask R-CNN pastes its masks so):
    appended on the host into spare room, not copied whole every step.  The growing
    model above reads its value's shape too, so it keeps the concat kernel."""
    from unity.relax.frontend.onnx.runtime_loop import appended_rows

    i64 = TensorProto.INT64
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["f"], to=F), helper.make_node("Mul", ["w", "f"], ["row"]),
         helper.make_node("Unsqueeze", ["row", "zero"], ["row2"]),
         helper.make_node("Cast", ["acc_in"], ["acc_f"], to=F),
         helper.make_node("Concat", ["acc_f", "row2"], ["acc_out"], axis=0),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [helper.make_tensor_value_info("i", i64, []), helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("acc_in", F, [None, 3])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), helper.make_tensor_value_info("acc_out", F, [None, 3])],
        initializer=[helper.make_tensor("zero", i64, [1], [0])])
    assert appended_rows(body, 1) == {0} and appended_rows(_growing_loop_model().graph.node[0].attribute[0].g, 1) == set()
    node = helper.make_node("Loop", ["M", "", "x"], ["y"], name="paste", body=body)
    model = _model([node], [helper.make_tensor_value_info("M", i64, []), helper.make_tensor_value_info("x", F, [2, 3]),
                            helper.make_tensor_value_info("w", F, [3])],
                   [helper.make_tensor_value_info("y", F, [None, 3])])
    mod = from_onnx(model)
    assert "unity.host.append_rows" in mod["loop_paste"].script()
    vm = relax.VirtualMachine(unity.compile(mod), unity.cpu())
    rng = np.random.default_rng(9)
    for m in (0, 1, 40):
        feeds = {"M": np.array(m, "int64"), "x": rng.standard_normal((2, 3)).astype("float32"),
                 "w": rng.standard_normal(3).astype("float32")}
        got = vm["main"](*feeds.values()).numpy()
        assert got.shape == (2 + m, 3)
        np.testing.assert_allclose(got, _reference(model, feeds)[0], rtol=1e-6)


def test_scan_steps_of_a_shape_made_in_the_step_are_stacked_and_checked_on_the_host():
    """Each step's scan output is x[0:k] with k = M (run-time data: a host Slice, a fresh
    length every step): stacked on the host.  A body whose steps differ is refused there."""
    i64 = TensorProto.INT64

    def model(end: str):
        body = helper.make_graph(
            [helper.make_node("Unsqueeze", [end, "zero"], ["end1"]),
             helper.make_node("Slice", ["x", "zero", "end1"], ["part"]),
             helper.make_node("Identity", ["c_in"], ["c_out"])],
            "body", [helper.make_tensor_value_info("i", i64, []), helper.make_tensor_value_info("c_in", TensorProto.BOOL, [])],
            [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), helper.make_tensor_value_info("part", F, [None])],
            initializer=[helper.make_tensor("zero", i64, [1], [0])])
        return _model([helper.make_node("Loop", ["M", ""], ["parts"], name="cut", body=body)],
                      [helper.make_tensor_value_info("M", i64, []), helper.make_tensor_value_info("x", F, [6])],
                      [helper.make_tensor_value_info("parts", F, [None, None])])

    x = np.arange(6, dtype="float32")
    same = model("M")
    vm = relax.VirtualMachine(unity.compile(from_onnx(same)), unity.cpu())
    got = vm["main"](np.array(3, "int64"), x).numpy()
    np.testing.assert_array_equal(got, _reference(same, {"M": np.array(3, "int64"), "x": x})[0])
    assert got.shape == (3, 3)
    vm = relax.VirtualMachine(unity.compile(from_onnx(model("i"))), unity.cpu())
    with pytest.raises(ValueError, match=r"scan output changes shape: step 1 gives \[1\], the steps before gave \[0\]"):
        vm["main"](np.array(3, "int64"), x)


def test_a_loop_carried_value_of_another_dtype_is_refused():
    body = helper.make_graph(
        [helper.make_node("Cast", ["v_in"], ["v_out"], to=TensorProto.INT32), helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("c_in", TensorProto.BOOL, []), helper.make_tensor_value_info("v_in", F, [2])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), helper.make_tensor_value_info("v_out", TensorProto.INT32, [2])])
    node = helper.make_node("Loop", ["M", "", "x"], ["y"], name="bad", body=body)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("M", TensorProto.INT64, []),
                                            helper.make_tensor_value_info("x", F, [2])],
                              [helper.make_tensor_value_info("y", F, [2])])
    with pytest.raises(OnnxImportError, match=r"Loop node \"bad\".*loop-carried value 0 as int32 of rank 1; "
                       "it enters as float32 of rank 1"):
        from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_an_unroll_past_the_limit_is_refused(monkeypatch):
    from unity.relax.frontend.onnx import control_flow

    monkeypatch.setattr(control_flow, "MAX_UNROLL", 4)
    with pytest.raises(OnnxImportError, match=r"Scan node .* would unroll into more than 4 copies of its body"):
        from_onnx(_scan_model(steps=6))


def test_a_run_time_loop_whose_body_gives_a_float_condition_is_refused():
    body = helper.make_graph(
        [helper.make_node("Cast", ["c_in"], ["c_out"], to=F), helper.make_node("Identity", ["v_in"], ["v_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("c_in", TensorProto.BOOL, []), helper.make_tensor_value_info("v_in", F, [2])],
        [helper.make_tensor_value_info("c_out", F, []), helper.make_tensor_value_info("v_out", F, [2])])
    node = helper.make_node("Loop", ["M", "", "x"], ["y"], name="odd", body=body)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("M", TensorProto.INT64, []),
                                            helper.make_tensor_value_info("x", F, [2])],
                              [helper.make_tensor_value_info("y", F, [2])])
    with pytest.raises(OnnxImportError, match=r"Loop node \"odd\".*the body's condition output must be bool, got float32"):
        from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_a_run_time_loop_on_the_emulated_gpu_loops_without_recursing(monkeypatch):
    """The CUDA VM interprets the bytecode: its self-call in tail position goes round
    again in the same `_run` (50 steps: two calls deep, main and the loop, not 52)."""
    from unity.runtime.cuda import vm as cuda_vm
    from unity.runtime.cuda.device_api import use_driver
    from unity.runtime.cuda.emulated import EmulatedDriver

    depth, deepest, run = [0], [0], cuda_vm.CudaVM._run

    def counted(self, name, args):
        depth[0] += 1
        deepest[0] = max(deepest[0], depth[0])
        try:
            return run(self, name, args)
        finally:
            depth[0] -= 1

    monkeypatch.setattr(cuda_vm.CudaVM, "_run", counted)
    model = _loop_model(trip_input=True)
    x = np.array([1.0, -2.0], "float32")
    with use_driver(EmulatedDriver()):
        vm = relax.VirtualMachine(unity.compile(from_onnx(model), target="cuda"), unity.cuda())
        got = [o.numpy() for o in vm["main"](x, np.array(50, "int64"))]
    np.testing.assert_allclose(got[0], x + np.arange(50).sum())
    assert got[1].shape == (50, 2) and deepest[0] == 2
