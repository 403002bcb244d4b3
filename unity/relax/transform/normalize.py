"""Fill in missing struct info and put call arguments in A-normal form.

Before (a nested call, struct info not yet inferred)::

    @R.function
    def main(x: R.Tensor((n, 4), "float32")):
        y = R.exp(R.add(x, x))
        return y

After ``Normalize()``::

    @R.function
    def main(x: R.Tensor((n, 4), "float32")):
        gv: R.Tensor((n, 4), "float32") = R.add(x, x)
        y: R.Tensor((n, 4), "float32") = R.exp(gv)
        return y
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import (
    Binding, BindingBlock, DataflowBlock, Expr, Function, LeafExpr, MatchCast, SeqExpr, Tuple,
    Var, VarBinding,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator
from unity.relax.utils import struct_info_equal


@dataclass(frozen=True)
class Normalize(ModulePass):
    """Infer struct info everywhere and bind nested calls (returns `mod` when already normal).

    Example:
        >>> Normalize()(IRModule()).functions
        {}
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Normalize every relax function of `mod`."""
        return mod.map_functions(Function, lambda f: _Normalizer(mod).visit_expr(f))


class _Normalizer(ExprMutator):
    def __init__(self, mod: IRModule) -> None:
        super().__init__()
        self.mod = mod
        self.bb = BlockBuilder(mod)

    def visit_seq_expr_(self, expr: SeqExpr) -> Expr:
        outer, self.bb = self.bb, BlockBuilder(self.mod)  # nested SeqExprs get their own blocks
        try:
            return self._seq(expr)
        finally:
            self.bb = outer

    def _seq(self, expr: SeqExpr) -> Expr:
        blocks = [self._block(b) for b in expr.blocks]
        body = self.visit_expr(expr.body)
        self.bb.begin_block(dataflow=False)
        body = self.bb.normalize_anf(body)
        if not isinstance(body, LeafExpr | Tuple):
            var = Var("gv", body.struct_info)
            self.bb.emit_normalized(VarBinding(var, body))
            body = var
        tail = self.bb.end_block()
        new_blocks = tuple(b for b in [*blocks, tail] if b is not None)
        if body is expr.body and len(new_blocks) == len(expr.blocks) and all(
            a is b for a, b in zip(new_blocks, expr.blocks, strict=True)
        ):
            return expr
        return SeqExpr(new_blocks, body, span=expr.span)

    def _block(self, block: BindingBlock) -> BindingBlock | None:
        self.bb.begin_block(dataflow=isinstance(block, DataflowBlock))
        for binding in block.bindings:
            self.bb.emit_normalized(self._binding(binding))
        new = self.bb.end_block()
        if new is not None and len(new.bindings) == len(block.bindings) and all(
            a is b for a, b in zip(new.bindings, block.bindings, strict=True)
        ):
            return block
        return new

    def _binding(self, binding: Binding) -> Binding:
        assert isinstance(binding, VarBinding | MatchCast)
        value = self.bb.normalize_anf(self.visit_expr(binding.value))
        var = binding.var
        if isinstance(binding, VarBinding) and not _same_sinfo(var, value):
            new = type(var)(var.name_hint, value.struct_info, span=var.span)
            self.var_remap[var] = new
            var = new
        return binding.replace(value=value, var=var)


def _same_sinfo(var: Var, value: Expr) -> bool:
    if var.struct_info_ is None:
        return False
    return var.struct_info_ is value.struct_info_ or struct_info_equal(var.struct_info, value.struct_info)
