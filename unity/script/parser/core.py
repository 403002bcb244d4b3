"""The generic part of the script parser: decorators, namespaces and `from_source`.

Each IR family registers a `ScriptDecorator` (`T.prim_func`, later `R.function`)
whose handler turns one `ast.FunctionDef` into a function; `I.ir_module` parses a
class by calling, for each method, the handler of the decorator written on it.  The
parser never executes the script: names are looked up in the captured environment
(the decorated function's closure, its caller's locals and its globals) only to read
constants and the namespaces.

Example:
    >>> mod = from_source('''
    ... @T.prim_func
    ... def main(A: T.Buffer((4,), "float32")):
    ...     A[0] = T.float32(1.0)
    ... ''')
    >>> type(mod).__name__
    'PrimFunc'
"""

from __future__ import annotations

import ast
import builtins
import inspect
import sys
from collections import ChainMap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import FrameType, FunctionType
from typing import Any

from unity.ir.module import GlobalVar
from unity.script.parser.errors import ParseError, Source

NAMESPACES: dict[str, object] = {}
"""Script namespaces by their conventional alias (`"T"`, `"I"`, `"R"`), for `from_source`."""


def register_namespace(alias: str, namespace: object) -> None:
    """Make `namespace` known as `alias` in scripts parsed by `from_source`.

    Example:
        >>> import unity.script.tir as T_module
        >>> register_namespace("T", T_module)
    """
    NAMESPACES[alias] = namespace


@dataclass
class ParseContext:
    """What a function handler needs: the source, names in scope, module globals.

    Example:
        >>> from unity.script import tir as T
        >>> ctx = ParseContext(Source("", "<s>"), {"T": T})
        >>> ctx.env["T"] is T, ctx.global_vars
        (True, {})
    """

    source: Source
    env: Mapping[str, Any]
    global_vars: dict[str, GlobalVar] = field(default_factory=dict)
    family_state: dict[str, Any] = field(default_factory=dict)
    """Per-parse state a family parser keeps across the functions of one module."""

    def error(self, node: ast.AST | None, message: str) -> ParseError:
        """A `ParseError` at `node`.

        Example:
            >>> node = ast.parse("x = 1").body[0]
            >>> ParseContext(Source("x = 1", "m.py"), {}).error(node, "bad").message
            'bad'
        """
        return self.source.error(node, message)


Handler = Callable[[ParseContext, Any, Mapping[str, Any]], Any]
"""`handler(ctx, ast_node, options) -> parsed object`."""


class ScriptDecorator:
    """A decorator such as `T.prim_func`: parses the decorated definition's source.

    Inside a class body the function is returned as is (marked), so that
    `I.ir_module` parses the whole class together.  Options are given by calling
    the decorator: `@T.prim_func(private=True)`.

    Example:
        >>> from unity.script import tir as T
        >>> isinstance(T.prim_func, ScriptDecorator)
        True
        >>> isinstance(T.prim_func(private=True), ScriptDecorator)  # with options
        True
    """

    def __init__(
        self, name: str, handler: Handler, options: Mapping[str, Any] | None = None
    ) -> None:
        self.name = name
        self.handler = handler
        self.options = dict(options or {})

    def __call__(self, obj: Any = None, **options: Any) -> Any:
        if obj is None:
            return ScriptDecorator(self.name, self.handler, {**self.options, **options})
        if isinstance(obj, FunctionType) and _in_class_body(obj):
            obj.__unity_script__ = self  # type: ignore[attr-defined]  # read by I.ir_module
            return obj
        frame = inspect.currentframe()
        caller = frame.f_back if frame is not None else None
        return parse_object(obj, self, caller)

    def __repr__(self) -> str:
        return self.name


def _in_class_body(fn: FunctionType) -> bool:
    parts = fn.__qualname__.split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


def capture_env(obj: Any, frame: FrameType | None) -> Mapping[str, Any]:
    """Names visible to the script: closure variables, the caller's locals, globals, builtins.

    Example:
        >>> capture_env(capture_env, None)["ChainMap"] is ChainMap
        True
    """
    maps: list[Mapping[str, Any]] = []
    functions = [obj] if isinstance(obj, FunctionType) else _methods(obj)
    for fn in functions:
        closure = fn.__closure__ or ()
        maps.append(
            {n: c.cell_contents for n, c in zip(fn.__code__.co_freevars, closure) if _filled(c)}
        )
    if frame is not None:
        maps += [frame.f_locals, frame.f_globals]
    maps += [fn.__globals__ for fn in functions[:1]]
    module = sys.modules.get(getattr(obj, "__module__", ""), None)
    if module is not None:
        maps.append(vars(module))
    maps.append(vars(builtins))
    return ChainMap(*maps)


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises ValueError
    except ValueError:
        return False
    return True


def _methods(cls: Any) -> list[FunctionType]:
    return (
        [v for v in vars(cls).values() if isinstance(v, FunctionType)]
        if isinstance(cls, type)
        else []
    )


def parse_object(obj: Any, decorator: ScriptDecorator, frame: FrameType | None) -> Any:
    """Parse the source of a Python function or class with `decorator`'s handler.

    Example:
        >>> from unity.script import tir as T
        >>> def main(n: T.int32):
        ...     T.evaluate(n)
        >>> parse_object(main, T.prim_func, None).params[0].name
        'n'
    """
    try:
        source = Source.of(obj)
    except OSError:
        if not isinstance(obj, type):
            raise
        return _parse_class_by_methods(obj, frame)  # e.g. a class typed at a prompt
    tree = ast.parse(source.text)
    definition = tree.body[0]
    ctx = ParseContext(source, capture_env(obj, frame))
    return decorator.handler(ctx, definition, decorator.options)


def from_source(text: str, env: Mapping[str, Any] | None = None, filename: str = "<string>") -> Any:
    """Parse script text holding one decorated function or `@I.ir_module` class.

    Import lines are skipped; `T`, `I` (and other registered namespaces) are predefined.

    Example:
        >>> f = from_source('@T.prim_func\\ndef main(n: T.int32):\\n    T.evaluate(n)\\n')
        >>> f.params[0].name
        'n'
    """
    source = Source(text, filename)
    try:
        tree = ast.parse(source.text)
    except SyntaxError as err:
        raise ParseError(
            err.msg, filename, err.lineno or 0, err.offset or 0, err.text or ""
        ) from None
    scope = ChainMap(dict(env or {}), NAMESPACES, vars(builtins))
    ctx = ParseContext(source, scope)
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom) or _is_docstring(node):
            continue
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            decorator = find_decorator(ctx, node)
            return decorator.handler(ctx, node, decorator.options)
        raise ctx.error(
            node, "expected a decorated function or class (e.g. @T.prim_func or @I.ir_module)"
        )
    raise ctx.error(None, "the script holds no function or module")


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def find_decorator(ctx: ParseContext, node: ast.FunctionDef | ast.ClassDef) -> ScriptDecorator:
    """The `ScriptDecorator` written on `node` (evaluating `T.prim_func(private=True)` too).

    Example:
        >>> from unity.script import tir as T
        >>> node = ast.parse("@T.prim_func\\ndef f():\\n    pass\\n").body[0]
        >>> find_decorator(ParseContext(Source("", "<s>"), {"T": T}), node) is T.prim_func
        True
    """
    for expr in node.decorator_list:
        value = _eval_decorator(ctx, expr)
        if isinstance(value, ScriptDecorator):
            return value
    raise ctx.error(
        node, f"{node.name} has no script decorator (such as @T.prim_func or @I.ir_module)"
    )


def _eval_decorator(ctx: ParseContext, expr: ast.expr) -> object:
    if isinstance(expr, ast.Name):
        if expr.id not in ctx.env:
            raise ctx.error(expr, f"unknown name {expr.id!r}")
        return ctx.env[expr.id]
    if isinstance(expr, ast.Attribute):
        base = _eval_decorator(ctx, expr.value)
        if not hasattr(base, expr.attr):
            raise ctx.error(expr, f"{ast.unparse(expr.value)} has no attribute {expr.attr!r}")
        return getattr(base, expr.attr)
    if isinstance(expr, ast.Call):
        fn = _eval_decorator(ctx, expr.func)
        kwargs = {k.arg: ast.literal_eval(k.value) for k in expr.keywords if k.arg}
        return fn(**kwargs) if isinstance(fn, ScriptDecorator) else None
    return None


def _parse_class_by_methods(cls: type, frame: FrameType | None) -> Any:
    """Build a module from the separately readable sources of `cls`'s script methods."""
    from unity.ir.module import IRModule

    methods = [m for m in _methods(cls) if hasattr(m, "__unity_script__")]
    global_vars = {m.__name__: GlobalVar(m.__name__) for m in methods}
    mod = IRModule()
    for method in methods:
        source = Source.of(method)
        ctx = ParseContext(source, capture_env(method, frame), global_vars)
        decorator: ScriptDecorator = method.__unity_script__  # type: ignore[attr-defined]
        mod.update_func(
            global_vars[method.__name__],
            decorator.handler(ctx, ast.parse(source.text).body[0], decorator.options),
        )
    return mod
