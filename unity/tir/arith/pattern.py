"""A small pattern language for rewrite-rule tables (`P.var`, `P.const`, operators).

A pattern is built with the same Python operators as expressions.  Matching binds the
pattern names; a name used twice must bind structurally equal expressions.  A rule's
function receives the bindings as keyword arguments and returns the replacement, or
`None` to decline.  `RuleSet` indexes its rules by the root node class.

Example:
    >>> from unity import tir
    >>> x, c1 = P.var("x"), P.const("c1")
    >>> rules = RuleSet([Rule(P.min(x, x), lambda x: x)])    # min(x, x) -> x
    >>> i = tir.Var("i")
    >>> rules.apply(tir.min(i, i)) is i
    True
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

from unity.ir.node import Node
from unity.tir import expr as E
from unity.tir.arith.key import expr_key
from unity.tir.functor import child_fields

Bindings = dict[str, E.PrimExpr]


class Pattern:
    """Base of patterns; Python operators build `PNode`s.

    Example:
        >>> isinstance(P.var("x") + 1, Pattern)
        True
    """

    __slots__ = ()

    def match(self, expr: E.PrimExpr, env: Bindings, keys: dict[Node, Hashable]) -> bool:
        """Try to match `expr`, extending `env`; False on mismatch.

        Example:
            >>> i = E.Var("i")
            >>> env = {}
            >>> (P.var("x") * 2).match(i * 2, env, {}), env["x"] is i
            (True, True)
        """
        raise TypeError(f"{type(self).__name__} must override match")

    def __add__(self, o: object) -> Pattern:
        return PNode(E.Add, (self, lift(o)))

    def __radd__(self, o: object) -> Pattern:
        return PNode(E.Add, (lift(o), self))

    def __sub__(self, o: object) -> Pattern:
        return PNode(E.Sub, (self, lift(o)))

    def __mul__(self, o: object) -> Pattern:
        return PNode(E.Mul, (self, lift(o)))

    def __floordiv__(self, o: object) -> Pattern:
        return PNode(E.FloorDiv, (self, lift(o)))

    def __mod__(self, o: object) -> Pattern:
        return PNode(E.FloorMod, (self, lift(o)))

    def __lt__(self, o: object) -> Pattern:
        return PNode(E.LT, (self, lift(o)))

    def __le__(self, o: object) -> Pattern:
        return PNode(E.LE, (self, lift(o)))

    def __gt__(self, o: object) -> Pattern:
        return PNode(E.GT, (self, lift(o)))

    def __ge__(self, o: object) -> Pattern:
        return PNode(E.GE, (self, lift(o)))

    def __and__(self, o: object) -> Pattern:
        return PNode(E.And, (self, lift(o)))

    def __rand__(self, o: object) -> Pattern:
        return PNode(E.And, (lift(o), self))

    def __or__(self, o: object) -> Pattern:
        return PNode(E.Or, (self, lift(o)))

    def __ror__(self, o: object) -> Pattern:
        return PNode(E.Or, (lift(o), self))

    def __invert__(self) -> Pattern:
        return PNode(E.Not, (self,))


class PVar(Pattern):
    """Matches any expression; a repeated name must match an equal expression.

    Example:
        >>> x, i, j = P.var("x"), E.Var("i"), E.Var("j")
        >>> (x - x).match(i - i, {}, {}), (x - x).match(i - j, {}, {})
        (True, False)
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def match(self, expr: E.PrimExpr, env: Bindings, keys: dict[Node, Hashable]) -> bool:
        bound = env.get(self.name)
        if bound is None:
            env[self.name] = expr
            return True
        return bound is expr or expr_key(bound, keys) == expr_key(expr, keys)


class PConst(PVar):
    """Matches an integer or float immediate (not a bool).

    Example:
        >>> c = P.const("c")
        >>> c.match(E.const(4), {}, {}), c.match(E.Var("i"), {}, {}), c.match(E.const(True), {}, {})
        (True, False, False)
    """

    __slots__ = ()

    def match(self, expr: E.PrimExpr, env: Bindings, keys: dict[Node, Hashable]) -> bool:
        if type(expr) not in (E.IntImm, E.FloatImm) or expr.dtype == "bool":
            return False
        return PVar.match(self, expr, env, keys)


class PLit(Pattern):
    """Matches an immediate with this value (`True`/`False` match bool immediates).

    Example:
        >>> PLit(0).match(E.const(0), {}, {}), PLit(0).match(E.const(1), {}, {})
        (True, False)
    """

    __slots__ = ("value",)

    def __init__(self, value: float | bool) -> None:
        self.value = value

    def match(self, expr: E.PrimExpr, env: Bindings, keys: dict[Node, Hashable]) -> bool:
        if type(expr) not in (E.IntImm, E.FloatImm):
            return False
        if isinstance(self.value, bool) != (expr.dtype == "bool"):
            return False
        return expr.value == self.value  # type: ignore[attr-defined]  # immediates


class PNode(Pattern):
    """Matches a node of exactly class `cls` whose children match `children`.

    `attrs` binds plain fields (e.g. a vector's `lanes`) to names: `(("lanes", "l"),)`.

    Example:
        >>> pat = PNode(E.Add, (P.var("a"), PLit(1)))
        >>> pat.match(E.Var("i") + 1, {}, {}), pat.match(E.Var("i") - 1, {}, {})
        (True, False)
    """

    __slots__ = ("attrs", "children", "cls", "fields")

    def __init__(
        self, cls: type, children: tuple[Pattern, ...], attrs: tuple[tuple[str, str], ...] = ()
    ) -> None:
        self.cls = cls
        self.children = children
        self.fields = child_fields(cls)
        self.attrs = attrs

    def match(self, expr: E.PrimExpr, env: Bindings, keys: dict[Node, Hashable]) -> bool:
        if type(expr) is not self.cls:
            return False
        for name, child in zip(self.fields, self.children):
            if not child.match(getattr(expr, name), env, keys):
                return False
        for field_name, bind_name in self.attrs:
            value = getattr(expr, field_name)
            if env.setdefault(bind_name, value) != value:  # type: ignore[arg-type]
                return False
        return True


def lift(value: object) -> Pattern:
    """Turn a Python number into a `PLit`; patterns pass through.

    Example:
        >>> type(lift(3)).__name__, lift(P.var("x")).name
        ('PLit', 'x')
    """
    if isinstance(value, Pattern):
        return value
    if isinstance(value, (bool, int, float)):
        return PLit(value)
    raise TypeError(f"cannot use a {type(value).__name__} in a rewrite pattern")


class P:
    """Pattern constructors: `P.var`, `P.const`, `P.min`, `P.max`, `P.select`, `P.eq`...

    Example:
        >>> x = P.var("x")
        >>> rules = RuleSet([Rule(P.max(x, x), lambda x: x)])
        >>> i = E.Var("i")
        >>> rules.apply(E.max_value_of(i, i)) is i
        True
    """

    var = PVar
    const = PConst

    @staticmethod
    def min(a: object, b: object) -> Pattern:
        """`min(a, b)`.

        Example:
            >>> P.min(P.var("x"), 0).match(E.min_value_of(E.Var("i"), 0), {}, {})
            True
        """
        return PNode(E.Min, (lift(a), lift(b)))

    @staticmethod
    def max(a: object, b: object) -> Pattern:
        """`max(a, b)`.

        Example:
            >>> P.max(P.var("x"), 0).match(E.max_value_of(E.Var("i"), 0), {}, {})
            True
        """
        return PNode(E.Max, (lift(a), lift(b)))

    @staticmethod
    def eq(a: object, b: object) -> Pattern:
        """`a == b`.

        Example:
            >>> P.eq(P.var("x"), 0).match(E.eq(E.Var("i"), 0), {}, {})
            True
        """
        return PNode(E.EQ, (lift(a), lift(b)))

    @staticmethod
    def ne(a: object, b: object) -> Pattern:
        """`a != b`.

        Example:
            >>> P.ne(P.var("x"), 0).match(E.ne(E.Var("i"), 0), {}, {})
            True
        """
        return PNode(E.NE, (lift(a), lift(b)))

    @staticmethod
    def select(c: object, t: object, f: object) -> Pattern:
        """`select(c, t, f)`.

        Example:
            >>> i = E.Var("i")
            >>> P.select(P.var("c"), P.var("t"), 0).match(E.select(i < 4, i, 0), {}, {})
            True
        """
        return PNode(E.Select, (lift(c), lift(t), lift(f)))

    @staticmethod
    def ramp(base: object, stride: object, lanes: str) -> Pattern:
        """`ramp(base, stride, lanes)`; the lane count binds to the name `lanes`.

        Example:
            >>> env = {}
            >>> P.ramp(P.var("b"), 1, "lanes").match(E.Ramp(E.Var("i"), E.const(1), 8), env, {})
            True
            >>> env["lanes"]
            8
        """
        return PNode(E.Ramp, (lift(base), lift(stride)), (("lanes", lanes),))

    @staticmethod
    def broadcast(value: object, lanes: str) -> Pattern:
        """`broadcast(value, lanes)`; the lane count binds to the name `lanes`.

        Example:
            >>> env = {}
            >>> P.broadcast(P.const("c"), "n").match(E.Broadcast(E.const(2.0), 4), env, {})
            True
            >>> env["n"], env["c"].value
            (4, 2.0)
        """
        return PNode(E.Broadcast, (lift(value),), (("lanes", lanes),))


class Rule:
    """`pattern -> fn(**bindings)`; `fn` returns the replacement or `None` to decline.

    Example:
        >>> x = P.var("x")
        >>> rule = Rule(x * 1, lambda x: x)
        >>> rule.pattern.cls.__name__
        'Mul'
    """

    __slots__ = ("fn", "pattern")

    def __init__(self, pattern: Pattern, fn: Callable[..., E.PrimExpr | None]) -> None:
        if not isinstance(pattern, PNode):
            raise TypeError("a rule's pattern must start with an operator, not a bare name")
        self.pattern = pattern
        self.fn = fn


class RuleSet:
    """Rules indexed by the class of their root node, tried in order.

    Example:
        >>> x = P.var("x")
        >>> rules = RuleSet([Rule(x * 1, lambda x: x), Rule(x + 0, lambda x: x)])
        >>> sorted(cls.__name__ for cls in rules.by_class)
        ['Add', 'Mul']
    """

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.by_class: dict[type, list[Rule]] = {}
        for rule in rules:
            self.by_class.setdefault(rule.pattern.cls, []).append(rule)  # type: ignore[attr-defined]

    def apply(
        self, expr: E.PrimExpr, keys: dict[Node, Hashable] | None = None
    ) -> E.PrimExpr | None:
        """Return the first rule's replacement for the root of `expr`, or None.

        Example:
            >>> x, i = P.var("x"), E.Var("i")
            >>> rules = RuleSet([Rule(x * 1, lambda x: x)])
            >>> rules.apply(i * 1) is i, rules.apply(i * 2)
            (True, None)
        """
        rules = self.by_class.get(type(expr))
        if rules is None:
            return None
        keys = {} if keys is None else keys
        for rule in rules:
            env: dict[str, Any] = {}
            if rule.pattern.match(expr, env, keys):
                out = rule.fn(**env)
                if out is not None:
                    return out
        return None


def rewrite(expr: E.PrimExpr, rules: RuleSet, max_rounds: int = 16) -> E.PrimExpr:
    """Apply `rules` bottom-up until nothing changes (at most `max_rounds` passes).

    Example:
        >>> from unity import tir
        >>> i = tir.Var("i")
        >>> x = P.var("x")
        >>> r = RuleSet([Rule(x * 1, lambda x: x)])            # x * 1 -> x
        >>> rewrite((i * 1) * 1, r) is i
        True
    """
    keys: dict[Node, Hashable] = {}
    for _ in range(max_rounds):
        new = _rewrite_once(expr, rules, keys, {})
        if new is expr:
            return expr
        expr = new
    return expr


def _rewrite_once(
    expr: E.PrimExpr, rules: RuleSet, keys: dict[Node, Hashable], memo: dict[Node, E.PrimExpr]
) -> E.PrimExpr:
    done = memo.get(expr)
    if done is not None:
        return done
    changes = {}
    for name in child_fields(type(expr)):
        child = getattr(expr, name)
        if isinstance(child, E.PrimExpr):
            new = _rewrite_once(child, rules, keys, memo)
            if new is not child:
                changes[name] = new
    out = expr.replace(**changes) if changes else expr
    replaced = rules.apply(out, keys)
    memo[expr] = out if replaced is None else replaced
    return memo[expr]
