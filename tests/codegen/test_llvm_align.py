"""Provable alignment of vector loads and stores (`unity.codegen.llvm_align`)."""

from __future__ import annotations

import re

import numpy as np

import unity
from unity import tir
from unity.codegen.llvm_align import access_alignment, known_multiple
from unity.tir import ForKind


def test_known_multiple_of_index_expressions():
    i, j = tir.Var("i"), tir.Var("j")
    assert known_multiple(tir.const(48)) == 48
    assert known_multiple(i * 32 + j * 16) == 16
    assert known_multiple(i * 32 + j * 16 + 8) == 8
    assert known_multiple(i * 32 + j) == 1
    assert known_multiple((i * 64) % 48) == 16
    assert known_multiple(tir.Cast("int64", i * 8)) == 8
    assert known_multiple(i // 4) == 1


def test_access_alignment_caps_at_the_allocation_alignment():
    i = tir.Var("i")
    assert access_alignment(4, i * 16, allocated=True) == 64
    assert access_alignment(4, i * 1024, allocated=True) == 64
    assert access_alignment(4, i * 2 + 4, allocated=True) == 8
    assert access_alignment(4, i * 16, allocated=False) == 4  # parameters: element only


def _copy_through_local(n: int = 64) -> tir.PrimFunc:
    """`B = A` through an allocated buffer, 16 lanes at a time."""
    A, B = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((n,), "float32", "B")
    T = tir.decl_buffer((n,), "float32", "T")
    i, k = tir.Var("i"), tir.Var("k")
    vec = tir.Ramp(i * 16, tir.const(1), 16)
    fill = tir.For(i, tir.const(0), tir.const(n // 16), ForKind.SERIAL,
                   tir.BufferStore(T, A[vec], (vec,)))  # fmt: skip
    odd = tir.Ramp(k * 16 + 1, tir.const(1), 16)
    back = tir.For(k, tir.const(0), tir.const(n // 16 - 1), ForKind.SERIAL,
                   tir.BufferStore(B, T[odd], (tir.Ramp(k * 16, tir.const(1), 16),)))  # fmt: skip
    return tir.PrimFunc((A, B), tir.Allocate(T, tir.seq(fill, back)))


def test_loads_and_stores_of_allocated_buffers_are_aligned():
    lib = unity.build(_copy_through_local(), target="llvm -opt-level=0")  # IR as emitted
    a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    lib["main"](a, b)
    np.testing.assert_array_equal(b[:48], a[1:49])
    ll = lib.get_source("ll")
    loads = re.findall(r"load <16 x float>, ptr %\"?([A-Za-z_.0-9]+)\"?, align (\d+)", ll)
    stores = re.findall(r"store <16 x float> %[^,]+, ptr %\"?([A-Za-z_.0-9]+)\"?, align (\d+)", ll)
    assert sorted(a for _, a in loads) == ["4", "4"]  # A (a parameter); T at k * 16 + 1
    assert sorted(a for _, a in stores) == ["4", "64"]  # B (a parameter); T at i * 16
