"""The pattern language: matching, rewrite_call, rewrite_bindings, FuseOpsByPattern."""

from __future__ import annotations

import numpy as np
import pytest

from unity.ir.structural import assert_structural_equal
from unity.relax import (
    BlockBuilder, Call, Function, TensorStructInfo, Tuple, TupleGetItem, Var, analysis,
    const, op,
)  # fmt: skip
from unity.relax.dpl import (
    get_var2val, is_const, is_op, is_tuple, is_tuple_get_item, is_var, match_expr,
    rewrite_bindings, rewrite_call, wildcard,
)  # fmt: skip
from unity.relax.transform import FuseOpsByPattern, FusionPattern

from ..transform.reference import evaluate

F32 = "float32"


def _x(shape=(4,), dtype=F32, name="x"):
    return Var(name, TensorStructInfo(shape, dtype))


def test_match_op_wildcard_const_and_alternatives():
    x = _x()
    c = const(np.ones(4, F32))
    a = wildcard()
    add_or_mul = is_op("relax.add") | is_op("relax.multiply")
    pat = add_or_mul(a, is_const())
    assert pat.match(op.add(x, c)) and pat.match(op.multiply(x, c))
    assert not pat.match(op.subtract(x, c)) and not pat.match(op.add(x, x))
    assert match_expr(pat, op.add(x, c)).exprs[a] is x
    same = is_op("relax.add")(a, a)
    assert same.match(op.add(x, x)) and not same.match(op.add(x, _x()))


def test_match_shape_dtype_attr_and_tuples():
    x, y = _x((2, 3)), _x((2, 3), "float16")
    assert wildcard().has_shape((2, 3)).match(x)
    assert not wildcard().has_shape((3, 2)).match(x)
    assert wildcard().has_dtype("float16").match(y) and not wildcard().has_dtype("float16").match(x)
    sm = is_op("relax.nn.softmax")(wildcard())
    assert sm.has_attr({"axis": -1}).match(op.nn.softmax(x))
    assert not sm.has_attr({"axis": 0}).match(op.nn.softmax(x))
    t = Tuple((x, x))
    assert is_tuple([is_var("x"), wildcard()]).match(t)
    assert is_tuple_get_item(is_tuple([wildcard(), wildcard()]), 1).match(TupleGetItem(t, 1))
    with pytest.raises(ValueError, match="no relax operator called 'relax.nope'"):
        is_op("nope")


def test_match_looks_through_bindings():
    x = _x()
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(op.exp(x))
            gv = bb.emit_output(op.nn.relu(lv))
        bb.emit_func_output(gv)
    func = bb.get()["main"]
    var2val = get_var2val(func)
    pat = is_op("relax.nn.relu")(is_op("relax.exp")(wildcard()))
    found = match_expr(pat, var2val[gv], var2val)
    assert found is not None and list(found.vars.values()) == [lv]


def _mul_by_two_module():
    x = _x()
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(op.exp(x))
            gv = bb.emit_output(op.multiply(lv, const(np.full(4, 2.0, F32))))
        bb.emit_func_output(gv)
    return bb.get()


def test_rewrite_call_replaces_times_two_by_add():
    x, two = wildcard(), is_const()
    pat = is_op("relax.multiply")(x, two)

    def rewriter(expr, m):
        return op.add(m[x], m[x]) if np.all(m[two].data == 2.0) else expr

    mod = _mul_by_two_module()
    new = rewrite_call(pat, rewriter, mod["main"])
    xv = _x()
    bb = BlockBuilder()
    with bb.function("main", [xv]):
        with bb.dataflow():
            lv = bb.emit(op.exp(xv))
            gv = bb.emit_output(op.add(lv, lv))
        bb.emit_func_output(gv)
    assert_structural_equal(new, bb.get()["main"])
    assert rewrite_call(pat, lambda e, m: e, mod["main"]) is mod["main"]
    arr = np.arange(4, dtype=F32)
    mod2 = mod.copy()
    mod2.update_func(mod2.get_global_var("main"), new)
    np.testing.assert_allclose(evaluate(mod2, arr), evaluate(mod, arr), rtol=1e-6)


def test_rewrite_call_binds_nested_replacements():
    # exp(x) -> sqrt(exp(x) * exp(x)) keeps the value and needs new nested bindings
    inner = wildcard()
    pat = is_op("relax.nn.relu")(inner)
    x = _x()
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(op.nn.relu(x))
        bb.emit_func_output(gv)
    func = bb.get()["main"]
    new = rewrite_call(pat, lambda e, m: op.maximum(op.multiply(m[inner], const(1.0)), const(0.0)), func)
    mod = bb.get()
    mod.update_func(mod.get_global_var("main"), new)
    assert analysis.well_formed(mod)
    assert len(new.body.blocks[0].bindings) == 2
    arr = np.array([-1, 2, -3, 4], F32)
    np.testing.assert_allclose(evaluate(mod, arr), np.maximum(arr, 0))


def test_rewrite_bindings_merges_two_matmuls_of_one_input():
    x, w1, w2 = _x((2, 4)), _x((4, 3), name="w1"), _x((4, 3), name="w2")
    bb = BlockBuilder()
    with bb.function("main", [x, w1, w2]):
        with bb.dataflow():
            a = bb.emit(op.matmul(x, w1))
            b = bb.emit(op.matmul(x, w2))
            gv = bb.emit_output(op.add(a, b))
        bb.emit_func_output(gv)
    mod = bb.get()
    inp, p1, p2 = wildcard(), wildcard(), wildcard()
    q, k = is_op("relax.matmul")(inp, p1), is_op("relax.matmul")(inp, p2)

    def merge(m, bindings):
        both = op.matmul(m[inp], op.concat([m[p1], m[p2]], axis=1))
        va = next(v for v, e in bindings.items() if e is m[q])
        vb = next(v for v, e in bindings.items() if e is m[k])
        return {va: op.strided_slice(both, [1], [0], [3]), vb: op.strided_slice(both, [1], [3], [6])}

    new = rewrite_bindings([q, k], merge, mod["main"])
    ops = [b.value.op.name for b in new.body.blocks[0].bindings]
    assert ops.count("relax.matmul") == 1 and "relax.concat" in ops
    out = mod.copy()
    out.update_func(out.get_global_var("main"), new)
    assert analysis.well_formed(out)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(F32) for s in ((2, 4), (4, 3), (4, 3))]
    np.testing.assert_allclose(evaluate(out, *args), evaluate(mod, *args), rtol=1e-5)


def _conv_relu_module():
    x, w = _x((1, 2, 5, 5), name="x"), _x((3, 2, 3, 3), name="w")
    bb = BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            lv = bb.emit(op.nn.conv2d(x, w))
            lv1 = bb.emit(op.nn.relu(lv))
            gv = bb.emit_output(op.exp(lv1))
        bb.emit_func_output(gv)
    return bb.get()


def test_fuse_ops_by_pattern_outlines_composite_functions():
    pat = is_op("relax.nn.relu")(is_op("relax.nn.conv2d")(wildcard(), wildcard()))
    mod = _conv_relu_module()
    after = FuseOpsByPattern([("dnnl.conv2d_relu", pat)])(mod)
    assert analysis.well_formed(after)
    fused = after["fused_dnnl_conv2d_relu"]
    assert isinstance(fused, Function) and fused.attrs["Composite"] == "dnnl.conv2d_relu"
    assert "global_symbol" not in fused.attrs
    names = [b.value.op.name for b in fused.body.blocks[0].bindings]
    assert names == ["relax.nn.conv2d", "relax.nn.relu"]
    main = after["main"].body.blocks[0].bindings
    assert len(main) == 2 and isinstance(main[0].value, Call)
    assert main[0].value.op is after.get_global_var("fused_dnnl_conv2d_relu")
    assert FuseOpsByPattern([("x", is_op("relax.nn.softmax")(wildcard()))])(mod) is mod
    assert_structural_equal(after, _conv_relu_fused())
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype(F32)
    w = np.random.default_rng(1).standard_normal((3, 2, 3, 3)).astype(F32)
    from unity.relax.transform import LegalizeOps

    np.testing.assert_allclose(evaluate(LegalizeOps()(after), x, w), evaluate(LegalizeOps()(mod), x, w),
                               rtol=1e-5)  # fmt: skip


def _conv_relu_fused():
    x, w = _x((1, 2, 5, 5), name="x"), _x((3, 2, 3, 3), name="w")
    bb = BlockBuilder()
    with bb.function("fused_dnnl_conv2d_relu", [x, w],
                     attrs={"Composite": "dnnl.conv2d_relu", "Primitive": True}):  # fmt: skip
        with bb.dataflow():
            lv = bb.emit(op.nn.conv2d(x, w))
            gv = bb.emit_output(op.nn.relu(lv), "lv1")
        bb.emit_func_output(gv)
    mod = bb.get()
    gv = mod.get_global_var("fused_dnnl_conv2d_relu")
    mod.update_func(gv, mod[gv].without_attr("global_symbol"))
    x, w = _x((1, 2, 5, 5), name="x"), _x((3, 2, 3, 3), name="w")
    bb = BlockBuilder(mod)
    with bb.function("main", [x, w]):
        with bb.dataflow():
            lv1 = bb.emit(Call(gv, (x, w)))
            out = bb.emit_output(op.exp(lv1))
        bb.emit_func_output(out)
    return bb.get()


def test_fuse_ops_by_pattern_skips_matches_whose_inner_result_escapes():
    x = _x()
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(op.exp(x))
            lv1 = bb.emit(op.nn.relu(lv))
            gv = bb.emit_output(op.add(lv, lv1))
        bb.emit_func_output(gv)
    mod = bb.get()
    pat = is_op("relax.nn.relu")(is_op("relax.exp")(wildcard()))
    assert FuseOpsByPattern([("a.exp_relu", pat)])(mod) is mod
    veto = FusionPattern("a.relu", is_op("relax.nn.relu")(wildcard()), check=lambda m, b: False)
    assert FuseOpsByPattern([veto])(mod) is mod


def test_fuse_ops_by_pattern_can_wrap_composites_for_an_external_codegen():
    pat = is_op("relax.nn.relu")(is_op("relax.nn.conv2d")(wildcard(), wildcard()))
    mod = _conv_relu_module()
    after = FuseOpsByPattern([("dnnl.conv2d_relu", pat)], annotate_codegen=True)(mod)
    assert analysis.well_formed(after)
    outer = after["fused_dnnl_conv2d_relu"]
    assert outer.attrs["Codegen"] == "dnnl"
    local = outer.body.blocks[0].bindings[0].value
    assert isinstance(local, Function) and local.attrs["Composite"] == "dnnl.conv2d_relu"
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype(F32)
    w = np.random.default_rng(1).standard_normal((3, 2, 3, 3)).astype(F32)
    from unity.relax.transform import LegalizeOps

    np.testing.assert_allclose(evaluate(LegalizeOps()(after), x, w), evaluate(LegalizeOps()(mod), x, w),
                               rtol=1e-5)  # fmt: skip


def test_bad_rewriters_and_patterns_are_named():
    mod = _mul_by_two_module()
    with pytest.raises(TypeError, match="the rewriter returned NoneType, not a relax expression"):
        rewrite_call(is_op("relax.exp")(wildcard()), lambda e, m: None, mod["main"])
    with pytest.raises(TypeError, match=r"expected a FusionPattern or \(name, pattern\)"):
        FuseOpsByPattern([("name", "relax.exp")])(mod)
