"""TIR meaning of script expressions: typed operators, buffer subscripts, `T.Let`.

Dtype rules (TVM's): integer operands of different widths promote to the wider one;
an operand that mixes a float with a different dtype (another float width, an integer
expression) is an error, except Python number literals, which take the other side's
dtype.  `A[i, j]` loads, `A[i, 0:4]` is a region (for `T.reads` / `T.match_buffer`).

Example:
    >>> import ast
    >>> from unity import tir
    >>> from unity.script.parser.errors import Source
    >>> ev = TIRExprEvaluator(Source("x * 2"), {})
    >>> ev.define("x", tir.Var("x", "float32"))
    >>> ev.eval(ast.parse("x * 2", mode="eval").body).b.dtype
    'float32'
"""

from __future__ import annotations

import ast
import operator
from typing import Any

from unity import tir
from unity.ir import dtype as dt
from unity.script.parser.evaluator import Evaluator
from unity.tir import expr as E
from unity.tir.buffer import Buffer, BufferRegion

_TIR_COMPARE = {
    ast.Eq: tir.eq,
    ast.NotEq: tir.ne,
    ast.Lt: tir.lt,
    ast.LtE: tir.le,
    ast.Gt: tir.gt,
    ast.GtE: tir.ge,
}


class TIRExprEvaluator(Evaluator):
    """`Evaluator` with TIR operators; `shape_vars` holds the symbolic shape variables.

    While `strings_as_vars` is set (inside a parameter's `T.Buffer` shape), a string
    constant names a shape variable: `"n"` (int32) or `T.int64("n")`.

    Example:
        >>> from unity.script import tir as T
        >>> from unity.script.parser.errors import Source
        >>> ev = TIRExprEvaluator(Source("", "<s>"), {"T": T, "n": E.Var("n")})
        >>> ev.eval(ast.parse("n * 2 + T.int32(1)", mode="eval").body).script()
        'n * 2 + 1'
    """

    def __init__(self, source: Any, env: Any) -> None:
        super().__init__(source, env)
        self.strings_as_vars = False
        self.shape_vars: dict[str, E.Var] = {}

    # -- shape variables --------------------------------------------------------------
    def shape_var(
        self, node: ast.AST, name: str, dtype: str = "int32", size_var: bool = False
    ) -> E.Var:
        """The shape variable `name`, created on first use; a dtype clash is an error.

        Example:
            >>> from unity.script.parser.errors import Source
            >>> ev, node = TIRExprEvaluator(Source("", "<s>"), {}), ast.parse("n").body[0]
            >>> n = ev.shape_var(node, "n", "int64")
            >>> n.dtype, ev.shape_var(node, "n", "int64") is n
            ('int64', True)
        """
        if not dt.is_integer(dtype):
            raise self.error(
                node, f"shape variable {name!r} must have an integer dtype, not {dtype}"
            )
        var = self.shape_vars.get(name)
        if var is None:
            var = E.SizeVar(name, dtype) if size_var else E.Var(name, dtype)
            self.shape_vars[name] = var
        if var.dtype != dtype:
            raise self.error(node, f"shape variable {name!r} used as {dtype} but it is {var.dtype}")
        return var

    def eval_Constant(self, node: ast.Constant) -> Any:
        if self.strings_as_vars and isinstance(node.value, str):
            return self.shape_var(node, node.value)
        return node.value

    def eval_Call(self, node: ast.Call) -> Any:
        fn = self.eval(node.func)
        if getattr(fn, "__name__", None) == "Let" and _is_script(fn):
            return self._let_expr(node)
        if self.strings_as_vars and _string_args(node):
            return self._typed_shape_var(node, fn)
        if fn is range:
            from unity.script import tir as T

            fn = T.serial
        saved, self.strings_as_vars = self.strings_as_vars, False
        try:
            args = [self.eval(a) for a in node.args]
            kwargs = {k.arg: self.eval(k.value) for k in node.keywords if k.arg is not None}
        finally:
            self.strings_as_vars = saved
        return self.call(node, fn, args, kwargs)

    def _typed_shape_var(self, node: ast.Call, fn: Any) -> E.Var:
        from unity.script import tir as T

        name = node.args[0].value  # type: ignore[attr-defined]  # checked by _string_args
        if isinstance(fn, T.DType):
            return self.shape_var(node, name, fn.name)
        if fn is T.SizeVar:
            dtype = node.args[1].value if len(node.args) > 1 else "int32"  # type: ignore[attr-defined]
            return self.shape_var(node, name, dtype, size_var=True)
        raise self.error(node, f"{ast.unparse(node.func)} does not take a shape variable name")

    def _let_expr(self, node: ast.Call) -> E.Let:
        if len(node.args) != 3 or not isinstance(node.args[0], ast.Name):
            raise self.error(node, "T.Let takes (name, value, body), e.g. T.Let(x, 5, x + 1)")
        value = tir.const(self.eval(node.args[1]))
        var = E.Var(node.args[0].id, value.dtype)
        with self.scope():
            self.define(var.name, var)
            body = tir.const(self.eval(node.args[2]))
        return E.Let(var, value, body)

    # -- operators --------------------------------------------------------------------
    def binary(self, node: ast.AST, symbol: str, fn: Any, a: Any, b: Any) -> Any:
        if isinstance(a, E.PrimExpr) and isinstance(b, E.PrimExpr):
            self.check_same_dtype(node, symbol, a, b)
        return super().binary(node, symbol, fn, a, b)

    def check_same_dtype(self, node: ast.AST, what: str, a: E.PrimExpr, b: E.PrimExpr) -> None:
        """Raise unless `a` and `b` may meet in one operator (integers may differ in width).

        Example:
            >>> from unity.script.parser.errors import Source
            >>> ev, node = TIRExprEvaluator(Source("x", "<s>"), {}), ast.parse("x").body[0]
            >>> ev.check_same_dtype(node, "+", E.Var("i"), E.Var("j", "int64"))  # widths may differ
            >>> x = E.Var("x", "float32")
            >>> ev.check_same_dtype(node, "+", E.Var("i"), x)  # doctest: +ELLIPSIS
            Traceback (most recent call last):
                ...
            unity.script.parser.errors.ParseError: <s>:1:1: error: operands of + have different dtypes: ...
        """
        ta, tb = a.dtype, b.dtype
        if ta == tb or (dt.is_integer(ta) and dt.is_integer(tb) and dt.lanes(ta) == dt.lanes(tb)):
            return
        raise self.error(
            node,
            f"operands of {what} have different dtypes: {ta} and {tb}; convert one with T.Cast",
        )

    def compare(self, node: ast.AST, op: type, a: Any, b: Any) -> Any:
        if not isinstance(a, E.PrimExpr) and not isinstance(b, E.PrimExpr):
            return super().compare(node, op, a, b)
        if isinstance(a, E.PrimExpr) and isinstance(b, E.PrimExpr):
            self.check_same_dtype(node, "a comparison", a, b)
        return self.call(node, _TIR_COMPARE[op], [a, b], {})

    def logical(self, node: ast.AST, is_and: bool, a: Any, b: Any) -> Any:
        if not isinstance(a, E.PrimExpr) and not isinstance(b, E.PrimExpr):
            return super().logical(node, is_and, a, b)
        return self.call(node, tir.logical_and if is_and else tir.logical_or, [a, b], {})

    def logical_not(self, node: ast.AST, value: Any) -> Any:
        if not isinstance(value, E.PrimExpr):
            return not value
        return E.Not(value)

    def eval_UnaryOp(self, node: ast.UnaryOp) -> Any:
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            return operator.neg(node.operand.value)  # a negative literal stays a Python number
        return super().eval_UnaryOp(node)

    # -- buffers ----------------------------------------------------------------------
    def eval_Subscript(self, node: ast.Subscript) -> Any:
        base = self.eval(node.value)
        if not isinstance(base, Buffer):
            return super().eval_Subscript(node)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) != base.ndim:
            raise self.error(
                node, f"buffer {base.name} has {base.ndim} dims, indexed with {len(items)}"
            )
        values = [self.eval(i) for i in items]
        if any(isinstance(v, slice) for v in values):
            return BufferRegion(base, tuple(self._range(items[k], v) for k, v in enumerate(values)))
        try:
            indices = tuple(tir.const(v) for v in values)
        except TypeError as err:
            raise self.error(node, f"bad index of buffer {base.name}: {err}") from None
        for k, index in enumerate(indices):
            if not dt.is_integer(dt.element(index.dtype)):
                raise self.error(
                    items[k], f"index {k} of buffer {base.name} must be an integer, got {index.dtype}"
                )
        try:
            return E.BufferLoad(base, indices)
        except TypeError as err:
            raise self.error(node, f"bad index of buffer {base.name}: {err}") from None

    def _range(self, node: ast.AST, value: Any) -> E.Range:
        if not isinstance(value, slice):
            index = tir.const(value)
            return E.Range(index, tir.const(1, index.dtype))
        if value.start is None or value.stop is None:
            raise self.error(node, "a region slice needs both bounds, e.g. A[0:16]")
        return range_from_bounds(value.start, value.stop)


def range_from_bounds(start: Any, stop: Any) -> E.Range:
    """`Range(start, stop - start)`, folding constants and `stop == start + extent`.

    Example:
        >>> range_from_bounds(2, 10).extent.value
        8
    """
    lo, hi = E._promote(start, stop)
    return E.Range(lo, extent_between(lo, hi))


def extent_between(lo: E.PrimExpr, hi: E.PrimExpr) -> E.PrimExpr:
    """`hi - lo`, recovering `e` from `hi = lo + e` and folding two constants.

    Example:
        >>> i = E.Var("i")
        >>> extent_between(i, i + 4).value, extent_between(E.const(2), E.const(10)).value
        (4, 8)
    """
    if isinstance(lo, E.IntImm) and isinstance(hi, E.IntImm):
        return E.IntImm(hi.dtype, hi.value - lo.value)
    if isinstance(hi, E.Add) and same_expr(hi.a, lo):
        return hi.b
    if isinstance(lo, E.IntImm) and lo.value == 0:
        return hi
    return hi - lo


def same_expr(a: object, b: object) -> bool:
    """Whether two small expressions are the same tree (variables by identity).

    Example:
        >>> i = E.Var("i")
        >>> same_expr(i + 1, i + 1), same_expr(i + 1, i + 2)
        (True, False)
    """
    if a is b:
        return True
    if type(a) is not type(b) or isinstance(a, E.Var | Buffer):
        return False
    if isinstance(a, E.IntImm | E.FloatImm):
        return (a.dtype, a.value) == (b.dtype, b.value)  # type: ignore[union-attr]
    if isinstance(a, E.BinaryOp):
        return same_expr(a.a, b.a) and same_expr(a.b, b.b)  # type: ignore[union-attr]
    if isinstance(a, E.Cast):
        return a.dtype == b.dtype and same_expr(a.value, b.value)  # type: ignore[union-attr]
    return False


def _is_script(fn: Any) -> bool:
    return getattr(fn, "__module__", "") == "unity.script.tir"


def _string_args(node: ast.Call) -> bool:
    return (
        bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )
