"""Index arithmetic is `nsw` in the emitted LLVM IR; data arithmetic keeps wrapping."""

from __future__ import annotations

import re

import numpy as np

import unity
from unity import tir
from unity.tir import ForKind


def _window_sum(n: int = 16) -> tir.PrimFunc:
    """``B[i] = A[i * 2 + 1] + A[i * 2 + 2]``: loads at constant offsets from one index."""
    A, B = tir.decl_buffer((2 * n + 2,), "float32", "A"), tir.decl_buffer((n,), "float32", "B")
    i = tir.Var("i")
    value = A[i * 2 + 1] + A[i * 2 + 2]
    loop = tir.For(i, tir.const(0), tir.const(n), ForKind.SERIAL, tir.BufferStore(B, value, (i,)))
    return tir.PrimFunc((A, B), loop)


def test_index_arithmetic_is_nsw_so_offsets_fold_into_addresses():
    lib = unity.build(_window_sum(), target="llvm -opt-level=0")  # IR as emitted
    a, b = np.arange(34, dtype="float32"), np.zeros(16, "float32")
    lib["main"](a, b)
    np.testing.assert_array_equal(b, a[1:33:2] + a[2:34:2])
    ll = lib.get_source("ll")
    index_ops = re.findall(r"= (add|mul)( nsw)? i32 %(?:i|\.\d+), \d+", ll)  # i * 2 + 1, ...
    assert len(index_ops) == 5 and all(nsw for _, nsw in index_ops), index_ops


def test_integer_data_arithmetic_still_wraps_like_numpy():
    A, B = tir.decl_buffer((4,), "int32", "A"), tir.decl_buffer((4,), "int32", "B")
    i = tir.Var("i")
    value = A[i] * tir.const(3, "int32") + tir.const(2**31 - 1, "int32")
    loop = tir.For(i, tir.const(0), tir.const(4), ForKind.SERIAL, tir.BufferStore(B, value, (i,)))
    lib = unity.build(tir.PrimFunc((A, B), loop), target="llvm -opt-level=0")
    a = np.array([1, 2, -5, 2**30], dtype="int32")
    b = np.zeros(4, "int32")
    lib["main"](a, b)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(b, a * np.int32(3) + np.int32(2**31 - 1))
    ll = lib.get_source("ll")
    data_ops = re.findall(r"= (?:mul|add)( nsw)? i32 %[.\w]+, (?:3|2147483647)\b", ll)
    assert data_ops == ["", ""]  # A[i] * 3 + (2**31 - 1): plain, wrapping
