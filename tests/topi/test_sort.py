"""argsort / sort / topk vs numpy (stable order, ties by index)."""

from __future__ import annotations

import numpy as np

from tests.topi.run import check
from unity import te, topi


def test_argsort_and_sort_are_stable_both_ways():
    x = te.placeholder((2, 6), name="x")
    a = np.array([[3, 1, 2, 1, 5, 0], [2, 2, 2, 1, 1, 9]], "float32")
    desc = np.argsort(-a, axis=1, kind="stable")
    check([x], [topi.argsort(x), topi.sort(x), topi.argsort(x, 0), topi.argsort(x, is_ascend=False)], [a],
          [np.argsort(a, 1, kind="stable"), np.sort(a, 1), np.argsort(a, 0, kind="stable"), desc])  # fmt: skip


def test_topk_largest_and_smallest():
    n = te.var("n")
    x = te.placeholder((3, n), name="x")
    a = np.array([[4, 9, 9, 1], [0, 0, 0, 0], [-1, 3, 2, 8]], "float32")
    idx = np.argsort(-a, axis=1, kind="stable")[:, :2]
    small = np.argsort(a, axis=1, kind="stable")[:, :3]
    check([x], [*topi.topk(x, 2), *topi.topk(x, 3, largest=False)], [a],
          [np.take_along_axis(a, idx, 1), idx, np.take_along_axis(a, small, 1), small])  # fmt: skip
