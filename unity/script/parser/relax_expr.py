"""Evaluate relax script expressions: names, calls with struct-info inference, tuples.

Names resolve in the function's scopes (parameters, bindings, shape symbols), then the
module's functions (`cls.f` or plain `f` is the `GlobalVar`), then the captured
environment, then sympy's `floor`/`ceiling`/`Min`/`Max`/`Mod` (printed symbolic dims).
Every call is normalized on the spot: its struct info is inferred by the op's rule (or
from the callee's signature), and an inference error becomes a `ParseError` at the call.

Example:
    >>> from unity.script.parser.errors import Source
    >>> from unity.script import relax as R
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> from unity.relax.expr import Var
    >>> ev = RelaxEvaluator(Source("R.exp(x)"), {"R": R}, {})
    >>> ev.define("x", Var("x", TensorStructInfo((2,), "float32")))
    >>> ev.eval(ast.parse("R.exp(x)", mode="eval").body).struct_info.script()
    'R.Tensor((2,), dtype="float32")'
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any

import sympy

from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import GlobalVar, IRModule
from unity.ir.node import Span
from unity.relax.expr import Call, Expr, Function, SeqExpr, TupleGetItem, Var
from unity.relax.infer import infer_struct_info
from unity.relax.struct_info import FuncStructInfo, StructInfo
from unity.script.parser.errors import ParseError, Source
from unity.script.parser.evaluator import Evaluator
from unity.script.parser.relax_specs import OpNamespace, ScriptOp, as_expr, as_struct_info

_SYMPY_NAMES: dict[str, Any] = {
    "floor": sympy.floor,
    "ceiling": sympy.ceiling,
    "Min": sympy.Min,
    "Max": sympy.Max,
    "Mod": sympy.Mod,
}

Signatures = Callable[[], Mapping[str, FuncStructInfo]]
"""Returns the signatures of the module's relax functions, by name (computed lazily)."""


class ModuleFunctions:
    """What `cls` means in a module's function: `cls.f` is the `GlobalVar` of `f`.

    Example:
        >>> gv = GlobalVar("f")
        >>> ModuleFunctions({"f": gv}).f is gv
        True
    """

    def __init__(self, global_vars: Mapping[str, GlobalVar]) -> None:
        self._global_vars = global_vars

    def __getattr__(self, name: str) -> GlobalVar:
        try:
            return self._global_vars[name]
        except KeyError:
            known = ", ".join(sorted(self._global_vars)) or "none"
            raise AttributeError(f"the module has no function {name!r} (it has: {known})") from None


class RelaxEvaluator(Evaluator):
    """`Evaluator` for relax script: builds and normalizes relax expressions.

    Example:
        >>> from unity import relax
        >>> from unity.script import relax as R
        >>> ev = RelaxEvaluator(Source("", "<s>"), {"R": R}, {})
        >>> ev.define("x", relax.Var("x", relax.TensorStructInfo((2, 3), "float32")))
        >>> ev.eval(ast.parse("R.add(x, x)", mode="eval").body).struct_info_
        R.Tensor((2, 3), dtype="float32")
    """

    def __init__(
        self,
        source: Source,
        env: Mapping[str, Any],
        global_vars: Mapping[str, GlobalVar],
        signatures: Signatures | None = None,
    ) -> None:
        super().__init__(source, env)
        self.global_vars = global_vars
        self.signatures = signatures
        if global_vars:
            self.scopes[0]["cls"] = ModuleFunctions(global_vars)

    def lookup(self, name: str, node: ast.AST) -> Any:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.global_vars:
            return self.global_vars[name]
        if name in self.env:
            return self.env[name]
        if name in _SYMPY_NAMES:
            return _SYMPY_NAMES[name]
        raise self.error(node, f"unknown name {name!r}")

    def span(self, node: ast.AST) -> Span:
        """Where `node` is in the user's file (1-based lines, 0-based columns).

        Example:
            >>> ev = RelaxEvaluator(Source("y", "m.py"), {}, {})
            >>> ev.span(ast.parse("y").body[0])
            Span(source_name='m.py', line=1, column=0, end_line=1, end_column=1)
        """
        src = self.source
        line, col = getattr(node, "lineno", 1), getattr(node, "col_offset", 0)
        end_line = getattr(node, "end_lineno", line) or line
        end_col = getattr(node, "end_col_offset", col) or col
        off, indent = src.line_offset, src.indent
        return Span(src.filename, line + off, col + indent, end_line + off, end_col + indent)

    # -- expressions ------------------------------------------------------------------
    def eval_Attribute(self, node: ast.Attribute) -> Any:
        base = self.eval(node.value)
        try:
            return getattr(base, node.attr)
        except AttributeError as err:
            if isinstance(base, OpNamespace | ModuleFunctions) or _is_namespace(base):
                raise self.error(node, str(err)) from None
            raise self.error(
                node, f"{ast.unparse(node.value)} has no attribute {node.attr!r}"
            ) from None

    def binary(self, node: ast.AST, symbol: str, fn: Any, a: Any, b: Any) -> Any:
        """Integers divide exactly (`3/2` in a printed dim is sympy's 3/2, not 1.5)."""
        if symbol == "/" and _is_int(a) and _is_int(b) and b != 0:
            return sympy.Rational(a, b)
        return super().binary(node, symbol, fn, a, b)

    def eval_Subscript(self, node: ast.Subscript) -> Any:
        base = self.eval(node.value)
        if not isinstance(base, Expr):
            return super().eval_Subscript(node)
        index = self.eval(node.slice)
        if not isinstance(index, int) or isinstance(index, bool):
            raise self.error(node.slice, "a tuple is indexed by an integer constant")
        return self.normalize(node, TupleGetItem(base, index))

    def eval_Call(self, node: ast.Call) -> Any:
        fn = self.eval(node.func)
        args = [self.eval(a) for a in node.args]
        if any(k.arg is None for k in node.keywords):
            raise self.error(node, "`**kwargs` is not supported in a script")
        kwargs = {k.arg: self.eval(k.value) for k in node.keywords if k.arg is not None}
        if isinstance(fn, GlobalVar | Expr):
            return self.call_function(node, fn, args, kwargs)
        return self.call(node, fn, args, kwargs)

    def call(self, node: ast.AST, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Call a namespace builder; a relax `Call` it returns is normalized here."""
        if not callable(fn):
            raise self.error(node, f"{ast.unparse(getattr(node, 'func', node))} is not callable")
        if args and _calls_tir(fn):
            args = [self.module_function(node, args[0]), *args[1:]]
        try:
            result = fn(*args, **kwargs)
        except ParseError:
            raise
        except DiagnosticError as err:
            raise self.error(node, err.message) from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as err:
            raise self.error(node, _call_message(node, fn, err)) from None
        if isinstance(result, Call):
            return self.normalize(node, result)
        return result

    def module_function(self, node: ast.AST, callee: Any) -> Any:
        """The module's own `GlobalVar` for `"name"`, `I.GlobalVar("name")` or `cls.name`.

        Example:
            >>> gv = GlobalVar("f")
            >>> ev = RelaxEvaluator(Source("", "<s>"), {}, {"f": gv})
            >>> ev.module_function(ast.parse("f").body[0], "f") is gv
            True
        """
        name = callee if isinstance(callee, str) else getattr(callee, "name_hint", None)
        if not isinstance(name, str) or not isinstance(callee, str | GlobalVar):
            return callee
        if name in self.global_vars:
            return self.global_vars[name]
        if isinstance(callee, str):
            raise self.error(node, f"the module has no function {name!r}")
        return callee

    def call_function(
        self, node: ast.Call, fn: GlobalVar | Expr, args: list[Any], kwargs: dict[str, Any]
    ) -> Expr:
        """`cls.f(x, y)` (a module function) or `f(x)` (a function-valued expression).

        Example:
            >>> from unity import relax
            >>> gv, x = GlobalVar("f"), relax.Var("x", relax.TensorStructInfo((2,), "float32"))
            >>> ev = RelaxEvaluator(Source("", "<s>"), {}, {"f": gv})
            >>> out = relax.TensorStructInfo((2,), "float32")
            >>> node = ast.parse("f(x)").body[0]
            >>> ev.call_function(node, gv, [x], {"sinfo_args": out}).struct_info_
            R.Tensor((2,), dtype="float32")
        """
        unknown = set(kwargs) - {"sinfo_args", "out_sinfo"}
        if unknown:
            raise self.error(node, f"unexpected keyword {min(unknown)!r} in a function call")
        sinfo = kwargs.get("sinfo_args", kwargs.get("out_sinfo"))
        try:
            call_args = tuple(as_expr(a) for a in args)
            sinfos = () if sinfo is None else _sinfo_tuple(sinfo)
        except TypeError as err:
            raise self.error(node, str(err)) from None
        return self.normalize(node, Call(fn, call_args, sinfo_args=sinfos))

    def normalize(self, node: ast.AST, expr: Expr) -> Expr:
        """Fill `expr`'s struct info (its children already have theirs) and its span.

        Example:
            >>> from unity import relax
            >>> from unity.script import relax as R
            >>> x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
            >>> call = Call(R.add.op, (x, x))
            >>> ev = RelaxEvaluator(Source("", "<s>"), {}, {})
            >>> ev.normalize(ast.parse("x").body[0], call).struct_info_
            R.Tensor((4,), dtype="float32")
        """
        if expr.struct_info_ is not None:
            return expr.replace(span=self.span(node)) if isinstance(expr, Call) else expr
        try:
            sinfo = infer_struct_info(expr, self._callee_module(expr))
        except DiagnosticError as err:
            raise self.error(node, err.message) from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as err:
            raise self.error(node, f"cannot infer the struct info of this call: {err}") from None
        span = self.span(node) if isinstance(expr, Call) else expr.span
        return expr.replace(struct_info_=sinfo, span=span)

    def _callee_module(self, expr: Expr) -> IRModule | None:
        """A module holding a stand-in for the called module function (its signature only)."""
        if not isinstance(expr, Call) or not isinstance(expr.op, GlobalVar):
            return None
        signature = self.signatures().get(expr.op.name_hint) if self.signatures else None
        if signature is None:
            return IRModule()
        params = tuple(Var(f"p{i}", s) for i, s in enumerate(signature.params or ()))
        body = SeqExpr((), Var("ret", signature.ret))
        stub = Function(params, body, signature.ret, signature.purity)
        return IRModule({expr.op: stub})


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _calls_tir(fn: Any) -> bool:
    return getattr(fn, "__name__", None) == "call_tir" or (
        isinstance(fn, ScriptOp) and fn.op.name == "relax.call_tir"
    )


def _is_namespace(value: object) -> bool:
    return type(value).__name__ == "module" and getattr(value, "__name__", "").startswith(
        "unity.script"
    )


def _sinfo_tuple(value: Any) -> tuple[StructInfo, ...]:
    if isinstance(value, list | tuple):
        return tuple(as_struct_info(v) for v in value)  # type: ignore[union-attr]  # a sequence
    return (as_struct_info(value),)


def _call_message(node: ast.AST, fn: Any, err: Exception) -> str:
    name = fn.script_name if isinstance(fn, ScriptOp) else ast.unparse(getattr(node, "func", node))
    text = err.args[0] if err.args and isinstance(err.args[0], str) else f"{err}"
    if text.startswith(name):
        return f"bad call of {text}"
    return f"bad call of {name}: {text}"
