"""Make the outputs of `call_tir` / `call_dps_packed` explicit allocations.

Before::

    @R.function
    def main(x: R.Tensor((n, 4), "float32")):
        y = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((n, 4), "float32"))
        return y

After ``CallTIRRewrite()``::

    @R.function
    def main(x: R.Tensor((n, 4), "float32")):
        alloc = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0))
        _ = cls.exp(x, alloc)
        y = alloc
        return y

A tuple output allocates each field and binds ``y = (alloc, alloc1)``; `tir_vars`
are passed after the outputs.  Run it after `ToNonDataflow`.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import (
    Binding,
    Call,
    DataflowVar,
    Expr,
    Function,
    ShapeExpr,
    Tuple,
    TupleGetItem,
    Var,
    VarBinding,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator
from unity.relax.op.call_tir import call_dps_packed, call_tir
from unity.relax.struct_info import TensorStructInfo, TupleStructInfo
from unity.relax.vm.builtin import alloc_tensor

VOID = TupleStructInfo(())
"""The struct info of a destination-passing call's own result (nothing)."""


@dataclass(frozen=True)
class CallTIRRewrite(ModulePass):
    """Replace ``y = call_tir(f, args, out)`` by allocations and ``f(*args, *outs)``.

    Example:
        >>> CallTIRRewrite()(IRModule()).functions
        {}
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Rewrite every relax function of `mod` (returns `mod` when none calls out)."""
        return mod.map_functions(Function, lambda f: _Rewriter(mod).visit_expr(f))


class _Rewriter(ExprMutator):
    def __init__(self, mod: IRModule) -> None:
        super().__init__(mod)
        self.names: dict[str, int] = {}

    def fresh(self, hint: str) -> str:
        count = self.names.get(hint, 0)
        self.names[hint] = count + 1
        return hint if count == 0 else f"{hint}{count}"

    def visit_binding(self, binding: Binding) -> list[Binding]:
        value = binding.value  # type: ignore[attr-defined]  # both binding kinds
        if not (
            isinstance(binding, VarBinding)
            and isinstance(value, Call)
            and (value.op is call_tir or value.op is call_dps_packed)
        ):
            return super().visit_binding(binding)
        call = self.visit_expr(value)
        var_cls = DataflowVar if isinstance(binding.var, DataflowVar) else Var
        out = call.sinfo_args[0]
        fields = out.fields if isinstance(out, TupleStructInfo) else (out,)
        bindings: list[Binding] = []
        outs: list[Var] = []
        for sinfo in fields:
            if not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None:
                raise DiagnosticError(
                    "CallTIRRewrite: an output of unknown shape cannot be allocated", call
                )
            alloc = alloc_tensor(ShapeExpr(sinfo.shape), sinfo.dtype).replace(struct_info_=sinfo)
            var = var_cls(self.fresh("alloc"), sinfo)
            bindings.append(VarBinding(var, alloc))
            outs.append(var)
        args = _unpack(call.args[1])
        extra = [a for a in call.args[2:] if isinstance(a, ShapeExpr)]
        kernel = Call(call.args[0], (*args, *outs, *extra), sinfo_args=(VOID,), struct_info_=VOID)
        bindings.append(VarBinding(var_cls(self.fresh("_"), VOID), kernel))
        result: Expr = outs[0] if not isinstance(out, TupleStructInfo) else Tuple(tuple(outs))
        var = self.visit_var_def(binding.var)
        bindings.append(VarBinding(var, result))
        return bindings


def _unpack(args: Expr) -> tuple[Expr, ...]:
    if isinstance(args, Tuple):
        return args.fields
    sinfo = args.struct_info
    assert isinstance(sinfo, TupleStructInfo)
    return tuple(TupleGetItem(args, i, struct_info_=f) for i, f in enumerate(sinfo.fields))
