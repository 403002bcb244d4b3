"""Evaluate the expressions of a script from its `ast`, with scoped names.

Names resolve first in the parser's scopes (variables and buffers the script
defines), then in the captured environment (namespaces, constants).  Calls run the
namespace builders (`T.exp(x)`); an exception they raise becomes a `ParseError` at
the call.  Family parsers subclass `Evaluator` to give meaning to operators.

Example:
    >>> import ast
    >>> from unity.script.parser.errors import Source
    >>> ev = Evaluator(Source("x + 1"), {"x": 41})
    >>> ev.eval(ast.parse("x + 1", mode="eval").body)
    42
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from unity.script.parser.errors import ParseError, Source

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
}
_SYMBOLS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.BitAnd: "&",
    ast.BitOr: "|",
}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


class Evaluator:
    """Evaluate `ast` expressions; `self.scopes` holds the names the script defines.

    Example:
        >>> ev = Evaluator(Source("", "<s>"), {"n": 4})
        >>> ev.eval(ast.parse("(n * 2, [n, 1])", mode="eval").body)
        (8, [4, 1])
    """

    def __init__(self, source: Source, env: Mapping[str, Any]) -> None:
        self.source = source
        self.env = env
        self.scopes: list[dict[str, Any]] = [{}]

    def error(self, node: ast.AST | None, message: str) -> ParseError:
        """A `ParseError` at `node`.

        Example:
            >>> node = ast.parse("x", mode="eval").body
            >>> Evaluator(Source("x", "m.py"), {}).error(node, "unknown name 'x'").message
            "unknown name 'x'"
        """
        return self.source.error(node, message)

    @contextmanager
    def scope(self) -> Iterator[dict[str, Any]]:
        """A nested scope for the names a loop, block or let defines.

        Example:
            >>> ev = Evaluator(Source("", "<s>"), {})
            >>> with ev.scope():
            ...     ev.define("i", 3)
            ...     len(ev.scopes)
            2
            >>> len(ev.scopes)
            1
        """
        self.scopes.append({})
        try:
            yield self.scopes[-1]
        finally:
            self.scopes.pop()

    def define(self, name: str, value: Any) -> None:
        """Bind `name` in the innermost scope.

        Example:
            >>> ev = Evaluator(Source("", "<s>"), {})
            >>> ev.define("i", 3)
            >>> ev.eval(ast.parse("i + 1", mode="eval").body)
            4
        """
        self.scopes[-1][name] = value

    def lookup(self, name: str, node: ast.AST) -> Any:
        """The value of `name`, or a `ParseError` naming it.

        Example:
            >>> node = ast.parse("n", mode="eval").body
            >>> Evaluator(Source("n", "<s>"), {"n": 4}).lookup("n", node)
            4
            >>> Evaluator(Source("n", "<s>"), {}).lookup("n", node)
            Traceback (most recent call last):
                ...
            unity.script.parser.errors.ParseError: <s>:1:1: error: unknown name 'n'
                n
                ^
        """
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.env:
            return self.env[name]
        raise self.error(node, f"unknown name {name!r}")

    # -- dispatch ---------------------------------------------------------------------
    def eval(self, node: ast.expr) -> Any:
        """Evaluate one expression node.

        Example:
            >>> Evaluator(Source("", "<s>"), {}).eval(ast.parse("{'a': 1 + 2}", mode="eval").body)
            {'a': 3}
        """
        method = getattr(self, f"eval_{type(node).__name__}", None)
        if method is None:
            raise self.error(node, f"unsupported syntax in a script: {type(node).__name__}")
        return method(node)

    def eval_Name(self, node: ast.Name) -> Any:
        return self.lookup(node.id, node)

    def eval_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def eval_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self.eval(e) for e in node.elts)

    def eval_List(self, node: ast.List) -> Any:
        return [self.eval(e) for e in node.elts]

    def eval_Dict(self, node: ast.Dict) -> Any:
        if any(k is None for k in node.keys):
            raise self.error(node, "`**` in a dict is not supported in a script")
        return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]

    def eval_Attribute(self, node: ast.Attribute) -> Any:
        base = self.eval(node.value)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise self.error(
                node, f"{ast.unparse(node.value)} has no attribute {node.attr!r}"
            ) from None

    def eval_Call(self, node: ast.Call) -> Any:
        fn = self.eval(node.func)
        args = [self.eval(a) for a in node.args]
        kwargs = {k.arg: self.eval(k.value) for k in node.keywords if k.arg is not None}
        return self.call(node, fn, args, kwargs)

    def call(self, node: ast.AST, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Call `fn`; errors become `ParseError`s at `node`.

        Example:
            >>> node = ast.parse("f(1)", mode="eval").body
            >>> Evaluator(Source("", "<s>"), {}).call(node, max, [1, 5], {})
            5
        """
        if not callable(fn):
            raise self.error(node, f"{ast.unparse(getattr(node, 'func', node))} is not callable")
        try:
            return fn(*args, **kwargs)
        except ParseError:
            raise
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as err:
            name = ast.unparse(getattr(node, "func", node))
            raise self.error(node, f"bad call of {name}: {err}") from None

    def eval_BinOp(self, node: ast.BinOp) -> Any:
        fn = _BINOPS.get(type(node.op))
        if fn is None:
            raise self.error(node, f"unsupported operator {type(node.op).__name__}")
        a, b = self.eval(node.left), self.eval(node.right)
        return self.binary(node, _SYMBOLS[type(node.op)], fn, a, b)

    def binary(self, node: ast.AST, symbol: str, fn: Any, a: Any, b: Any) -> Any:
        """Apply a binary operator (hook for dtype checks).

        Example:
            >>> import operator
            >>> node = ast.parse("a + b", mode="eval").body
            >>> Evaluator(Source("", "<s>"), {}).binary(node, "+", operator.add, 2, 3)
            5
        """
        try:
            return fn(a, b)
        except (TypeError, ValueError) as err:
            raise self.error(node, f"cannot apply {symbol}: {err}") from None

    def eval_UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self.eval(node.operand)
        ops = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}
        if isinstance(node.op, ast.Not):
            return self.logical_not(node, value)
        return self.binary(
            node, type(node.op).__name__, lambda v, _: ops[type(node.op)](v), value, None
        )

    def logical_not(self, node: ast.AST, value: Any) -> Any:
        """`not value` (hook).

        Example:
            >>> Evaluator(Source("", "<s>"), {}).eval(ast.parse("not 0", mode="eval").body)
            True
        """
        return not value

    def eval_Compare(self, node: ast.Compare) -> Any:
        if len(node.ops) != 1:
            raise self.error(node, "chained comparisons are not supported in a script; use `and`")
        fn = _COMPARE.get(type(node.ops[0]))
        if fn is None:
            raise self.error(node, f"unsupported comparison {type(node.ops[0]).__name__}")
        return self.compare(
            node, type(node.ops[0]), self.eval(node.left), self.eval(node.comparators[0])
        )

    def compare(self, node: ast.AST, op: type, a: Any, b: Any) -> Any:
        """Apply a comparison (hook).

        Example:
            >>> Evaluator(Source("", "<s>"), {}).eval(ast.parse("2 < 3", mode="eval").body)
            True
        """
        return _COMPARE[op](a, b)

    def eval_BoolOp(self, node: ast.BoolOp) -> Any:
        values = [self.eval(v) for v in node.values]
        result = values[0]
        for value in values[1:]:
            result = self.logical(node, isinstance(node.op, ast.And), result, value)
        return result

    def logical(self, node: ast.AST, is_and: bool, a: Any, b: Any) -> Any:
        """`a and b` / `a or b` (hook).

        Example:
            >>> Evaluator(Source("", "<s>"), {}).eval(ast.parse("0 or 7", mode="eval").body)
            7
        """
        return (a and b) if is_and else (a or b)

    def eval_Subscript(self, node: ast.Subscript) -> Any:
        base = self.eval(node.value)
        index = self.eval(node.slice)
        try:
            return base[index]
        except (TypeError, IndexError, KeyError) as err:
            raise self.error(node, f"cannot index {ast.unparse(node.value)}: {err}") from None

    def eval_Slice(self, node: ast.Slice) -> Any:
        if node.step is not None:
            raise self.error(node, "slices with a step are not supported in a script")
        lower = self.eval(node.lower) if node.lower is not None else None
        upper = self.eval(node.upper) if node.upper is not None else None
        return slice(lower, upper)
