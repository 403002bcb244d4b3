"""Malformed ONNX models: an OnnxImportError naming the node (or graph input/output)."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

from unity.relax.frontend.onnx import OnnxImportError, UnsupportedOpError, from_onnx

X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])


def _model(nodes, inputs=(X,), outputs=(Y,), inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", list(inputs), list(outputs), initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


CYCLE_ADD_RELU = (
    "the graph has a cycle: "
    "Add node \"Add_0\" -('a')-> Relu node \"Relu_1\" -('b')-> Add node \"Add_0\""
)
CYCLE_RELU_ABS_NEG = (
    "Relu node \"Relu_0\" -('y')-> Abs node \"Abs_1\" -('u')-> Neg node \"Neg_2\" "
    "-('t')-> Relu node \"Relu_0\""
)


@pytest.mark.parametrize(
    "model, phrases",
    [
        (_model([_node("Add", ["x", "z"], ["y"])]),
         ['Add node "Add_0"', "input 'z' is produced by no earlier node"]),
        (_model([_node("Relu", ["x"], ["t"])]), ["graph output 'y' is produced by no node"]),
        (_model([_node("Add", ["x", "w"], ["y"])],
                inputs=(X, helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 5]))),
         ['Add node "Add_0"', "cannot broadcast shapes (2, 3) and (4, 5)"]),
        (_model([_node("Reshape", ["x", "s"], ["y"])],
                inits=[helper.make_tensor("s", TensorProto.INT64, [2], [4, 4])]),
         ['Reshape node "Reshape_0"', "cannot reshape (2, 3)"]),
        (_model([_node("Softmax", ["x"], ["y"], axis=5)]),
         ['Softmax node "Softmax_0"', "axis 5 is out of range"]),
        (_model([_node("Gemm", ["x"], ["y"])]), ['Gemm node "Gemm_0"', "misses a required input"]),
        (_model([_node("Identity", ["x"], ["y"])],
                inputs=(helper.make_tensor_value_info("x", TensorProto.STRING, [2]),)),
         ["graph input 'x' has element type STRING"]),
        # A cycle is reported as one, with the nodes and values on it (a node off the cycle
        # reading from it is not named).
        (_model([_node("Add", ["x", "b"], ["a"]), _node("Relu", ["a"], ["b"]),
                 _node("Relu", ["a"], ["y"])]),
         [CYCLE_ADD_RELU]),
        (_model([_node("Relu", ["t"], ["y"]), _node("Abs", ["y"], ["u"]), _node("Neg", ["u"], ["t"])]),
         [CYCLE_RELU_ABS_NEG]),
        (_model([_node("Relu", ["y"], ["y"])]),
         ['the graph has a cycle: Relu node "Relu_0" -(\'y\')-> Relu node "Relu_0"']),
    ],
)
def test_malformed_model(model, phrases):
    with pytest.raises(OnnxImportError) as info:
        from_onnx(model)
    for phrase in phrases:
        assert phrase in str(info.value)


def test_unsupported_ops_are_listed_all_at_once():
    model = _model([_node("FooOp", ["x"], ["t"]), _node("BarOp", ["t"], ["u"]),
                    _node("Relu", ["u"], ["v"], domain="com.foo"), _node("Relu", ["v"], ["y"])])
    with pytest.raises(UnsupportedOpError) as info:
        from_onnx(model)
    text = str(info.value)
    assert "unsupported ONNX ops (3)" in text
    for phrase in ['FooOp (node "#0")', 'BarOp (node "#1")', 'com.foo:Relu (node "#2")']:
        assert phrase in text


@pytest.mark.parametrize(
    "node, phrase",
    [
        (_node("Softmax", ["x"], ["y"], axis="one"),
         "attribute 'axis' must be an INT, got a STRING ('one')"),
        (_node("Transpose", ["x"], ["y"], perm=1.5),
         "attribute 'perm' must be an INTS, got a FLOAT (1.5)"),
        (_node("LeakyRelu", ["x"], ["y"], alpha=[0.1, 0.2]),
         "attribute 'alpha' must be a FLOAT, got a FLOATS ([0.1"),
    ],
    ids=["softmax-axis", "transpose-perm", "leakyrelu-alpha"],
)
def test_wrong_attribute_type_names_the_attribute(node, phrase):
    with pytest.raises(OnnxImportError) as info:
        from_onnx(_model([node]))
    assert f'{node.op_type} node "{node.op_type}_0": {phrase}' in str(info.value)


def test_int_attribute_where_a_float_is_due_is_accepted():
    node = _node("LeakyRelu", ["x"], ["y"], alpha=1)  # exporters write alpha=1 as an INT
    assert from_onnx(_model([node]))["main"].ret_struct_info.shape == (2, 3)


def test_opset_out_of_range():
    from unity.relax.frontend.onnx.validate import MAX_OPSET

    newer = f"opset 99, newer than unity supports .opsets 7 to {MAX_OPSET}"
    with pytest.raises(OnnxImportError, match=newer):
        from_onnx(_model([_node("Relu", ["x"], ["y"])], opset=99))
    with pytest.raises(OnnxImportError, match="opset 99"):
        from_onnx(_model([_node("Relu", ["x"], ["y"])]), opset=99)
    assert MAX_OPSET >= 21  # the range, 7 to 21, at least
    from_onnx(_model([_node("Relu", ["x"], ["y"])], opset=MAX_OPSET))


def test_value_produced_twice():
    model = _model([_node("Relu", ["x"], ["y"]), _node("Abs", ["x"], ["y"])])
    with pytest.raises(OnnxImportError) as info:
        from_onnx(model)
    assert str(info.value) == (
        "value 'y' is produced by two nodes: Relu node \"Relu_0\" and Abs node \"Abs_1\" "
        "(ONNX values are assigned once)"
    )
    twice = "value 'x' is a graph input and also produced by Relu node"
    with pytest.raises(OnnxImportError, match=twice):
        from_onnx(_model([_node("Relu", ["y"], ["x"]), _node("Abs", ["x"], ["y"])]))


def test_unsorted_acyclic_graph_is_sorted():
    import numpy as np

    import unity
    from unity import relax

    model = _model([_node("Relu", ["t"], ["y"]), _node("Neg", ["x"], ["t"])])
    ex = unity.compile(from_onnx(model), target="llvm")
    a = np.array([[1, -2, 3], [-4, 5, -6]], "float32")
    got = relax.VirtualMachine(ex, unity.cpu())["main"](a).numpy()
    np.testing.assert_array_equal(got, np.maximum(-a, 0))
