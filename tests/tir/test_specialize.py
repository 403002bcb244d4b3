import numpy as np
import pytest

from unity import te, tir, topi
from unity.ir.structural import assert_structural_equal
from unity.tir.specialize import shape_vars, specialize


def _matmul(seq, n=8):
    x, w = te.placeholder((seq, 16), name="x"), te.placeholder((16, n), name="w")
    return te.create_prim_func([x, w, topi.matmul(x, w)])


def test_specialize_equals_the_function_built_with_the_constant():
    seq = tir.SizeVar("seq", "int64")
    assert sorted(shape_vars(_matmul(seq))) == ["seq"]
    assert_structural_equal(specialize(_matmul(seq), {"seq": 5}), _matmul(tir.const(5, "int64")))


def test_specialized_function_runs_at_that_size():
    seq = tir.SizeVar("seq", "int64")
    f = specialize(_matmul(seq), {"seq": 3})
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 16), dtype="float32"), rng.standard_normal((16, 8), dtype="float32")
    out = np.zeros((3, 8), "float32")
    tir.interpret(f, a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


def test_unknown_names_are_refused_and_no_names_change_nothing():
    f = _matmul(tir.SizeVar("seq", "int64"))
    with pytest.raises(KeyError, match="batch not a shape variable of the function \\(it has: seq\\)"):
        specialize(f, {"batch": 2})
    assert specialize(f, {}) is f
