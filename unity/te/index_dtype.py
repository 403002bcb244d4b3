"""Widen the index arithmetic of a PrimFunc to one integer dtype (`index_dtype_override`).

Every int32 variable and constant becomes int64 (for `"int64"`), binary operations are
rebuilt with the usual promotion, buffer shapes are widened, and a store whose value
came out wider than its buffer gets a `Cast` back to the buffer's dtype.  Narrowing
(int64 -> int32) is not offered.

Example:
    >>> from unity import te
    >>> A = te.placeholder((4,), "float32", name="A")
    >>> B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    >>> f = te.create_prim_func([A, B], index_dtype_override="int64")
    >>> f.params[0].shape[0].dtype
    'int64'
"""

from __future__ import annotations

from typing import Any

from unity.ir import dtype as dt
from unity.tir import expr as E
from unity.tir.buffer import Buffer
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator
from unity.tir.stmt import BufferStore


def widen_index_dtype(func: PrimFunc, dtype: str) -> PrimFunc:
    """Rewrite the int32 index arithmetic of `func` to `dtype` (only "int64" widens).

    Example:
        >>> from unity import tir
        >>> f = tir.PrimFunc((), tir.Evaluate(tir.const(0)))
        >>> widen_index_dtype(f, "int32") is f
        True
    """
    if dtype == "int32":
        return func
    if dtype != "int64":
        raise ValueError(f"index_dtype_override must be 'int32' or 'int64', got {dtype!r}")
    widener = _Widener(dtype)
    params = tuple(
        widener.visit_buffer(p) if isinstance(p, Buffer) else widener.visit_expr(p)
        for p in func.params
    )
    return func.replace(params=params, body=widener.visit_stmt(func.body))


def _retyped(imm: E.IntImm, dtype: str) -> E.PrimExpr:
    if imm.dtype == dtype or not dt.is_integer(dtype) or dt.lanes(dtype) > 1:
        return imm
    return E.IntImm(dtype, imm.value)


class _Widener(StmtExprMutator):
    def __init__(self, dtype: str) -> None:
        super().__init__()
        self.dtype = dtype
        self.vars: dict[E.Var, E.Var] = {}
        self.buffers: dict[Buffer, Buffer] = {}

    def visit_var_(self, var: E.Var) -> E.PrimExpr:
        if var.dtype != "int32":
            return var
        new = self.vars.get(var)
        if new is None:
            new = type(var)(var.name, self.dtype)
            self.vars[var] = new
        return new

    def visit_int_imm_(self, imm: E.IntImm) -> E.PrimExpr:
        return E.IntImm(self.dtype, imm.value) if imm.dtype == "int32" else imm

    def visit_binary_op_(self, node: E.BinaryOp) -> E.PrimExpr:
        # a constant takes the other side's (possibly still int32) dtype, so data
        # arithmetic such as `A[i] * 2` on an int32 buffer stays int32
        a, b = node.a, node.b
        if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
            a, b = self.visit_expr(a), self.visit_expr(b)
        elif isinstance(b, E.IntImm):
            a = self.visit_expr(a)
            b = _retyped(b, a.dtype)
        elif isinstance(a, E.IntImm):
            b = self.visit_expr(b)
            a = _retyped(a, b.dtype)
        else:
            a, b = self.visit_expr(a), self.visit_expr(b)
        if a is node.a and b is node.b:
            return node
        return E._binary(type(node), a, b)  # noqa: SLF001 - the promoting builder

    def visit_select_(self, node: E.Select) -> E.PrimExpr:
        cond = self.visit_expr(node.condition)
        t, f = self.visit_expr(node.true_value), self.visit_expr(node.false_value)
        return E.select(cond, t, f)

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        new = self.buffers.get(buffer)
        if new is None:
            new = self._mutate_fields(buffer)
            self.buffers[buffer] = new
        return new

    def visit_buffer_store_(self, store: BufferStore) -> Any:
        new = self._mutate_fields(store)
        if isinstance(new.value, E.IntImm) and new.value.dtype != new.buffer.dtype:
            return new.replace(value=E.const(new.value.value, new.buffer.dtype))
        if dt.element(new.value.dtype) != new.buffer.dtype and dt.is_integer(new.value.dtype):
            value = new.value.astype(dt.with_lanes(new.buffer.dtype, dt.lanes(new.value.dtype)))
            new = new.replace(value=value)
        return new
