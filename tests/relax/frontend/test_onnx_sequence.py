"""Sequence and optional ops through `from_onnx`: resolved at import time, against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import unity
from unity import relax
from unity.relax.frontend.onnx import OnnxImportError, from_onnx

from .onnx_helpers import FLOAT, model, run_ort, tensor

RNG = np.random.default_rng(5)


def _run(proto, *inputs):
    vm = relax.VirtualMachine(unity.compile(from_onnx(proto)), unity.cpu())
    return vm["main"](*inputs)


def test_split_edit_and_stack_a_sequence_match_onnxruntime():
    """Split rows into a sequence, insert a tensor at the front, erase the last, read one
    back, stack the rest on a new axis and count them."""
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["seq"], axis=0, keepdims=0),
        helper.make_node("SequenceInsert", ["seq", "row", "zero"], ["seq2"]),
        helper.make_node("SequenceErase", ["seq2"], ["seq3"]),
        helper.make_node("SequenceAt", ["seq3", "one"], ["second"]),
        helper.make_node("ConcatFromSequence", ["seq3"], ["stacked"], axis=1, new_axis=1),
        helper.make_node("SequenceLength", ["seq3"], ["count"]),
    ]
    consts = {"zero": np.array(0, "int64"), "one": np.array(-3, "int64")}
    proto = model(nodes, [tensor("x", FLOAT, [4, 6]), tensor("row", FLOAT, [6])],
                  [tensor("second", FLOAT, [6]), tensor("stacked", FLOAT, [6, 4]),
                   helper.make_tensor_value_info("count", TensorProto.INT64, [])], consts)  # fmt: skip
    x, row = RNG.standard_normal((4, 6)).astype("float32"), RNG.standard_normal(6).astype("float32")
    want = run_ort(proto, {"x": x, "row": row})
    got = [t.numpy() for t in _run(proto, x, row)]
    np.testing.assert_array_equal(got[0], x[0])  # [row, x0, x1, x2][-3]
    np.testing.assert_array_equal(got[1], np.stack([row, x[0], x[1], x[2]], axis=1))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_a_sequence_output_is_a_tuple_of_its_tensors():
    node = helper.make_node("SplitToSequence", ["x", "split"], ["parts"], axis=1)
    out = helper.make_tensor_sequence_value_info("parts", TensorProto.FLOAT, None)
    proto = model([node], [tensor("x", FLOAT, ["n", 5])], [out], {"split": np.array(2, "int64")})
    x = RNG.standard_normal((3, 5)).astype("float32")
    parts = _run(proto, x)
    assert [p.numpy().shape for p in parts] == [(3, 2), (3, 2), (3, 1)]
    np.testing.assert_array_equal(np.concatenate([p.numpy() for p in parts], axis=1), x)


def test_sequence_inputs_and_run_time_positions_are_clear_errors():
    seq_in = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)
    at = helper.make_node("SequenceAt", ["s", "i"], ["y"])
    proto = model([at], [seq_in, tensor("i", TensorProto.INT64, [])], [tensor("y", FLOAT, [])], {})
    with pytest.raises(OnnxImportError, match="graph input 's' is a sequence_type"):
        from_onnx(proto)
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"]), helper.make_node("SequenceAt", ["s", "i"], ["y"])]
    proto = model(nodes, [tensor("x", FLOAT, [3]), tensor("i", TensorProto.INT64, [])], [tensor("y", FLOAT, [])], {})
    with pytest.raises(OnnxImportError, match="position"):
        from_onnx(proto)


def test_optionals_are_their_value_or_empty():
    """``Optional(x)`` holds x (`OptionalGetElement` reads it back); ``Optional()`` with a
    type is empty; an optional graph input is taken to hold its tensor."""
    tensor_type = helper.make_tensor_type_proto(TensorProto.FLOAT, [3])
    nodes = [
        helper.make_node("Optional", ["x"], ["ox"]),
        helper.make_node("Optional", [], ["none"], type=tensor_type),
        helper.make_node("OptionalHasElement", ["ox"], ["has_x"]),
        helper.make_node("OptionalHasElement", ["none"], ["has_none"]),
        helper.make_node("OptionalGetElement", ["ox"], ["x2"]),
        helper.make_node("OptionalGetElement", ["maybe"], ["m2"]),
        helper.make_node("Add", ["x2", "m2"], ["y"]),
    ]
    maybe = helper.make_value_info("maybe", helper.make_optional_type_proto(tensor_type))
    outs = [helper.make_tensor_value_info(n, TensorProto.BOOL, []) for n in ("has_x", "has_none")]
    proto = model(nodes, [tensor("x", FLOAT, [3]), maybe], [*outs, tensor("y", FLOAT, [3])], {})
    x, m = RNG.standard_normal(3).astype("float32"), RNG.standard_normal(3).astype("float32")
    got = [t.numpy() for t in _run(proto, x, m)]
    assert (bool(got[0]), bool(got[1])) == (True, False)
    np.testing.assert_array_equal(got[2], x + m)
    for g, w in zip(got, run_ort(proto, {"x": x, "maybe": m}), strict=True):
        np.testing.assert_array_equal(g, w)
