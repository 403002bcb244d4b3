"""Dataflow patterns (TVM's `relax.dpl`): describe sub-graphs to find and rewrite.

Patterns are small immutable objects built with functions and operators:
``is_op("relax.add")(wildcard(), is_const())`` matches an `add` of anything and a
constant; ``p1 | p2`` matches either; ``p.has_shape((n, 4))``, ``p.has_dtype("float16")``
and ``p.has_attr({"axis": 1})`` add checks. Matching follows var bindings (an argument
that is a var bound to a call matches a call pattern).

Example:
    >>> from unity.relax import Var, TensorStructInfo, op
    >>> x = Var("x", TensorStructInfo((4,), "float32"))
    >>> is_op("relax.exp")(wildcard()).match(op.exp(x))
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from unity.ir.op import Op


class DFPattern:
    """Base of patterns: combinators and `match` live here.

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
        >>> pat = is_op("relax.exp")(wildcard()) | is_op("relax.log")(wildcard())
        >>> isinstance(pat, DFPattern), pat.match(op.log(x)), pat.match(op.sqrt(x))
        (True, True, False)
    """

    __slots__ = ()

    def __call__(self, *args: DFPattern, varg_default_wildcard: bool = False) -> CallPattern:
        """A call of this pattern (usually an `is_op`) with argument patterns `args`."""
        return CallPattern(self, tuple(args), varg_default_wildcard)

    def __or__(self, other: DFPattern) -> OrPattern:
        return OrPattern(self, other)

    def __and__(self, other: DFPattern) -> AndPattern:
        return AndPattern(self, other)

    def has_shape(self, shape: Sequence[object]) -> ShapePattern:
        """Also require the struct info shape `shape` (sympy-equal dims).

        Example:
            >>> wildcard().has_shape((2, 3))  # doctest: +ELLIPSIS
            ShapePattern(...)
        """
        return ShapePattern(self, tuple(shape))

    def has_dtype(self, dtype: str) -> DataTypePattern:
        """Also require the dtype `dtype`.

        Example:
            >>> wildcard().has_dtype("float16").dtype
            'float16'
        """
        return DataTypePattern(self, dtype)

    def has_attr(self, attrs: Mapping[str, object]) -> AttrPattern:
        """Also require the call's attributes to have these values.

        Example:
            >>> is_op("relax.nn.softmax")(wildcard()).has_attr({"axis": -1}).attrs
            {'axis': -1}
        """
        return AttrPattern(self, dict(attrs))

    def match(self, expr: Any, var2val: Mapping[Any, Any] | None = None) -> bool:
        """Whether `expr` matches (vars are looked through with `var2val`).

        Example:
            >>> wildcard().match(x)  # doctest: +SKIP
            True
        """
        from unity.relax.dpl.matcher import match_expr

        return match_expr(self, expr, var2val) is not None

    def extract_matched_expr(self, expr: Any, var2val: Mapping[Any, Any] | None = None) -> dict[DFPattern, Any] | None:
        """The expression matched by each sub-pattern, or None when `expr` does not match.

        Example:
            >>> pat.extract_matched_expr(call)[a] is x  # doctest: +SKIP
            True
        """
        from unity.relax.dpl.matcher import match_expr

        found = match_expr(self, expr, var2val)
        return None if found is None else dict(found.exprs)


@dataclass(frozen=True, eq=False)
class WildcardPattern(DFPattern):
    """Matches any expression.

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
        >>> WildcardPattern().match(x), WildcardPattern().match(op.exp(x))
        (True, True)
    """


@dataclass(frozen=True, eq=False)
class ExprPattern(DFPattern):
    """Matches exactly `expr` (by identity).

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
        >>> y = Var("y", TensorStructInfo((2, 3), "float32"))
        >>> is_expr(x).match(x), is_expr(x).match(y)
        (True, False)
    """

    expr: Any


@dataclass(frozen=True, eq=False)
class ConstantPattern(DFPattern):
    """Matches a `Constant`.

    Example:
        >>> import numpy as np
        >>> from unity.relax import Var, TensorStructInfo, const
        >>> x = Var("x", TensorStructInfo((2,), "float32"))
        >>> is_const().match(const(np.zeros(2, "float32"))), is_const().match(x)
        (True, False)
    """


@dataclass(frozen=True, eq=False)
class VarPattern(DFPattern):
    """Matches a var (named `name`, when given).

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
        >>> is_var("x").match(x), is_var("y").match(x), is_var().match(x)
        (True, False, True)
    """

    name: str = ""


@dataclass(frozen=True, eq=False)
class OpPattern(DFPattern):
    """Matches the op `op` (the callee of a call).

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
        >>> is_op("relax.exp").op.name, is_op("relax.exp")(wildcard()).match(op.exp(x))
        ('relax.exp', True)
    """

    op: Op


@dataclass(frozen=True, eq=False)
class CallPattern(DFPattern):
    """Matches a call whose callee and arguments match; `varg` lets extra args match anything.

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
        >>> pat = is_op("relax.add")(wildcard(), wildcard())
        >>> type(pat).__name__, pat.match(op.add(x, x)), pat.match(op.exp(x))
        ('CallPattern', True, False)
    """

    op: DFPattern
    args: tuple[DFPattern, ...]
    varg_default_wildcard: bool = False


@dataclass(frozen=True, eq=False)
class TuplePattern(DFPattern):
    """Matches a tuple whose fields match `fields`.

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
        >>> from unity.relax import Tuple
        >>> is_tuple([wildcard(), is_var("x")]).match(Tuple((x, x)))
        True
    """

    fields: tuple[DFPattern, ...]


@dataclass(frozen=True, eq=False)
class TupleGetItemPattern(DFPattern):
    """Matches ``tuple[index]`` (`index` -1: any index).

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
        >>> from unity.relax import Tuple, TupleGetItem
        >>> item = TupleGetItem(Tuple((x, x)), 1)
        >>> second, first = is_tuple_get_item(wildcard(), 1), is_tuple_get_item(wildcard(), 0)
        >>> second.match(item), first.match(item)
        (True, False)
    """

    tuple_value: DFPattern
    index: int = -1


@dataclass(frozen=True, eq=False)
class OrPattern(DFPattern):
    """Matches when `left` or (else) `right` matches.

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
        >>> pat = is_op("relax.exp")(wildcard()) | is_var()
        >>> type(pat).__name__, pat.match(x)
        ('OrPattern', True)
    """

    left: DFPattern
    right: DFPattern


@dataclass(frozen=True, eq=False)
class AndPattern(DFPattern):
    """Matches when both match.

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
        >>> pat = is_var() & wildcard().has_dtype("float32")
        >>> type(pat).__name__, pat.match(x)
        ('AndPattern', True)
    """

    left: DFPattern
    right: DFPattern


@dataclass(frozen=True, eq=False)
class ShapePattern(DFPattern):
    """`pattern`, with a tensor of shape `shape`.

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
        >>> wildcard().has_shape((2, 3)).match(x), wildcard().has_shape((3, 2)).match(x)
        (True, False)
    """

    pattern: DFPattern
    shape: tuple[object, ...]


@dataclass(frozen=True, eq=False)
class DataTypePattern(DFPattern):
    """`pattern`, with a tensor of dtype `dtype`.

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
        >>> wildcard().has_dtype("float32").match(x), wildcard().has_dtype("float16").match(x)
        (True, False)
    """

    pattern: DFPattern
    dtype: str


@dataclass(frozen=True, eq=False)
class AttrPattern(DFPattern):
    """`pattern`, a call whose attrs have the given field values.

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
        >>> softmax = is_op("relax.nn.softmax")(wildcard())
        >>> softmax.has_attr({"axis": 1}).match(op.nn.softmax(x, axis=1))
        True
        >>> softmax.has_attr({"axis": 0}).match(op.nn.softmax(x, axis=1))
        False
    """

    pattern: DFPattern
    attrs: dict[str, object]


def wildcard() -> WildcardPattern:
    """A pattern matching anything.

    Example:
        >>> isinstance(wildcard(), DFPattern)
        True
    """
    return WildcardPattern()


def is_op(op: Op | str) -> OpPattern:
    """A pattern for the op `op` (an `Op`, or its name such as ``"relax.add"``).

    Example:
        >>> is_op("relax.add").op.name
        'relax.add'
    """
    if isinstance(op, str):
        name = op if op.startswith("relax.") else f"relax.{op}"
        try:
            op = Op.get(name)
        except KeyError:
            raise ValueError(f"is_op: no relax operator called {name!r}") from None
    return OpPattern(op)


def is_const() -> ConstantPattern:
    """A pattern for a `Constant`.

    Example:
        >>> isinstance(is_const(), ConstantPattern)
        True
    """
    return ConstantPattern()


def is_var(name: str = "") -> VarPattern:
    """A pattern for a var (with this name hint, when given).

    Example:
        >>> is_var("x").name
        'x'
    """
    return VarPattern(name)


def is_expr(expr: Any) -> ExprPattern:
    """A pattern matching `expr` itself.

    Example:
        >>> is_expr(x).expr is x  # doctest: +SKIP
        True
    """
    return ExprPattern(expr)


def is_tuple(fields: Sequence[DFPattern]) -> TuplePattern:
    """A pattern for a tuple with these field patterns.

    Example:
        >>> len(is_tuple([wildcard(), wildcard()]).fields)
        2
    """
    return TuplePattern(tuple(fields))


def is_tuple_get_item(tuple_value: DFPattern, index: int = -1) -> TupleGetItemPattern:
    """A pattern for ``tuple_value[index]`` (-1: any index).

    Example:
        >>> is_tuple_get_item(wildcard(), 0).index
        0
    """
    return TupleGetItemPattern(tuple_value, index)
