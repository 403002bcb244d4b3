"""Parse `@T.prim_func` definitions: parameters, symbolic shapes, body, root block.

Parameters are `A: T.Buffer(shape, dtype, ...)` or scalars `n: T.int32`.  In a
parameter's shape, strides and elem_offset, a string is a symbolic variable: `"n"`
is an int32 `tir.Var`, `T.int64("n")` an int64 one, `T.SizeVar("n", "int32")` a
`SizeVar`; one variable per distinct name, and a name equal to a scalar parameter is
that parameter.  `T.alloc_buffer` at function level creates TVM's root block "root".
TVM's older style, `a: T.handle` then `A = T.match_buffer(a, (n, 4), "float32")` in the
body (with `n = T.int32()`), makes `A` the parameter.

Example:
    >>> from unity.script import from_source
    >>> f = from_source('''
    ... @T.prim_func
    ... def main(A: T.Buffer(("n", 4), "float32"), B: T.Buffer(("n",), "float32")):
    ...     T.evaluate(0)
    ... ''')
    >>> f.params[0].shape[0] is f.params[1].shape[0]
    True
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from unity import tir
from unity.script.parser.core import ParseContext
from unity.script.parser.tir_specs import BufferSpec
from unity.script.parser.tir_stmt import FuncFrame, TIRStmtParser
from unity.tir import expr as E
from unity.tir import stmt as S
from unity.tir.buffer import Buffer
from unity.tir.function import PrimFunc


def parse_prim_func(
    ctx: ParseContext, node: ast.FunctionDef, options: Mapping[str, Any]
) -> PrimFunc:
    """Build a `PrimFunc` from a function definition (`options`: `private`, accepted and unused).

    Example:
        >>> parse_prim_func(ctx, function_def, {})  # doctest: +SKIP
    """
    if not isinstance(node, ast.FunctionDef):
        raise ctx.error(node, "@T.prim_func decorates a function")
    parser = TIRStmtParser(ctx.source, ctx.env)
    params = _params(parser, node)
    for p in params:
        parser.define(p.name, p)
    for name, var in parser.shape_vars.items():
        parser.define(name, var)
    body = parser.parse_stmts(node.body)
    frame = parser.frames[0]
    assert isinstance(frame, FuncFrame)
    if frame.alloc:
        root = S.Block((), (), (), "root", body, None, tuple(frame.alloc))
        body = S.BlockRealize((), tir.const(True), root)
    params = [frame.param_buffers.get(id(p), p) for p in params]
    return PrimFunc(tuple(params), body, attrs=frame.attrs)


def _params(parser: TIRStmtParser, node: ast.FunctionDef) -> list[Buffer | E.Var]:
    from unity.script import tir as T

    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise parser.error(node, "a prim_func takes plain positional parameters only")
    scalars: dict[str, E.Var] = {}
    for arg in args.args:  # scalars first: a buffer shape may name one
        if arg.annotation is None:
            raise parser.error(
                arg, f"parameter {arg.arg} needs an annotation (T.Buffer(...) or a dtype)"
            )
        if not _is_buffer_annotation(arg.annotation):
            annotation = parser.eval(arg.annotation)
            if not isinstance(annotation, T.DType):
                raise parser.error(
                    arg.annotation,
                    f"parameter {arg.arg}: expected T.Buffer(...) or a dtype such as T.int32",
                )
            scalars[arg.arg] = parser.shape_vars[arg.arg] = E.Var(arg.arg, annotation.name)
    params: list[Buffer | E.Var] = []
    for arg in args.args:
        params.append(scalars[arg.arg] if arg.arg in scalars else _buffer_param(parser, arg))
    for name in scalars:
        parser.shape_vars.pop(name)
    return params


def _is_buffer_annotation(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
        and (
            getattr(node.func, "attr", None) == "Buffer"
            or getattr(node.func, "id", None) == "Buffer"
        )
    )


def _buffer_param(parser: TIRStmtParser, arg: ast.arg) -> Buffer:
    call = arg.annotation
    assert isinstance(call, ast.Call)
    fn = parser.eval(call.func)
    symbolic = {0, "shape", "strides", "elem_offset"}
    values: list[Any] = []
    for i, a in enumerate(call.args):
        values.append(_eval_symbolic(parser, a, i in symbolic))
    kwargs = {
        k.arg: _eval_symbolic(parser, k.value, k.arg in symbolic) for k in call.keywords if k.arg
    }
    spec = parser.call(call, fn, values, kwargs)
    if not isinstance(spec, BufferSpec):
        raise parser.error(call, f"parameter {arg.arg}: expected T.Buffer(...)")
    return parser.make_buffer(call, arg.arg, spec)


def _eval_symbolic(parser: TIRStmtParser, node: ast.expr, symbolic: bool) -> Any:
    parser.strings_as_vars = symbolic
    try:
        return parser.eval(node)
    finally:
        parser.strings_as_vars = False
