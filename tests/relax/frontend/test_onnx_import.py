"""`from_onnx`: dynamic axes, shape-valued tensors kept symbolic, params, and errors."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import sympy
from onnx import helper
from onnx.reference import ReferenceEvaluator

from unity.relax.expr import Call, Constant
from unity.relax.frontend.onnx import OnnxImportError, UnsupportedOpError, from_onnx
from unity.relax.struct_info import sym
from unity.relax.transform import LegalizeOps

from .encoder_model import encoder_model
from .onnx_helpers import FLOAT, INT64, model, run_ort, run_unity, tensor

B, S = sym("batch"), sym("seq")


def _ret_shape(mod: object) -> tuple[object, ...]:
    return tuple(mod["main"].ret_struct_info.shape)  # type: ignore[index]


def _calls(mod: object) -> list[str]:
    func = mod["main"]  # type: ignore[index]
    return [b.value.op.name for blk in func.body.blocks for b in blk.bindings
            if isinstance(b.value, Call) and hasattr(b.value.op, "name")]  # fmt: skip


def test_named_dynamic_axes_become_shared_symbols():
    m = model([helper.make_node("Add", ["a", "b"], ["y"])],
              [tensor("a", FLOAT, ["batch", 4]), tensor("b", FLOAT, ["batch", 4])],
              [tensor("y", FLOAT, ["batch", 4])])  # fmt: skip
    mod = from_onnx(m)
    a, b = mod["main"].params
    assert a.struct_info.shape[0] == B and b.struct_info.shape[0] == B  # one symbol (sympy's
    # cache of Symbol objects is bounded, so equal symbols need not be one object)
    assert _ret_shape(mod) == (B, 4)


def test_unnamed_dynamic_axes_become_fresh_symbols():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", FLOAT, [None, 3])],
              [tensor("y", FLOAT, [None, 3])])  # fmt: skip
    (dim, three) = from_onnx(m)["main"].params[0].struct_info.shape
    assert isinstance(dim, sympy.Symbol) and three == 3


def test_shape_dict_fixes_a_named_axis_everywhere():
    m = model([helper.make_node("Add", ["a", "b"], ["y"])],
              [tensor("a", FLOAT, ["batch", 4]), tensor("b", FLOAT, ["batch", 4])],
              [tensor("y", FLOAT, ["batch", 4])])  # fmt: skip
    mod = from_onnx(m, shape_dict={"a": (2, 4)})
    assert [tuple(p.struct_info.shape) for p in mod["main"].params] == [(2, 4), (2, 4)]


def _reshape_heads_model() -> onnx.ModelProto:
    """x (batch, seq, 8) -> reshape to (batch, seq, 2, 4) through Shape/Gather/Concat."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["b"], axis=0),
        helper.make_node("Gather", ["s", "i1"], ["q"], axis=0),
        helper.make_node("Unsqueeze", ["b", "ax0"], ["bu"]),
        helper.make_node("Unsqueeze", ["q", "ax0"], ["qu"]),
        helper.make_node("Concat", ["bu", "qu", "heads"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    inits = {"i0": np.array(0, "int64"), "i1": np.array(1, "int64"), "ax0": np.array([0], "int64"),
             "heads": np.array([2, 4], "int64")}  # fmt: skip
    return model(nodes, [tensor("x", FLOAT, ["batch", "seq", 8])],
                 [tensor("y", FLOAT, ["batch", "seq", 2, 4])], inits)  # fmt: skip


def test_shape_gather_concat_reshape_stays_symbolic():
    mod = from_onnx(_reshape_heads_model())
    assert _ret_shape(mod) == (B, S, 2, 4)
    assert _calls(mod) == ["relax.reshape"]  # the shape arithmetic was folded at import


def test_shape_gather_concat_reshape_runs_at_two_sizes():
    proto = _reshape_heads_model()
    mod = from_onnx(proto)
    for shape in ((1, 3, 8), (2, 5, 8)):
        x = np.random.default_rng(0).standard_normal(shape).astype("float32")
        np.testing.assert_allclose(run_unity(mod, x)[0], run_ort(proto, {"x": x})[0])


def _position_ids_model() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i1"], ["seq"], axis=0),
        helper.make_node("Range", ["zero", "seq", "one"], ["pos"]),
        helper.make_node("Unsqueeze", ["pos", "ax0"], ["pos2"]),
        helper.make_node("Expand", ["pos2", "s2"], ["y"]),
        helper.make_node("Shape", ["x"], ["s2_full"], end=2),
        helper.make_node("Identity", ["s2_full"], ["s2"]),
    ]
    nodes = [nodes[0], nodes[1], nodes[2], nodes[3], nodes[5], nodes[6], nodes[4]]
    inits = {"i1": np.array(1, "int64"), "zero": np.array(0, "int64"), "one": np.array(1, "int64"),
             "ax0": np.array([0], "int64")}  # fmt: skip
    return model(nodes, [tensor("x", FLOAT, ["batch", "seq", 8])], [tensor("y", INT64, ["batch", "seq"])],
                 inits)  # fmt: skip


def test_range_of_seq_gives_symbolic_position_ids():
    proto = _position_ids_model()
    mod = from_onnx(proto)
    assert _ret_shape(mod) == (B, S)
    x = np.zeros((2, 5, 8), "float32")
    np.testing.assert_array_equal(run_unity(mod, x)[0], run_ort(proto, {"x": x})[0])


def test_constant_of_shape_and_slice_with_symbolic_shapes():
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("ConstantOfShape", ["s"], ["ones"], value=helper.make_tensor("v", FLOAT, [1], [1.0])),
        helper.make_node("Add", ["x", "ones"], ["x1"]),
        helper.make_node("Gather", ["s", "i1"], ["seq"], axis=0),
        helper.make_node("Unsqueeze", ["seq", "ax0"], ["end"]),
        helper.make_node("Slice", ["x1", "start", "end", "ax1"], ["y"]),
    ]
    inits = {"i1": np.array(1, "int64"), "ax0": np.array([0], "int64"), "start": np.array([1], "int64"),
             "ax1": np.array([1], "int64")}  # fmt: skip
    proto = model(nodes, [tensor("x", FLOAT, ["batch", "seq"])], [tensor("y", FLOAT, ["batch", None])], inits)
    mod = from_onnx(proto)
    assert _ret_shape(mod)[0] == B
    x = np.arange(12, dtype="float32").reshape(3, 4)
    np.testing.assert_allclose(run_unity(mod, x)[0], run_ort(proto, {"x": x})[0])


def test_slice_with_negative_bounds_on_the_seq_axis_runs_at_two_lengths():
    # x[:, -1:] (last token), x[:, :-1] and x[:, ::-1] (reverse) over a symbolic `seq` axis
    int64_max = np.iinfo("int64").max
    nodes = [
        helper.make_node("Slice", ["x", "m1", "big", "ax1"], ["last"]),
        helper.make_node("Slice", ["x", "zero", "m1", "ax1"], ["head"]),
        helper.make_node("Slice", ["x", "m1", "small", "ax1", "m1"], ["rev"]),
    ]
    inits = {"m1": np.array([-1], "int64"), "big": np.array([int64_max], "int64"),
             "small": np.array([-int64_max - 1], "int64"), "zero": np.array([0], "int64"),
             "ax1": np.array([1], "int64")}  # fmt: skip
    outputs = [tensor("last", FLOAT, ["batch", 1, 4]), tensor("head", FLOAT, ["batch", None, 4]),
               tensor("rev", FLOAT, ["batch", "seq", 4])]  # fmt: skip
    proto = model(nodes, [tensor("x", FLOAT, ["batch", "seq", 4])], outputs, inits)
    mod = from_onnx(proto)
    ret = mod["main"].ret_struct_info  # type: ignore[index]
    assert [tuple(f.shape) for f in ret.fields] == [(B, 1, 4), (B, S - 1, 4), (B, S, 4)]
    for shape in ((2, 1, 4), (3, 6, 4)):
        x = np.random.default_rng(1).standard_normal(shape).astype("float32")
        got, want = run_unity(mod, x), run_ort(proto, {"x": x})
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)


def _position_table_model() -> onnx.ModelProto:
    """BERT's position embeddings: rows [past : past + seq] of a 16-row table, added to x."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i1"], ["seq"], axis=0),
        helper.make_node("Shape", ["past"], ["ps"]),
        helper.make_node("Gather", ["ps", "i1"], ["p"], axis=0),
        helper.make_node("Add", ["p", "seq"], ["stop"]),
        helper.make_node("Unsqueeze", ["p", "ax0"], ["begin"]),
        helper.make_node("Unsqueeze", ["stop", "ax0"], ["end"]),
        helper.make_node("Slice", ["table", "begin", "end", "ax0"], ["rows"]),
        helper.make_node("Add", ["x", "rows"], ["y"]),
    ]
    inits = {"i1": np.array(1, "int64"), "ax0": np.array([0], "int64"),
             "table": np.random.default_rng(0).standard_normal((16, 4)).astype("float32")}  # fmt: skip
    inputs = [tensor("x", FLOAT, ["batch", "seq", 4]), tensor("past", FLOAT, ["batch", "past_len"])]
    return model(nodes, inputs, [tensor("y", FLOAT, ["batch", "seq", 4])], inits)


def test_slice_of_a_fixed_table_with_symbolic_bounds_runs_at_several_lengths():
    proto = _position_table_model()
    mod = from_onnx(proto)
    assert _ret_shape(mod) == (B, S, 4)
    for batch, seq, past in ((1, 3, 0), (2, 5, 4), (1, 16, 0)):
        x = np.random.default_rng(seq).standard_normal((batch, seq, 4)).astype("float32")
        feeds = {"x": x, "past": np.zeros((batch, past), "float32")}
        np.testing.assert_array_equal(run_unity(mod, x, feeds["past"])[0], run_ort(proto, feeds)[0])


def test_slice_past_the_end_of_a_fixed_table_fails_when_run():
    mod = from_onnx(_position_table_model())
    x, past = np.zeros((1, 5, 4), "float32"), np.zeros((1, 12), "float32")  # rows 12..17 of 16
    with pytest.raises(ValueError, match=r"match_cast of Slice\w*_bounds.*got \(4, 4\): dim 0 must be seq = 5"):
        run_unity(mod, x, past)


def test_slice_from_a_bound_that_may_be_negative_is_refused():
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
             helper.make_node("Sub", ["n", "three"], ["b"]), helper.make_node("Unsqueeze", ["b", "ax0"], ["begin"]),
             helper.make_node("Slice", ["table", "begin", "end", "ax0"], ["y"])]  # fmt: skip
    inits = {"i0": np.array(0, "int64"), "three": np.array(3, "int64"), "ax0": np.array([0], "int64"),
             "end": np.array([16], "int64"), "table": np.zeros((16,), "float32")}  # fmt: skip
    proto = model(nodes, [tensor("x", FLOAT, ["n"])], [tensor("y", FLOAT, [None])], inits)
    with pytest.raises(OnnxImportError, match=r"symbolic bound n - 3, which may be negative"):
        from_onnx(proto)


def test_rows_of_batch_times_seq_reach_kernels_as_both_symbols():
    # Reshape (batch, seq, 4) -> (batch * seq, 4) -> MatMul: no kernel argument has `batch`
    # or `seq` as a whole dim, so both are passed to it as scalars
    nodes = [helper.make_node("Reshape", ["x", "rows"], ["x2"]), helper.make_node("MatMul", ["x2", "w"], ["h"]),
             helper.make_node("Relu", ["h"], ["y"])]  # fmt: skip
    inits = {"rows": np.array([-1, 4], "int64"), "w": np.ones((4, 3), "float32")}
    proto = model(nodes, [tensor("x", FLOAT, ["batch", "seq", 4])], [tensor("y", FLOAT, [None, 3])], inits)
    mod = from_onnx(proto)
    assert _ret_shape(mod) == (B * S, 3)
    for shape in ((1, 2, 4), (3, 5, 4)):
        x = np.random.default_rng(3).standard_normal(shape).astype("float32")
        np.testing.assert_allclose(run_unity(mod, x)[0], run_ort(proto, {"x": x})[0], rtol=1e-6)


def test_shape_output_scatter_nd_and_cumprod_run_on_symbolic_shapes():
    # Shape(x) as an output is a `shape_to_tensor` of the symbols; ScatterND and CumProd
    # are legalized to topi.scatter_nd / topi.cumprod.
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("ScatterND", ["x", "idx", "upd"], ["scattered"], reduction="add"),
        helper.make_node("CumProd", ["x", "ax1"], ["cp"], exclusive=1, reverse=1),
    ]
    inits = {"ax1": np.array(1, "int64")}
    inputs = [tensor("x", FLOAT, ["batch", "seq"]), tensor("idx", INT64, [2, 1]),
              tensor("upd", FLOAT, [2, "seq"])]  # fmt: skip
    outputs = [tensor("shape", INT64, [2]), tensor("scattered", FLOAT, ["batch", "seq"]),
               tensor("cp", FLOAT, ["batch", "seq"])]  # fmt: skip
    proto = model(nodes, inputs, outputs, inits, opset=26)  # CumProd is new in opset 26
    mod = from_onnx(proto)
    assert {"relax.shape_to_tensor", "relax.scatter_nd", "relax.cumprod"} <= set(_calls(mod))
    reference = ReferenceEvaluator(proto)  # onnxruntime may predate opset 26
    rng = np.random.default_rng(2)
    for batch, seq in ((3, 1), (4, 5)):
        x = rng.uniform(0.5, 1.5, (batch, seq)).astype("float32")
        idx = np.array([[batch - 1], [0]], "int64")
        upd = rng.standard_normal((2, seq)).astype("float32")
        got = run_unity(mod, x, idx, upd)
        want = reference.run(None, {"x": x, "idx": idx, "upd": upd})
        np.testing.assert_array_equal(got[0], [batch, seq])
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_initializers_become_constants_and_constant_subgraphs_fold():
    nodes = [helper.make_node("Add", ["w", "w"], ["w2"]), helper.make_node("Mul", ["x", "w2"], ["y"])]
    proto = model(nodes, [tensor("x", FLOAT, [3])], [tensor("y", FLOAT, [3])],
                  {"w": np.array([1, 2, 3], "float32")})  # fmt: skip
    mod = from_onnx(proto)
    assert _calls(mod) == ["relax.multiply"]
    func = mod["main"]
    mul = func.body.blocks[0].bindings[0].value
    assert isinstance(mul.args[1], Constant) and mul.args[1].data.tolist() == [2, 4, 6]


def test_keep_params_in_input_makes_float_initializers_parameters():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    w = np.ones((4, 2), "float32")
    proto = model(nodes, [tensor("x", FLOAT, ["batch", 4])], [tensor("y", FLOAT, ["batch", 2])], {"w": w})
    mod = from_onnx(proto, keep_params_in_input=True)
    func = mod["main"]
    assert [p.name_hint for p in func.params] == ["x", "w"]
    assert func.attrs["num_input"] == 1
    np.testing.assert_array_equal(mod.attrs["params"]["main"][0].data, w)
    assert "def main(x:" in mod.script()
    x = np.arange(8, dtype="float32").reshape(2, 4)
    np.testing.assert_allclose(run_unity(mod, x, w)[0], x @ w)


def test_unsupported_ops_are_listed_in_one_error_before_conversion():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"),
             helper.make_node("NoSuchOp", ["a"], ["b"], name="first_bad"),
             helper.make_node("AlsoMissing", ["b"], ["y"], name="second_bad", domain="com.example")]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [tensor("x", FLOAT, [2])], [tensor("y", FLOAT, [2])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(UnsupportedOpError) as info:
        from_onnx(proto)
    message = str(info.value)
    assert 'NoSuchOp (node "first_bad")' in message
    assert 'com.example:AlsoMissing (node "second_bad")' in message
    assert len(info.value.nodes) == 2


def test_bad_attribute_error_names_the_node_and_op():
    nodes = [helper.make_node("Gelu", ["x"], ["y"], name="act", approximate="cubic")]
    proto = model(nodes, [tensor("x", FLOAT, [2])], [tensor("y", FLOAT, [2])], opset=20)
    with pytest.raises(OnnxImportError, match='Gelu node "act": expects approximate'):
        from_onnx(proto)


def test_dangling_input_error_names_the_node():
    nodes = [helper.make_node("Add", ["x", "ghost"], ["y"], name="add1")]
    graph = helper.make_graph(nodes, "g", [tensor("x", FLOAT, [2])], [tensor("y", FLOAT, [2])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match="Add node \"add1\": input 'ghost' is produced by no"):
        from_onnx(proto)


def test_op_defined_by_a_function_body_is_expanded():
    nodes = [helper.make_node("Attention", ["q", "k", "v"], ["y"])]
    shape = [1, 2, 3, 4]
    proto = model(nodes, [tensor(n, FLOAT, shape) for n in "qkv"], [tensor("y", FLOAT, shape)], opset=23)
    mod = from_onnx(proto)
    assert _ret_shape(mod) == (1, 2, 3, 4)
    assert "relax.nn.softmax" in _calls(mod)


def test_transformer_encoder_compiles_once_and_runs_at_two_sizes():
    proto = encoder_model(layers=2)
    mod = from_onnx(proto)
    assert _ret_shape(mod) == (B, S, 16)
    import unity
    from unity import relax

    vm = relax.VirtualMachine(unity.compile(mod, target="llvm"), unity.cpu())
    rng = np.random.default_rng(1)
    for batch, seq in ((2, 5), (3, 7)):
        x = rng.standard_normal((batch, seq, 16)).astype("float32")
        got = vm["main"](x).numpy()
        np.testing.assert_allclose(got, run_ort(proto, {"x": x})[0], rtol=1e-3, atol=1e-4)


def test_shape_dict_names_symbols_and_dtype_dict_overrides_dtypes():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", FLOAT, [None, 3])],
              [tensor("y", FLOAT, [None, 3])])  # fmt: skip
    x = from_onnx(m, shape_dict={"x": ("rows", 3)}, dtype_dict={"x": "float16"})["main"].params[0]
    assert tuple(x.struct_info.shape) == (sym("rows"), 3)
    assert x.struct_info.dtype == "float16"


def test_from_onnx_rejects_what_is_not_a_model():
    with pytest.raises(TypeError, match="expects an onnx.ModelProto or a path"):
        from_onnx(42)  # type: ignore[arg-type]


def test_layout_transposes_and_channel_shuffle_fused_into_padded_convs_match_onnxruntime():
    """An NHWC input transposed into a padded conv, then a channel shuffle into a padded
    depthwise conv: both injective chains are computed inside the convs' padding copies
    (`FuseOps` staged edges), on the channel-blocked layout the CPU pipeline picks."""
    from unity.ir.transform import PassContext

    rng = np.random.default_rng(0)
    inits = {
        "w": rng.standard_normal((16, 16, 3, 3)).astype(np.float32),
        "wd": rng.standard_normal((16, 1, 3, 3)).astype(np.float32),
        "s1": np.array([1, 4, 4, 12, 12], np.int64),
        "s2": np.array([1, 16, 12, 12], np.int64),
    }
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2]),
        helper.make_node("Conv", ["t", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Reshape", ["r", "s1"], ["r1"]),
        helper.make_node("Transpose", ["r1"], ["r2"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Reshape", ["r2", "s2"], ["r3"]),
        helper.make_node("Conv", ["r3", "wd"], ["y"], pads=[1, 1, 1, 1], group=16),
    ]
    m = model(nodes, [tensor("x", FLOAT, [1, 12, 12, 16])], [tensor("y", FLOAT, [1, 16, 12, 12])],
              inits)  # fmt: skip
    x = rng.standard_normal((1, 12, 12, 16)).astype(np.float32)
    with PassContext(opt_level=3):
        got = run_unity(from_onnx(m), x)[0]
    np.testing.assert_allclose(got, run_ort(m, {"x": x})[0], rtol=1e-4, atol=1e-4)


def test_matmul_of_an_image_by_a_matrix_runs_on_rows_of_pixels():
    # ConvNeXt's token-wise linear layer: (n, h, w, k) x (k, m) is a GEMM over h * w rows
    inits = {"w": np.random.default_rng(4).standard_normal((8, 12)).astype("float32")}
    proto = model([helper.make_node("MatMul", ["x", "w"], ["y"])], [tensor("x", FLOAT, ["batch", 5, 7, 8])],
                  [tensor("y", FLOAT, ["batch", 5, 7, 12])], inits)  # fmt: skip
    mod = from_onnx(proto)
    legalized = LegalizeOps()(mod)  # the legalization of relax.matmul reshapes the rows
    bindings = [b for blk in legalized["main"].body.blocks for b in blk.bindings]
    calls = [b.value for b in bindings if isinstance(b.value, Call)]
    assert [c.args[0].name_hint for c in calls] == ["reshape", "matmul", "reshape1"]
    assert tuple(calls[1].struct_info.shape) == (B, 35, 12)
    for batch in (1, 2):
        x = np.random.default_rng(batch).standard_normal((batch, 5, 7, 8)).astype("float32")
        np.testing.assert_allclose(run_unity(mod, x)[0], run_ort(proto, {"x": x})[0], rtol=1e-5, atol=1e-6)


def test_a_token_id_outside_the_vocabulary_fails_when_run_naming_the_ids():
    # onnxruntime: "indices element out of data bounds"; the kernel used to clamp the id
    table = np.random.default_rng(5).standard_normal((10, 4)).astype("float32")
    proto = model([helper.make_node("Gather", ["table", "ids"], ["y"], axis=0)], [tensor("ids", INT64, ["batch", "seq"])],
                  [tensor("y", FLOAT, ["batch", "seq", 4])], {"table": table})  # fmt: skip
    mod = from_onnx(proto)
    ids = np.array([[1, -10, 9]], "int64")
    np.testing.assert_array_equal(run_unity(mod, ids)[0], run_ort(proto, {"ids": ids})[0])
    with pytest.raises(RuntimeError, match=r"an index into \w+ axis 0 is outside \[0, 10\) \(it is read from ids\)"):
        run_unity(mod, np.array([[1, 10, 2]], "int64"))
