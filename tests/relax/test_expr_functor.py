"""ExprVisitor / ExprMutator: hooks by MRO, identity when unchanged, struct info refreshed."""

from unity.relax import (
    BlockBuilder, Call, DataflowVar, ExprMutator, ExprVisitor, TensorStructInfo, Var, op, sym,
)  # fmt: skip


def _mod():
    x = Var("x", TensorStructInfo(("n", 4), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(op.exp(x))
            gv = bb.emit_output(op.sum(lv, axis=1))
        bb.emit_func_output(gv)
    return bb.get()


def test_visitor_hooks_follow_the_mro():
    seen = []

    class Vars(ExprVisitor):
        def visit_var_(self, var):
            seen.append(type(var).__name__)

    Vars().visit_expr(_mod()["main"])
    assert seen == ["Var", "DataflowVar", "Var"]  # uses of x, lv, gv


def test_mutator_without_changes_returns_the_function():
    func = _mod()["main"]
    assert ExprMutator().visit_expr(func) is func


def test_mutator_refreshes_struct_info_downstream():
    func = _mod()["main"]

    class ExpToTranspose(ExprMutator):
        def visit_call_(self, call: Call):
            call = super().visit_call_(call)
            if call.op is op.exp:
                return self.refresh(op.permute_dims(call.args[0]))
            return call

    new = ExpToTranspose().visit_expr(func)
    lv, gv = (b.var for b in new.body.blocks[0].bindings)
    assert isinstance(lv, DataflowVar) and lv.struct_info.shape == (4, sym("n"))
    assert gv.struct_info.shape == (4,)
    assert new.body.blocks[0].bindings[1].value.args[0] is lv
    assert new.ret_struct_info.shape == (4,)
