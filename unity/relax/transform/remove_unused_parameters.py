"""Drop parameters a private function never uses, and the matching arguments at call sites.

Before::

    @R.function(private=True)
    def helper(x: R.Tensor((4,), "float32"), unused: R.Tensor((4,), "float32")):
        return R.exp(x)

    @R.function
    def main(a: R.Tensor((4,), "float32")):
        gv = helper(a, a)
        return gv

After ``RemoveUnusedParameters()``::

    @R.function(private=True)
    def helper(x: R.Tensor((4,), "float32")):
        return R.exp(x)

    @R.function
    def main(a: R.Tensor((4,), "float32")):
        gv = helper(a)
        return gv

Externally visible functions (with ``global_symbol``) keep their signature, and so
does a function used other than by direct calls. A parameter whose struct info is
the only one defining a shape symbol the function uses is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import GlobalVar, IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import Call, Expr, Function
from unity.relax.expr_functor import ExprMutator
from unity.relax.transform.dead_code_elimination import used_vars
from unity.relax.utils import free_symbols


@dataclass(frozen=True)
class RemoveUnusedParameters(ModulePass):
    """Remove unused parameters of private relax functions and update their callers.

    Example:
        >>> RemoveUnusedParameters()(IRModule()).functions
        {}
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Shrink private functions, then rewrite every call of them."""
        keep: dict[GlobalVar, list[int]] = {}
        for gv, func in mod.items():
            if isinstance(func, Function) and "global_symbol" not in func.attrs:
                kept = _kept_params(func)
                if len(kept) < len(func.params):
                    keep[gv] = kept
        if not keep:
            return mod
        out = mod.copy()
        for gv, kept in keep.items():
            func = mod[gv]
            assert isinstance(func, Function)
            out.update_func(gv, func.replace(params=tuple(func.params[i] for i in kept)))
        return out.map_functions(Function, lambda f: _CallFixer(keep).visit_expr(f))


def _kept_params(func: Function) -> list[int]:
    used = used_vars(func.body)
    needed_symbols = free_symbols(func.ret_struct_info)
    kept = [i for i, p in enumerate(func.params) if p in used]
    have = set().union(*(free_symbols(func.params[i].struct_info) for i in kept)) if kept else set()
    for i, p in enumerate(func.params):
        extra = free_symbols(p.struct_info) - have
        if i not in kept and extra & (needed_symbols | _body_symbols(func)):
            kept.append(i)
            have |= extra
    return sorted(kept)


def _body_symbols(func: Function) -> set[object]:
    out: set[object] = set()
    for var in used_vars(func.body):
        if var.struct_info_ is not None:
            out |= free_symbols(var.struct_info_)
    return out


class _CallFixer(ExprMutator):
    def __init__(self, keep: dict[GlobalVar, list[int]]) -> None:
        super().__init__()
        self.keep = keep

    def visit_call_(self, expr: Call) -> Expr:
        call = super().visit_call_(expr)
        assert isinstance(call, Call)
        kept = self.keep.get(call.op) if isinstance(call.op, GlobalVar) else None
        if kept is None:
            return call
        return call.replace(args=tuple(call.args[i] for i in kept))
