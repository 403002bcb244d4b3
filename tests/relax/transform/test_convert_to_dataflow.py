"""ConvertToDataflow: IR after (against one built with dataflow blocks), numbers."""

from __future__ import annotations

import numpy as np

import unity
from unity import relax
from unity.ir.structural import assert_structural_equal
from unity.relax import BlockBuilder, TensorStructInfo, Var, analysis, op
from unity.relax.expr import If, SeqExpr
from unity.relax.transform import AnnotateTIROpPattern, ConvertToDataflow, FuseOps

X = TensorStructInfo((4,), "float32")
C = TensorStructInfo((), "bool")


def _module(dataflow: bool):
    """relu(neg(exp(x) + x) if c else exp(x) + x), with or without dataflow blocks."""
    x, c = Var("x", X), Var("c", C)
    bb = BlockBuilder()

    def run(emit_all):  # a run of pure calls: in a dataflow block when asked
        if not dataflow:
            return emit_all(bb.emit, bb.emit)
        with bb.dataflow():
            return emit_all(bb.emit, bb.emit_output)

    with bb.function("main", [x, c]):
        b = run(lambda emit, out: out(op.add(emit(op.exp(x)), x)))
        with bb.nested() as blocks:
            n = run(lambda emit, out: out(op.negative(b)))
        picked = bb.emit(If(c, SeqExpr(tuple(blocks), n), SeqExpr((), b)))
        y = run(lambda emit, out: out(op.nn.relu(picked)))
        bb.emit_func_output(y)
    return bb.get()


def test_runs_of_pure_calls_become_dataflow_blocks_around_an_if():
    before = _module(dataflow=False)
    after = ConvertToDataflow()(before)
    assert_structural_equal(after, _module(dataflow=True))
    assert analysis.well_formed(after)
    kinds = [type(b).__name__ for b in after["main"].body.blocks]
    assert kinds == ["DataflowBlock", "BindingBlock", "DataflowBlock"]
    x = np.linspace(-1, 1, 4, dtype="float32")
    for c in (True, False):
        got = relax.VirtualMachine(unity.compile(after), unity.cpu())["main"](x, np.array(c)).numpy()
        v = np.exp(x) + x
        np.testing.assert_allclose(got, np.maximum(-v if c else v, 0), rtol=1e-6)


def test_fusion_works_after_the_conversion():
    legal = relax.transform.LegalizeOps()(ConvertToDataflow()(_module(dataflow=False)))
    after = FuseOps()(AnnotateTIROpPattern()(legal))
    fused = [gv.name_hint for gv, f in after.functions.items() if f.attrs.get("Primitive")]
    assert fused == ["fused_exp_add"]  # without dataflow blocks nothing fuses


def test_a_module_with_dataflow_blocks_is_unchanged():
    mod = _module(dataflow=True)
    assert_structural_equal(ConvertToDataflow()(mod), mod)
