"""Move weight preprocessing into `<func>_transform_params`, run once before inference.

A function with the attribute ``num_input = k`` takes its first `k` parameters at
every call; the rest are weights. Bindings computed from weights (and constants)
alone move out.

Before::

    @R.function
    def main(x: R.Tensor((2, 4), "float32"), w: R.Tensor((3, 4), "float32")):  # num_input=1
        with R.dataflow():
            wt = R.permute_dims(w)                 # depends on weights only
            gv = R.matmul(x, wt)
            R.output(gv)
        return gv

After ``LiftTransformParams()``::

    @R.function
    def main_transform_params(w: R.Tensor((3, 4), "float32")):
        with R.dataflow():
            wt = R.permute_dims(w)
            gv = (wt,)
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((2, 4), "float32"), wt: R.Tensor((4, 3), "float32")):  # num_input=1
        with R.dataflow():
            gv = R.matmul(x, wt)
            R.output(gv)
        return gv

Use: ``params = vm["main_transform_params"](*weights)`` once, then
``vm["main"](x, *params)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import (
    Binding, DataflowBlock, Expr, Function, SeqExpr, Tuple, Var, VarBinding,
)  # fmt: skip
from unity.relax.expr_functor import VarRenamer
from unity.relax.transform.dead_code_elimination import is_pure, used_vars


@dataclass(frozen=True)
class LiftTransformParams(ModulePass):
    """Split each function with ``num_input`` into a weight transform and the inference part.

    Example:
        >>> LiftTransformParams()(IRModule()).functions
        {}
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Lift every function of `mod` that has the ``num_input`` attribute."""
        out = mod
        for gv, func in mod.items():
            if isinstance(func, Function) and "num_input" in func.attrs:
                split = _split(func, int(func.attrs["num_input"]))
                if split is not None:
                    out = out.copy() if out is mod else out
                    transform, main = split
                    out.update_func(gv, main)
                    out[f"{gv.name_hint}_transform_params"] = transform
        return out


def _split(func: Function, num_input: int) -> tuple[Function, Function] | None:
    weights = list(func.params[num_input:])
    lifted: set[Var] = set(weights)
    moved: list[Binding] = []
    for block in func.body.blocks:
        if not isinstance(block, DataflowBlock):
            continue
        for b in block.bindings:
            value = getattr(b, "value", None)
            if isinstance(b, VarBinding) and is_pure(value) and used_vars(value) <= lifted:
                lifted.add(b.var)
                moved.append(b)
    if not moved:
        return None
    moved_vars = {b.var for b in moved}
    kept = [_drop(block, moved_vars) for block in func.body.blocks]
    needed = _needed(kept, func.body.body, lifted)
    transform = _transform_function(weights, moved, needed, func)
    new_params = [Var(v.name_hint, v.struct_info) for v in needed]
    renamer = VarRenamer(dict(zip(needed, new_params, strict=True)))
    body = renamer.visit_expr(SeqExpr(tuple(b for b in kept if b.bindings), func.body.body))
    main = Function((*func.params[:num_input], *new_params), body, func.ret_struct_info,
                    func.is_pure, attrs=func.attrs)  # fmt: skip
    return transform, main


def _drop(block: object, moved: set[Var]) -> object:
    bindings = tuple(b for b in block.bindings if b.var not in moved)  # type: ignore[attr-defined]
    return block.replace(bindings=bindings)  # type: ignore[attr-defined]


def _needed(blocks: list[object], body: Expr, lifted: set[Var]) -> list[Var]:
    """Lifted values the remaining bindings use, in first-use order."""
    order: list[Var] = []
    exprs = [b.value for block in blocks for b in block.bindings] + [body]  # type: ignore[attr-defined]
    for e in exprs:
        for v in sorted(used_vars(e) & lifted, key=lambda v: v.name_hint):
            if v not in order:
                order.append(v)
    return order


def _transform_function(weights: list[Var], moved: list[Binding], needed: list[Var],
                        func: Function) -> Function:  # fmt: skip
    params = [Var(w.name_hint, w.struct_info) for w in weights]
    renamer = VarRenamer(dict(zip(weights, params, strict=True)))
    bb = BlockBuilder()
    with bb.function("transform_params", params):
        with bb.dataflow():
            for b in moved:
                value = renamer.visit_expr(b.value)  # type: ignore[attr-defined]
                renamer.var_remap[b.var] = bb.emit(value, b.var.name_hint)
            outputs = [renamer.visit_expr(v) for v in needed]
            gv = bb.emit_output(Tuple(tuple(outputs)), "gv") if outputs else None
        bb.emit_func_output(gv if gv is not None else [])
    made = bb.get()["transform_params"]
    assert isinstance(made, Function)
    return made.with_attr("global_symbol", f"{func.attrs.get('global_symbol', 'main')}_transform_params")

