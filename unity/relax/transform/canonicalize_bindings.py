"""Remove trivial bindings: uses of `y = x` become uses of `x`.

Before::

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv0 = R.exp(x)
            lv1 = lv0
            t = (lv1, x)
            lv2 = t[0]
            gv = R.add(lv2, x)
            R.output(gv)
        return gv

After ``CanonicalizeBindings()``::

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv0 = R.exp(x)
            t = (lv0, x)
            gv = R.add(lv0, x)
            R.output(gv)
        return gv

Also: a `match_cast` that casts to the struct info the value already has (binding no
new symbol) is a trivial binding, and an output ``gv = lv`` of a dataflow var bound in
the same block renames `lv`'s own binding to `gv` (a dataflow var may not escape its
block, so the copy cannot simply be dropped). Dead bindings left behind (like `t`
above) are `DeadCodeElimination`'s job.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import (
    Binding, BindingBlock, DataflowBlock, DataflowVar, Expr, Function, MatchCast,
    Tuple, TupleGetItem, Var, VarBinding,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator
from unity.relax.utils import free_symbols, struct_info_equal


@dataclass(frozen=True)
class CanonicalizeBindings(ModulePass):
    """Propagate var-to-var copies, trivial casts and tuple items of known tuples.

    Example:
        >>> CanonicalizeBindings()(IRModule()).functions
        {}
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Canonicalize every relax function of `mod`."""
        return mod.map_functions(Function, lambda f: _Canonicalizer(mod).visit_expr(f))


class _Canonicalizer(ExprMutator):
    def __init__(self, mod: IRModule) -> None:
        super().__init__(mod)
        self.tuples: dict[Var, Tuple] = {}
        self.renamed_defs: dict[Var, Var] = {}
        self.defined: set[object] = set()

    def visit_function_(self, func: Function) -> Function:
        self.defined |= free_symbols_of_params(func)
        return super().visit_function_(func)

    def visit_binding_block(self, block: BindingBlock) -> BindingBlock:
        if isinstance(block, DataflowBlock):
            self._plan_output_renames(block)
        return super().visit_binding_block(block)

    def _plan_output_renames(self, block: BindingBlock) -> None:
        """`gv = lv` with `lv` bound once in this block: bind `gv` where `lv` was bound."""
        local = {b.var for b in block.bindings if isinstance(b, VarBinding)}
        copies: dict[Var, list[Var]] = {}
        for b in block.bindings:
            if not isinstance(b, VarBinding) or isinstance(b.var, DataflowVar):
                continue
            if isinstance(b.value, DataflowVar) and b.value in local and _same(b.var, b.value):
                copies.setdefault(b.value, []).append(b.var)
        for lv, outputs in copies.items():
            self.renamed_defs[lv] = outputs[0]
            self.var_remap[lv] = outputs[0]

    def visit_binding(self, binding: Binding) -> list[Binding]:
        if isinstance(binding, VarBinding) and binding.var in self.renamed_defs:
            value = self.visit_expr(binding.value)
            return [VarBinding(self.renamed_defs[binding.var], value, span=binding.span)]
        if isinstance(binding, VarBinding) and self.var_remap.get(binding.value) is binding.var:
            return []  # the copy `gv = lv` whose `lv` now binds `gv` itself
        out = super().visit_binding(binding)
        if len(out) != 1:
            return out
        new = out[0]
        source = self._trivial_source(new)
        if source is not None and _may_replace(new.var, source):
            self.var_remap[binding.var] = source
            return []
        if isinstance(new, VarBinding) and isinstance(new.value, Tuple):
            self.tuples[new.var] = new.value
        if isinstance(new, MatchCast):
            self.defined |= free_symbols(new.struct_info)
        return out

    def _trivial_source(self, binding: Binding) -> Expr | None:
        """The var `binding` merely copies, or None."""
        value = binding.value  # type: ignore[attr-defined]  # both binding kinds
        if isinstance(binding, MatchCast):
            new_symbols = free_symbols(binding.struct_info) - self.defined
            if new_symbols or not _same(binding.var, value):
                return None
        if isinstance(value, TupleGetItem) and isinstance(value.tuple_value, Var):
            known = self.tuples.get(value.tuple_value)
            value = known.fields[value.index] if known is not None else value
        return value if isinstance(value, Var) and _same(binding.var, value) else None


def free_symbols_of_params(func: Function) -> set[object]:
    """The shape symbols the parameters of `func` define.

    Example:
        >>> free_symbols_of_params(func)  # doctest: +SKIP
        {n}
    """
    out: set[object] = set()
    for p in func.params:
        out |= free_symbols(p.struct_info)
    return out


def _same(var: Var, value: Expr) -> bool:
    return value.struct_info_ is not None and struct_info_equal(var.struct_info, value.struct_info)


def _may_replace(var: Var, source: Expr) -> bool:
    """A dataflow var may not replace a var that is used after its block."""
    return isinstance(var, DataflowVar) or not isinstance(source, DataflowVar)
