"""BlockBuilder: an MLP and a small CNN with a symbolic batch, ANF, match_cast, errors."""

import pytest

from unity.ir.diagnostics import DiagnosticError
from unity.relax import (
    BindingBlock, BlockBuilder, Call, DataflowBlock, DataflowVar, Function, ObjectStructInfo,
    TensorStructInfo, TupleGetItem, Var, analysis, op, sym,
)  # fmt: skip


def _var(name, shape, dtype="float32"):
    return Var(name, TensorStructInfo(shape, dtype))


def _dims(var):
    return tuple(str(d) for d in var.struct_info.shape)


def build_mlp():
    x = _var("x", ("n", 784))
    w1, b1 = _var("w1", (128, 784)), _var("b1", (128,))
    w2, b2 = _var("w2", (10, 128)), _var("b2", (10,))
    bb = BlockBuilder()
    with bb.function("main", [x, w1, b1, w2, b2]):
        with bb.dataflow():
            h = bb.emit(op.nn.relu(op.nn.linear(x, w1, b1)))
            logits = bb.emit(op.nn.linear(h, w2, b2))
            out = bb.emit_output(op.nn.softmax(logits, axis=-1))
        bb.emit_func_output(out)
    return bb.get(), out


def test_mlp_with_symbolic_batch_is_well_formed():
    mod, out = build_mlp()
    func = mod["main"]
    assert isinstance(func, Function) and func.attrs["global_symbol"] == "main"
    assert _dims(out) == ("n", "10")
    assert tuple(map(str, func.ret_struct_info.shape)) == ("n", "10")
    block = func.body.blocks[0]
    assert isinstance(block, DataflowBlock)
    assert all(isinstance(b.var, DataflowVar) for b in block.bindings[:-1])
    assert not isinstance(block.bindings[-1].var, DataflowVar)
    assert analysis.well_formed(mod)


def test_small_cnn_with_symbolic_batch_is_well_formed():
    x = _var("x", ("n", 3, 32, 32))
    w1 = _var("w1", (8, 3, 3, 3))
    chans = [_var(name, (8,)) for name in ("gamma", "beta", "mean", "var")]
    fc = _var("fc", (10, 8 * 16 * 16))
    bb = BlockBuilder()
    with bb.function("main", [x, w1, *chans, fc]):
        with bb.dataflow():
            c = bb.emit(op.nn.conv2d(x, w1, padding=1))
            bn = bb.emit(TupleGetItem(op.nn.batch_norm(c, *chans), 0))
            p = bb.emit(op.nn.max_pool2d(op.nn.relu(bn), 2))
            f = bb.emit(op.reshape(p, ("n", -1)))
            out = bb.emit_output(op.nn.linear(f, fc))
        bb.emit_func_output(out)
    mod = bb.get()
    assert _dims(c) == ("n", "8", "32", "32")
    assert _dims(p) == ("n", "8", "16", "16")
    assert _dims(f) == ("n", "2048")
    assert _dims(out) == ("n", "10")
    assert analysis.well_formed(mod)


def test_nested_calls_are_bound_first():
    x = _var("x", ("n",))
    bb = BlockBuilder()
    with bb.function("f", [x]):
        y = bb.emit(op.exp(op.add(x, x)))
        bb.emit_func_output(y)
    bindings = bb.get()["f"].body.blocks[0].bindings
    assert isinstance(bb.get()["f"].body.blocks[0], BindingBlock)
    assert [b.value.op for b in bindings] == [op.add, op.exp]
    assert bindings[1].value.args[0] is bindings[0].var


def test_emit_func_output_binds_a_call_and_accepts_a_tuple():
    x = _var("x", (2,))
    bb = BlockBuilder()
    with bb.function("f", [x]):
        bb.emit_func_output(op.exp(x))
    with bb.function("g", [x]):
        bb.emit_func_output([x, x])
    mod = bb.get()
    assert mod["f"].body.blocks[0].bindings[0].value.op is op.exp
    assert len(mod["g"].ret_struct_info.fields) == 2
    assert analysis.well_formed(mod)


def test_match_cast_defines_new_symbols():
    x = Var("x", TensorStructInfo(None, "float32", ndim=2))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.match_cast(x, TensorStructInfo(("m", "k"), "float32"))
            z = bb.emit_output(op.reshape(y, (-1,)))
        bb.emit_func_output(z)
    assert _dims(z) == ("k*m",)
    assert analysis.well_formed(bb.get())


def test_match_cast_of_incompatible_rank_is_an_error():
    x = _var("x", ("n", 4))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with pytest.raises(DiagnosticError, match="match_cast of a rank-2 tensor to rank 1"):
            bb.match_cast(x, TensorStructInfo(("m",), "float32"))
        bb.emit_func_output(x)


def test_calling_a_module_function_binds_its_symbols():
    x = _var("x", ("n", 4))
    bb = BlockBuilder()
    with bb.function("double", [x]):
        bb.emit_func_output(op.add(x, x))
    y = _var("y", ("m", 4))
    gv = bb.get().get_global_var("double")
    with bb.function("main", [y]):
        out = bb.emit(Call(gv, (y,)))
        bb.emit_func_output(out)
    assert _dims(out) == ("m", "4")
    assert analysis.well_formed(bb.get())


def test_a_function_opened_inside_another_is_built_aside():
    x, y = _var("x", ("n",)), _var("y", (3,))
    bb = BlockBuilder()
    with bb.function("main", [y]):
        with bb.dataflow():
            first = bb.emit(op.exp(y))
            with bb.function("helper", [x]):  # as the ONNX importer does for a loop body
                bb.emit_func_output(bb.emit(op.negative(x)))
            second = bb.emit(Call(bb.get().get_global_var("helper"), (first,)))
            out = bb.emit_output(second)
        with pytest.raises(RuntimeError, match="function 'main' opened inside itself"), bb.function("main", [x]):
            pass
        bb.emit_func_output(out)
    mod = bb.get()
    assert [b.var for b in mod["main"].body.blocks[0].bindings] == [first, second, out]
    assert [b.var.name_hint for b in mod["helper"].body.blocks[0].bindings] == ["gv"]
    assert _dims(second) == ("3",) and analysis.well_formed(mod)


def test_builder_misuse_gives_clear_errors():
    bb = BlockBuilder()
    x = _var("x", (2,))
    with pytest.raises(RuntimeError, match="emit must be called inside bb.function"):
        bb.emit(op.exp(x))
    with pytest.raises(RuntimeError, match="emit_output is only valid inside bb.dataflow"), bb.function("f", [x]):
        bb.emit_output(x)
    outside = "emit_func_output must be called outside bb.dataflow"
    with pytest.raises(RuntimeError, match=outside), bb.function("g", [x]), bb.dataflow():
        bb.emit_func_output(x)
    with pytest.raises(RuntimeError, match="ended without emit_func_output"), bb.function("h", [x]):
        pass


def test_inference_errors_surface_on_emit():
    a, b = _var("a", (3, 4)), _var("b", (5, 6))
    bb = BlockBuilder()
    with bb.function("main", [a, b]):
        with pytest.raises(DiagnosticError, match="matmul reduces over mismatched dims: 4 vs 5"):
            bb.emit(op.matmul(a, b))
        bb.emit_func_output(a)


def test_normalize_fills_struct_info_without_emitting():
    x = _var("x", ("n",))
    call = BlockBuilder().normalize(op.exp(op.exp(x)))
    assert call.args[0].struct_info.shape == (sym("n"),)
    assert isinstance(BlockBuilder().normalize(op.call_pure_packed("f", x)).struct_info, ObjectStructInfo)


def test_two_builds_are_structurally_equal():
    from unity.ir.structural import structural_equal, structural_hash

    (a, _), (b, _) = build_mlp(), build_mlp()
    assert structural_equal(a, b) and structural_hash(a) == structural_hash(b)


def test_lookup_binding_and_dataflow_output_check():
    x = _var("x", ("n",))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            assert bb.current_block_is_dataflow()
            lv = bb.emit(op.exp(x))
            assert bb.lookup_binding(lv).op is op.exp and bb.lookup_binding(x) is None
        with pytest.raises(DiagnosticError, match="function output lv is a DataflowVar"):
            bb.emit_func_output(lv)
        bb.emit_func_output(x)
