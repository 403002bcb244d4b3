"""Compile a `PrimFunc` into Python source for the reference interpreter.

Each TIR construct becomes the Python that means the same: loops become `for`
loops, buffers become flat numpy arrays (one per `data` variable, so aliases share
memory) indexed by the row-major / strided offset, scalars are numpy scalars of the
exact dtype (so float32 math rounds like float32 and int8 wraps), loop counters and
int32/int64 constants are Python ints, vectors (`Ramp`, `Broadcast`, vector loads) are
numpy arrays.  The source is `exec`'d once and cached by the caller.

Example:
    >>> from unity import tir
    >>> A = tir.decl_buffer((4,), "float32", "A")
    >>> i = tir.Var("i")
    >>> body = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL,
    ...                tir.BufferStore(A, A[i] * 2.0, (i,)))
    >>> print(compile_source(tir.PrimFunc((A,), body)).source.splitlines()[3])
        for i_1 in range(4):
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from unity.ir import dtype as dt
from unity.ir.node import Node, dispatch_table
from unity.tir import expr as E
from unity.tir import stmt as S
from unity.tir.buffer import Buffer
from unity.tir.function import PrimFunc


class InterpretError(RuntimeError):
    """An error raised while interpreting a PrimFunc (failed assert, bad IR or argument).

    Example:
        >>> isinstance(InterpretError("assert failed: n < 4"), RuntimeError)
        True
    """


@dataclass
class Compiled:
    """The generated source, its entry point and the order of its arguments.

    Example:
        >>> from unity import tir
        >>> compiled = compile_source(tir.PrimFunc((), tir.Evaluate(tir.const(0))))
        >>> isinstance(compiled, Compiled), isinstance(compiled.source, str), compiled.arg_vars
        (True, True, [])
    """

    source: str
    kernel: Callable[..., None]
    arg_vars: list[E.Var] = field(default_factory=list)
    """Variables passed to `kernel` in order: param data vars, scalar params, shape vars."""


def compile_source(func: PrimFunc) -> Compiled:
    """Compile `func` to a Python kernel taking its data/scalar/shape variables.

    Example:
        >>> from unity import tir
        >>> f = tir.PrimFunc((), tir.Evaluate(tir.const(0)))
        >>> compile_source(f).arg_vars
        []
    """
    return _Compiler(func).run()


def _wrap_int(value: int, bits: int, signed: bool) -> int:
    value &= (1 << bits) - 1
    if signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def _tdiv(a: Any, b: Any) -> Any:
    q = a // b
    if q < 0 and q * b != a:
        q += 1
    return q


def _tmod(a: Any, b: Any) -> Any:
    return a - b * _tdiv(a, b)


def _tdiv_v(a: Any, b: Any) -> Any:
    q = np.floor_divide(a, b)
    return np.where((q < 0) & (q * b != a), q + 1, q).astype(q.dtype)


def _oob(name: str, index: int) -> Any:
    raise InterpretError(f"interpret: out-of-bounds access {name}[{index}] (flat index)")


def _vcheck(flat: Any, size: int, name: str) -> Any:
    bad = (flat < 0) | (flat >= size)
    if np.any(bad):
        _oob(name, int(np.asarray(flat)[bad].flat[0]))
    return flat


_RUNTIME: dict[str, Any] = {
    "np": np, "math": math, "InterpretError": InterpretError, "_wrap_int": _wrap_int,
    "_tdiv": _tdiv, "_tmod": _tmod, "_tdiv_v": _tdiv_v, "_oob": _oob, "_vcheck": _vcheck,
}  # fmt: skip


class _Compiler:
    """Emit Python source for a PrimFunc, one visitor hook per node class."""

    def __init__(self, func: PrimFunc) -> None:
        self.func = func
        self.lines: list[str] = []
        self.depth = 1
        self.loop_depth = 0
        self.names: dict[int, str] = {}
        self.ns: dict[str, Any] = dict(_RUNTIME)
        self.consts: dict[tuple[str, Any], str] = {}
        self.layouts: dict[int, tuple[str, str, list[str] | None]] = {}
        self.storages: set[int] = set()
        self.nonneg_vars: set[int] = set()
        self.vector_select_depth = 0

    # -- names and constants ----------------------------------------------------------------
    def name(self, var: E.Var) -> str:
        """The Python identifier of `var` (created on first use)."""
        got = self.names.get(id(var))
        if got is None:
            base = "".join(c if c.isalnum() or c == "_" else "_" for c in var.name)
            base = base if base[:1].isalpha() else f"v_{base}"
            got = f"{base}_{len(self.names)}"
            self.names[id(var)] = got
        return got

    def hoist(self, kind: str, key: Any, value: Any) -> str:
        """Put `value` in the namespace once, under a fresh name."""
        got = self.consts.get((kind, key))
        if got is None:
            got = f"_{kind}{len(self.consts)}"
            self.consts[(kind, key)] = got
            self.ns[got] = value
        return got

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    # -- entry ------------------------------------------------------------------------------
    def run(self) -> Compiled:
        arg_vars: list[E.Var] = []
        for p in self.func.params:
            arg_vars.append(p.data if isinstance(p, Buffer) else p)
        for v in _layout_vars(self.func):
            self.nonneg_vars.add(id(v))  # bound from array shapes and strides
            if v not in arg_vars:
                arg_vars.append(v)
        prologue = []
        for buf in self.func.buffer_params():
            self.storages.add(id(buf.data))
            storage = self.name(buf.data)
            prologue.append(f"    n_{storage} = {storage}.shape[0]")
        self.stmt(self.func.body)
        self.emit("return None")
        header = f"def _kernel({', '.join(self.name(v) for v in arg_vars)}):"
        lines = ["# generated by unity.tir.interpreter", header, *prologue, *self.lines]
        source = "\n".join(lines) + "\n"
        exec(compile(source, "<unity.tir.interpret>", "exec"), self.ns)  # noqa: S102
        return Compiled(source, self.ns["_kernel"], arg_vars)

    # -- buffers ----------------------------------------------------------------------------
    def layout(self, buf: Buffer) -> tuple[str, str, list[str] | None]:
        """`(storage, offset code, stride codes or None for compact)` of `buf`."""
        got = self.layouts.get(id(buf))
        if got is None:
            offset = "0" if buf.elem_offset is None else self.expr(buf.elem_offset)
            strides = [self.expr(s) for s in buf.strides] if buf.strides else None
            if id(buf.data) not in self.storages:
                raise InterpretError(
                    f"interpret: buffer {buf.name} is used, but its data {buf.data.name} is "
                    "neither a parameter's nor allocated (Allocate / alloc_buffers) around the use"
                )
            got = (self.name(buf.data), offset, strides)
            self.layouts[id(buf)] = got
        return got

    def flat_index(self, buf: Buffer, indices: tuple[E.PrimExpr, ...]) -> str:
        storage, offset, strides = self.layout(buf)
        codes = [self.expr(i) for i in indices]
        if strides is None:
            flat = codes[0] if codes else "0"
            for dim, code in zip(buf.shape[1:], codes[1:]):
                flat = f"({flat}) * {self.expr(dim)} + {code}"
        else:
            flat = " + ".join(f"({c}) * ({s})" for c, s in zip(codes, strides)) or "0"
        return flat if offset == "0" else f"{offset} + {flat}"

    def access(self, buf: Buffer, indices: tuple[E.PrimExpr, ...]) -> str:
        """`storage[flat]`, bounds-checked: numpy would wrap a negative index silently."""
        storage = self.layout(buf)[0]
        flat = self.flat_index(buf, indices)
        size = f"n_{storage}"
        if not any(dt.lanes(i.dtype) > 1 for i in indices):
            if self.provably_in_range(buf, indices):
                return f"{storage}[{flat}]"  # numpy itself rejects indices past the end
            return f"{storage}[_t if 0 <= (_t := {flat}) < {size} else _oob({buf.name!r}, _t)]"
        if self.vector_select_depth:  # both sides of a vector select run: clamp, never fail
            return f"{storage}[np.clip({flat}, 0, {size} - 1)]"
        return f"{storage}[_vcheck({flat}, {size}, {buf.name!r})]"

    def provably_in_range(self, buf: Buffer, indices: tuple[E.PrimExpr, ...]) -> bool:
        """True when the flat index cannot be negative (then only the end needs checking)."""
        parts = [*indices, *buf.strides, *buf.shape]
        if buf.elem_offset is not None:
            parts.append(buf.elem_offset)
        return all(self.nonneg(p) for p in parts)

    def nonneg(self, expr: E.PrimExpr) -> bool:
        """A cheap proof that integer `expr` is >= 0 (loop vars from a non-negative min...)."""
        if isinstance(expr, E.IntImm):
            return expr.value >= 0
        if isinstance(expr, E.Var):
            return id(expr) in self.nonneg_vars or isinstance(expr, E.SizeVar)
        if isinstance(expr, (E.Add, E.Mul, E.Min, E.Div, E.Mod)):
            return self.nonneg(expr.a) and self.nonneg(expr.b)
        if isinstance(expr, E.Max):
            return self.nonneg(expr.a) or self.nonneg(expr.b)
        if isinstance(expr, E.FloorDiv):
            return self.nonneg(expr.a) and isinstance(expr.b, E.IntImm) and expr.b.value > 0
        if isinstance(expr, E.FloorMod):
            return isinstance(expr.b, E.IntImm) and expr.b.value > 0
        return False

    def note_nonneg(self, var: E.Var, value: E.PrimExpr) -> None:
        """Record that `var`, bound to `value`, is non-negative when `value` provably is."""
        if self.nonneg(value):
            self.nonneg_vars.add(id(var))

    def load(self, node: E.BufferLoad) -> str:
        return self.access(node.buffer, node.indices)

    # -- dispatch ---------------------------------------------------------------------------
    def expr(self, node: E.PrimExpr) -> str:
        hook = dispatch_table(type(self), type(node), prefix="e_")
        if hook is None:
            raise InterpretError(f"interpret: cannot evaluate a {type(node).__name__} expression")
        return hook(self, node)

    def stmt(self, node: S.Stmt) -> None:
        hook = dispatch_table(type(self), type(node), prefix="s_")
        if hook is None:
            raise InterpretError(f"interpret: cannot run a {type(node).__name__} statement")
        hook(self, node)

    from unity.tir.interpreter_exprs import (  # noqa: E402 - the expression hooks, one file apart
        e_add_, e_and_, e_broadcast_, e_buffer_load_, e_call_, e_cast_, e_cmp_op_, e_div_,
        e_float_imm_, e_floor_div_, e_floor_mod_, e_int_imm_, e_let_, e_max_, e_min_, e_mod_,
        e_mul_, e_not_, e_or_, e_ramp_, e_select_, e_string_imm_, e_sub_, e_var_,
    )  # fmt: skip
    from unity.tir.interpreter_stmts import (  # noqa: E402 - the statement hooks
        s_allocate_, s_assert_stmt_, s_block_realize_, s_buffer_store_, s_evaluate_, s_for_,
        s_if_then_else_, s_let_stmt_, s_seq_stmt_, s_while_,
    )  # fmt: skip


def _layout_vars(func: PrimFunc) -> list[E.Var]:
    """Variables bound from the arguments: shape, stride and offset vars of param buffers."""
    from unity.tir.functor import post_order_visit

    seen: dict[E.Var, None] = {}
    for buf in func.buffer_params():
        exprs = [*buf.shape, *buf.strides]
        if buf.elem_offset is not None:
            exprs.append(buf.elem_offset)
        for e in exprs:
            post_order_visit(e, lambda n: _note_var(n, seen))
    return list(seen)


def _note_var(node: Node, seen: dict[E.Var, None]) -> None:
    if isinstance(node, E.Var):
        seen.setdefault(node, None)

