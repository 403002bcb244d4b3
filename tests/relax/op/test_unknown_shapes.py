"""Ops on tensors of unknown shape (known rank or not) infer what they can."""

from unity.relax import TensorStructInfo, Var, op

from .helpers import infer


def _unknown(name, ndim=-1, dtype="float32"):
    return Var(name, TensorStructInfo(None, dtype, ndim))


def test_elementwise_keeps_the_rank():
    sinfo = infer(op.add(_unknown("a", 2), _unknown("b", 1)))
    assert sinfo.shape is None and sinfo.ndim == 2 and sinfo.dtype == "float32"
    assert infer(op.exp(_unknown("a"))).ndim == -1


def test_matmul_conv_and_reduce_give_ranks():
    assert infer(op.matmul(_unknown("a", 3), _unknown("b", 2))).ndim == 3
    assert infer(op.nn.conv2d(_unknown("x", 4), _unknown("w", 4))).ndim == 4
    assert infer(op.sum(_unknown("x", 3), axis=1)).ndim == 2
    assert infer(op.sum(_unknown("x", 3), axis=1, keepdims=True)).ndim == 3


def test_reshape_of_unknown_input_takes_the_target_shape():
    sinfo = infer(op.reshape(_unknown("x"), (2, "n")))
    assert sinfo.ndim == 2 and sinfo.shape[0] == 2
    assert infer(op.reshape(_unknown("x"), (2, -1))).shape is None
    assert infer(op.flatten(_unknown("x", 3))).ndim == 1
    assert infer(op.permute_dims(_unknown("x", 3), [2, 0, 1])).ndim == 3
