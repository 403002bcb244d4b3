"""Fold calls whose arguments are all constants.

Before::

    @R.function
    def main(x: R.Tensor((2,), "float32")):
        c = R.add(R.const([1.0, 2.0]), R.const([3.0, 4.0]))
        return R.multiply(x, c)

After ``FoldConstant()``::

    @R.function
    def main(x: R.Tensor((2,), "float32")):
        c = R.const([4.0, 6.0])
        return R.multiply(x, c)

Ops fold through their `fold` attribute (`unity.relax.op.fold_rules`); a
`call_tir` of a PrimFunc on constant inputs runs in the reference interpreter
when its output is small. An argument counts as constant when it is a
`Constant` or a var bound to one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import GlobalVar, IRModule
from unity.ir.op import Op
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import (
    Call, Constant, Expr, Function, PrimValue, ShapeExpr, Tuple, TupleGetItem, Var,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator
from unity.relax.op import call_tir
from unity.relax.op import fold_rules as _fold_rules
from unity.relax.struct_info import StructInfo, TensorStructInfo, TupleStructInfo

_fold_rules.register_fold_rules()


@dataclass(frozen=True)
class FoldConstant(ModulePass):
    """Replace `op(c0, ..., cn)` with the constant it evaluates to.

    Example:
        >>> FoldConstant()(IRModule()).functions
        {}
    """

    max_elements: int = 1 << 20
    """Results with more elements than this stay unfolded, unless they are no larger than
    the constant inputs they replace (below)."""
    max_same_size_elements: int = 1 << 28
    """A larger result still folds when it has no more elements than its constant tensor
    inputs together (a transpose, reshape or rescaling of a weight): folding costs once at
    compile time and does not grow the constants, while leaving it runs it on every call."""
    max_interpret_elements: int = 1 << 14
    """`call_tir` results larger than this are not run in the (slow) interpreter."""
    max_interpret_iterations: int = 1 << 17
    """Nor are PrimFuncs whose loops run more iterations than this (or unknown counts)."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Fold every relax function of `mod`."""
        return mod.map_functions(Function, lambda f: _Folder(mod, self).visit_expr(f))


class _Folder(ExprMutator):
    def __init__(self, mod: IRModule, options: FoldConstant) -> None:
        super().__init__(mod)
        self.options = options
        self.constants: dict[Var, Expr] = {}

    def visit_binding(self, binding: Any) -> list[Any]:
        out = super().visit_binding(binding)
        for b in out:
            value = getattr(b, "value", None)
            if isinstance(value, Constant) or _is_constant_tuple(value):
                self.constants[b.var] = value
        return out

    def visit_tuple_get_item_(self, expr: TupleGetItem) -> Expr:
        item = super().visit_tuple_get_item_(expr)
        assert isinstance(item, TupleGetItem)
        source = item.tuple_value
        source = self.constants.get(source, source) if isinstance(source, Var) else source
        return source.fields[item.index] if _is_constant_tuple(source) else item  # type: ignore[union-attr]

    def visit_call_(self, expr: Call) -> Expr:
        call = super().visit_call_(expr)
        if not isinstance(call, Call):
            return call
        if call.op is call_tir:
            small = _is_small(call.struct_info_, self.options.max_elements)
            return self._fold_call_tir(call) if small else call
        rule = call.op.get_attr("fold") if isinstance(call.op, Op) else None
        if rule is None:
            return call
        values = [self._value(a) for a in call.args]
        if any(v is None for v in values):
            return call
        same_size = min(_elements(values), self.options.max_same_size_elements)
        if not _is_small(call.struct_info_, max(self.options.max_elements, same_size)):
            return call
        try:
            folded = rule(call, *values)
        except (IndexError, ValueError) as err:  # bad constant data (an index out of range)
            raise DiagnosticError(f"{call.op.name} on constants: {err}", call) from None
        return _as_constant(folded, call)

    def _fold_call_tir(self, call: Call) -> Expr:
        gv, inputs = call.args[0], self._value(call.args[1])
        scalars = self._value(call.args[2]) if len(call.args) > 2 else ()
        prim = self.mod[gv] if isinstance(gv, GlobalVar) and self.mod and gv in self.mod else None
        sinfo = call.struct_info
        if prim is None or inputs is None or scalars is None or isinstance(sinfo, TupleStructInfo):
            return call
        if not _is_small(sinfo, self.options.max_interpret_elements):
            return call
        if _iterations(prim.body) > self.options.max_interpret_iterations:  # type: ignore[attr-defined]
            return call
        from unity.tir import InterpretError, interpret

        assert isinstance(sinfo, TensorStructInfo) and sinfo.shape is not None
        out = np.zeros(tuple(int(d) for d in sinfo.shape), sinfo.dtype)
        try:
            interpret(prim, *inputs, out, *scalars)  # type: ignore[arg-type]  # a PrimFunc
        except InterpretError as err:  # bad constant data (an index out of range)
            raise DiagnosticError(f"{gv.name_hint} on constants: {err}", call) from None
        return _as_constant(out, call)

    def _value(self, expr: Expr) -> Any:
        """The compile-time value of `expr`, or None when it is not constant."""
        if isinstance(expr, Var):
            expr = self.constants.get(expr, expr)
        if isinstance(expr, Constant):
            return expr.data
        if isinstance(expr, ShapeExpr) and all(d.is_Integer for d in expr.values):
            return tuple(int(d) for d in expr.values)
        if isinstance(expr, PrimValue) and expr.value.is_number:
            return int(expr.value) if expr.value.is_Integer else float(expr.value)
        if isinstance(expr, Tuple):
            fields = [self._value(f) for f in expr.fields]
            return None if any(f is None for f in fields) else tuple(fields)
        return None


def _iterations(stmt: object) -> float:
    """Innermost statements executed by `stmt` (inf when a loop extent is not constant)."""
    from unity.tir import stmt as S
    from unity.tir.expr import IntImm

    if isinstance(stmt, S.For):
        extent = stmt.extent.value if isinstance(stmt.extent, IntImm) else float("inf")
        return extent * _iterations(stmt.body)
    if isinstance(stmt, S.SeqStmt):
        return sum(_iterations(s) for s in stmt.seq)
    if isinstance(stmt, S.While):
        return float("inf")
    if isinstance(stmt, S.IfThenElse):
        return _iterations(stmt.then_case) + (_iterations(stmt.else_case) if stmt.else_case else 0)
    if isinstance(stmt, S.BlockRealize):
        return _iterations(stmt.block)
    if isinstance(stmt, S.Block):
        return _iterations(stmt.body) + (_iterations(stmt.init) if stmt.init is not None else 0)
    body = getattr(stmt, "body", None)
    return 1 if body is None else _iterations(body)


def _is_small(sinfo: StructInfo | None, limit: int) -> bool:
    if not isinstance(sinfo, TensorStructInfo) or not sinfo.is_static:
        return isinstance(sinfo, TupleStructInfo) and all(_is_small(f, limit) for f in sinfo.fields)
    assert sinfo.shape is not None
    return int(np.prod([int(d) for d in sinfo.shape])) <= limit


def _elements(values: Any) -> int:
    """Elements of the arrays among `values` (nested tuples of arrays, shapes, scalars)."""
    if isinstance(values, np.ndarray):
        return int(values.size)
    if isinstance(values, tuple | list):
        return sum(_elements(v) for v in values)
    return 0


def _is_constant_tuple(expr: object) -> bool:
    return isinstance(expr, Tuple) and all(isinstance(f, Constant) for f in expr.fields)


def _as_constant(value: Any, call: Call) -> Expr:
    """Wrap a folded value, checked against the call's struct info (None: keep the call)."""
    sinfo = call.struct_info
    if isinstance(sinfo, TupleStructInfo) and isinstance(value, tuple | list):
        if len(value) != len(sinfo.fields):
            return call
        fields = [_checked(v, f, call) for v, f in zip(value, sinfo.fields, strict=True)]
        if any(f is None for f in fields):
            return call
        return Tuple(tuple(fields), span=call.span)  # type: ignore[arg-type]  # checked
    return _checked(value, sinfo, call) or call


def _checked(value: Any, sinfo: StructInfo, call: Call) -> Constant | None:
    if value is None or not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None:
        return None
    data = np.asarray(value)
    if sinfo.dtype != "void":
        data = data.astype(sinfo.dtype)
    if data.shape != tuple(int(d) for d in sinfo.shape):
        return None  # a rule that disagrees with inference must not change the program
    return Constant(np.array(data, order="C"), span=call.span)  # (ascontiguousarray makes 0-d 1-d)
