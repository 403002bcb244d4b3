"""Match a `DFPattern` against a relax expression, looking through var bindings.

A pattern object used twice must match the same expression both times. A call
pattern that meets a var bound (in `var2val`) to a call matches that call; the var
is recorded in `Match.vars`, so callers know which bindings a match spans.

Example:
    >>> from unity.relax import Var, TensorStructInfo, op
    >>> from unity.relax.dpl.pattern import is_op, wildcard
    >>> x = Var("x", TensorStructInfo((4,), "float32"))
    >>> a = wildcard()
    >>> match_expr(is_op("relax.add")(a, a), op.add(x, x)).exprs[a] is x
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from unity.relax.dpl.pattern import (
    AndPattern, AttrPattern, CallPattern, ConstantPattern, DataTypePattern, DFPattern,
    ExprPattern, OpPattern, OrPattern, ShapePattern, TupleGetItemPattern, TuplePattern,
    VarPattern, WildcardPattern,
)  # fmt: skip
from unity.relax.expr import Call, Constant, Tuple, TupleGetItem, Var
from unity.relax.struct_info import TensorStructInfo, as_dim, prove_equal


@dataclass
class Match:
    """What a successful match bound: pattern -> expression, and call pattern -> its var.

    Example:
        >>> from unity.relax import Var, TensorStructInfo
        >>> x = Var("x", TensorStructInfo((2,), "float32"))
        >>> pat = WildcardPattern()
        >>> match_expr(pat, x).exprs[pat] is x
        True
    """

    exprs: dict[DFPattern, Any] = field(default_factory=dict)
    vars: dict[DFPattern, Var] = field(default_factory=dict)

    def copy(self) -> Match:
        """An independent copy (for backtracking).

        Example:
            >>> m = Match()
            >>> other = m.copy()
            >>> other.exprs[WildcardPattern()] = None
            >>> len(m.exprs), len(other.exprs)
            (0, 1)
        """
        return Match(dict(self.exprs), dict(self.vars))


def match_expr(pattern: DFPattern, expr: Any, var2val: Mapping[Any, Any] | None = None) -> Match | None:
    """Match `pattern` against `expr`; the bindings made, or None.

    Example:
        >>> match_expr(wildcard(), x) is not None  # doctest: +SKIP
        True
    """
    state = Match()
    return state if _Matcher(var2val or {}).match(pattern, expr, state) else None


class _Matcher:
    def __init__(self, var2val: Mapping[Any, Any]) -> None:
        self.var2val = var2val

    def match(self, pattern: DFPattern, expr: Any, state: Match) -> bool:
        if pattern in state.exprs:
            return state.exprs[pattern] is expr or state.exprs[pattern] is self._resolve(expr)
        hook = getattr(self, f"_{type(pattern).__name__}", None)
        if hook is None:
            raise TypeError(f"dpl: no matcher for {type(pattern).__name__}")
        if not hook(pattern, expr, state):
            return False
        state.exprs.setdefault(pattern, expr)
        return True

    def _resolve(self, expr: Any) -> Any:
        seen = 0
        while isinstance(expr, Var) and expr in self.var2val and seen < 1000:
            expr, seen = self.var2val[expr], seen + 1
        return expr

    def _through_var(self, pattern: DFPattern, expr: Any, state: Match, kind: type) -> Any:
        """`expr` itself when of `kind`, else the value a var is bound to (recorded)."""
        if isinstance(expr, kind):
            return expr
        value = self._resolve(expr)
        if isinstance(expr, Var) and isinstance(value, kind):
            state.vars[pattern] = expr
            return value
        return None

    def _WildcardPattern(self, p: WildcardPattern, expr: Any, state: Match) -> bool:
        return True

    def _ExprPattern(self, p: ExprPattern, expr: Any, state: Match) -> bool:
        return expr is p.expr or self._resolve(expr) is p.expr

    def _ConstantPattern(self, p: ConstantPattern, expr: Any, state: Match) -> bool:
        return isinstance(self._resolve(expr), Constant)

    def _VarPattern(self, p: VarPattern, expr: Any, state: Match) -> bool:
        return isinstance(expr, Var) and (not p.name or expr.name_hint == p.name)

    def _OpPattern(self, p: OpPattern, expr: Any, state: Match) -> bool:
        return expr is p.op

    def _CallPattern(self, p: CallPattern, expr: Any, state: Match) -> bool:
        call = self._through_var(p, expr, state, Call)
        if call is None or not self.match(p.op, call.op, state):
            return False
        n = len(p.args)
        if len(call.args) != n and not (p.varg_default_wildcard and len(call.args) > n):
            return False
        if not all(self.match(a, e, state) for a, e in zip(p.args, call.args[:n], strict=True)):
            return False
        state.exprs[p] = call
        return True

    def _TuplePattern(self, p: TuplePattern, expr: Any, state: Match) -> bool:
        tup = self._through_var(p, expr, state, Tuple)
        if tup is None or len(tup.fields) != len(p.fields):
            return False
        return all(self.match(a, e, state) for a, e in zip(p.fields, tup.fields, strict=True))

    def _TupleGetItemPattern(self, p: TupleGetItemPattern, expr: Any, state: Match) -> bool:
        item = self._through_var(p, expr, state, TupleGetItem)
        if item is None or p.index not in (-1, item.index):
            return False
        return self.match(p.tuple_value, item.tuple_value, state)

    def _OrPattern(self, p: OrPattern, expr: Any, state: Match) -> bool:
        for side in (p.left, p.right):
            trial = state.copy()
            if self.match(side, expr, trial):
                state.exprs, state.vars = trial.exprs, trial.vars
                return True
        return False

    def _AndPattern(self, p: AndPattern, expr: Any, state: Match) -> bool:
        return self.match(p.left, expr, state) and self.match(p.right, expr, state)

    def _ShapePattern(self, p: ShapePattern, expr: Any, state: Match) -> bool:
        sinfo = getattr(expr, "struct_info_", None)
        if not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None:
            return False
        if len(sinfo.shape) != len(p.shape):
            return False
        same = all(prove_equal(a, as_dim(b)) for a, b in zip(sinfo.shape, p.shape, strict=True))
        return same and self.match(p.pattern, expr, state)

    def _DataTypePattern(self, p: DataTypePattern, expr: Any, state: Match) -> bool:
        sinfo = getattr(expr, "struct_info_", None)
        ok = isinstance(sinfo, TensorStructInfo) and sinfo.dtype == p.dtype
        return ok and self.match(p.pattern, expr, state)

    def _AttrPattern(self, p: AttrPattern, expr: Any, state: Match) -> bool:
        if not self.match(p.pattern, expr, state):
            return False
        call = self._resolve(expr)
        attrs = getattr(call, "attrs", None)
        if attrs is None:
            return False
        names = {f.name for f in fields(attrs)}
        return all(k in names and _same_value(getattr(attrs, k), v) for k, v in p.attrs.items())


def _same_value(a: object, b: object) -> bool:
    if isinstance(a, tuple) and isinstance(b, list | tuple):
        return a == tuple(b)
    return a == b

