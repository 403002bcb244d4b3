"""`topi.linalg.det` vs `np.linalg.det`: batches, float64, pivoting, singular matrices."""

from __future__ import annotations

import numpy as np
import pytest

from tests.topi.run import check
from unity import te
from unity.topi.linalg import det

RNG = np.random.default_rng(7)


@pytest.mark.parametrize(("shape", "dtype"), [
    ((3, 3), "float32"), ((2, 4, 4), "float64"), ((2, 3, 5, 5), "float32"), ((1, 1), "float32"),
    ((4, 2, 2), "float64"), ((3, 0, 0), "float32"),
])  # fmt: skip
def test_det_matches_numpy(shape, dtype):
    x_t = te.placeholder(shape, name="x", dtype=dtype)
    x = RNG.standard_normal(shape).astype(dtype)
    check([x_t], det(x_t), [x], np.asarray(np.linalg.det(x)), rtol=1e-4, atol=1e-5, build=True)


def test_det_pivots_and_singular_matrices():
    x = np.array([
        [[0, 1, 2], [0, 3, 4], [1, 5, 6]],    # zero in the first pivot position
        [[1, 2, 3], [2, 4, 6], [1, 5, 6]],    # rank 2
        [[0, 0, 1], [0, 0, 2], [3, 4, 5]],    # a zero pivot column
        [[1e-3, 4, 1], [2, 1, 0], [5, 3, 2]], # a small leading entry
    ], "float32")  # fmt: skip
    x_t = te.placeholder(x.shape, name="x")
    check([x_t], det(x_t), [x], np.linalg.det(x).astype("float32"), rtol=1e-5, atol=1e-5, build=True)


def test_det_needs_a_static_square_float_matrix():
    n = te.var("n")
    with pytest.raises(ValueError, match="det: needs a static matrix size, got n x n"):
        det(te.placeholder((n, n), name="x"))
    with pytest.raises(ValueError, match="det: expects square matrices, got 2 x 3"):
        det(te.placeholder((2, 3), name="x"))
    with pytest.raises(ValueError, match="det: expects a float tensor, got int32"):
        det(te.placeholder((2, 2), name="x", dtype="int32"))
