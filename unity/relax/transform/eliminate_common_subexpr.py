"""Bind each repeated pure computation once: later copies reuse the first result.

Before::

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv0 = R.add(x, x)
            lv1 = R.add(x, x)
            gv = R.multiply(lv0, lv1)
            R.output(gv)
        return gv

After ``EliminateCommonSubexpr()``::

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv0 = R.add(x, x)
            gv = R.multiply(lv0, lv0)
            R.output(gv)
        return gv

Values are compared structurally with vars by identity, so a repeat found after
earlier eliminations (``exp(lv0)`` and ``exp(lv1)`` once ``lv1`` became ``lv0``)
is caught too. Matching stays within one binding block; impure calls never match.
An output var whose first occurrence is a dataflow var becomes ``gv = lv``.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import IRModule
from unity.ir.structural import structural_equal, structural_hash
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import (
    Binding, BindingBlock, Call, DataflowVar, Function, Tuple, TupleGetItem, Var, VarBinding,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator
from unity.relax.transform.dead_code_elimination import is_pure


@dataclass(frozen=True)
class EliminateCommonSubexpr(ModulePass):
    """Replace a pure value computed earlier in the same block by the earlier var.

    Example:
        >>> EliminateCommonSubexpr()(IRModule()).functions
        {}
    """

    call_only: bool = False
    """Only calls are candidates (tuples and tuple items are left alone)."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Eliminate repeats in every relax function of `mod`."""
        return mod.map_functions(Function, lambda f: _Eliminator(mod, self.call_only).visit_expr(f))


class _Eliminator(ExprMutator):
    def __init__(self, mod: IRModule, call_only: bool) -> None:
        super().__init__(mod)
        self.call_only = call_only
        self.seen: dict[int, list[tuple[object, Var]]] = {}

    def visit_binding_block(self, block: BindingBlock) -> BindingBlock:
        outer, self.seen = self.seen, {}
        try:
            return super().visit_binding_block(block)
        finally:
            self.seen = outer

    def visit_binding(self, binding: Binding) -> list[Binding]:
        out = super().visit_binding(binding)
        if len(out) != 1 or not isinstance(out[0], VarBinding) or not self._candidate(out[0]):
            return out
        new = out[0]
        key = structural_hash(new.value)
        for value, var in self.seen.get(key, ()):
            if structural_equal(value, new.value, map_free_vars=False):
                return self._reuse(binding.var, new, var)
        self.seen.setdefault(key, []).append((new.value, new.var))
        return out

    def _candidate(self, binding: VarBinding) -> bool:
        kinds = (Call,) if self.call_only else (Call, Tuple, TupleGetItem)
        return isinstance(binding.value, kinds) and is_pure(binding.value, self.mod)

    def _reuse(self, original: Var, binding: VarBinding, first: Var) -> list[Binding]:
        if isinstance(first, DataflowVar) and not isinstance(binding.var, DataflowVar):
            return [VarBinding(binding.var, first, span=binding.span)]  # may not escape
        self.var_remap[original] = first
        return []
