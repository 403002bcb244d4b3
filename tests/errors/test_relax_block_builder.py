"""Building ill-typed relax with `BlockBuilder` is a DiagnosticError naming the op and shapes."""

from __future__ import annotations

import pytest

from unity import relax
from unity.ir.diagnostics import DiagnosticError


def _tensor(name, shape, dtype="float32"):
    return relax.Var(name, relax.TensorStructInfo(shape, dtype))


def _build(make, *params):
    bb = relax.BlockBuilder()
    with bb.function("main", list(params)):
        out = bb.emit(make(*params))
        bb.emit_func_output(out)
    return bb.get()


X = (2, 3)


@pytest.mark.parametrize(
    "make, params, phrases",
    [
        (relax.op.add, [X, (4, 5)], ["add cannot broadcast shapes (2, 3) and (4, 5)", "dims 2 and 4"]),
        (relax.op.matmul, [X, (4, 5)], ["matmul reduces over mismatched dims: 3 vs 4"]),
        (lambda x: relax.op.sum(x, axis=[5]), [X], ["sum axis 5 is out of range", "rank 2"]),
        (lambda x: relax.op.reshape(x, (4, 4)), [X], ["cannot reshape (2, 3) (6 elements)"]),
        (lambda x: relax.op.nn.softmax(x, axis=4), [X], ["nn.softmax axis 4 is out of range"]),
        (lambda x, y: relax.op.concat([x, y], axis=0), [X, (2, 3, 4)],
         ["concat expects tensors of one rank", "[2, 3]"]),
        (lambda x: relax.op.add(x, 1.0), [X],
         ["relax.add: argument 1 must be a relax expression, got float 1.0", "relax.const"]),
        (lambda x: relax.op.add(x, "a"), [X], ["argument 1 must be a relax expression, got str"]),
    ],
)
def test_bad_op(make, params, phrases):
    vars_ = [_tensor(f"p{k}", shape) for k, shape in enumerate(params)]
    with pytest.raises(DiagnosticError) as info:
        _build(make, *vars_)
    for phrase in phrases:
        assert phrase in str(info.value)


def test_mismatched_dtypes():
    x, y = _tensor("x", X), _tensor("y", X, "int32")
    with pytest.raises(DiagnosticError, match="add expects matching dtypes, got float32 vs int32"):
        _build(relax.op.add, x, y)


def test_a_large_constant_in_a_message_prints_without_its_bytes():
    import numpy as np

    x = _tensor("x", (1, 3, 8, 8), "float16")
    weight = relax.const(np.ones((64, 3, 7, 7), "float32"))  # 9408 elements: 50 KB of base64
    with pytest.raises(DiagnosticError) as info:
        _build(lambda v: relax.op.nn.conv2d(v, weight), x)
    text = str(info.value)
    assert 'R.const_b64((64, 3, 7, 7), "float32", ...)' in text and len(text) < 2000


def test_dataflow_var_escaping_its_block():
    bb = relax.BlockBuilder()
    x = _tensor("x", X)
    expected = "function output lv is a DataflowVar: emit_output"
    with pytest.raises(DiagnosticError, match=expected), bb.function("main", [x]):
        with bb.dataflow():
            z = bb.emit(relax.op.add(x, x))
        bb.emit_func_output(z)


def test_emit_outside_a_function():
    bb = relax.BlockBuilder()
    x = _tensor("x", X)
    with pytest.raises(RuntimeError, match=r"emit must be called inside bb.function"):
        bb.emit(relax.op.add(x, x))


@pytest.mark.parametrize(
    "shape, dtype, exc, phrase",
    [
        ((2, 3), "float33", ValueError, "unknown dtype 'float33'"),
        ((2.5, 3), "float32", TypeError, "a shape dimension must be an int"),
        ((-2, 3), "float32", ValueError, "TensorStructInfo: shape (-2, 3) has a negative dim"),
    ],
)
def test_bad_struct_info(shape, dtype, exc, phrase):
    with pytest.raises(exc) as info:
        relax.TensorStructInfo(shape, dtype)
    assert phrase in str(info.value)
