"""Turn dataflow blocks into plain binding blocks and `DataflowVar`s into `Var`s.

Before::

    @R.function
    def main(x: R.Tensor((n,), "float32")):
        with R.dataflow():
            lv = R.exp(x)
            gv = R.add(lv, x)
            R.output(gv)
        return gv

After ``ToNonDataflow()``::

    @R.function
    def main(x: R.Tensor((n,), "float32")):
        lv = R.exp(x)
        gv = R.add(lv, x)
        return gv
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import BindingBlock, DataflowBlock, DataflowVar, Function, Var
from unity.relax.expr_functor import ExprMutator


@dataclass(frozen=True)
class ToNonDataflow(ModulePass):
    """Replace every `DataflowBlock` by a `BindingBlock` (returns `mod` when there is none).

    Example:
        >>> ToNonDataflow()(IRModule()).functions
        {}
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Rewrite every relax function of `mod`."""
        return mod.map_functions(Function, lambda f: _Rewriter().visit_expr(f))


class _Rewriter(ExprMutator):
    def rewrite_var_def(self, var: Var) -> Var:
        if isinstance(var, DataflowVar):
            return Var(var.name_hint, var.struct_info_, span=var.span)
        return var

    def visit_binding_block(self, block: BindingBlock) -> BindingBlock:
        new = super().visit_binding_block(block)
        if isinstance(new, DataflowBlock):
            return BindingBlock(new.bindings, span=new.span)
        return new
