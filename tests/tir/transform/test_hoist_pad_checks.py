import numpy as np
import pytest

import unity
from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.script import tir as T
from unity.tir.expr import Max, Min, Select
from unity.tir.transform import HoistPadChecks

from ._workloads import collect, module


@T.prim_func
def _before(a: T.handle, b: T.handle, n: T.int64):
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    # a 3-tap sum over a zero-padded row, in tiles of 4 (the last one guarded)
    for i0 in T.serial((n + T.int64(3)) // T.int64(4)):
        with T.allocate_buffer((4,), "float32", scope="local") as acc:
            for i1 in T.serial(T.int64(4)):
                acc[i1] = T.float32(0)
            for r, i1 in T.grid(T.int64(3), T.int64(4)):
                acc[i1] = acc[i1] + T.if_then_else(
                    i0 * 4 + i1 + r >= 1 and i0 * 4 + i1 + r < n + 1,
                    A[T.max(T.min(i0 * 4 + i1 + r - 1, n - 1), T.int64(0))], T.float32(0))
            for i1 in T.serial(T.int64(4)):
                if i0 * 4 + i1 < n:
                    B[i0 * 4 + i1] = acc[i1]


@T.prim_func
def _expected(a: T.handle, b: T.handle, n: T.int64):
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i0 in T.serial((n + T.int64(3)) // T.int64(4)):
        with T.allocate_buffer((4,), "float32", scope="local") as acc:
            if i0 >= T.int64(1) and i0 * T.int64(4) < n - T.int64(4):
                for i1 in T.serial(T.int64(4)):
                    acc[i1] = T.float32(0)
                for r, i1 in T.grid(T.int64(3), T.int64(4)):
                    acc[i1] = acc[i1] + A[i0 * T.int64(4) + i1 + r - T.int64(1)]
                for i1 in T.serial(T.int64(4)):
                    if i0 * 4 + i1 < n:
                        B[i0 * 4 + i1] = acc[i1]
            else:
                for i1 in T.serial(T.int64(4)):
                    acc[i1] = T.float32(0)
                for r, i1 in T.grid(T.int64(3), T.int64(4)):
                    acc[i1] = acc[i1] + T.if_then_else(
                        i0 * 4 + i1 + r >= 1 and i0 * 4 + i1 + r < n + 1,
                        A[T.max(T.min(i0 * 4 + i1 + r - 1, n - 1), T.int64(0))], T.float32(0))
                for i1 in T.serial(T.int64(4)):
                    if i0 * 4 + i1 < n:
                        B[i0 * 4 + i1] = acc[i1]


def test_docstring_example():
    """Interior tiles (the taps of all four positions inside the row) load unchecked,
    their clamps gone; border tiles keep the select."""
    assert_structural_equal(HoistPadChecks()(module(_before))["main"], _expected)


@pytest.mark.parametrize("n", [1, 2, 4, 5, 8, 9, 13])
def test_the_versions_agree_with_the_padded_sum_at_any_length(n):
    """Lengths with no interior tile, one, and several: numpy's padded sum, built and
    interpreted."""
    a = np.random.default_rng(n).standard_normal(n).astype("float32")
    padded = np.pad(a, 1)
    want = padded[:-2] + padded[1:-1] + padded[2:]
    after = HoistPadChecks()(module(_before))
    got = np.zeros(n, "float32")
    tir.interpret(after, a, got, n)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    built = np.zeros(n, "float32")
    unity.build(_before)["main"](a, built, n)  # through the lowering pipeline
    np.testing.assert_allclose(built, want, rtol=1e-6, atol=1e-6)


def test_selects_that_are_not_a_padded_load_stay():
    """A condition that reads memory, a non-constant other side, or no allocation around
    the tile: nothing to version."""
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), M: T.Buffer((16,), "int32"), B: T.Buffer((16,), "float32")):  # noqa: E501
        for i0 in T.serial(4):
            with T.allocate_buffer((4,), "float32", scope="local") as acc:
                for i1 in T.serial(4):
                    acc[i1] = T.if_then_else(M[i0 * 4 + i1] > 0, A[i0 * 4 + i1], T.float32(0))
                for i1 in T.serial(4):
                    acc[i1] = T.if_then_else(i0 * 4 + i1 >= 1, A[i0 * 4 + i1], acc[i1])
                for i1 in T.serial(4):
                    B[i0 * 4 + i1] = acc[i1]
        for i in T.serial(16):
            B[i] = T.if_then_else(i >= 1, A[T.max(i - 1, 0)], T.float32(0))

    assert HoistPadChecks()(module(f))["main"] is f


def test_a_tile_never_inside_stays_and_unimplied_clamps_stay():
    """Taps wider than the data (the check is constant false) leave the tile as it is;
    in the fast version, a clamp the select's condition does not bound stays."""
    @T.prim_func
    def never(A: T.Buffer((2,), "float32"), B: T.Buffer((4,), "float32")):
        with T.allocate_buffer((4,), "float32", scope="local") as acc:
            for i1 in T.serial(4):
                acc[i1] = T.if_then_else(
                    i1 >= 1 and i1 < 3, A[T.max(T.min(i1 - 1, 1), 0)], T.float32(0))
            for i1 in T.serial(4):
                B[i1] = acc[i1]

    assert HoistPadChecks()(module(never))["main"] is never

    @T.prim_func
    def other(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32"), m: T.int32):
        for i0 in T.serial(4):
            with T.allocate_buffer((4,), "float32", scope="local") as acc:
                for i1 in T.serial(4):
                    row = T.max(T.min(m, 15), 0)
                    acc[i1] = T.if_then_else(
                        i0 * 4 + i1 >= 1, A[row, i0 * 4 + i1 - 1], T.float32(0))
                for i1 in T.serial(4):
                    B[i0 * 4 + i1] = acc[i1]

    after = HoistPadChecks()(module(other))["main"]
    fast = collect(after, tir.IfThenElse)[0].then_case
    assert not collect(fast, Select)
    assert len(collect(fast, Max)) == 1 and len(collect(fast, Min)) == 1  # m's clamp
