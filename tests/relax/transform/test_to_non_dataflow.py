"""ToNonDataflow: dataflow blocks become binding blocks, DataflowVars become Vars."""

from unity.relax import BindingBlock, BlockBuilder, DataflowBlock, DataflowVar, TensorStructInfo, Var, analysis, op
from unity.relax.transform import ToNonDataflow


def _mod(dataflow):
    x = Var("x", TensorStructInfo(("n",), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        if dataflow:
            with bb.dataflow():
                lv = bb.emit(op.exp(x))
                gv = bb.emit_output(op.add(lv, x))
        else:
            gv = bb.emit(op.exp(x))
        bb.emit_func_output(gv)
    return bb.get()


def test_dataflow_block_becomes_binding_block():
    before = _mod(dataflow=True)
    assert isinstance(before["main"].body.blocks[0], DataflowBlock)
    after = ToNonDataflow()(before)
    block = after["main"].body.blocks[0]
    assert type(block) is BindingBlock
    assert not any(isinstance(b.var, DataflowVar) for b in block.bindings)
    lv, gv = block.bindings
    assert gv.value.args[0] is lv.var  # uses follow the renamed definition
    assert lv.var.struct_info is before["main"].body.blocks[0].bindings[0].var.struct_info
    assert analysis.well_formed(after)


def test_nothing_to_do_returns_the_module():
    mod = _mod(dataflow=False)
    assert ToNonDataflow()(mod) is mod
