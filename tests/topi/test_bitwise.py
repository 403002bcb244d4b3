"""Bitwise ops (bit-by-bit on integers, logical on bools) vs numpy."""

from __future__ import annotations

import numpy as np
import pytest

from tests.topi.run import check
from unity import te, topi

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint64"])
def test_bitwise_integers(dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, size=(2, 3), dtype=dtype, endpoint=True)
    b = RNG.integers(info.min, info.max, size=(3,), dtype=dtype, endpoint=True)
    a[0, 0], b[0] = info.max, info.min
    x, y = te.placeholder((2, 3), dtype, name="x"), te.placeholder((3,), dtype, name="y")
    outs = [topi.bitwise_and(x, y), topi.bitwise_or(x, y), topi.bitwise_xor(x, y), topi.bitwise_not(x)]
    check([x, y], outs, [a, b], [a & b, a | b, a ^ b, ~a])


def test_bitwise_bools_are_logical():
    x, y = te.placeholder((4,), "bool", name="x"), te.placeholder((4,), "bool", name="y")
    a, b = np.array([1, 1, 0, 0], bool), np.array([1, 0, 1, 0], bool)
    check([x, y], [topi.bitwise_and(x, y), topi.bitwise_or(x, y), topi.bitwise_xor(x, y), topi.bitwise_not(x)],
          [a, b], [a & b, a | b, a ^ b, ~a])  # fmt: skip
