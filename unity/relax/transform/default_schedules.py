"""`DefaultSchedules`: schedule every PrimFunc with the default CPU rules, and pack
constant weights at compile time.

Runs `unity.schedule.default.apply_default_schedules` (PrimFuncs marked
``tir.is_scheduled`` are left alone), then, for each ``call_tir`` that passes a
constant to a kernel whose schedule packs that operand (`unity.schedule.default.prepack`),
calls a copy of the kernel without the packing step and passes the packed constant
(the constant may be an argument or bound to a variable; a binding no longer used is
left for `DeadCodeElimination`).

Before::

    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), "float32")):
        y = R.call_tir(cls.conv, (x, R.const(w)), out_sinfo=R.Tensor((1, 64, 56, 56), "float32"))

After ``DefaultSchedules()``::

    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), "float32")):
        y = R.call_tir(cls.conv_prepacked, (x, R.const(w_packed)), out_sinfo=...)

with `conv` scheduled (tiles, vectors, parallel loops) and `conv_prepacked` the same
kernel reading `w_packed` (``[64/32, 64, 3, 3, 32]``) directly.  Switch the pass off
with ``PassContext(config={"schedule.default.enabled": False})``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from unity.ir.module import GlobalVar, IRModule
from unity.ir.pass_context import PassContext, list_configs, register_config
from unity.ir.transform import ModulePass
from unity.relax.expr import Call, Constant, Function, If, Tuple, Var, VarBinding
from unity.relax.expr_functor import ExprMutator
from unity.relax.op.call_tir import call_tir
from unity.schedule.default import apply_default_schedules
from unity.schedule.default.prepack import pack_array, prepacked_params, split_prepacked
from unity.tir.function import PrimFunc

__all__ = ["DefaultSchedules"]

if "schedule.default.enabled" not in list_configs():
    register_config("schedule.default.enabled", bool, True)


@dataclass(frozen=True)
class DefaultSchedules(ModulePass):
    """Apply the default CPU schedule rules; pack constant weights once, at compile time.

    Attributes:
        target: The `llvm` target to schedule for (None: the host CPU).
        prepack: Pack constant operands at compile time (else inside the kernel).

    Example:
        >>> DefaultSchedules()(IRModule()).functions
        {}
    """

    target: Any = None
    prepack: bool = True

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Schedule the PrimFuncs, then rewrite calls that pass constants to packed kernels."""
        if not ctx.get_config("schedule.default.enabled"):
            return mod
        scheduled = apply_default_schedules(mod, self.target)
        if not self.prepack:
            return scheduled
        packs = {
            gv: found for gv, f in scheduled.items()
            if isinstance(f, PrimFunc) and (found := prepacked_params(f))
        }  # fmt: skip
        if not packs:
            return scheduled
        out = scheduled.copy()
        rewriter = _Prepack(out, packs)
        for gv, func in list(scheduled.items()):
            if isinstance(func, Function):
                rewriter.constants = _constant_bindings(func)
                out.update_func(gv, rewriter.visit_expr(func))
        for gv in packs:
            if not _called_elsewhere(out, gv):
                out.remove(gv)
        return out


class _Prepack(ExprMutator):
    """Point `call_tir`s with constant packed operands at prepacked kernel copies."""

    def __init__(self, mod: IRModule, packs: dict[GlobalVar, dict[int, str]]) -> None:
        super().__init__(mod)
        self.packs = packs
        self.constants: dict[Var, Constant] = {}
        self.variants: dict[tuple[GlobalVar, frozenset[int]], GlobalVar] = {}

    def visit_call_(self, expr: Call) -> Any:
        call = super().visit_call_(expr)
        if not (isinstance(call, Call) and call.op is call_tir and len(call.args) >= 2):
            return call
        gv, args = call.args[0], call.args[1]
        if gv not in self.packs or not isinstance(args, Tuple):
            return call
        recipes = self.packs[gv]
        fields = [self.constants.get(f, f) for f in args.fields]  # `lv = R.const(..)` too
        chosen = {k for k in recipes if k < len(fields) and isinstance(fields[k], Constant)}
        if not chosen:
            return call
        fields = [f if k in chosen else args.fields[k] for k, f in enumerate(fields)]
        for k in chosen:
            fields[k] = Constant(pack_array(recipes[k], fields[k].data))
        key = (gv, frozenset(chosen))
        if key not in self.variants:
            func = split_prepacked(self.mod[gv], chosen)
            self.variants[key] = self.mod.add(f"{gv.name_hint}_prepacked", func)
        new_args = (
            self.variants[key],
            self.refresh(Tuple(tuple(fields), span=args.span)),
            *call.args[2:],
        )
        return self.refresh(call.replace(args=new_args))


def _constant_bindings(func: Function) -> dict[Var, Constant]:
    """`{var: constant}` for each ``var = R.const(...)`` binding of `func` (in `If`
    branches too: a conv trimmed for small images binds its kernel there)."""
    found: dict[Var, Constant] = {}
    seqs = [func.body]
    while seqs:
        for block in getattr(seqs.pop(), "blocks", ()):
            for binding in block.bindings:
                if isinstance(binding, VarBinding) and isinstance(binding.value, Constant):
                    found[binding.var] = binding.value
                elif isinstance(binding, VarBinding) and isinstance(binding.value, If):
                    seqs += [binding.value.true_branch, binding.value.false_branch]
    return found


def _called_elsewhere(mod: IRModule, gv: GlobalVar) -> bool:
    """True when a relax function of `mod` still refers to `gv`."""
    from unity.relax.expr_functor import ExprVisitor

    class _Uses(ExprVisitor):
        found = False

        def visit_expr(self, expr: Any) -> None:
            if expr is gv:
                self.found = True
            super().visit_expr(expr)

    uses = _Uses()
    for func in mod.functions.values():
        if isinstance(func, Function):
            uses.visit_expr(func)
    return uses.found
