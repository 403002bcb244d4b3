"""Symbols the generated code must resolve right: libm names, compiler-rt helpers."""

import numpy as np
import pytest

import unity
from unity import IRModule, te, topi


@pytest.mark.parametrize("name, fn, ref", [("exp", topi.exp, np.exp), ("log", topi.log, np.log),
                                           ("sqrt", topi.sqrt, np.sqrt)])
def test_kernel_named_like_a_libm_function(name, fn, ref):
    A = te.placeholder((8,), "float64", name="A")
    lib = unity.build(IRModule({name: te.create_prim_func([A, fn(A)])}), "llvm")
    a = np.random.default_rng(0).random(8) + 0.5
    b = np.empty(8)
    lib[name](a, b)
    np.testing.assert_allclose(b, ref(a), rtol=1e-12)


def test_float64_to_float16_cast_uses_the_libgcc_helper():
    A = te.placeholder((8,), "float64", name="A")
    B = te.compute((8,), lambda i: A[i].astype("float16"), name="B")
    lib = unity.build(te.create_prim_func([A, B]), "llvm")
    a = np.random.default_rng(0).random(8)
    b = np.empty(8, "float16")
    lib["main"](a, b)
    np.testing.assert_array_equal(b, a.astype("float16"))
