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
from unity.relax.expr_functor import ExprMutator, VarRenamer
from unity.relax.transform.dead_code_elimination import call_is_pure, used_vars


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
        return mod.map_functions(Function, lambda f: _Converter(self.min_size, mod).visit_expr(f))


def is_dataflow_value(value: Expr, mod: IRModule | None = None) -> bool:
    """Whether a binding of `value` may stand in a dataflow block: a pure call (see
    `call_is_pure`) or a tuple, projection, constant, shape or variable (not an `If`, a
    function or a call with effects).

    Example:
        >>> from unity.relax import op
        >>> x = Var("x", None)
        >>> is_dataflow_value(Tuple(())), is_dataflow_value(If(x, SeqExpr((), x), SeqExpr((), x)))
        (True, False)
    """
    if isinstance(value, Call):
        return call_is_pure(value, mod)
    return isinstance(value, Tuple | TupleGetItem | Constant | ShapeExpr | Var)


def _last_uses(bindings: list[Binding], result: Expr) -> dict[Var, int]:
    """The position of the last binding using each variable (`len(bindings)`: the result)."""
    last: dict[Var, int] = {}
    for pos, value in enumerate([*(b.value for b in bindings), result]):
        for var in used_vars(value):
            last[var] = pos
    return last


class _Converter(ExprMutator):
    def __init__(self, min_size: int, mod: IRModule) -> None:
        super().__init__(mod)
        self.min_size = min_size

    def visit_seq_expr_(self, expr: SeqExpr) -> Expr:
        seq = super().visit_seq_expr_(expr)
        assert isinstance(seq, SeqExpr)
        last = _last_uses([b for block in seq.blocks for b in block.bindings], seq.body)
        blocks: list[BindingBlock] = []
        position = 0
        for block in seq.blocks:
            if isinstance(block, DataflowBlock):
                blocks.append(block)
            else:
                blocks.extend(self._split(block, position, last))
            position += len(block.bindings)
        return SeqExpr(tuple(blocks), seq.body, span=seq.span)

    def _split(self, block: BindingBlock, start: int, last: dict[Var, int]) -> list[BindingBlock]:
        """`block` (its first binding at position `start`) cut into plain and dataflow runs."""
        out: list[BindingBlock] = []
        run: list[Binding] = []
        plain: list[Binding] = []

        def close_run(end: int) -> None:
            if len(run) >= self.min_size:
                if plain:
                    out.append(BindingBlock(tuple(plain)))
                    plain.clear()
                out.append(_dataflow(run, {b.var for b in run if last.get(b.var, -1) >= end}))
            else:
                plain.extend(run)
            run.clear()

        for k, binding in enumerate(block.bindings):
            value = _bound_value(binding)
            if value is not None and is_dataflow_value(value, self.mod):
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
    """`run` as a dataflow block: its variables not in `used_after` (used after the run)
    become `DataflowVar`s."""
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

