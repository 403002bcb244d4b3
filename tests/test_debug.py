"""bisect_pipeline names the pass after which the outputs stop matching."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from unity.debug import bisect_pipeline, flatten_pipeline
from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, Sequential
from unity.relax import BlockBuilder, TensorStructInfo, Var, const, op
from unity.relax.dpl import is_op, rewrite_call, wildcard
from unity.relax.pipeline import get_pipeline
from unity.relax.transform import (
    CanonicalizeBindings, DeadCodeElimination, EliminateCommonSubexpr, FoldConstant,
)  # fmt: skip


def _module() -> IRModule:
    x = Var("x", TensorStructInfo((2, 3), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            c = bb.emit(op.add(const(np.ones((2, 3), "float32")), const(np.ones((2, 3), "float32"))))
            a = bb.emit(op.multiply(x, c))
            b = bb.emit(op.multiply(x, c))
            s = bb.emit(op.subtract(a, b))
            out = bb.emit_output(op.add(op.exp(x), op.nn.relu(s)))
        bb.emit_func_output(out)
    return bb.get()


@dataclass(frozen=True)
class PlantedBug(ModulePass):
    """A wrong rewrite: exp(x) -> x + 1 (only a first-order approximation)."""

    def transform_module(self, mod, ctx):
        arg = wildcard()

        def wrong(expr, m):
            return op.add(m[arg], const(1.0))

        func = mod["main"]
        new = rewrite_call(is_op("relax.exp")(arg), wrong, func)
        if new is func:
            return mod
        out = mod.copy()
        out.update_func(out.get_global_var("main"), new)
        return out


def _pipeline() -> Sequential:
    return Sequential([
        FoldConstant(), EliminateCommonSubexpr(), CanonicalizeBindings(),
        Sequential([PlantedBug(), DeadCodeElimination()]), get_pipeline("default"),
    ])  # fmt: skip


def test_bisect_names_the_planted_wrong_rewrite_with_its_diff():
    x = np.random.default_rng(0).standard_normal((2, 3)).astype("float32")
    result = bisect_pipeline(_module(), [x], "llvm", _pipeline())
    assert result.pass_name == "PlantedBug" and result.index == 3
    assert result.checked == ["FoldConstant", "EliminateCommonSubexpr", "PlantedBug"]
    assert "output 0: max abs error" in result.error
    assert "-" in result.diff and "+++ after PlantedBug" in result.diff
    assert any(line.startswith("-") and "R.exp" in line for line in result.diff.splitlines())
    assert str(result).startswith("outputs stop matching after pass 4 of")


def test_bisect_without_a_bug_reports_ok():
    x = np.ones((2, 3), "float32")
    pipeline = Sequential([FoldConstant(), EliminateCommonSubexpr(), DeadCodeElimination()])
    result = bisect_pipeline(_module(), [x], "llvm", pipeline)
    assert result.ok and str(result).startswith("all 3 passes keep the outputs")


def test_flatten_pipeline_expands_nested_sequentials():
    names = [p.info.name for p in flatten_pipeline(_pipeline())]
    assert names[:5] == ["FoldConstant", "EliminateCommonSubexpr", "CanonicalizeBindings",
                         "PlantedBug", "DeadCodeElimination"]  # fmt: skip
    assert "LegalizeOps" in names
