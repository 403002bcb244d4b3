"""Expression hooks of the interpreter's compiler: each TIR expression as Python source.

The hooks are methods of `interpreter_compile._Compiler` (taking it as `self`); each
returns a Python expression string.  Scalars of int32/int64 coming from loops and
constants are Python ints; every other scalar is a numpy scalar of its exact dtype;
vectors are numpy arrays.

Example:
    >>> from unity import tir
    >>> from unity.tir.interpreter_compile import _Compiler
    >>> c = _Compiler(tir.PrimFunc((), tir.Evaluate(tir.const(0))))
    >>> c.expr(tir.truncdiv(tir.const(-7), 2))
    '_tdiv((-7), 2)'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from unity.ir import dtype as dt
from unity.tir import expr as E


def _vec(node: E.PrimExpr) -> bool:
    return dt.lanes(node.dtype) > 1


def _np_dtype(dtype: str) -> Any:
    return np.dtype(dt.numpy_name(dt.element(dtype)))


def _bin(self: Any, node: E.BinaryOp, op: str) -> str:
    return f"({self.expr(node.a)} {op} {self.expr(node.b)})"


def e_int_imm_(self: Any, node: E.IntImm) -> str:
    if node.dtype == "bool":
        return "True" if node.value else "False"
    if node.dtype in ("int32", "int64"):
        return str(node.value) if node.value >= 0 else f"({node.value})"
    return self.hoist("c", (node.dtype, node.value), _np_dtype(node.dtype).type(node.value))


def e_float_imm_(self: Any, node: E.FloatImm) -> str:
    value = _np_dtype(node.dtype).type(node.value)
    return self.hoist("c", (node.dtype, repr(node.value)), value)


def e_string_imm_(self: Any, node: E.StringImm) -> str:
    return repr(node.value)


def e_var_(self: Any, node: E.Var) -> str:
    return self.name(node)


def e_add_(self: Any, node: E.Add) -> str:
    return _bin(self, node, "+")


def e_sub_(self: Any, node: E.Sub) -> str:
    return _bin(self, node, "-")


def e_mul_(self: Any, node: E.Mul) -> str:
    return _bin(self, node, "*")


def e_div_(self: Any, node: E.Div) -> str:
    if dt.is_float(node.dtype):
        return _bin(self, node, "/")
    fn = "_tdiv_v" if _vec(node) else "_tdiv"
    return f"{fn}({self.expr(node.a)}, {self.expr(node.b)})"


def e_mod_(self: Any, node: E.Mod) -> str:
    a, b = self.expr(node.a), self.expr(node.b)
    if dt.is_float(node.dtype):
        return f"np.fmod({a}, {b})"
    if _vec(node):
        return f"(lambda x, y: x - y * _tdiv_v(x, y))({a}, {b})"
    return f"_tmod({a}, {b})"


def e_floor_div_(self: Any, node: E.FloorDiv) -> str:
    if dt.is_float(node.dtype):
        return f"np.floor({self.expr(node.a)} / {self.expr(node.b)})"
    return _bin(self, node, "//")


def e_floor_mod_(self: Any, node: E.FloorMod) -> str:
    return _bin(self, node, "%")


def e_min_(self: Any, node: E.Min) -> str:
    fn = "np.minimum" if _vec(node) else "min"
    return f"{fn}({self.expr(node.a)}, {self.expr(node.b)})"


def e_max_(self: Any, node: E.Max) -> str:
    fn = "np.maximum" if _vec(node) else "max"
    return f"{fn}({self.expr(node.a)}, {self.expr(node.b)})"


_CMP = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}


def e_cmp_op_(self: Any, node: E.CmpOp) -> str:
    return _bin(self, node, _CMP[type(node)])


def e_and_(self: Any, node: E.And) -> str:
    return _bin(self, node, "&" if _vec(node) else "and")


def e_or_(self: Any, node: E.Or) -> str:
    return _bin(self, node, "|" if _vec(node) else "or")


def e_not_(self: Any, node: E.Not) -> str:
    return f"(~{self.expr(node.a)})" if _vec(node) else f"(not {self.expr(node.a)})"


def e_select_(self: Any, node: E.Select) -> str:
    if _vec(node) or _vec(node.condition):
        self.vector_select_depth += 1
        c, t, f = self.expr(node.condition), self.expr(node.true_value), self.expr(node.false_value)
        self.vector_select_depth -= 1
        t_name = self.hoist("t", dt.element(node.dtype), _np_dtype(node.dtype))
        return f"np.where({c}, {t}, {f}).astype({t_name})"
    c, t, f = self.expr(node.condition), self.expr(node.true_value), self.expr(node.false_value)
    return f"({t} if {c} else {f})"


def e_cast_(self: Any, node: E.Cast) -> str:
    value = self.expr(node.value)
    target = dt.element(node.dtype)
    if _vec(node):
        return f"np.asarray({value}).astype({self.hoist('t', target, _np_dtype(target))})"
    if target == "bool":
        return f"bool({value})"
    if dt.is_float(target):
        return f"{self.hoist('s', target, _np_dtype(target).type)}({value})"
    bits, signed = dt.bits(target), dt.is_int(target)
    wrapped = f"_wrap_int(int({value}), {bits}, {signed})"
    if target in ("int32", "int64"):
        return wrapped
    return f"{self.hoist('s', target, _np_dtype(target).type)}({wrapped})"


def e_ramp_(self: Any, node: E.Ramp) -> str:
    steps = np.arange(node.lanes, dtype=_np_dtype(node.base.dtype))
    lanes = self.hoist("r", (node.base.dtype, node.lanes), steps)
    return f"({lanes} * {self.expr(node.stride)} + {self.expr(node.base)})"


def e_broadcast_(self: Any, node: E.Broadcast) -> str:
    t = self.hoist("t", node.dtype, _np_dtype(node.dtype))
    return f"np.full({node.lanes}, {self.expr(node.value)}, dtype={t})"


def e_let_(self: Any, node: E.Let) -> str:
    return f"(({self.name(node.var)} := {self.expr(node.value)}), {self.expr(node.body)})[1]"


def e_call_(self: Any, node: E.Call) -> str:
    fn = node.op.attrs.get("numpy")
    if fn is None:
        from unity.tir.interpreter_compile import InterpretError

        raise InterpretError(f"interpret: intrinsic {node.op.name} has no numpy implementation")
    name = self.hoist("f", node.op.name, fn)
    args = ", ".join(self.expr(a) for a in node.args)
    if node.op.name == "tir.reinterpret":  # the bits, not the value: no conversion after
        arg = node.args[0]
        source = self.hoist("t", dt.element(arg.dtype), _np_dtype(arg.dtype))
        view = f"{name}(np.asarray({args}, dtype={source}))"
        return view if _vec(node) else f"{view}[()]"
    if _vec(node):
        t = self.hoist("t", dt.element(node.dtype), _np_dtype(node.dtype))
        return f"np.asarray({name}({args})).astype({t})"
    scalar = self.hoist("s", dt.element(node.dtype), _np_dtype(node.dtype).type)
    return f"{scalar}({name}({args}))"


def e_buffer_load_(self: Any, node: E.BufferLoad) -> str:
    return self.load(node)
