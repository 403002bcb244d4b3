"""Each op's `fold` rule agrees with its legalized kernel (run in the TIR interpreter).

A fold rule that disagrees with the compiled kernel would make FoldConstant a silent
miscompile, so every rule is checked against LegalizeOps + the reference interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest

from unity.relax import BlockBuilder, Constant, TensorStructInfo, Tuple, TupleGetItem, Var, op
from unity.relax.op import fold_rules
from unity.relax.transform import FoldConstant, LegalizeOps

from ..transform.reference import evaluate

RNG = np.random.default_rng(11)
FLOAT = RNG.uniform(0.25, 2.0, (2, 3)).astype("float32") * RNG.choice([-1, 1], (2, 3)).astype("float32")
POSITIVE = np.abs(FLOAT) + 0.5
INTS = np.array([[7, -7, 5], [-9, 4, 3]], "int32")
INT_DIVISOR = np.array([[2, 2, -3], [4, -3, 2]], "int32")


def _fold_vs_kernel(make, *arrays, rtol=1e-5, atol=1e-6):
    """Fold `make(*constants)` and compare with its legalized kernel on the same inputs."""
    x = Var("x", TensorStructInfo((1,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        out = bb.emit(make(*(Constant(a) for a in arrays)))
        bb.emit_func_output(out)
    mod = bb.get()
    folded = FoldConstant()(mod)
    value = folded["main"].body.blocks[0].bindings[-1].value
    assert isinstance(value, Constant), f"{make} did not fold"
    kernel = evaluate(LegalizeOps()(mod), np.zeros(1, "float32"))
    assert value.data.dtype == kernel.dtype and value.data.shape == kernel.shape
    np.testing.assert_allclose(value.data, kernel, rtol=rtol, atol=atol)


UNARY = ["abs", "negative", "sign", "square", "floor", "ceil", "round", "exp", "tanh", "sigmoid",
         "sin", "cos", "erf", "isnan", "logical_not"]  # fmt: skip
POSITIVE_UNARY = ["log", "sqrt", "rsqrt"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "less",
          "greater_equal", "equal", "floor_mod", "mod", "floor_divide"]  # fmt: skip
INT_BINARY = ["divide", "mod", "floor_mod", "floor_divide", "multiply"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_fold_matches_kernel(name):
    fn = getattr(op, name)
    data = FLOAT > 0 if name == "logical_not" else FLOAT
    _fold_vs_kernel(fn, data)


@pytest.mark.parametrize("name", POSITIVE_UNARY)
def test_positive_unary_fold_matches_kernel(name):
    _fold_vs_kernel(getattr(op, name), POSITIVE)


@pytest.mark.parametrize("name", BINARY)
def test_binary_fold_matches_kernel(name):
    other = POSITIVE if name == "power" else FLOAT[::-1].copy()
    base = POSITIVE if name == "power" else FLOAT
    _fold_vs_kernel(getattr(op, name), base, other)


@pytest.mark.parametrize("name", INT_BINARY)
def test_integer_binary_fold_matches_kernel(name):
    _fold_vs_kernel(getattr(op, name), INTS, INT_DIVISOR)


@pytest.mark.parametrize(
    "make",
    [
        lambda a: op.reshape(a, (3, 2)),
        lambda a: op.permute_dims(a, (1, 0)),
        lambda a: op.concat([a, a], axis=1),
        lambda a: op.astype(a, "int32"),
        lambda a: op.sum(a, axis=1, keepdims=True),
        lambda a: op.mean(a, axis=0),
        lambda a: op.max(a),
        lambda a: op.nn.softmax(a),
        lambda a: op.nn.relu(a),
        lambda a: op.clip(a, -0.5, 0.5),
        lambda a: op.strided_slice(a, [1], [0], [3], [2]),
        lambda a: op.expand_dims(a, [0]),
        lambda a: op.matmul(a, op.permute_dims(a)),
        lambda a: op.variance(a, axis=1),
        lambda a: op.argmax(a, axis=1),
        lambda a: op.argmin(a),
        lambda a: op.cumsum(a, axis=1),
        lambda a: op.tril(a, 1),
        lambda a: op.take(a, Constant(np.array([2, 0], "int64")), axis=1),
        lambda a: TupleGetItem(op.split(a, 3, axis=1), 2),
    ],
)  # fmt: skip
def test_shape_and_reduce_folds_match_kernels(make):
    _fold_vs_kernel(make, FLOAT)


def test_every_rule_is_registered_once():
    before = op.exp.get_attr("fold")
    fold_rules.register_fold_rules()
    assert op.exp.get_attr("fold") is before


def test_split_of_a_constant_folds_to_a_tuple_of_constants():
    x = Var("x", TensorStructInfo((1,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        parts = bb.emit(op.split(Constant(FLOAT), [1], axis=0))
        first = bb.emit(TupleGetItem(parts, 1))
        bb.emit_func_output(op.add(first, first))
    folded = FoldConstant()(bb.get())["main"].body.blocks[0].bindings
    assert isinstance(folded[0].value, Tuple) and isinstance(folded[1].value, Constant)
    np.testing.assert_array_equal(folded[1].value.data, FLOAT[1:])
    np.testing.assert_array_equal(folded[2].value.data, FLOAT[1:] * 2)
