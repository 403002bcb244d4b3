"""Remove bindings whose values are pure and unused, and functions nothing reaches.

Before::

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv0 = R.exp(x)           # unused
            lv1 = R.add(x, x)
            gv = R.multiply(lv1, x)
            R.output(gv)
        return gv

After ``DeadCodeElimination()``::

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv1 = R.add(x, x)
            gv = R.multiply(lv1, x)
            R.output(gv)
        return gv

Impure calls and `match_cast` bindings (which check shapes and define symbols) are
kept. Functions are kept when reachable from an entry: the names in
`entry_functions`, else every relax function with a ``global_symbol`` attribute.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from unity.ir.module import GlobalVar, IRModule
from unity.ir.op import Op
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import (
    Binding, BindingBlock, Call, Expr, Function, MatchCast, SeqExpr, Var,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator, ExprVisitor
from unity.relax.struct_info import FuncStructInfo


@dataclass(frozen=True)
class DeadCodeElimination(ModulePass):
    """Drop unused pure bindings, empty blocks and unreachable functions.

    Example:
        >>> DeadCodeElimination()(IRModule()).functions
        {}
    """

    entry_functions: tuple[str, ...] = ()
    """Functions to keep (with what they reach); empty: the externally visible ones."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Prune every relax function, then drop unreachable functions."""
        mod = mod.map_functions(Function, lambda f: _Pruner(mod).visit_expr(f))
        return _drop_unreachable(mod, self.entry_functions)


def remove_unused_bindings(func: Function, mod: IRModule | None = None) -> Function:
    """`func` without its unused pure bindings (and the blocks they leave empty).

    Example:
        >>> remove_unused_bindings(func)  # doctest: +SKIP
    """
    return _Pruner(mod).visit_expr(func)


class _Pruner(ExprMutator):
    def visit_seq_expr_(self, expr: SeqExpr) -> Expr:
        new = super().visit_seq_expr_(expr)
        assert isinstance(new, SeqExpr)
        live = used_vars(new.body)
        blocks: list[BindingBlock] = []
        for block in reversed(new.blocks):
            kept = [b for b in reversed(block.bindings) if _keep(b, live, self.mod)]
            if len(kept) == len(block.bindings):
                blocks.append(block)
            elif kept:
                blocks.append(block.replace(bindings=tuple(reversed(kept))))
        blocks.reverse()
        if len(blocks) == len(new.blocks) and all(a is b for a, b in zip(blocks, new.blocks)):
            return new
        return new.replace(blocks=tuple(blocks))


def _keep(binding: Binding, live: set[Var], mod: IRModule | None) -> bool:
    value: Expr = binding.value  # type: ignore[attr-defined]  # both binding kinds
    if binding.var in live or isinstance(binding, MatchCast) or not is_pure(value, mod):
        live |= used_vars(value)
        return True
    return False


class _Uses(ExprVisitor):
    def __init__(self) -> None:
        self.vars: set[Var] = set()

    def visit_var_(self, var: Var) -> None:
        self.vars.add(var)


def used_vars(expr: Expr) -> set[Var]:
    """The vars `expr` uses (including those inside nested functions and branches).

    Example:
        >>> used_vars(op.add(x, y)) == {x, y}  # doctest: +SKIP
        True
    """
    uses = _Uses()
    uses.visit_expr(expr)
    return uses.vars


class _Impure(ExprVisitor):
    def __init__(self, mod: IRModule | None) -> None:
        self.mod = mod
        self.found = False

    def visit_call_(self, expr: Call) -> None:
        self.found |= not call_is_pure(expr, self.mod)
        super().visit_call_(expr)

    def visit_function_(self, func: Function) -> None:
        """A function value is pure whatever its body does (it does not run here)."""


def is_pure(expr: Expr, mod: IRModule | None = None) -> bool:
    """True when evaluating `expr` has no side effect (so an unused result may go).

    Example:
        >>> is_pure(op.exp(x))  # doctest: +SKIP
        True
    """
    visitor = _Impure(mod)
    visitor.visit_expr(expr)
    return not visitor.found


def call_is_pure(call: Call, mod: IRModule | None = None) -> bool:
    """Whether `call` has no side effect: a pure op, a pure function of `mod`, or a callee
    whose struct info says so.

    Example:
        >>> call_is_pure(op.add(x, y))  # doctest: +SKIP
        True
    """
    if isinstance(call.op, Op):
        return bool(call.op.get_attr("pure", True))
    if isinstance(call.op, GlobalVar):
        func = mod[call.op] if mod is not None and call.op in mod else None
        return isinstance(func, Function) and func.is_pure
    sinfo = call.op.struct_info_
    return isinstance(sinfo, FuncStructInfo) and sinfo.purity


class _GlobalRefs(ExprVisitor):
    def __init__(self) -> None:
        self.refs: set[GlobalVar] = set()

    def visit_call_(self, expr: Call) -> None:
        for item in (expr.op, *expr.args):
            if isinstance(item, GlobalVar):
                self.refs.add(item)
        super().visit_call_(expr)


def _drop_unreachable(mod: IRModule, entries: tuple[str, ...]) -> IRModule:
    relax = [gv for gv, f in mod.functions.items() if isinstance(f, Function)]
    if not relax:
        return mod
    roots = [mod.get_global_var(n) for n in entries] if entries else [
        gv for gv in relax if "global_symbol" in mod[gv].attrs
    ] or relax
    seen: set[GlobalVar] = set()
    stack = list(roots)
    while stack:
        gv = stack.pop()
        if gv in seen:
            continue
        seen.add(gv)
        func: Any = mod[gv]
        if isinstance(func, Function):
            refs = _GlobalRefs()
            refs.visit_expr(func)
            stack.extend(refs.refs)
    dead = [gv for gv in mod.functions if gv not in seen]
    if not dead:
        return mod
    out = mod.copy()
    for gv in dead:
        out.remove(gv)
    return out
