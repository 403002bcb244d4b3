"""`bitcast` vs numpy's `view` (the same bits read as another dtype of the same width)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.topi.run import check
from unity import te
from unity.topi.bitcast import bitcast

SAMPLES = {
    "float32": np.array([[1.5, -2.25, 0.0], [-0.0, np.inf, -3e38]], "float32"),
    "float64": np.array([[1e300, -1.0, 0.5], [np.inf, -0.0, 7.0]], "float64"),
    "int32": np.array([[0, -1, 0x3F800000], [0x7F800000, -(2**31), 12345]], "int32"),
    "uint32": np.array([[0, 2**32 - 1, 0x3F800000], [0x7F800000, 2**31, 12345]], "uint32"),
    "int64": np.array([[0, -1, 0x3FF0000000000000], [2**62, -(2**63), 9]], "int64"),
    "int8": np.array([[0, -1, 127], [-128, 5, -5]], "int8"),
    "uint16": np.array([[0, 65535, 32768], [32767, 1, 40000]], "uint16"),
    "bool": np.array([[True, False, True], [False, False, True]]),
}


@pytest.mark.parametrize(("src", "dst"), [
    ("float32", "int32"), ("int32", "float32"), ("float32", "uint32"), ("uint32", "float32"),
    ("float64", "int64"), ("int64", "float64"), ("int64", "uint64"), ("int8", "uint8"),
    ("uint16", "int16"), ("bool", "uint8"), ("bool", "int8"),
])  # fmt: skip
def test_bitcast_keeps_the_bits(src, dst):
    a = SAMPLES[src]
    x = te.placeholder(a.shape, src, name="x")
    check([x], bitcast(x, dst), [a], a.view(dst), rtol=0, atol=0, build=True)


def test_bitcast_to_bool_reads_nonzero_bytes_as_true():
    a = np.array([0, 1, 2, 255], "uint8")
    x = te.placeholder((4,), "uint8", name="x")
    check([x], bitcast(x, "bool"), [a], a != 0, build=True)


@pytest.mark.parametrize(("src", "dst", "why"), [
    ("float32", "int16", "float32 has 32 bits but int16 has 16"),
    ("int8", "float64", "int8 has 8 bits but float64 has 64"),
    ("float16", "int16", "float16 is not supported"),
])  # fmt: skip
def test_bitcast_rejects_other_widths_clearly(src, dst, why):
    with pytest.raises(ValueError, match=f"bitcast: cannot read {src} as {dst}: {why}"):
        bitcast(te.placeholder((2,), src, name="x"), dst)
