"""`ConvertToDataflow`: runs of pure bindings in plain binding blocks become dataflow blocks.

Graph passes (fusion above all) work on dataflow blocks only.  A function built without
them -- an imported ONNX graph with an `If` decided at run time, whose branches relax
cannot hold in a dataflow block -- gets them back around each run of pure operator
calls; a value used after its run (or returned) stays a `Var`, the others become
`DataflowVar`s.  `If` branches are converted the same way.

Before::

    @R.function
    def main(x: R.Tensor((4,), "float32"), c: R.Tensor((), "bool")):
        a = R.exp(x)
        b = R.add(a, x)
        if c:
            y = R.negative(b)
        else:
            y = b
        return y

After ``ConvertToDataflow()``::

    @R.function
    def main(x: R.Tensor((4,), "float32"), c: R.Tensor((), "bool")):
        with R.dataflow():
            a = R.exp(x)           # a DataflowVar: used in the block only
            b = R.add(a, x)
            R.output(b)
        if c:
            with R.dataflow():
                y1 = R.negative(b)
                R.output(y1)
            y = y1
        else:
            y = b
        return y
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import (
    Binding, BindingBlock, Call, Constant, DataflowBlock, DataflowVar, Expr, Function, If, MatchCast,
    SeqExpr, ShapeExpr, Tuple, TupleGetItem, Var, VarBinding,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator, ExprVisitor, VarRenamer
from unity.relax.op.base import RelaxOp


@dataclass(frozen=True)
class ConvertToDataflow(ModulePass):
    """Wrap each run of at least `min_size` pure bindings of a plain binding block in a
    dataflow block (recursively in `If` branches).

    Example:
        >>> ConvertToDataflow()(IRModule()).functions
        {}
    """

    min_size: int = 1

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Convert every relax function of `mod`."""
        return mod.map_functions(Function, lambda f: _Converter(self.min_size).visit_expr(f))


def is_dataflow_value(value: Expr) -> bool:
    """Whether a binding of `value` may stand in a dataflow block: a pure operator call
    or a tuple, projection, constant, shape or variable (not an `If`, a function or a
    call of a function whose effects are unknown).

    Example:
        >>> from unity.relax import op
        >>> x = Var("x", None)
        >>> is_dataflow_value(Tuple(())), is_dataflow_value(If(x, SeqExpr((), x), SeqExpr((), x)))
        (True, False)
    """
    if isinstance(value, Call):
        return isinstance(value.op, RelaxOp) and bool(value.op.attrs.get("pure", True))
    return isinstance(value, Tuple | TupleGetItem | Constant | ShapeExpr | Var)


class _Uses(ExprVisitor):
    """Every variable referenced in an expression (nested `If` branches included)."""

    def __init__(self) -> None:
        self.found: set[Var] = set()

    def visit_var_(self, var: Var) -> None:
        self.found.add(var)


def _uses(exprs: list[Expr]) -> set[Var]:
    collect = _Uses()
    for e in exprs:
        collect.visit_expr(e)
    return collect.found


class _Converter(ExprMutator):
    def __init__(self, min_size: int) -> None:
        super().__init__()
        self.min_size = min_size

    def visit_seq_expr_(self, expr: SeqExpr) -> Expr:
        seq = super().visit_seq_expr_(expr)
        assert isinstance(seq, SeqExpr)
        blocks: list[BindingBlock] = []
        flat = [b for block in seq.blocks for b in block.bindings]
        position = 0
        for block in seq.blocks:
            if isinstance(block, DataflowBlock):
                blocks.append(block)
                position += len(block.bindings)
                continue
            blocks.extend(self._split(block, flat, position, seq.body))
            position += len(block.bindings)
        return SeqExpr(tuple(blocks), seq.body, span=seq.span)

    def _split(self, block: BindingBlock, flat: list[Binding], start: int,
               result: Expr) -> list[BindingBlock]:  # fmt: skip
        """`block` (its first binding at `start` of `flat`) cut into plain and dataflow runs."""
        out: list[BindingBlock] = []
        run: list[Binding] = []
        plain: list[Binding] = []

        def close_run(end: int) -> None:
            if len(run) >= self.min_size:
                if plain:
                    out.append(BindingBlock(tuple(plain)))
                    plain.clear()
                out.append(_dataflow(run, _uses([*(b.value for b in flat[end:]), result])))
            else:
                plain.extend(run)
            run.clear()

        for k, binding in enumerate(block.bindings):
            if _bound_value(binding) is not None and is_dataflow_value(_bound_value(binding)):
                run.append(binding)
                continue
            close_run(start + k)
            plain.append(binding)
        close_run(start + len(block.bindings))
        if plain:
            out.append(BindingBlock(tuple(plain)))
        return out


def _bound_value(binding: Binding) -> Expr | None:
    return binding.value if isinstance(binding, VarBinding | MatchCast) else None


def _dataflow(run: list[Binding], used_after: set[Var]) -> DataflowBlock:
    """`run` as a dataflow block: its variables not in `used_after` become `DataflowVar`s."""
    renamed: dict[Var, Var] = {}
    for b in run:
        var = b.var
        if var not in used_after and not isinstance(var, DataflowVar):
            renamed[var] = DataflowVar(var.name_hint, var.struct_info_, span=var.span)
    rename = VarRenamer(renamed)
    bindings = []
    for b in run:
        value = rename.visit_expr(b.value)
        var = renamed.get(b.var, b.var)
        bindings.append(b.replace(var=var, value=value))
    return DataflowBlock(tuple(bindings))

