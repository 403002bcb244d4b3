"""DumpIR writes a numbered diff per changing pass; WellFormedInstrument names the culprit."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

from unity.instrument import DumpIR, IllFormedError, WellFormedInstrument
from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext, Sequential
from unity.relax import BlockBuilder, Function, SeqExpr, TensorStructInfo, Var, const, op
from unity.relax.transform import DeadCodeElimination, FoldConstant


def _module() -> IRModule:
    x = Var("x", TensorStructInfo((2,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            bb.emit(op.exp(x))
            c = bb.emit(op.add(const([1.0, 2.0]), const([3.0, 4.0])))
            out = bb.emit_output(op.multiply(x, c))
        bb.emit_func_output(out)
    return bb.get()


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_dump_ir_writes_one_numbered_diff_per_changing_pass(tmp_path):
    folder = str(tmp_path / "ir")
    dump = DumpIR(folder)
    pipeline = Sequential([FoldConstant(), FoldConstant(), DeadCodeElimination()])
    with PassContext(instruments=[dump]):
        pipeline(_module())
    names = [os.path.basename(p) for p in dump.files]
    assert names == ["000_input.py", "001_FoldConstant.diff", "002_DeadCodeElimination.diff"]
    fold, dce, first = (_read(dump.files[i]) for i in (1, 2, 0))
    assert fold.startswith("--- before FoldConstant\n+++ after FoldConstant\n")
    assert any(line.startswith("-") and "R.add" in line for line in fold.splitlines())
    assert any(line.startswith("-") and "R.exp" in line for line in dce.splitlines())
    assert "def main" in first


@dataclass(frozen=True)
class _DropBindings(ModulePass):
    """A broken pass: drops every binding but keeps uses of their vars."""

    def transform_module(self, mod, ctx):
        func = mod["main"]
        out = mod.copy()
        out.update_func(out.get_global_var("main"), func.replace(body=SeqExpr((), func.body.body)))
        return out


@pytest.mark.ill_formed
def test_well_formed_instrument_names_the_breaking_pass():
    pipeline = Sequential([FoldConstant(), _DropBindings(), DeadCodeElimination()])
    with PassContext(instruments=[WellFormedInstrument()]), pytest.raises(IllFormedError) as info:
        pipeline(_module())
    assert info.value.pass_name == "_DropBindings"
    text = str(info.value)
    assert text.startswith("the IR is ill-formed after pass _DropBindings: ")
    assert "in pass: _DropBindings" in text


def test_well_formed_instrument_passes_good_pipelines():
    with PassContext(instruments=[WellFormedInstrument()]):
        out = Sequential([FoldConstant(), DeadCodeElimination()])(_module())
    assert isinstance(out["main"], Function)
