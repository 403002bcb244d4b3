"""BindParams and BindSymbolicVars: IR after binding, errors, numbers."""

from __future__ import annotations

import numpy as np
import pytest

from unity import topi
from unity.ir.diagnostics import DiagnosticError
from unity.ir.structural import assert_structural_equal
from unity.relax import BlockBuilder, Constant, TensorStructInfo, Var, analysis, op
from unity.relax.transform import BindParams, BindSymbolicVars

from .reference import evaluate

W = np.arange(12, dtype="float32").reshape(4, 3)


def _matmul_module(n: object = "n", bind_w: bool = False):
    x = Var("x", TensorStructInfo((2, n), "float32"))
    w = Var("w", TensorStructInfo((n, 3), "float32"))
    bb = BlockBuilder()
    params = [x] if bind_w else [x, w]
    with bb.function("main", params):
        with bb.dataflow():
            gv = bb.emit_output(op.matmul(x, Constant(W) if bind_w else w))
        bb.emit_func_output(gv)
    return bb.get()


def test_bind_params_replaces_the_param_and_fixes_its_symbols():
    before = _matmul_module()
    after = BindParams("main", {"w": W})(before)
    assert_structural_equal(after, _matmul_module(4, bind_w=True))
    assert analysis.well_formed(after)
    x = np.ones((2, 4), "float32")
    np.testing.assert_allclose(evaluate(after, x), evaluate(before, x, W))


def test_bind_params_nothing_to_bind_returns_the_module():
    mod = _matmul_module()
    assert BindParams("main", {})(mod) is mod


def test_bind_params_errors_name_the_parameter():
    mod = _matmul_module()
    with pytest.raises(ValueError, match="'v' is not a parameter .*x, w"):
        BindParams("main", {"v": W})(mod)
    with pytest.raises(DiagnosticError, match="cannot bind a int32 array to w of dtype float32"):
        BindParams("main", {"w": W.astype("int32")})(mod)
    with pytest.raises(DiagnosticError, match="dim 3 is not 5"):
        BindParams("main", {"w": np.zeros((4, 5), "float32")})(mod)


def test_bind_symbolic_vars_substitutes_shapes_and_call_tir_outputs():
    def build(n: object):
        x = Var("x", TensorStructInfo((n, 4), "float32"))
        bb = BlockBuilder()
        with bb.function("main", [x]):
            with bb.dataflow():
                e = bb.emit_te(topi.exp, x)
                gv = bb.emit_output(op.reshape(e, (x.struct_info.shape[0] * 4,)))
            bb.emit_func_output(gv)
        return bb.get()

    before = build("n")
    after = BindSymbolicVars({"n": 2})(before)
    expected = build(2)
    assert_structural_equal(after["main"], expected["main"])
    assert BindSymbolicVars({"m": 2})(before) is before
    x = np.random.default_rng(0).standard_normal((2, 4)).astype("float32")
    np.testing.assert_allclose(evaluate(after, x), np.exp(x).reshape(8), rtol=1e-6)
