"""Lift local functions to module-level functions; captured vars become leading parameters.

Before::

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        @R.function
        def inner(y: R.Tensor((4,), "float32")):
            return R.add(x, y)          # captures x
        gv = inner(x)
        return gv

After ``LambdaLift()``::

    @R.function(private=True)
    def main_inner(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
        return R.add(x, y)

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        gv = main_inner(x, x)
        return gv

A local function is lifted when every use of its var is as a callee (a function value
passed elsewhere would need a closure object, which the VM does not have); nested local
functions are lifted innermost first.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import GlobalVar, IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import Binding, Call, Expr, Function, Var, VarBinding
from unity.relax.expr_functor import ExprMutator, ExprVisitor, VarRenamer
from unity.relax.transform.dead_code_elimination import used_vars


@dataclass(frozen=True)
class LambdaLift(ModulePass):
    """Move functions bound inside relax functions to the module.

    Example:
        >>> LambdaLift()(IRModule()).functions
        {}
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Lift the local functions of every relax function."""
        out = mod.copy()
        changed = False
        for gv, func in mod.items():
            if isinstance(func, Function):
                lifter = _Lifter(out, gv.name_hint)
                new = lifter.visit_expr(func)
                if new is not func:
                    out.update_func(gv, new)
                    changed = True
        return out if changed else mod


class _CalleeUses(ExprVisitor):
    """Count, per var, its uses and its uses as a callee."""

    def __init__(self) -> None:
        self.uses: dict[Var, int] = {}
        self.calls: dict[Var, int] = {}

    def visit_var_(self, var: Var) -> None:
        self.uses[var] = self.uses.get(var, 0) + 1

    def visit_call_(self, expr: Call) -> None:
        if isinstance(expr.op, Var):
            self.calls[expr.op] = self.calls.get(expr.op, 0) + 1
        super().visit_call_(expr)


class _Lifter(ExprMutator):
    def __init__(self, mod: IRModule, prefix: str) -> None:
        super().__init__(mod)
        self.out_mod, self.prefix = mod, prefix
        self.lifted: dict[Var, tuple[GlobalVar, list[Var]]] = {}
        self.counts: _CalleeUses | None = None

    def visit_function_(self, func: Function) -> Function:
        if self.counts is None:
            self.counts = _CalleeUses()
            self.counts.visit_expr(func)
        return super().visit_function_(func)

    def visit_binding(self, binding: Binding) -> list[Binding]:
        if not isinstance(binding, VarBinding) or not isinstance(binding.value, Function):
            return super().visit_binding(binding)
        assert self.counts is not None
        var = binding.var
        if self.counts.uses.get(var, 0) != self.counts.calls.get(var, 0):
            return super().visit_binding(binding)  # escapes as a value: keep it local
        inner = self.visit_expr(binding.value)
        captured = sorted(used_vars(inner) - _bound_in(inner), key=lambda v: v.name_hint)
        fresh = [Var(v.name_hint, v.struct_info_) for v in captured]
        lifted = VarRenamer(dict(zip(captured, fresh, strict=True))).visit_expr(inner)
        lifted = Function((*fresh, *lifted.params), lifted.body, lifted.ret_struct_info,
                          lifted.is_pure, attrs={k: v for k, v in lifted.attrs.items()
                                                 if k != "global_symbol"})  # fmt: skip
        gv = self.out_mod.add(f"{self.prefix}_{var.name_hint}", lifted)
        self.lifted[var] = (gv, captured)
        return []

    def visit_call_(self, expr: Call) -> Expr:
        target = self.lifted.get(expr.op) if isinstance(expr.op, Var) else None
        if target is None:
            return super().visit_call_(expr)
        gv, captured = target
        args = tuple(self.visit_expr(a) for a in (*captured, *expr.args))
        return Call(gv, args, expr.attrs, expr.sinfo_args, struct_info_=expr.struct_info_, span=expr.span)


def _bound_in(func: Function) -> set[Var]:
    defs = _Defs()
    defs.visit_expr(func)
    return defs.vars


class _Defs(ExprVisitor):
    def __init__(self) -> None:
        self.vars: set[Var] = set()

    def visit_var_def(self, var: Var) -> None:
        self.vars.add(var)

