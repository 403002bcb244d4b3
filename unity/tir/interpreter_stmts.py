"""Statement hooks of the interpreter's compiler: each TIR statement as Python lines.

The hooks are methods of `interpreter_compile._Compiler` (taking it as `self`) and emit
lines at the current indentation.  Blocks run their `init` when every reduction
iteration variable is at the minimum of its domain; `alloc_buffers` and `Allocate` get
fresh zeroed storage; match buffers are views (same storage, an offset and strides) of
their source region.

Example:
    >>> from unity import tir
    >>> from unity.tir.interpreter_compile import compile_source
    >>> A = tir.decl_buffer((1,), "int32", "A")
    >>> f = tir.PrimFunc((A,), tir.AssertStmt(A[0] > 0, "A[0] must be positive",
    ...                                       tir.Evaluate(tir.const(0))))
    >>> "raise InterpretError" in compile_source(f).source
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from unity.ir import dtype as dt
from unity.tir import expr as E
from unity.tir import stmt as S
from unity.tir.buffer import Buffer
from unity.tir.op import prefetch_op


def _indented(self: Any, body: S.Stmt) -> None:
    self.depth += 1
    mark = len(self.lines)
    self.stmt(body)
    if len(self.lines) == mark:
        self.emit("pass")
    self.depth -= 1


def _is_true(expr: E.PrimExpr) -> bool:
    return isinstance(expr, E.IntImm) and bool(expr.value)


def s_buffer_store_(self: Any, node: S.BufferStore) -> None:
    value = self.expr(node.value)
    self.emit(f"{self.access(node.buffer, node.indices)} = {value}")


def s_seq_stmt_(self: Any, node: S.SeqStmt) -> None:
    for s in node.seq:
        self.stmt(s)


_MAX_LOOP_NESTING = 16
"""Loops nested deeper than this move into a nested function: CPython refuses more than
20 statically nested loops in one function, and heavy tiling can exceed that."""


def s_for_(self: Any, node: S.For) -> None:
    if self.loop_depth >= _MAX_LOOP_NESTING:
        _outlined(self, node)
        return
    lo, ext = self.expr(node.min), self.expr(node.extent)
    bounds = ext if lo == "0" else f"{lo}, ({lo}) + ({ext})"
    self.note_nonneg(node.loop_var, node.min)
    self.emit(f"for {self.name(node.loop_var)} in range({bounds}):")
    self.loop_depth += 1
    _indented(self, node.body)
    self.loop_depth -= 1


def _outlined(self: Any, node: S.For) -> None:
    """Run `node` in a nested function (a closure over the enclosing variables)."""
    name = f"_outlined{len(self.lines)}"
    self.emit(f"def {name}():")
    saved, self.loop_depth = self.loop_depth, 0
    _indented(self, node)
    self.loop_depth = saved
    self.emit(f"{name}()")


def s_while_(self: Any, node: S.While) -> None:
    self.emit(f"while {self.expr(node.condition)}:")
    self.loop_depth += 1
    _indented(self, node.body)
    self.loop_depth -= 1


def s_if_then_else_(self: Any, node: S.IfThenElse) -> None:
    self.emit(f"if {_scalar_cond(self, node.condition, 'if')}:")
    _indented(self, node.then_case)
    if node.else_case is not None:
        self.emit("else:")
        _indented(self, node.else_case)


def _scalar_cond(self: Any, cond: E.PrimExpr, where: str) -> str:
    if dt.lanes(cond.dtype) > 1:
        from unity.tir.interpreter_compile import InterpretError

        raise InterpretError(f"interpret: the condition of an {where} is a vector ({cond.dtype})")
    return self.expr(cond)


def s_let_stmt_(self: Any, node: S.LetStmt) -> None:
    self.note_nonneg(node.var, node.value)
    self.emit(f"{self.name(node.var)} = {self.expr(node.value)}")
    self.stmt(node.body)


def s_assert_stmt_(self: Any, node: S.AssertStmt) -> None:
    self.emit(f"if not ({_scalar_cond(self, node.condition, 'assert')}):")
    self.emit(f"    raise InterpretError({node.message!r})")
    self.stmt(node.body)


def s_evaluate_(self: Any, node: S.Evaluate) -> None:
    if isinstance(node.value, (E.IntImm, E.FloatImm)):
        return
    if isinstance(node.value, E.Call) and node.value.op is prefetch_op:
        return  # a cache hint (its element may lie past the buffer)
    self.emit(self.expr(node.value))


def _alloc(self: Any, buf: Buffer) -> None:
    size = " * ".join(f"({self.expr(d)})" for d in buf.shape) or "1"
    t = self.hoist("t", dt.element(buf.dtype), np.dtype(dt.numpy_name(dt.element(buf.dtype))))
    storage = self.name(buf.data)
    self.storages.add(id(buf.data))
    self.emit(f"{storage} = np.zeros(int({size}), dtype={t})")
    self.emit(f"n_{storage} = {storage}.shape[0]")


def s_allocate_(self: Any, node: S.Allocate) -> None:
    _alloc(self, node.buffer)
    self.stmt(node.body)


def s_block_realize_(self: Any, node: S.BlockRealize) -> None:
    block = node.block
    if not _is_true(node.predicate):
        self.emit(f"if {_scalar_cond(self, node.predicate, 'block predicate')}:")
        self.depth += 1
    for iv, value in zip(block.iter_vars, node.iter_values):
        self.note_nonneg(iv.var, value)
        if isinstance(value, E.Var) and id(iv.var) not in self.names:
            self.names[id(iv.var)] = self.name(value)  # bound to a loop var: just alias it
            continue
        self.emit(f"{self.name(iv.var)} = {self.expr(value)}")
    for buf in block.alloc_buffers:
        _alloc(self, buf)
    for match in block.match_buffers:
        _match_buffer(self, match)
    if block.init is not None:
        _emit_init(self, block)
    mark = len(self.lines)
    self.stmt(block.body)
    if len(self.lines) == mark:
        self.emit("pass")
    if not _is_true(node.predicate):
        self.depth -= 1


def _emit_init(self: Any, block: S.Block) -> None:
    reduce_vars = [iv for iv in block.iter_vars if iv.iter_type is E.IterType.REDUCE]
    conds = [f"{self.name(iv.var)} == {self.expr(iv.dom.min)}" for iv in reduce_vars]
    if not conds:
        self.stmt(block.init)
        return
    self.emit(f"if {' and '.join(conds)}:")
    _indented(self, block.init)


def _match_buffer(self: Any, match: S.MatchBufferRegion) -> None:
    """Make `match.buffer` a view of its source region: same storage, offset, strides."""
    buf, src = match.buffer, match.source
    storage, offset, strides = self.layout(src.buffer)
    if strides is None:
        strides = _compact_strides(self, src.buffer)
    origin = " + ".join(f"({self.expr(r.min)}) * ({s})" for r, s in zip(src.region, strides))
    off_name = f"_off{len(self.lines)}"
    self.emit(f"{off_name} = {offset} + {origin or '0'}")
    stride_names = []
    for k, s in enumerate(strides[len(strides) - len(buf.shape):]):
        stride_names.append(f"{off_name}_s{k}")
        self.emit(f"{stride_names[-1]} = {s}")
    _bind_decl(self, buf.elem_offset, off_name)
    for decl, name in zip(buf.strides, stride_names):
        _bind_decl(self, decl, name)
    for decl, rng in zip(buf.shape, src.region[len(src.region) - len(buf.shape):]):
        _bind_decl(self, decl, self.expr(rng.extent))
    self.layouts[id(buf)] = (storage, off_name, stride_names)


def _bind_decl(self: Any, decl: E.PrimExpr | None, value: str) -> None:
    if isinstance(decl, E.Var):
        self.emit(f"{self.name(decl)} = {value}")


def _compact_strides(self: Any, buf: Buffer) -> list[str]:
    strides, acc = [], "1"
    for dim in reversed(buf.shape):
        strides.append(acc)
        acc = f"({acc}) * ({self.expr(dim)})"
    return strides[::-1]
