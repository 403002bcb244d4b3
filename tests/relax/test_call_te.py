"""call_te / emit_te: a TE compute becomes a PrimFunc of the module and a call_tir to it."""

import numpy as np

from unity import te, tir
from unity.relax import BlockBuilder, TensorStructInfo, Var, analysis, op, sym
from unity.tir.interpreter import interpret


def _add(a, b):
    return te.compute(a.shape, lambda i, j: a[i, j] + b[i, j], name="C")


def test_emit_te_adds_prim_func_and_call_tir_with_symbolic_shapes():
    x = Var("x", TensorStructInfo(("n", 4), "float32"))
    y = Var("y", TensorStructInfo(("n", 4), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            z = bb.emit_output(bb.call_te(_add, x, y, primfunc_name_hint="add"))
        bb.emit_func_output(z)
    mod = bb.get()
    call = mod["main"].body.blocks[0].bindings[0].value
    assert call.op is op.call_tir and call.args[0] is mod.get_global_var("add")
    assert [a for a in call.args[1].fields] == [x, y]
    assert z.struct_info.shape == (sym("n"), 4)
    prim = mod["add"]
    assert isinstance(prim, tir.PrimFunc) and len(prim.params) == 3
    n_var = prim.params[0].shape[0]
    assert isinstance(n_var, tir.Var) and n_var.dtype == "int64"
    assert prim.params[1].shape[0] is n_var  # one tir var per relax symbol
    assert analysis.well_formed(mod)

    a, b = np.random.rand(5, 4).astype("float32"), np.random.rand(5, 4).astype("float32")
    c = np.zeros((5, 4), "float32")
    interpret(prim, a, b, c)
    np.testing.assert_allclose(c, a + b)


def test_call_te_passes_shape_and_kwargs_and_maps_output_symbols_back():
    x = Var("x", TensorStructInfo(("n", 4), "float32"))

    def flatten_scaled(a, scale):
        n = a.shape[0]
        return te.compute((n * 4,), lambda i: a[i // 4, i % 4] * scale, name="F")

    bb = BlockBuilder()
    with bb.function("main", [x]):
        out = bb.emit_te(flatten_scaled, x, scale=2.0)
        bb.emit_func_output(out)
    assert out.struct_info.shape == (4 * sym("n"),)
    prim = bb.get()["flatten_scaled"]
    a = np.arange(12, dtype="float32").reshape(3, 4)
    b = np.zeros(12, "float32")
    interpret(prim, a, b)
    np.testing.assert_allclose(b, a.reshape(-1) * 2)


def test_output_only_symbols_become_tir_vars():
    x = Var("x", TensorStructInfo((4,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x, Var("s", TensorStructInfo(("m",), "float32"))]):
        out = bb.emit_te(lambda a, shape: te.compute(shape, lambda i: a[0], name="B"), x,
                         op.zeros(("m",)).args[0])  # fmt: skip
        bb.emit_func_output(out)
    call = bb.get()["main"].body.blocks[0].bindings[0].value
    assert len(call.args) == 3 and call.args[2].values == (sym("m"),)
    prim = bb.get()["main"].body.blocks[0].bindings[0].value.args[0]
    assert isinstance(bb.get()[prim].params[-1], tir.Var)


def test_symbols_inside_compound_dims_become_tir_vars():
    # a (b * s, 4) argument defines neither b nor s: the PrimFunc takes both as scalars
    x = Var("x", TensorStructInfo((sym("b") * sym("s"), 4), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x, Var("shape", TensorStructInfo(("b", "s"), "float32"))]):
        out = bb.emit_te(lambda a: te.compute(a.shape, lambda i, j: a[i, j] * 2.0, name="B"), x)
        bb.emit_func_output(out)
    call = bb.get()["main"].body.blocks[0].bindings[0].value
    assert call.args[2].values == (sym("b"), sym("s"))
    prim = bb.get()[call.args[0]]
    assert [p.name for p in prim.params[-2:]] == ["b", "s"]
    a = np.arange(24, dtype="float32").reshape(6, 4)
    b = np.empty_like(a)
    interpret(prim, a, b, 2, 3)
    np.testing.assert_allclose(b, a * 2)
