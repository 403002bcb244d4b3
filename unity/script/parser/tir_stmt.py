"""TIR meaning of script statements: stores, loops, blocks, lets, asserts, allocations.

A statement list becomes one `Stmt` (a `SeqStmt` when it has several).  The flat forms
`x: T.int32 = v` and `assert c, "msg"` scope over the rest of their list.  Block
metadata (`T.axis.*`, `T.reads`, `T.where`, `T.alloc_buffer`, `with T.init():`) is
collected into the innermost `with T.block(...)` frame.

Example:
    >>> from unity.script import from_source
    >>> f = from_source('''
    ... @T.prim_func
    ... def main(A: T.Buffer((4,), "float32")):
    ...     for i in T.serial(4):
    ...         A[i] = T.float32(0)
    ... ''')
    >>> type(f.body).__name__, f.body.kind.value
    ('For', 'serial')
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from unity import tir
from unity.ir import dtype as dt
from unity.ir.node import Span
from unity.script.parser import tir_specs as spec
from unity.script.parser.tir_expr import TIRExprEvaluator, extent_between
from unity.script.parser.tir_regions import infer_regions
from unity.tir import expr as E
from unity.tir import stmt as S
from unity.tir.buffer import Buffer, BufferRegion

_KINDS = {
    "serial": S.ForKind.SERIAL,
    "parallel": S.ForKind.PARALLEL,
    "vectorized": S.ForKind.VECTORIZED,
    "unroll": S.ForKind.UNROLLED,
    "thread_binding": S.ForKind.THREAD_BINDING,
}
_ITER = {"spatial": E.IterType.SPATIAL, "reduce": E.IterType.REDUCE, "opaque": E.IterType.OPAQUE}
_REMAP = {"S": E.IterType.SPATIAL, "R": E.IterType.REDUCE, "O": E.IterType.OPAQUE}


@dataclass
class BlockFrame:
    """What a `with T.block(...)` collects before its `Block` is built.

    Example:
        >>> frame = BlockFrame("C")
        >>> frame.name, frame.iter_vars, frame.init is None
        ('C', [], True)
    """

    name: str
    iter_vars: list[E.IterVar] = field(default_factory=list)
    values: list[E.PrimExpr] = field(default_factory=list)
    reads: tuple[BufferRegion, ...] | None = None
    writes: tuple[BufferRegion, ...] | None = None
    predicate: E.PrimExpr | None = None
    annotations: dict[str, Any] = field(default_factory=dict)
    alloc: list[Buffer] = field(default_factory=list)
    match: list[S.MatchBufferRegion] = field(default_factory=list)
    init: S.Stmt | None = None


@dataclass
class FuncFrame:
    """What a function body collects: attributes and root-level `T.alloc_buffer`s.

    Example:
        >>> FuncFrame().attrs, FuncFrame().alloc
        ({}, [])
    """

    attrs: dict[str, Any] = field(default_factory=dict)
    alloc: list[Buffer] = field(default_factory=list)
    param_buffers: dict[int, Buffer] = field(default_factory=dict)
    """TVM's older style: `A = T.match_buffer(a, ...)` of a `T.handle` parameter `a`."""


class TIRStmtParser(TIRExprEvaluator):
    """Parse statement lists into TIR statements.

    Example:
        >>> from unity.script import tir as T
        >>> from unity.script.parser.errors import Source
        >>> parser = TIRStmtParser(Source("", "<s>"), {"T": T})
        >>> print(parser.parse_stmts(ast.parse("x: T.int32 = 3\\nT.evaluate(x)").body).script())
        x: T.int32 = 3
        T.evaluate(x)
    """

    def __init__(self, source: Any, env: Any) -> None:
        super().__init__(source, env)
        self.frames: list[BlockFrame | FuncFrame] = [FuncFrame()]
        self.loop_doms: dict[int, tuple[E.PrimExpr, E.PrimExpr]] = {}

    def parse_stmts(self, stmts: list[ast.stmt]) -> S.Stmt:
        """Parse a statement list (an empty one is `T.evaluate(0)`).

        Example:
            >>> from unity.script import tir as T
            >>> from unity.script.parser.errors import Source
            >>> print(TIRStmtParser(Source("", "<s>"), {"T": T}).parse_stmts([]).script())
            T.evaluate(0)
        """
        out: list[S.Stmt] = []
        for i, node in enumerate(stmts):
            method = getattr(self, f"_parse_{type(node).__name__}", None)
            if method is None:
                raise self.error(
                    node, f"unsupported statement in a TIR script: {type(node).__name__}"
                )
            result, consumed_rest = method(node, stmts[i + 1 :])
            if result is not None:
                out.append(
                    result if result.span is not None else result.replace(span=self.span(node))
                )
            if consumed_rest:
                break
        return tir.seq(*out) if out else S.Evaluate(tir.const(0))

    def span(self, node: ast.AST) -> Span:
        """Where `node` is in the user's file (1-based lines, 0-based columns).

        Example:
            >>> from unity.script.parser.errors import Source
            >>> parser = TIRStmtParser(Source("x", "m.py"), {})
            >>> parser.span(ast.parse("x").body[0])
            Span(source_name='m.py', line=1, column=0, end_line=1, end_column=1)
        """
        src, indent = self.source, self.source.indent
        line, col = getattr(node, "lineno", 1), getattr(node, "col_offset", 0)
        end_line, end_col = (
            getattr(node, "end_lineno", line) or line,
            getattr(node, "end_col_offset", col) or col,
        )
        return Span(
            src.filename,
            line + src.line_offset,
            col + indent,
            end_line + src.line_offset,
            end_col + indent,
        )

    # -- simple statements ------------------------------------------------------------
    def _parse_Pass(self, node: ast.Pass, rest: list[ast.stmt]) -> tuple[None, bool]:
        return None, False

    def _parse_Expr(self, node: ast.Expr, rest: list[ast.stmt]) -> tuple[S.Stmt | None, bool]:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None, False  # a docstring
        value = self.eval(node.value)
        if isinstance(value, S.Stmt):
            return value, False
        if isinstance(value, spec.Directive):
            self._directive(node, value)
            return None, False
        if isinstance(value, E.PrimExpr):
            return S.Evaluate(value), False
        raise self.error(
            node, f"this expression does not make a statement (it gives a {type(value).__name__})"
        )

    def _directive(self, node: ast.AST, d: spec.Directive) -> None:
        frame = self.frames[-1]
        if d.kind == "func_attr":
            if not isinstance(frame, FuncFrame):
                raise self.error(node, "T.func_attr belongs at the top of the function body")
            frame.attrs.update(d.payload)
            return
        if not isinstance(frame, BlockFrame):
            raise self.error(node, f"T.{d.kind} belongs inside a `with T.block(...)`")
        if d.kind in ("reads", "writes"):
            regions = tuple(self._region(node, r) for r in _flatten(d.payload))
            setattr(frame, d.kind, regions)
        elif d.kind == "where":
            frame.predicate = tir.const(d.payload)
        else:
            frame.annotations.update(d.payload)

    def _region(self, node: ast.AST, value: Any) -> BufferRegion:
        if isinstance(value, BufferRegion):
            return value
        if isinstance(value, E.BufferLoad):
            return BufferRegion.from_point(value.buffer, value.indices)
        if isinstance(value, Buffer):
            return BufferRegion.full(value)
        raise self.error(
            node, f"expected a buffer region such as A[vi, 0:4], got a {type(value).__name__}"
        )

    def _parse_Assign(self, node: ast.Assign, rest: list[ast.stmt]) -> tuple[S.Stmt | None, bool]:
        if len(node.targets) != 1:
            raise self.error(node, "chained assignment is not supported in a script")
        target = node.targets[0]
        if isinstance(target, ast.Subscript):
            return self._store(node.value, target, self.eval(node.value)), False
        value = self.eval(node.value)
        if isinstance(target, ast.Name) and isinstance(value, spec.RemapSpec):
            target = ast.copy_location(ast.Tuple([target], ast.Store()), target)
        if isinstance(target, ast.Tuple):
            if not isinstance(value, spec.RemapSpec):
                raise self.error(node, "only `vi, vj = T.axis.remap(...)` may assign several names")
            self._remap(node, target, value)
            return None, False
        if not isinstance(target, ast.Name):
            raise self.error(target, "unsupported assignment target")
        return self._assign_name(node, target.id, value, rest)

    def _assign_name(
        self, node: ast.AST, name: str, value: Any, rest: list[ast.stmt]
    ) -> tuple[S.Stmt | None, bool]:
        if isinstance(value, spec.BufferSpec):
            self._declare_buffer(node, name, value)
            return None, False
        if isinstance(value, spec.VarSpec):
            self.define(name, E.Var(name, value.dtype))
            return None, False
        if isinstance(value, spec.AxisSpec):
            self._axis(node, name, value)
            return None, False
        if isinstance(value, E.PrimExpr | int | float) and not isinstance(value, bool):
            value = tir.const(value)
            return self._let(node, E.Var(name, value.dtype), value, rest), True
        self.define(name, value)  # a script-level constant (a buffer alias, a tuple, ...)
        return None, False

    def _parse_AnnAssign(self, node: ast.AnnAssign, rest: list[ast.stmt]) -> tuple[S.Stmt, bool]:
        from unity.script import tir as T

        annotation = self.eval(node.annotation)
        if (
            not isinstance(node.target, ast.Name)
            or not isinstance(annotation, T.DType)
            or node.value is None
        ):
            raise self.error(node, "expected a typed let such as `x: T.int32 = value`")
        value = self.typed_value(
            node.value, self.eval(node.value), annotation.name, f"variable {node.target.id}"
        )
        return self._let(node, E.Var(node.target.id, annotation.name), value, rest), True

    def typed_value(self, node: ast.AST, value: Any, dtype: str, what: str) -> E.PrimExpr:
        """`value` as `dtype`: Python literals convert, expressions must already match.

        Example:
            >>> from unity.script.parser.errors import Source
            >>> parser = TIRStmtParser(Source("", "<s>"), {})
            >>> parser.typed_value(ast.parse("3").body[0], 3, "int64", "variable x").dtype
            'int64'
        """
        if not isinstance(value, E.PrimExpr):
            try:
                return tir.const(value, dtype)
            except (TypeError, ValueError) as err:
                raise self.error(node, f"cannot use {value!r} as {dtype}: {err}") from None
        if value.dtype != dtype:
            raise self.error(
                node,
                f"{what} has dtype {dtype} but the value has dtype {value.dtype}; "
                f'convert it with T.Cast("{dtype}", ...)',
            )
        return value

    def _let(self, node: ast.AST, var: E.Var, value: E.PrimExpr, rest: list[ast.stmt]) -> S.Stmt:
        with self.scope():
            self.define(var.name, var)
            body = self.parse_stmts(rest)
        return S.LetStmt(var, value, body)

    def _store(self, node: ast.AST, target: ast.Subscript, value: Any) -> S.BufferStore:
        load = self.eval(target)
        if not isinstance(load, E.BufferLoad):
            raise self.error(target, f"{ast.unparse(target.value)} is not a buffer element")
        value = self.typed_value(node, value, load.dtype, f"buffer {load.buffer.name}")
        return S.BufferStore(load.buffer, value, load.indices)

    def _parse_AugAssign(self, node: ast.AugAssign, rest: list[ast.stmt]) -> tuple[S.Stmt, bool]:
        if not isinstance(node.target, ast.Subscript):
            raise self.error(node, "augmented assignment works on buffer elements only")
        binop = ast.BinOp(
            left=ast.Subscript(node.target.value, node.target.slice, ast.Load()),
            op=node.op,
            right=node.value,
        )
        ast.copy_location(binop, node)
        ast.fix_missing_locations(binop)
        return self._store(node, node.target, self.eval(binop)), False

    def _parse_Assert(self, node: ast.Assert, rest: list[ast.stmt]) -> tuple[S.Stmt, bool]:
        cond = tir.const(self.eval(node.test))
        message = self.eval(node.msg) if node.msg is not None else ""
        if not isinstance(message, str):
            raise self.error(node.msg, "an assert message must be a string")
        return S.AssertStmt(cond, message, self.parse_stmts(rest)), True

    # -- compound statements ----------------------------------------------------------
    def _parse_If(self, node: ast.If, rest: list[ast.stmt]) -> tuple[S.Stmt | None, bool]:
        cond = self.eval(node.test)
        if isinstance(cond, bool):  # decided while parsing, like a Python `if`
            chosen = node.body if cond else node.orelse
            return (self.parse_stmts(chosen) if chosen else None), False
        with self.scope():
            then = self.parse_stmts(node.body)
        with self.scope():
            other = self.parse_stmts(node.orelse) if node.orelse else None
        return S.IfThenElse(tir.const(cond), then, other), False

    def _parse_While(self, node: ast.While, rest: list[ast.stmt]) -> tuple[S.Stmt, bool]:
        if node.orelse:
            raise self.error(node, "`while ... else` is not supported in a script")
        cond = tir.const(self.eval(node.test))
        with self.scope():
            return S.While(cond, self.parse_stmts(node.body)), False

    def _parse_For(self, node: ast.For, rest: list[ast.stmt]) -> tuple[S.Stmt, bool]:
        if node.orelse:
            raise self.error(node, "`for ... else` is not supported in a script")
        it = self.eval(node.iter)
        names = (
            [t.id for t in node.target.elts if isinstance(t, ast.Name)]
            if isinstance(node.target, ast.Tuple)
            else [node.target.id]
            if isinstance(node.target, ast.Name)
            else []
        )
        if isinstance(it, spec.GridSpec):
            loops = [spec.LoopSpec("serial", (e,)) for e in it.extents]
        elif isinstance(it, spec.LoopSpec):
            loops = [it]
        else:
            raise self.error(
                node.iter,
                "a loop iterates over T.serial / T.parallel / T.vectorized / T.unroll / "
                "T.thread_binding / T.grid",
            )
        if len(names) != len(loops):
            raise self.error(
                node.target, f"{len(loops)} loop variable(s) expected, got {len(names)}"
            )
        headers = [self._loop_header(node.iter, name, loop) for name, loop in zip(names, loops)]
        with self.scope():
            for var, _, _, _ in headers:
                self.define(var.name, var)
            body = self.parse_stmts(node.body)
        for var, lo, ext, loop in reversed(headers):
            body = S.For(
                var, lo, ext, _KINDS[loop.kind], body, loop.thread, dict(loop.annotations or {})
            )
        return body, False

    def _loop_header(
        self, node: ast.AST, name: str, loop: spec.LoopSpec
    ) -> tuple[E.Var, E.PrimExpr, E.PrimExpr, Any]:
        if len(loop.args) == 1:
            ext = tir.const(loop.args[0])
            lo = tir.const(0, ext.dtype)
        elif len(loop.args) == 2:
            lo, hi = E._promote(*loop.args)
            ext = extent_between(lo, hi)
        else:
            raise self.error(
                node,
                f"T.{loop.kind} takes (extent) or (start, stop), got {len(loop.args)} arguments",
            )
        if not dt.is_integer(ext.dtype):
            raise self.error(node, f"a loop extent must be an integer, got {ext.dtype}")
        var = E.Var(name, ext.dtype)
        self.loop_doms[id(var)] = (lo, ext)
        return var, lo, ext, loop

    def _parse_With(self, node: ast.With, rest: list[ast.stmt]) -> tuple[S.Stmt | None, bool]:
        if len(node.items) != 1:
            raise self.error(node, "a `with` statement in a script takes one item")
        item = node.items[0]
        ctx = self.eval(item.context_expr)
        name = item.optional_vars.id if isinstance(item.optional_vars, ast.Name) else None
        if isinstance(ctx, spec.BlockSpec):
            return self._block(node, ctx), False
        if isinstance(ctx, spec.InitSpec):
            frame = self.frames[-1]
            if not isinstance(frame, BlockFrame):
                raise self.error(node, "`with T.init():` belongs inside a block")
            with self.scope():
                frame.init = self.parse_stmts(node.body)
            return None, False
        if isinstance(ctx, spec.AssertSpec):
            with self.scope():
                return S.AssertStmt(
                    tir.const(ctx.condition), ctx.message, self.parse_stmts(node.body)
                ), False
        if name is None:
            raise self.error(node, "this `with` needs a name: `with ... as x:`")
        if isinstance(ctx, spec.LetSpec):
            value = tir.const(ctx.value)
            return self._let(node, E.Var(name, ctx.dtype or value.dtype), value, node.body), False
        if isinstance(ctx, spec.BufferSpec) and ctx.kind == "allocate":
            buf = self.make_buffer(node, name, ctx)
            with self.scope():
                self.define(name, buf)
                return S.Allocate(buf, self.parse_stmts(node.body)), False
        raise self.error(item.context_expr, "unsupported `with` in a TIR script")

    # -- buffers and blocks -----------------------------------------------------------
    def make_buffer(self, node: ast.AST, name: str, s: spec.BufferSpec) -> Buffer:
        """Build the `Buffer` that `s` describes.

        Example:
            >>> from unity.script import tir as T
            >>> from unity.script.parser.errors import Source
            >>> parser = TIRStmtParser(Source("", "<s>"), {})
            >>> A = parser.make_buffer(ast.parse("A").body[0], "A", T.alloc_buffer((4,), "float16"))
            >>> A.name, A.dtype, A.shape[0].value
            ('A', 'float16', 4)
        """
        shape = s.shape if isinstance(s.shape, tuple | list) else (s.shape,)
        data = s.data.data if isinstance(s.data, Buffer) else s.data
        if data is None:
            data = E.Var(name, "handle")
        try:
            strides = tuple(tir.const(x) for x in s.strides)
            offset = None if s.elem_offset is None else tir.const(s.elem_offset)
            return Buffer(
                data,
                tuple(tir.const(d) for d in shape),
                dt.check(s.dtype),
                name,
                strides,
                offset,
                s.scope,
            )
        except (TypeError, ValueError) as err:
            raise self.error(node, f"bad buffer {name}: {err}") from None

    def _declare_buffer(self, node: ast.AST, name: str, s: spec.BufferSpec) -> None:
        buf = self.make_buffer(node, name, s)
        frame = self.frames[-1]
        if s.kind == "alloc":
            frame.alloc.append(buf)
        elif s.kind == "match" and isinstance(frame, FuncFrame):
            if not (isinstance(s.source, E.Var) and s.source.dtype == "handle"):
                raise self.error(
                    node, "at function level, T.match_buffer takes a T.handle parameter"
                )
            frame.param_buffers[id(s.source)] = buf
        elif s.kind == "match":
            assert isinstance(frame, BlockFrame)
            frame.match.append(S.MatchBufferRegion(buf, self._region(node, s.source)))
        elif s.kind == "allocate":
            raise self.error(
                node, "T.allocate_buffer is used as `with T.allocate_buffer(...) as name:`"
            )
        self.define(name, buf)

    def _axis(self, node: ast.AST, name: str, a: spec.AxisSpec) -> None:
        frame = self._block_frame(node, "T.axis")
        if isinstance(a.dom, tuple | list) and len(a.dom) == 2:
            lo, hi = E._promote(*a.dom)
            dom = E.Range(lo, extent_between(lo, hi))
        else:
            ext = tir.const(a.dom)
            dom = E.Range(tir.const(0, ext.dtype), ext)
        var = E.Var(name, a.dtype or dom.extent.dtype)
        frame.iter_vars.append(E.IterVar(var, dom, _ITER[a.kind]))
        frame.values.append(
            tir.const(a.value, var.dtype) if not isinstance(a.value, E.PrimExpr) else a.value
        )
        self.define(name, var)

    def _remap(self, node: ast.AST, target: ast.Tuple, r: spec.RemapSpec) -> None:
        frame = self._block_frame(node, "T.axis.remap")
        names = [t.id if isinstance(t, ast.Name) else "" for t in target.elts]
        if not (len(names) == len(r.kinds) == len(r.values)):
            raise self.error(
                node,
                f"T.axis.remap: {len(names)} names, {len(r.kinds)} kinds, {len(r.values)} loops",
            )
        for name, kind, value in zip(names, r.kinds, r.values):
            dom = self.loop_doms.get(id(value))
            if dom is None or kind not in _REMAP:
                raise self.error(
                    node,
                    f"T.axis.remap needs enclosing loop variables and kinds S/R/O; bad {name!r}",
                )
            var = E.Var(name, value.dtype)
            frame.iter_vars.append(E.IterVar(var, E.Range(*dom), _REMAP[kind]))
            frame.values.append(value)
            self.define(name, var)

    def _block_frame(self, node: ast.AST, what: str) -> BlockFrame:
        frame = self.frames[-1]
        if not isinstance(frame, BlockFrame):
            raise self.error(node, f"{what} belongs inside a `with T.block(...)`")
        return frame

    def _block(self, node: ast.With, b: spec.BlockSpec) -> S.BlockRealize:
        frame = BlockFrame(b.name)
        self.frames.append(frame)
        try:
            with self.scope():
                body = self.parse_stmts(node.body)
        finally:
            self.frames.pop()
        reads, writes = frame.reads, frame.writes
        if reads is None or writes is None:
            inferred_reads, inferred_writes = infer_regions(
                body, frame.init, frame.alloc, frame.match
            )
            reads = inferred_reads if reads is None else reads
            writes = inferred_writes if writes is None else writes
        block = S.Block(
            tuple(frame.iter_vars),
            reads,
            writes,
            b.name,
            body,
            frame.init,
            tuple(frame.alloc),
            tuple(frame.match),
            frame.annotations,
        )
        predicate = frame.predicate if frame.predicate is not None else tir.const(True)
        return S.BlockRealize(tuple(frame.values), predicate, block)


def _flatten(items: Any) -> list[Any]:
    out: list[Any] = []
    for item in items:
        out.extend(_flatten(item) if isinstance(item, list | tuple) else [item])
    return out
