"""`matmul` (numpy semantics) and `nn.dense` vs numpy."""

from __future__ import annotations

import numpy as np
import pytest

from tests.topi.run import check, rand
from unity import te, topi

SHAPES = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
          ((2, 1, 2, 3), (4, 3, 2)), ((3,), (2, 3, 4))]  # fmt: skip


@pytest.mark.parametrize(("sa", "sb"), SHAPES)
def test_matmul_matches_numpy(sa, sb):
    a_t, b_t = te.placeholder(sa, name="a"), te.placeholder(sb, name="b")
    a, b = rand(sa), rand(sb)
    check([a_t, b_t], topi.matmul(a_t, b_t), [a, b], np.asarray(a @ b), rtol=1e-5, atol=1e-5)


def test_matmul_symbolic_batch_and_out_dtype():
    n = te.var("n")
    a_t, b_t = (
        te.placeholder((n, 2, 3), "float16", name="a"),
        te.placeholder((3, 2), "float16", name="b"),
    )
    out = topi.matmul(a_t, b_t, out_dtype="float32")
    assert out.dtype == "float32"
    for batch in (1, 3):
        a, b = rand((batch, 2, 3), "float16"), rand((3, 2), "float16")
        check(
            [a_t, b_t], out, [a, b], a.astype("float32") @ b.astype("float32"), rtol=1e-5, atol=1e-5
        )


def test_matmul_rejects_mismatched_reduction():
    with pytest.raises(ValueError, match="reduction dims differ: 3 vs 4"):
        topi.matmul(te.placeholder((2, 3), name="a"), te.placeholder((4, 2), name="b"))


def test_dense_with_bias():
    x_t, w_t, b_t = (
        te.placeholder(s, name=n) for s, n in (((2, 3, 4), "x"), ((5, 4), "w"), ((5,), "b"))
    )
    x, w, b = rand((2, 3, 4)), rand((5, 4)), rand((5,))
    check(
        [x_t, w_t, b_t], topi.nn.dense(x_t, w_t, b_t), [x, w, b], x @ w.T + b, rtol=1e-5, atol=1e-5
    )
