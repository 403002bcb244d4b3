"""Kernel names that collide with libm functions LLVM's intrinsics call must not recurse."""

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
