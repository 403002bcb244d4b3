"""Integer division by zero in a compiled kernel must not kill the process (SIGFPE).

The LLVM codegen guards the divisor: `x / 0` and `x % 0` give 0 (numpy's answer), and the
signed `MIN / -1` wraps instead of trapping.
"""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import te, tir

OPS = {
    "floordiv": (tir.floordiv, lambda a, b: np.floor_divide(a, b)),
    "floormod": (tir.floormod, lambda a, b: np.mod(a, b)),
    "truncdiv": (tir.truncdiv, lambda a, b: np.trunc(a / b).astype(a.dtype)),
    "truncmod": (tir.truncmod, lambda a, b: np.fmod(a, b)),
}


def _expected(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's answer, with 0 wherever b == 0 and wrapping for MIN / -1."""
    safe = np.where(b == 0, 1, b)
    with np.errstate(all="ignore"):
        out = OPS[name][1](a.astype("int64"), safe.astype("int64")).astype(a.dtype)
    return np.where(b == 0, 0, out).astype(a.dtype)


def _kernel(name: str, dtype: str, n: int, vector: bool) -> unity.runtime.Module:
    A = te.placeholder((n,), dtype, name="A")
    B = te.placeholder((n,), dtype, name="B")
    C = te.compute((n,), lambda i: OPS[name][0](A[i], B[i]), name="C")
    func = te.create_prim_func([A, B, C])
    if vector:
        from unity.schedule import Schedule

        sch = Schedule(func)
        (i,) = sch.get_loops(sch.get_block("C"))
        _, ii = sch.split(i, factors=[None, 8])
        sch.vectorize(ii)
        func = sch.mod["main"]
    return unity.build(func, target="llvm")


@pytest.mark.parametrize("vector", [False, True], ids=["scalar", "vector"])
@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", ["int32", "int8", "uint16"])
def test_integer_division_by_zero_is_defined(dtype: str, name: str, vector: bool):
    info = np.iinfo(dtype)
    a = np.array([7, -7, 5, info.min, info.max, 0, -3, 9] * 2, "int64")
    b = np.array([0, 2, -1, -1, 0, 0, 3, -4] * 2, "int64")
    a, b = a.astype(dtype), b.astype(dtype)  # wraps negatives for unsigned dtypes
    c = np.full(a.shape, 99, dtype)
    _kernel(name, dtype, a.size, vector)["main"](a, b, c)
    np.testing.assert_array_equal(c, _expected(name, a, b))


def test_division_by_a_constant_is_unchanged():
    A = te.placeholder((6,), "int32", name="A")
    C = te.compute((6,), lambda i: tir.floordiv(A[i], 3) + tir.floormod(A[i], -4), name="C")
    lib = unity.build(te.create_prim_func([A, C]), target="llvm")
    a = np.array([-7, -1, 0, 1, 5, 11], "int32")
    c = np.zeros(6, "int32")
    lib["main"](a, c)
    np.testing.assert_array_equal(c, a // 3 + a % -4)


def test_relax_integer_division_by_zero_survives():
    from unity import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n",), "int32"))
    y = relax.Var("y", relax.TensorStructInfo(("n",), "int32"))
    with bb.function("main", [x, y]):
        q = bb.emit(relax.op.floor_divide(x, y))
        r = bb.emit(relax.op.floor_mod(x, y))
        bb.emit_func_output(relax.Tuple([q, r]))
    vm = relax.VirtualMachine(unity.compile(bb.get(), target="llvm"), unity.cpu())
    a = np.array([7, -7, 5, -(2**31)], "int32")
    b = np.array([0, 2, 0, -1], "int32")
    q, r = (t.numpy() for t in vm["main"](a, b))
    np.testing.assert_array_equal(q, [0, -4, 0, -(2**31)])
    np.testing.assert_array_equal(r, [0, 1, 0, 0])
