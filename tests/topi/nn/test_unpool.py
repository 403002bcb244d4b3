"""max_unpool vs numpy: indices from a numpy max pool, values scattered to their flat position."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.topi.run import check, rand
from unity import te
from unity.topi.nn.unpool import max_unpool, unpool_shape


def _max_pool_numpy(a, kernel, strides, pads):
    """Max pooling with the flat (whole-tensor) index of each maximum, first one on ties."""
    rank = len(kernel)
    spatial = a.shape[2:]
    out = [
        (spatial[d] + pads[d] + pads[d + rank] - kernel[d]) // strides[d] + 1 for d in range(rank)
    ]
    values = np.zeros((*a.shape[:2], *out), a.dtype)
    indices = np.zeros(values.shape, "int64")
    for n, c, *o in itertools.product(*map(range, values.shape)):
        best, where = -np.inf, 0
        for k in itertools.product(*map(range, kernel)):
            pos = [o[d] * strides[d] - pads[d] + k[d] for d in range(rank)]
            if (
                all(0 <= p < s for p, s in zip(pos, spatial, strict=True))
                and a[(n, c, *pos)] > best
            ):
                best, where = a[(n, c, *pos)], np.ravel_multi_index((n, c, *pos), a.shape)
        values[(n, c, *o)], indices[(n, c, *o)] = best, where
    return values, indices


def _max_unpool_numpy(values, indices, kernel, strides, pads, output=None):
    inferred = unpool_shape(values.shape[2:], kernel, strides, pads)
    flat = np.zeros(values.shape[0] * values.shape[1] * int(np.prod(inferred)), values.dtype)
    flat[indices.reshape(-1)] = values.reshape(-1)  # numpy: the last of repeated indices wins
    out = np.zeros((*values.shape[:2], *(output or inferred)), values.dtype)
    out[(slice(None), slice(None), *(slice(0, i) for i in inferred))] = flat.reshape(
        *values.shape[:2], *inferred
    )
    return out


@pytest.mark.parametrize(("shape", "kernel", "strides", "pads", "output"), [
    ((2, 3, 4, 6), (2, 2), (2, 2), (0, 0, 0, 0), None),
    ((1, 2, 7, 7), (3, 3), (2, 2), (1, 1, 1, 1), None),
    ((2, 2, 9), (3,), (1,), (0, 0), None),
    ((1, 2, 4, 4, 4), (2, 2, 2), (2, 2, 2), (0,) * 6, None),
    ((1, 1, 4, 4), (2, 2), (2, 2), (0, 0, 0, 0), (5, 6)),
])  # fmt: skip
def test_max_unpool_matches_numpy(shape, kernel, strides, pads, output):
    values, indices = _max_pool_numpy(rand(shape), kernel, strides, pads)
    x, i = te.placeholder(values.shape, name="x"), te.placeholder(indices.shape, "int64", name="i")
    want = _max_unpool_numpy(values, indices, kernel, strides, pads, output)
    check(
        [x, i], max_unpool(x, i, kernel, strides, pads, output), [values, indices], want, build=True
    )


def test_max_unpool_rejects_an_output_smaller_than_the_inferred_one():
    x, i = te.placeholder((1, 1, 2, 2), name="x"), te.placeholder((1, 1, 2, 2), "int64", name="i")
    with pytest.raises(
        ValueError, match=r"output spatial shape \[3, 4\] is smaller than the inferred \[4, 4\]"
    ):
        max_unpool(x, i, (2, 2), (2, 2), output=(3, 4))
