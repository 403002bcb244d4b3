"""Rewrite with patterns: `rewrite_call` (one expression at a time) and `rewrite_bindings`.

Example:
    >>> from unity.relax import op
    >>> from unity.relax.dpl import is_const, is_op, wildcard
    >>> x, two = wildcard(), is_const()  # x * 2 -> x + x
    >>> pat = is_op("relax.multiply")(x, two)
    >>> def rewriter(expr, m):
    ...     return op.add(m[x], m[x]) if float(m[two].data) == 2.0 else expr
    >>> new_func = rewrite_call(pat, rewriter, func)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from unity.relax.block_builder import BlockBuilder
from unity.relax.dpl.matcher import Match, _Matcher, match_expr
from unity.relax.dpl.pattern import DFPattern
from unity.relax.expr import (
    Binding, BindingBlock, Call, DataflowBlock, Expr, Function, LeafExpr, Tuple, TupleGetItem,
    Var, VarBinding,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator, ExprVisitor
from unity.relax.transform.dead_code_elimination import remove_unused_bindings, used_vars
from unity.relax.utils import struct_info_equal

CallRewriter = Callable[[Expr, dict[DFPattern, Any]], Expr]
"""``rewriter(matched_expr, matches) -> new expr`` (return `matched_expr` to decline)."""

BindingsRewriter = Callable[[dict[DFPattern, Any], dict[Var, Expr]], Mapping[Var, Expr]]
"""``rewriter(matches, bindings) -> {var: new value}`` (empty to decline)."""

_MAX_ROUNDS = 32


def get_var2val(func: Function) -> dict[Var, Expr]:
    """Every var bound in `func` (at any depth) mapped to its bound value.

    Example:
        >>> get_var2val(func)[lv].op is op.exp  # doctest: +SKIP
        True
    """
    collector = _Bindings()
    collector.visit_expr(func)
    return collector.values


class _Bindings(ExprVisitor):
    def __init__(self) -> None:
        self.values: dict[Var, Expr] = {}

    def visit_binding(self, binding: Binding) -> None:
        if isinstance(binding, VarBinding):
            self.values[binding.var] = binding.value
        super().visit_binding(binding)


def rewrite_call(pattern: DFPattern, rewriter: CallRewriter, func: Function) -> Function:
    """Replace each bound value matching `pattern` by ``rewriter(value, matches)``, to a fixpoint.

    Nested calls in the replacement are bound first (A-normal form); bindings left
    unused by the rewrite are removed afterwards.

    Example:
        >>> rewrite_call(is_op("relax.exp")(wildcard()), lambda e, m: e, func) is func  # doctest: +SKIP
        True
    """
    for _ in range(_MAX_ROUNDS):
        var2val = get_var2val(func)

        def replace(value: Expr, var2val: dict[Var, Expr] = var2val) -> Expr | None:
            found = match_expr(pattern, value, var2val)
            if found is None:
                return None
            new = rewriter(value, dict(found.exprs))
            if not isinstance(new, Expr):
                kind = type(new).__name__
                raise TypeError(f"rewrite_call: the rewriter returned {kind}, not a relax expression "
                                "(return the matched expression to decline)")  # fmt: skip
            return None if new is value else new

        new_func = _Rebuilder(replace).visit_expr(func)
        if new_func is func:
            return func
        func = remove_unused_bindings(new_func)
    return func


class _Rebuilder(ExprMutator):
    """Rebuild blocks, passing each bound value through `replace` (None: keep)."""

    def __init__(self, replace: Callable[[Expr], Expr | None]) -> None:
        super().__init__()
        self.replace = replace
        self.bb = BlockBuilder()

    def visit_binding_block(self, block: BindingBlock) -> BindingBlock:
        visited = super().visit_binding_block(block)
        self.bb.begin_block(dataflow=isinstance(block, DataflowBlock))
        changed = False
        for b in visited.bindings:
            new = self.replace(b.value) if isinstance(b, VarBinding) else None  # type: ignore[arg-type]
            if new is None:
                self.bb.emit_normalized(b)
                continue
            changed = True
            self.bb.emit_normalized(self._rebind(b, _anf(self.bb, new, {})))
        out = self.bb.end_block()
        return out if changed and out is not None else visited

    def _rebind(self, binding: Binding, value: Expr) -> Binding:
        var = binding.var
        if not struct_info_equal(var.struct_info, value.struct_info):
            new = type(var)(var.name_hint, value.struct_info, span=var.span)
            self.var_remap[var] = new
            var = new
        return VarBinding(var, value, span=binding.span)


def rewrite_bindings(
    patterns: Sequence[DFPattern] | Mapping[str, DFPattern], rewriter: BindingsRewriter, func: Function
) -> Function:
    """Match several patterns on distinct bindings of one dataflow block; apply the rewriter.

    Patterns share their sub-patterns: a `wildcard()` used by two patterns must match
    the same expression in both (e.g. two matmuls of the same input). The rewriter
    returns new values for some of the matched vars; the block is then re-ordered so
    every var is bound before its uses, and unused bindings are removed.

    Example:
        >>> rewrite_bindings([q_pat, k_pat], merge_qk, func)  # doctest: +SKIP
    """
    pats = list(patterns.values()) if isinstance(patterns, Mapping) else list(patterns)
    for _ in range(_MAX_ROUNDS):
        new_func = _BlockRewriter(pats, rewriter, get_var2val(func)).visit_expr(func)
        if new_func is func:
            return func
        func = remove_unused_bindings(new_func)
    return func


class _BlockRewriter(ExprMutator):
    def __init__(self, pats: list[DFPattern], rewriter: BindingsRewriter, var2val: dict[Var, Expr]) -> None:
        super().__init__()
        self.pats, self.rewriter, self.var2val = pats, rewriter, var2val
        self.done = False

    def visit_binding_block(self, block: BindingBlock) -> BindingBlock:
        if self.done or not isinstance(block, DataflowBlock):
            return block
        bindings = [b for b in block.bindings if isinstance(b, VarBinding)]
        for found in _assignments(self.pats, bindings, self.var2val):
            replacements = dict(self.rewriter(dict(found.exprs), dict(self.var2val)))
            bad = [k for k, v in replacements.items() if not isinstance(k, Var) or not isinstance(v, Expr)]
            if bad:
                raise TypeError("rewrite_bindings: the rewriter must return {Var: relax expression}")
            if replacements:
                self.done = True
                return _apply(block, replacements)
        return block


def _assignments(pats: list[DFPattern], bindings: list[VarBinding], var2val: dict[Var, Expr]) -> Iterator[Match]:
    matcher = _Matcher(var2val)

    def search(i: int, used: frozenset[int], state: Match) -> Iterator[Match]:
        if i == len(pats):
            yield state
            return
        for k, b in enumerate(bindings):
            trial = state.copy()
            if k not in used and matcher.match(pats[i], b.value, trial):
                trial.vars.setdefault(pats[i], b.var)
                yield from search(i + 1, used | {k}, trial)

    yield from search(0, frozenset(), Match())


def _apply(block: BindingBlock, replacements: dict[Var, Expr]) -> BindingBlock:
    bb = BlockBuilder()
    bb.begin_block(dataflow=True)
    memo: dict[int, Expr] = {}
    pending: list[Binding] = []
    for b in block.bindings:
        value = replacements.get(b.var)
        if value is None:
            pending.append(b)
            continue
        value = _anf(bb, value, memo)
        extra = bb.end_block()
        pending.extend(extra.bindings if extra is not None else ())
        pending.append(VarBinding(b.var, value, span=b.span))
        bb.begin_block(dataflow=True)
    return block.replace(bindings=tuple(_topological(pending)))


def _anf(bb: BlockBuilder, expr: Expr, memo: dict[int, Expr], top: bool = True) -> Expr:
    """Normalize `expr`, binding each nested call once even when shared by replacements."""
    if isinstance(expr, LeafExpr) or not isinstance(expr, Call | Tuple | TupleGetItem):
        return bb.normalize(expr) if isinstance(expr, LeafExpr) else expr
    if id(expr) in memo:
        return memo[id(expr)]
    if isinstance(expr, Call):
        args = tuple(_anf(bb, a, memo, False) for a in expr.args)
        new: Expr = expr.replace(args=args, struct_info_=None)
    elif isinstance(expr, Tuple):
        new = Tuple(tuple(_anf(bb, f, memo, False) for f in expr.fields), span=expr.span)
    else:
        new = expr.replace(tuple_value=_anf(bb, expr.tuple_value, memo, False), struct_info_=None)
    new = bb.normalize(new)
    if top or isinstance(new, Tuple):
        return new
    memo[id(expr)] = out = bb.emit(new)
    return out


def _topological(bindings: list[Binding]) -> list[Binding]:
    """Order `bindings` so each var is bound before it is used (stable otherwise)."""
    defined_here = {b.var for b in bindings}
    done: set[Var] = set()
    out: list[Binding] = []
    waiting = list(bindings)
    while waiting:
        for i, b in enumerate(waiting):
            needs = used_vars(b.value) & defined_here  # type: ignore[attr-defined]
            if needs <= done:
                out.append(waiting.pop(i))
                done.add(b.var)
                break
        else:
            raise ValueError("rewrite_bindings: the rewritten bindings depend on each other in a cycle")
    return out

