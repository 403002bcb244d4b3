"""DeadCodeElimination, CanonicalizeBindings, EliminateCommonSubexpr: IR and numbers."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from unity import topi
from unity.ir.module import IRModule
from unity.ir.structural import assert_structural_equal
from unity.relax import BlockBuilder, TensorStructInfo, Tuple, TupleGetItem, Var, op
from unity.relax.transform import (
    CanonicalizeBindings, DeadCodeElimination, EliminateCommonSubexpr,
)  # fmt: skip

from .reference import evaluate

X = np.random.default_rng(1).standard_normal(4).astype("float32")


def _module(body: Callable[[BlockBuilder, Var], Var]) -> IRModule:
    x = Var("x", TensorStructInfo((4,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            out = body(bb, x)
        bb.emit_func_output(out)
    return bb.get()


def _check(before: IRModule, after: IRModule, expected: IRModule) -> None:
    assert_structural_equal(after, expected)
    np.testing.assert_allclose(evaluate(after, X), evaluate(before, X), rtol=1e-6)


def test_dce_removes_unused_bindings_and_functions():
    def before(bb, x):
        bb.emit(op.exp(x))
        bb.emit_te(topi.exp, x)  # its PrimFunc becomes unreachable too
        lv1 = bb.emit(op.add(x, x))
        return bb.emit_output(op.multiply(lv1, x))

    def expected(bb, x):
        lv1 = bb.emit(op.add(x, x), "lv1")
        return bb.emit_output(op.multiply(lv1, x))

    mod = _module(before)
    assert len(mod.functions) == 2
    after = DeadCodeElimination()(mod)
    _check(mod, after, _module(expected))
    assert DeadCodeElimination()(after) is after


def test_dce_keeps_impure_calls():
    from unity.relax.vm import alloc_tensor

    x = Var("x", TensorStructInfo((4,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x], pure=False):
        bb.emit(alloc_tensor((4,), "float32"))
        bb.emit_func_output(x)
    mod = bb.get()
    assert DeadCodeElimination()(mod) is mod


def test_canonicalize_propagates_copies_and_tuple_items():
    def before(bb, x):
        lv0 = bb.emit(op.exp(x))
        lv1 = bb.emit(lv0)
        t = bb.emit(Tuple((lv1, x)))
        lv2 = bb.emit(TupleGetItem(t, 0))
        return bb.emit_output(op.add(lv2, x))

    def expected(bb, x):
        lv0 = bb.emit(op.exp(x))
        bb.emit(Tuple((lv0, x)), "t")
        return bb.emit_output(op.add(lv0, x))

    mod = _module(before)
    after = CanonicalizeBindings()(mod)
    _check(mod, after, _module(expected))
    assert CanonicalizeBindings()(after) is after


def test_canonicalize_binds_an_output_copy_at_its_source():
    def before(bb, x):
        lv = bb.emit(op.exp(x))
        return bb.emit_output(lv)

    def expected(bb, x):
        return bb.emit_output(op.exp(x))

    mod = _module(before)
    _check(mod, CanonicalizeBindings()(mod), _module(expected))


def test_cse_merges_repeats_transitively():
    def before(bb, x):
        a = bb.emit(op.add(x, x))
        b = bb.emit(op.add(x, x))
        ea, eb = bb.emit(op.exp(a)), bb.emit(op.exp(b))
        return bb.emit_output(op.multiply(ea, eb))

    def expected(bb, x):
        a = bb.emit(op.add(x, x))
        ea = bb.emit(op.exp(a), "lv2")
        return bb.emit_output(op.multiply(ea, ea))

    mod = _module(before)
    after = EliminateCommonSubexpr()(mod)
    _check(mod, after, _module(expected))
    assert EliminateCommonSubexpr()(after) is after


def test_cse_output_of_repeat_copies_the_dataflow_var():
    def before(bb, x):
        bb.emit(op.add(x, x))
        return bb.emit_output(op.add(x, x))

    def expected(bb, x):
        a = bb.emit(op.add(x, x))
        return bb.emit_output(a)

    mod = _module(before)
    _check(mod, EliminateCommonSubexpr()(mod), _module(expected))


def test_canonicalize_drops_trivial_match_cast_but_keeps_symbol_defining_ones():
    x = Var("x", TensorStructInfo((4,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        same = bb.match_cast(x, TensorStructInfo((4,), "float32"))
        bb.emit_func_output(bb.emit(op.exp(same)))
    mod = bb.get()
    after = CanonicalizeBindings()(mod)
    bindings = after["main"].body.blocks[0].bindings
    assert len(bindings) == 1 and bindings[0].value.args[0] is after["main"].params[0]

    y = Var("y", TensorStructInfo(None, "float32", ndim=1))
    bb = BlockBuilder()
    with bb.function("main", [y]):
        cast = bb.match_cast(y, TensorStructInfo(("m",), "float32"))
        bb.emit_func_output(bb.emit(op.exp(cast)))
    defining = bb.get()
    assert CanonicalizeBindings()(defining) is defining
