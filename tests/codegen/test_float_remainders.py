"""Float remainders and bit shifts give numpy's answers on their edge cases.

`fmod` is C's exact remainder (not `a - trunc(a / b) * b`, which rounds for large
quotients and is NaN for an infinite divisor); float `floormod` / `topi.floor_mod` is
numpy's `mod` (the divisor's sign; `x mod inf` is `x` or `inf`); shifts by amounts outside
the type's width give numpy's 0 or sign fill rather than LLVM's undefined value.
"""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import relax, te, tir, topi
from unity.schedule import Schedule

A_EDGES = [0.0, -0.0, 0.0, -0.0, -3.0, 3.0, -1.0, 1.0, np.inf, -np.inf, 1.0, 1.0, np.nan, 1.0,
           1e7, -1e7, 5.5, -5.5, 7.0, 2.5]
B_EDGES = [-2.0, 2.0, 2.0, -2.0, np.inf, np.inf, -np.inf, -np.inf, 2.0, 2.0, 0.0, -0.0, 2.0,
           np.nan, 0.1, 0.1, -2.0, 2.0, 7.0, -0.5]  # fmt: skip


def _build(compute, dtype: str, vector: bool) -> unity.runtime.Module:
    n = len(A_EDGES)
    A, B = te.placeholder((n,), dtype, name="A"), te.placeholder((n,), dtype, name="B")
    C = compute(A, B)
    func = te.create_prim_func([A, B, C])
    if vector:
        sch = Schedule(func)
        (i,) = sch.get_loops(sch.get_block(C.op.name))
        _, inner = sch.split(i, factors=[None, 4])
        sch.vectorize(inner)
        func = sch.mod["main"]
    return unity.build(func, target="llvm")


CASES = {
    "fmod": (lambda A, B: te.compute(A.shape, lambda i: tir.fmod(A[i], B[i]), name="C"), np.fmod),
    "floormod": (lambda A, B: te.compute(A.shape, lambda i: tir.floormod(A[i], B[i]), name="C"),
                 np.mod),
    "topi.floor_mod": (topi.floor_mod, np.mod),
    "topi.mod": (topi.mod, np.fmod),
}


@pytest.mark.parametrize("vector", [False, True], ids=["scalar", "vector"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_float_remainder_matches_numpy(name: str, dtype: str, vector: bool):
    compute, ref = CASES[name]
    a, b = np.array(A_EDGES, dtype), np.array(B_EDGES, dtype)
    out = np.full(a.shape, 99, dtype)
    _build(compute, dtype, vector)["main"](a, b, out)
    with np.errstate(all="ignore"):
        expected = ref(a, b)
    np.testing.assert_array_equal(out, expected)  # NaNs in the same places, exact values
    if name == "floormod":  # a zero remainder takes the divisor's sign, as numpy's
        zero = expected == 0
        np.testing.assert_array_equal(np.signbit(out[zero]), np.signbit(expected[zero]))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint32", "uint64"])
def test_shifts_by_any_amount_match_numpy(dtype: str):
    bits = np.iinfo(dtype).bits
    values = np.array([-8, 4, -1, 1, 5, -128, 127, 3, 0, 9, -2, 6], "int64").astype(dtype)
    amounts = np.array([0, 1, bits - 1, bits, bits + 1, 3, -1, -bits, 2, bits - 2, 100, 7], "int64")
    if dtype.startswith("uint"):
        amounts = np.abs(amounts)
    amounts = amounts.astype(dtype)
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((12,), dtype))
    s = relax.Var("s", relax.TensorStructInfo((12,), dtype))
    from unity.relax.op import onnx_extra as X

    with bb.function("main", [x, s]):
        shifted = [bb.emit(X.left_shift(x, s)), bb.emit(X.right_shift(x, s))]
        bb.emit_func_output(relax.Tuple(shifted))
    vm = relax.VirtualMachine(unity.compile(bb.get(), target="llvm"), unity.cpu())
    left, right = (t.numpy() for t in vm["main"](values, amounts))
    wide, by = values.astype(object), amounts.astype("int64")
    in_range = (by >= 0) & (by < bits)
    mask = (1 << bits) - 1
    cases = list(zip(wide, by, in_range, strict=True))
    exp_left = [((int(v) << int(k)) & mask) if ok else 0 for v, k, ok in cases]
    fill = [(-1 if v < 0 else 0) for v in wide]
    exp_right = [(int(v) >> int(k)) & mask if ok else f & mask
                 for v, k, ok, f in zip(wide, by, in_range, fill, strict=True)]
    for got, want in ((left, exp_left), (right, exp_right)):  # compared as bit patterns
        np.testing.assert_array_equal(got, np.array(want, "uint64").astype(dtype))
