"""Print TIR statements, buffers and `PrimFunc`s as TVM-style script.

Registered with `unity.ir.printer` when `unity.tir` is imported, so `f.script()`,
`repr(stmt)` and `mod.script()` work.  Choices the parser mirrors:

- Parameter buffers: `A: T.Buffer((n, 128), "float32")` with each symbolic dim as a
  string (`"n"`, an int32 `tir.Var`), or `T.int64("n")` / `T.SizeVar("n", "int32")`.
- Buffers that alias another buffer's memory are declared at the top of the scope that
  defines that memory: `A_flat = T.Buffer((1024,), "float32", data=A.data)`.
- `Allocate` prints as `with T.allocate_buffer((64,), "float32", scope="local") as B:`.
- `LetStmt` / `AssertStmt` print flat (`x: T.int32 = v` / `assert c, "msg"`, the body
  following at the same indentation) when they end their statement list, else as
  `with T.LetStmt(v) as x:` / `with T.Assert(c, "msg"):`.
- A root block named "root" that only holds `alloc_buffers` prints as those
  `T.alloc_buffer` lines at function level (the parser re-creates the root block).
- Variables used but bound nowhere (ill-formed IR) are declared at the top of the
  function as `n = T.int32()`, so even such a function parses back.
- Underlined statements are marked on their first line.

Example:
    >>> from unity import tir
    >>> A = tir.decl_buffer((4,), "float32", "A")
    >>> i = tir.Var("i")
    >>> print(tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL,
    ...               tir.BufferStore(A, A[i] + 1.0, (i,))).script())
    for i in T.serial(4):
        A[i] = A[i] + T.float32(1.0)
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from unity.ir.printer import Line, NameTable, Text, register_printer, render
from unity.tir import expr as E
from unity.tir import stmt as S
from unity.tir.buffer import Buffer, BufferRegion
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprVisitor
from unity.tir.printer_expr import ExprPrinter, quote

_AXIS = {E.IterType.SPATIAL: "spatial", E.IterType.REDUCE: "reduce", E.IterType.OPAQUE: "opaque"}
_REMAP = {E.IterType.SPATIAL: "S", E.IterType.REDUCE: "R", E.IterType.OPAQUE: "O"}
_FOR = {
    S.ForKind.SERIAL: "T.serial",
    S.ForKind.PARALLEL: "T.parallel",
    S.ForKind.VECTORIZED: "T.vectorized",
    S.ForKind.UNROLLED: "T.unroll",
    S.ForKind.THREAD_BINDING: "T.thread_binding",
}


class _BufferScopes(StmtExprVisitor):
    """Find buffers used but never defined, keyed by the scope that defines their memory."""

    def __init__(self, params: tuple[Buffer | E.Var, ...]) -> None:
        self.owner: dict[int, object] = {}  # data var id -> defining stmt, or None (function)
        self.defined: set[int] = set()
        self.used: dict[int, Buffer] = {}
        self.used_vars: dict[int, E.Var] = {}
        self.bound_vars: set[int] = set()
        for p in params:
            self.owner[id(p.data if isinstance(p, Buffer) else p)] = None
            self.defined.add(id(p))
            self.bound_vars.add(id(p))

    def visit_buffer(self, buffer: Buffer) -> None:
        self.used.setdefault(id(buffer), buffer)
        self.bound_vars.add(id(buffer.data))

    def visit_var_(self, var: E.Var) -> None:
        self.used_vars.setdefault(id(var), var)

    def visit_for_(self, stmt: S.For) -> None:
        self.bound_vars.add(id(stmt.loop_var))
        self.visit_stmt_(stmt)

    def visit_let_stmt_(self, stmt: S.LetStmt) -> None:
        self.bound_vars.add(id(stmt.var))
        self.visit_stmt_(stmt)

    def visit_let_(self, expr: E.Let) -> None:
        self.bound_vars.add(id(expr.var))
        self.visit_prim_expr_(expr)

    def free_vars(self) -> list[E.Var]:
        """Variables used but bound nowhere (ill-formed IR still prints and parses back)."""
        return [v for key, v in self.used_vars.items() if key not in self.bound_vars]

    def visit_allocate_(self, stmt: S.Allocate) -> None:
        self._define(stmt.buffer, stmt)
        self.visit_stmt_(stmt)

    def visit_block_(self, block: S.Block) -> None:
        self.bound_vars.update(id(iv.var) for iv in block.iter_vars)
        for buf in block.alloc_buffers:
            self._define(buf, block)
        for match in block.match_buffers:
            self._define(match.buffer, block)
        self.visit_stmt_(block)

    def _define(self, buffer: Buffer, owner: object) -> None:
        self.defined.add(id(buffer))
        self.owner.setdefault(id(buffer.data), owner)

    def aliases(self) -> dict[int | None, list[Buffer]]:
        """Undefined buffers grouped by the id of the stmt that must declare them."""
        out: dict[int | None, list[Buffer]] = {}
        for key, buf in self.used.items():
            if key not in self.defined:
                owner = self.owner.get(id(buf.data))
                out.setdefault(None if owner is None else id(owner), []).append(buf)
        return out


class TIRPrinter(ExprPrinter):
    """Prints statements into `self.lines`; see the module docstring for the syntax.

    Example:
        >>> from unity import tir
        >>> p = TIRPrinter()
        >>> p.stmt(tir.Evaluate(tir.const(0)), 0)
        >>> p.render()
        'T.evaluate(0)'
    """

    def __init__(self, underline: Collection[object] = ()) -> None:
        super().__init__(NameTable(), underline)
        self.lines: list[Line] = []
        self.loops: dict[int, S.For] = {}
        self.aliases: dict[int | None, list[Buffer]] = {}

    def emit(self, indent: int, text: Text | str, node: object = None) -> None:
        """Add one line, marked when `node` is underlined.

        Example:
            >>> p = TIRPrinter()
            >>> p.emit(1, "pass")
            >>> p.render()
            '    pass'
        """
        text = Text(text) if isinstance(text, str) else text
        self.lines.append(Line(indent, text.marked(node is not None and id(node) in self.marked)))

    def render(self) -> str:
        """The printed lines with underlines.

        Example:
            >>> p = TIRPrinter()
            >>> p.emit(0, "a = 1")
            >>> p.emit(0, "b = 2")
            >>> print(p.render())
            a = 1
            b = 2
        """
        return render(self.lines)

    # -- buffers ----------------------------------------------------------------------
    def buffer_args(self, buf: Buffer, data: bool = False) -> Text:
        """`(shape), "dtype"` plus keyword arguments for non-default fields.

        Example:
            >>> from unity import tir
            >>> B = tir.decl_buffer((4,), "float32", "B", scope="shared")
            >>> TIRPrinter().buffer_args(B).text
            '(4,), "float32", scope="shared"'
        """
        shape = [self._dim(d) for d in buf.shape]
        text = (
            "("
            + Text.join(", ", shape)
            + ("," if len(shape) == 1 else "")
            + f"), {quote(buf.dtype)}"
        )
        if data:
            text = text + ", data=" + self.expr(buf.data)
        if buf.strides:
            strides = [self._dim(s) for s in buf.strides]
            text = (
                text
                + ", strides=("
                + Text.join(", ", strides)
                + ("," if len(strides) == 1 else "")
                + ")"
            )
        if buf.elem_offset is not None:
            text = text + ", elem_offset=" + self._dim(buf.elem_offset)
        if buf.scope != "global":
            text = text + f", scope={quote(buf.scope)}"
        return text

    def _dim(self, d: E.PrimExpr) -> Text:
        if self.param_mode and type(d) is E.Var and d.dtype == "int32":
            return Text(quote(self.var_name(d))).marked(id(d) in self.marked)
        return self.expr(d)

    def declare(self, indent: int, buf: Buffer, fn: str, data: bool = False) -> None:
        """Print `name = T.fn(args)` and make `name.data` refer to `buf.data`.

        Example:
            >>> from unity import tir
            >>> p = TIRPrinter()
            >>> p.declare(0, tir.decl_buffer((2, 3), "int8", "C"), "T.alloc_buffer")
            >>> p.render()
            'C = T.alloc_buffer((2, 3), "int8")'
        """
        args = self.buffer_args(buf, data)
        self.buffer_data.setdefault(id(buf.data), buf)
        self.emit(indent, self.buffer_name(buf) + f" = {fn}(" + args + ")", buf)

    def declare_aliases(self, indent: int, owner: object) -> None:
        """Declare the aliasing buffers whose memory `owner` defines.

        Example:
            >>> p = TIRPrinter()
            >>> p.declare_aliases(0, None)  # no aliases recorded: prints nothing
            >>> p.render()
            ''
        """
        for buf in self.aliases.pop(None if owner is None else id(owner), []):
            has_owner = id(buf.data) in self.buffer_data or self.names.has(buf.data)
            self.declare(indent, buf, "T.Buffer", data=has_owner)

    # -- statements -------------------------------------------------------------------
    def stmt(self, s: S.Stmt, indent: int, last: bool = True) -> None:
        """Print `s`; `last` says whether it ends its statement list.

        Example:
            >>> from unity import tir
            >>> i = tir.Var("i")
            >>> p = TIRPrinter()
            >>> loop = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, tir.Evaluate(i))
            >>> p.stmt(loop, 0)
            >>> print(p.render())
            for i in T.serial(4):
                T.evaluate(i)
        """
        method = getattr(self, f"_stmt_{type(s).__name__}", None)
        if method is None:
            raise TypeError(f"the TIR printer does not know {type(s).__name__}")
        method(s, indent, last)

    def _stmt_SeqStmt(self, s: S.SeqStmt, indent: int, last: bool) -> None:
        for i, child in enumerate(s.seq):
            self.stmt(child, indent, last and i == len(s.seq) - 1)

    def _stmt_BufferStore(self, s: S.BufferStore, indent: int, last: bool) -> None:
        target = self.buffer_name(s.buffer) + "[" + Text.join(", ", map(self.expr, s.indices)) + "]"
        self.emit(indent, target + " = " + self.expr(s.value), s)

    def _stmt_Evaluate(self, s: S.Evaluate, indent: int, last: bool) -> None:
        self.emit(indent, "T.evaluate(" + self.expr(s.value) + ")", s)

    def _stmt_For(self, s: S.For, indent: int, last: bool) -> None:
        grid = self._grid(s)
        if len(grid) > 1:
            names = ", ".join(self.var_name(f.loop_var) for f in grid)
            self.emit(
                indent,
                f"for {names} in T.grid("
                + Text.join(", ", [self.expr(f.extent) for f in grid])
                + "):",
                s,
            )
        else:
            self.emit(indent, f"for {self.var_name(s.loop_var)} in " + self._loop_range(s) + ":", s)
        for f in grid:
            self.loops[id(f.loop_var)] = f
        self.stmt(grid[-1].body, indent + 1)

    def _grid(self, s: S.For) -> list[S.For]:
        loops = [s]
        while (
            _plain_serial(loops[-1])
            and isinstance(loops[-1].body, S.For)
            and _plain_serial(loops[-1].body)
        ):
            loops.append(loops[-1].body)
        return loops if len(loops) > 1 else [s]

    def _loop_range(self, s: S.For) -> Text:
        args = self.stop(s.min, s.extent)
        if not (isinstance(s.min, E.IntImm) and s.min.value == 0 and s.min.dtype == s.extent.dtype):
            args = self.expr(s.min) + ", " + args
        if s.thread_binding is not None:
            args = args + f", thread={quote(s.thread_binding)}"
        if s.annotations:
            args = args + ", annotations=" + self.value(dict(s.annotations))
        return _FOR[s.kind] + "(" + args + ")"

    def _stmt_While(self, s: S.While, indent: int, last: bool) -> None:
        self.emit(indent, "while " + self.expr(s.condition) + ":", s)
        self.stmt(s.body, indent + 1)

    def _stmt_IfThenElse(self, s: S.IfThenElse, indent: int, last: bool) -> None:
        self.emit(indent, "if " + self.expr(s.condition) + ":", s)
        self.stmt(s.then_case, indent + 1)
        if s.else_case is not None:
            self.emit(indent, "else:")
            self.stmt(s.else_case, indent + 1)

    def _stmt_LetStmt(self, s: S.LetStmt, indent: int, last: bool) -> None:
        value = self.expr(s.value)
        name = self.var_name(s.var)
        if last or s.var.dtype != s.value.dtype:
            self.emit(indent, f"{name}: T.{s.var.dtype} = " + value, s)
            self.stmt(s.body, indent, last)
            return
        self.emit(indent, "with T.LetStmt(" + value + f") as {name}:", s)
        self.stmt(s.body, indent + 1)

    def _stmt_AssertStmt(self, s: S.AssertStmt, indent: int, last: bool) -> None:
        cond, msg = self.expr(s.condition), quote(s.message)
        if last:
            self.emit(indent, "assert " + cond + f", {msg}", s)
            self.stmt(s.body, indent, last)
            return
        self.emit(indent, "with T.Assert(" + cond + f", {msg}):", s)
        self.stmt(s.body, indent + 1)

    def _stmt_Allocate(self, s: S.Allocate, indent: int, last: bool) -> None:
        self.buffer_data.setdefault(id(s.buffer.data), s.buffer)
        args = self.buffer_args(s.buffer)
        self.emit(
            indent, "with T.allocate_buffer(" + args + f") as {self.buffer_name(s.buffer)}:", s
        )
        self.declare_aliases(indent + 1, s)
        self.stmt(s.body, indent + 1)

    def _stmt_BlockRealize(self, s: S.BlockRealize, indent: int, last: bool) -> None:
        block = s.block
        marked = id(block) in self.marked
        self.emit(indent, f"with T.block({quote(block.name_hint)}):", s if not marked else block)
        inner = indent + 1
        self._axes(s, inner)
        if not (isinstance(s.predicate, E.IntImm) and s.predicate.value == 1):
            self.emit(inner, "T.where(" + self.expr(s.predicate) + ")")
        self._block_header(block, inner)
        self.stmt(block.body, inner)

    def _block_header(self, block: S.Block, indent: int) -> None:
        self.emit(indent, "T.reads(" + Text.join(", ", map(self.region, block.reads)) + ")")
        self.emit(indent, "T.writes(" + Text.join(", ", map(self.region, block.writes)) + ")")
        if block.annotations:
            self.emit(indent, "T.block_attr(" + self.value(dict(block.annotations)) + ")")
        for buf in block.alloc_buffers:
            self.declare(indent, buf, "T.alloc_buffer")
        for match in block.match_buffers:
            self.buffer_data.setdefault(id(match.buffer.data), match.buffer)
            args = self.region(match.source) + ", " + self.buffer_args(match.buffer)
            self.emit(
                indent, self.buffer_name(match.buffer) + " = T.match_buffer(" + args + ")", match
            )
        self.declare_aliases(indent, block)
        if block.init is not None:
            self.emit(indent, "with T.init():")
            self.stmt(block.init, indent + 1)

    def _axes(self, s: S.BlockRealize, indent: int) -> None:
        pairs = list(zip(s.block.iter_vars, s.iter_values))
        if len(pairs) > 1 and all(self._remappable(iv, value) for iv, value in pairs):
            names = ", ".join(self.var_name(iv.var) for iv, _ in pairs)
            kinds = "".join(_REMAP[iv.iter_type] for iv, _ in pairs)
            values = ", ".join(self.var_name(v) for _, v in pairs if isinstance(v, E.Var))
            self.emit(indent, f"{names} = T.axis.remap({quote(kinds)}, [{values}])")
            return
        for iv, value in pairs:
            dom = iv.dom
            extent = self.expr(dom.extent)
            if not (
                isinstance(dom.min, E.IntImm)
                and dom.min.value == 0
                and dom.min.dtype == dom.extent.dtype
            ):
                extent = "(" + self.expr(dom.min) + ", " + self.stop(dom.min, dom.extent) + ")"
            line = (
                f"{self.var_name(iv.var)} = T.axis.{_AXIS[iv.iter_type]}("
                + extent
                + ", "
                + self.expr(value)
                + ")"
            )
            self.emit(indent, line, iv)

    def _remappable(self, iv: E.IterVar, value: E.PrimExpr) -> bool:
        loop = self.loops.get(id(value))
        if loop is None or iv.var.dtype != value.dtype or id(iv) in self.marked:
            return False
        return (
            _same_const(iv.dom.min, loop.min)
            and (iv.dom.extent is loop.extent or _same_const(iv.dom.extent, loop.extent))
            and _same_const(loop.min, E.IntImm(loop.min.dtype, 0))
        )

    # -- functions --------------------------------------------------------------------
    def func(self, f: PrimFunc, name: str) -> None:
        """Print `f` as `@T.prim_func def name(...):`.

        Example:
            >>> from unity import tir
            >>> p = TIRPrinter()
            >>> p.func(tir.PrimFunc([], tir.Evaluate(tir.const(0))), "main")
            >>> print(p.render())
            @T.prim_func
            def main():
                T.evaluate(0)
        """
        scopes = _BufferScopes(f.params)
        scopes.bound_vars.update(id(v) for v in f.shape_vars())
        scopes.visit_stmt(f.body)
        self.aliases = scopes.aliases()
        for p in f.params:
            if isinstance(p, Buffer):
                self.buffer_name(p)
                self.buffer_data[id(p.data)] = p
            else:
                self.var_name(p)
        self.param_mode = True
        params = Text.join(", ", [self._param(p) for p in f.params])
        self.param_mode = False
        self.emit(0, "@T.prim_func")
        self.emit(0, f"def {name}(" + params + "):", f)
        if f.attrs:
            self.emit(1, "T.func_attr(" + self.value(dict(f.attrs)) + ")")
        for var in scopes.free_vars():
            self.emit(1, f"{self.var_name(var)} = T.{var.dtype}()")
        self.declare_aliases(1, None)
        body = f.body
        if _implicit_root(body):
            assert isinstance(body, S.BlockRealize)
            for buf in body.block.alloc_buffers:
                self.declare(1, buf, "T.alloc_buffer")
            self.declare_aliases(1, body.block)
            body = body.block.body
        self.stmt(body, 1)

    def _param(self, p: Buffer | E.Var) -> Text:
        if isinstance(p, E.Var):
            return Text(f"{self.var_name(p)}: T.{p.dtype}").marked(id(p) in self.marked)
        args = self.buffer_args(p)
        return (self.buffer_name(p) + ": T.Buffer(" + args + ")").marked(id(p) in self.marked)


def _plain_serial(s: S.For) -> bool:
    return (
        s.kind is S.ForKind.SERIAL
        and not s.annotations
        and s.thread_binding is None
        and isinstance(s.min, E.IntImm)
        and s.min.value == 0
        and s.min.dtype == s.extent.dtype
    )


def _same_const(a: E.PrimExpr, b: E.PrimExpr) -> bool:
    if a is b:
        return True
    return (
        isinstance(a, E.IntImm)
        and isinstance(b, E.IntImm)
        and (a.value, a.dtype) == (b.value, b.dtype)
    )


def _implicit_root(body: S.Stmt) -> bool:
    if not isinstance(body, S.BlockRealize) or body.iter_values:
        return False
    b = body.block
    plain = not (b.iter_vars or b.reads or b.writes or b.init or b.match_buffers or b.annotations)
    true = isinstance(body.predicate, E.IntImm) and body.predicate.value == 1
    return plain and true and b.name_hint == "root" and bool(b.alloc_buffers)


# -- registered entry points ------------------------------------------------------------
def print_prim_func(
    f: PrimFunc, *, underline: Collection[object] = (), name: str | None = None, **_: Any
) -> str:
    """Print a `PrimFunc` (named `name`, else its "global_symbol" attr, else "main").

    Example:
        >>> print_prim_func(func, name="add_one")  # doctest: +SKIP
    """
    printer = TIRPrinter(underline)
    printer.func(f, name or str(f.attrs.get("global_symbol", "main")))
    return printer.render()


def print_stmt(s: S.Stmt, *, underline: Collection[object] = (), **_: Any) -> str:
    """Print a statement on its own (free variables and buffers print by name).

    Example:
        >>> from unity import tir
        >>> print_stmt(tir.Evaluate(tir.const(0)))
        'T.evaluate(0)'
    """
    printer = TIRPrinter(underline)
    printer.stmt(s, 0)
    return printer.render()


def print_expr(e: E.PrimExpr, *, underline: Collection[object] = (), **_: Any) -> str:
    """Print an expression on one line (plus its underline line, if any).

    Example:
        >>> from unity import tir
        >>> print_expr(tir.Var("x", "float32") * 2.0)
        'x * T.float32(2.0)'
    """
    printer = TIRPrinter(underline)
    printer.emit(0, printer.expr(e))
    return printer.render()


def _print_other(obj: object, *, underline: Collection[object] = (), **_: Any) -> str:
    printer = TIRPrinter(underline)
    if isinstance(obj, Buffer):
        printer.declare(0, obj, "T.Buffer")
    elif isinstance(obj, BufferRegion):
        printer.emit(0, printer.region(obj))
    elif isinstance(obj, E.Range):
        printer.emit(
            0, "T.Range(" + printer.expr(obj.min) + ", " + printer.stop(obj.min, obj.extent) + ")"
        )
    elif isinstance(obj, E.IterVar):
        dom = printer.expr(obj.dom.min) + ", " + printer.stop(obj.dom.min, obj.dom.extent)
        printer.emit(
            0, f"{printer.var_name(obj.var)}: T.axis.{_AXIS[obj.iter_type]}((" + dom + "))"
        )
    elif isinstance(obj, S.MatchBufferRegion):
        args = printer.region(obj.source) + ", " + printer.buffer_args(obj.buffer)
        printer.emit(0, printer.buffer_name(obj.buffer) + " = T.match_buffer(" + args + ")")
    return printer.render()


register_printer(PrimFunc, print_prim_func)
register_printer(S.Stmt, print_stmt)
register_printer(E.PrimExpr, print_expr)
for _cls in (Buffer, BufferRegion, E.Range, E.IterVar, S.MatchBufferRegion):
    register_printer(_cls, _print_other)
