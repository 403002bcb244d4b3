"""Reductions, arg-reductions and cumsum vs numpy."""

from __future__ import annotations

import numpy as np
import pytest

from tests.topi.run import check, rand
from unity import te, topi

CASES = [(None, False), (1, False), ((0, 2), True), (-1, True)]


@pytest.mark.parametrize(("axis", "keepdims"), CASES)
def test_reductions_match_numpy(axis, keepdims):
    x = te.placeholder((2, 3, 4), name="x")
    a = rand((2, 3, 4), low=0.5, high=1.5)
    ops = [topi.sum, topi.mean, topi.max, topi.min, topi.prod, topi.variance]
    refs = [np.sum, np.mean, np.max, np.min, np.prod, np.var]
    outs = [op(x, axis, keepdims) for op in ops]
    check([x], outs, [a], [np.asarray(r(a, axis=axis, keepdims=keepdims)) for r in refs],
          rtol=1e-5, atol=1e-5)  # fmt: skip


def test_argmax_argmin_pick_the_first_extreme():
    x = te.placeholder((3, 4), name="x")
    a = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [-1, -5, 4, -5]], "float32")
    check([x], [topi.argmax(x, 1), topi.argmin(x, 1), topi.argmax(x, 0, True), topi.argmax(x)],
          [a], [np.argmax(a, 1), np.argmin(a, 1), np.argmax(a, 0)[None], np.asarray(np.argmax(a))])  # fmt: skip


def test_reductions_over_symbolic_axis():
    n = te.var("n")
    x = te.placeholder((n, 3), name="x")
    outs = [topi.sum(x, 0), topi.mean(x, 0), topi.argmax(x, 0)]
    for rows in (1, 6):
        a = rand((rows, 3))
        check([x], outs, [a], [a.sum(0), a.mean(0), np.argmax(a, 0)], rtol=1e-5, atol=1e-5)


def test_cumsum_along_axis_and_flattened():
    x = te.placeholder((2, 4), "int32", name="x")
    a = rand((2, 4), "int32", -5, 5)
    check([x], [topi.cumsum(x, 1), topi.cumsum(x), topi.cumsum(x, 0, "float32"),
                topi.cumsum(x, 1, exclusive=True)], [a],
          [np.cumsum(a, 1), np.cumsum(a), np.cumsum(a, 0).astype("float32"),
           np.cumsum(a, 1) - a])  # fmt: skip


def test_integer_mean_truncates():
    x = te.placeholder((4,), "int32", name="x")
    check([x], topi.mean(x), [np.array([1, 2, 2, 2], "int32")], np.asarray(1, "int32"))


def test_cumsum_reverse_and_cumprod():
    x = te.placeholder((2, 4), name="x")
    a = rand((2, 4), low=0.5, high=1.5)
    rev = np.flip(np.cumsum(np.flip(a, 1), 1), 1)
    check([x], [topi.cumsum(x, 1, reverse=True), topi.cumsum(x, 1, exclusive=True, reverse=True),
                topi.cumprod(x, 1), topi.cumprod(x, 0, exclusive=True)], [a],
          [rev, rev - a, np.cumprod(a, 1), np.cumprod(a, 0) / a], rtol=1e-5, atol=1e-6)  # fmt: skip


def test_reductions_over_an_empty_axis_give_the_identity():
    x = te.placeholder((2, 0, 3), name="x")
    a = np.zeros((2, 0, 3), "float32")
    check([x], [topi.sum(x, 1), topi.prod(x, 1, True), topi.max(x, 1), topi.min(x, 1)], [a],
          [a.sum(1), a.prod(1, keepdims=True), np.full((2, 3), -np.inf), np.full((2, 3), np.inf)])  # fmt: skip
