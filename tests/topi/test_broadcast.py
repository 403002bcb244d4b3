"""Binary TOPI ops with numpy broadcasting, and `where`, vs numpy."""

from __future__ import annotations

import numpy as np
import pytest

from tests.topi.run import check, rand
from unity import te, topi

FLOAT_OPS = [
    (topi.add, np.add), (topi.subtract, np.subtract), (topi.multiply, np.multiply),
    (topi.divide, np.divide), (topi.floor_divide, np.floor_divide), (topi.mod, np.fmod),
    (topi.floor_mod, np.mod), (topi.power, np.power), (topi.maximum, np.maximum),
    (topi.minimum, np.minimum), (topi.equal, np.equal), (topi.not_equal, np.not_equal),
    (topi.less, np.less), (topi.less_equal, np.less_equal), (topi.greater, np.greater),
    (topi.greater_equal, np.greater_equal),
]  # fmt: skip


@pytest.mark.parametrize(("op", "ref"), FLOAT_OPS, ids=[o.__name__ for o, _ in FLOAT_OPS])
def test_binary_broadcasts_like_numpy(op, ref):
    a_t = te.placeholder((3, 1, 4), name="a")
    b_t = te.placeholder((2, 1), name="b")
    a, b = rand((3, 1, 4), low=0.5, high=3), rand((2, 1), low=0.5, high=3)
    a[0, 0, 0] = b[0, 0]  # an equal pair for the comparisons
    check([a_t, b_t], op(a_t, b_t), [a, b], ref(a, b), rtol=1e-5, atol=1e-6)


INT_OPS = [
    (topi.add, np.add), (topi.divide, lambda a, b: np.trunc(a / b).astype(a.dtype)),
    (topi.floor_divide, np.floor_divide), (topi.mod, np.fmod), (topi.floor_mod, np.mod),
    (topi.maximum, np.maximum), (topi.logical_and, np.logical_and),
    (topi.logical_or, np.logical_or),
]  # fmt: skip


@pytest.mark.parametrize(("op", "ref"), INT_OPS, ids=[o.__name__ for o, _ in INT_OPS])
def test_integer_binary_ops_round_like_c_or_numpy(op, ref):
    a_t, b_t = te.placeholder((6,), "int32", name="a"), te.placeholder((6,), "int32", name="b")
    a = np.array([7, -7, 7, -7, 0, 5], "int32")
    b = np.array([2, 2, -2, -2, 3, 1], "int32")
    check([a_t, b_t], op(a_t, b_t), [a, b], ref(a, b))


def test_symbolic_dims_broadcast_at_two_sizes():
    n, m = te.var("n"), te.var("m")
    a_t = te.placeholder((n, 1), name="a")
    b_t = te.placeholder((m,), name="b")
    out = topi.add(a_t, b_t)
    for rows, cols in ((1, 3), (4, 1), (5, 2)):
        a, b = rand((rows, 1)), rand((cols,))
        check([a_t, b_t], out, [a, b], a + b)


def test_scalar_operands_take_the_tensor_dtype():
    x = te.placeholder((3,), "float16", name="x")
    out = topi.multiply(2.0, topi.add(x, 1.0))
    assert out.dtype == "float16"
    a = rand((3,), "float16")
    check([x], out, [a], (2 * (a + 1)).astype("float16"), rtol=1e-3)


def test_where_broadcasts_condition_and_branches():
    c_t = te.placeholder((2, 1), "bool", name="c")
    x_t = te.placeholder((3,), name="x")
    out = topi.where(c_t, x_t, -1.0)
    c, x = np.array([[True], [False]]), rand((3,))
    check([c_t, x_t], out, [c, x], np.where(c, x, -1.0).astype("float32"))


def test_mismatched_constant_dims_are_rejected():
    with pytest.raises(ValueError, match="cannot broadcast dims 3 and 4"):
        topi.add(te.placeholder((3,), name="a"), te.placeholder((4,), name="b"))
