"""max_pool_indices vs a numpy loop over the windows (MaxPool's `Indices`, as its spec says)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.topi.run import check
from unity import te
from unity.topi.nn.pool_indices import max_pool_indices

RNG = np.random.default_rng(5)


def _indices_numpy(a, kernel, strides, pads_begin, dilations, output, storage_order):
    """Flat index (whole tensor) of the first maximum of every window, in window order."""
    spatial = a.shape[2:]
    out = np.full((*a.shape[:2], *output), -1, "int64")
    for n, c, *o in itertools.product(*map(range, out.shape)):
        best = None
        for k in itertools.product(*map(range, kernel)):
            pos = [
                o[d] * strides[d] - pads_begin[d] + k[d] * dilations[d] for d in range(len(kernel))
            ]
            if all(0 <= p < s for p, s in zip(pos, spatial, strict=True)) and (
                best is None or a[(n, c, *pos)] > best
            ):
                best, where = a[(n, c, *pos)], pos
        if best is None:
            continue
        plane = (n * a.shape[1] + c) * int(np.prod(spatial))
        order = "C" if storage_order == 0 else "F"
        out[(n, c, *o)] = plane + np.ravel_multi_index(tuple(where), spatial, order=order)
    return out


@pytest.mark.parametrize(("shape", "kernel", "strides", "pads", "dilations", "output", "order"), [
    ((2, 3, 5, 5), (5, 5), (1, 1), (2, 2), (1, 1), (5, 5), 0),
    ((2, 3, 5, 5), (2, 2), (2, 2), (0, 0), (1, 1), (2, 2), 1),
    ((1, 2, 7, 6), (3, 2), (2, 1), (1, 0), (1, 2), (4, 4), 0),
    ((2, 2, 9), (3,), (2,), (1,), (1,), (5,), 0),
    ((1, 2, 4, 5, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), (2, 2, 2), 1),
])  # fmt: skip
def test_max_pool_indices_match_numpy(shape, kernel, strides, pads, dilations, output, order):
    a = RNG.integers(0, 4, size=shape).astype("float32")  # small integers: many ties
    x = te.placeholder(shape, name="x")
    out = max_pool_indices(x, kernel, strides, pads, dilations, output, order)
    want = _indices_numpy(a, kernel, strides, pads, dilations, output, order)
    check([x], out, [a], want, rtol=0, atol=0, build=True)


def test_a_window_entirely_in_the_padding_gives_minus_one():
    a = np.arange(4, dtype="float32").reshape(1, 1, 4)
    x = te.placeholder(a.shape, name="x")
    check(
        [x], max_pool_indices(x, (2,), (4,), (3,), (1,), (2,)), [a], np.array([[[-1, 2]]], "int64")
    )  # window 1 reads 1, 2


def test_max_pool_indices_reject_a_bad_storage_order():
    with pytest.raises(ValueError, match="max_pool_indices: storage_order must be 0 or 1, got 2"):
        max_pool_indices(
            te.placeholder((1, 1, 4, 4), name="x"), (2, 2), (2, 2), (0, 0), (1, 1), (2, 2), 2
        )
