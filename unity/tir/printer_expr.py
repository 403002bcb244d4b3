"""Print TIR expressions as script text (`T.exp(x)`, `A[i, j]`, `T.Cast("int64", i)`).

Precedence follows Python's, so the text parses back to the same tree: the left
operand of `-` is parenthesized only when it binds looser, the right one when it
binds as loose or looser.  Literals carry their dtype unless it is int32 or bool:
`T.float32(1.0)`, `T.int64(3)`, `7`, `True`.

Example:
    >>> from unity import tir
    >>> i = tir.Var("i")
    >>> print(ExprPrinter().expr((i + 1) * 2).text)
    (i + 1) * 2
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection

from unity.ir import dtype as dt
from unity.ir.printer import NameTable, Text
from unity.tir import expr as E
from unity.tir.buffer import Buffer, BufferRegion

_ATOM, _UNARY, _MUL, _ADD, _CMP, _NOT, _AND, _OR = 100, 14, 13, 12, 7, 6, 5, 4

_BINARY: dict[type, tuple[str, int]] = {
    E.Add: ("+", _ADD),
    E.Sub: ("-", _ADD),
    E.Mul: ("*", _MUL),
    E.FloorDiv: ("//", _MUL),
    E.FloorMod: ("%", _MUL),
    E.EQ: ("==", _CMP),
    E.NE: ("!=", _CMP),
    E.LT: ("<", _CMP),
    E.LE: ("<=", _CMP),
    E.GT: (">", _CMP),
    E.GE: (">=", _CMP),
    E.And: ("and", _AND),
    E.Or: ("or", _OR),
}
"""Nodes printed as infix operators: symbol and precedence."""

_CALLS: dict[type, str] = {E.Min: "T.min", E.Max: "T.max", E.Mod: "T.truncmod"}
"""Binary nodes printed as `T.fn(a, b)`."""


def quote(text: str) -> str:
    """A double-quoted Python string literal for `text`.

    Example:
        >>> quote('a "b"')
        '"a \\\\"b\\\\""'
    """
    return json.dumps(text)


def float_literal(value: float) -> str:
    """Python text for a float (`"inf"` and `"nan"` as strings, parsed by `T.float32`).

    Example:
        >>> float_literal(0.5), float_literal(float("inf"))
        ('0.5', '"inf"')
    """
    if math.isnan(value) or math.isinf(value):
        return quote(repr(value))
    return repr(value)


class ExprPrinter:
    """Prints expressions; names come from a shared `NameTable`.

    `buffer_data` maps each known buffer's `data` Var (by id) to the buffer, so the
    pointer prints as `A.data`.  `param_mode` prints variables as `"n"` /
    `T.int64("n")` (used inside parameter annotations, where names are not in scope).

    Example:
        >>> i = E.Var("i")
        >>> ExprPrinter().expr((i + 1) * 2).text
        '(i + 1) * 2'
    """

    def __init__(self, names: NameTable | None = None, underline: Collection[object] = ()) -> None:
        self.names = names or NameTable()
        self.marked = {id(n) for n in underline}
        self.buffer_data: dict[int, Buffer] = {}
        self.param_mode = False

    def var_name(self, var: E.Var) -> str:
        """The unique name of `var`.

        Example:
            >>> p, a, b = ExprPrinter(), E.Var("i"), E.Var("i")
            >>> p.var_name(a), p.var_name(b), p.var_name(a)
            ('i', 'i_1', 'i')
        """
        return self.names.name(var, var.name)

    def buffer_name(self, buffer: Buffer) -> str:
        """The unique name of `buffer`.

        Example:
            >>> from unity.tir.buffer import decl_buffer
            >>> ExprPrinter().buffer_name(decl_buffer((4,), "float32", "A"))
            'A'
        """
        return self.names.name(buffer, buffer.name)

    def expr(self, e: E.PrimExpr) -> Text:
        """Print `e` without outer parentheses.

        Example:
            >>> ExprPrinter().expr(E.Var("i") // 4).text
            'i // 4'
        """
        return self._expr(e)[0]

    def value(self, v: object) -> Text:
        """Print an attribute or annotation value (numbers, strings, tuples, dicts, exprs).

        Example:
            >>> ExprPrinter().value({"unroll": (1, "x", E.Var("n"))}).text
            '{"unroll": (1, "x", n)}'
        """
        if isinstance(v, E.PrimExpr):
            return self.expr(v)
        if isinstance(v, str):
            return Text(quote(v))
        if isinstance(v, float):
            return Text(f"float({quote(repr(v))})" if math.isinf(v) or math.isnan(v) else repr(v))
        if v is None or isinstance(v, bool | int):
            return Text(repr(v))
        if isinstance(v, tuple):
            items = [self.value(x) for x in v]  # type: ignore[union-attr]
            return "(" + Text.join(", ", items) + ("," if len(items) == 1 else "") + ")"
        if isinstance(v, list):
            return "[" + Text.join(", ", [self.value(x) for x in v]) + "]"  # type: ignore[union-attr]
        if isinstance(v, dict):
            pairs = [self.value(k) + ": " + self.value(x) for k, x in v.items()]  # type: ignore[union-attr]
            return "{" + Text.join(", ", pairs) + "}"
        raise TypeError(f"cannot print a {type(v).__name__} as a script value")

    def region(self, region: BufferRegion) -> Text:
        """Print `A[vi, 0:4]`: a point where the extent is 1, else `lo:lo + extent`.

        Example:
            >>> from unity.tir.buffer import decl_buffer
            >>> A, i = decl_buffer((8, 8), "float32", "A"), E.Var("i")
            >>> rows, cols = E.Range.from_min_extent(i, 1), E.Range.from_min_extent(0, 4)
            >>> region = BufferRegion(A, (rows, cols))
            >>> ExprPrinter().region(region).text
            'A[i, 0:4]'
        """
        dims = []
        for r in region.region:
            if (
                isinstance(r.extent, E.IntImm)
                and r.extent.value == 1
                and r.extent.dtype == r.min.dtype
            ):
                dims.append(self.expr(r.min))
            else:
                dims.append(self.expr(r.min) + ":" + self.stop(r.min, r.extent))
        text = self.buffer_name(region.buffer) + "[" + Text.join(", ", dims) + "]"
        return text.marked(id(region) in self.marked)

    def stop(self, start: E.PrimExpr, extent: E.PrimExpr) -> Text:
        """Print `start + extent` so that the parser recovers `extent` (constants folded).

        Example:
            >>> i = E.Var("i")
            >>> p = ExprPrinter()
            >>> p.stop(i, E.const(4)).text, p.stop(E.const(2), E.const(4)).text
            ('i + 4', '6')
        """
        if _is_zero(start, extent.dtype):
            return self.expr(extent)
        if (
            isinstance(start, E.IntImm)
            and isinstance(extent, E.IntImm)
            and start.dtype == extent.dtype
        ):
            return self._literal(E.IntImm(start.dtype, start.value + extent.value))
        rhs, prec = self._expr(extent)
        return self._paren(*self._expr(start), _ADD) + " + " + self._paren(rhs, prec, _ADD + 1)

    # -- dispatch ---------------------------------------------------------------------
    def _expr(self, e: E.PrimExpr) -> tuple[Text, int]:
        text, prec = self._unmarked(e)
        return text.marked(id(e) in self.marked), prec

    def _unmarked(self, e: E.PrimExpr) -> tuple[Text, int]:
        if isinstance(e, E.Var):
            return self._var(e), _ATOM
        if isinstance(e, E.IntImm | E.FloatImm):
            text = self._literal(e)
            return text, (_UNARY if text.text.startswith("-") else _ATOM)
        if isinstance(e, E.StringImm):
            return Text(quote(e.value)), _ATOM
        infix = _BINARY.get(type(e))
        if infix is not None and isinstance(e, E.BinaryOp):
            return self._infix(e, *infix), infix[1]
        if isinstance(e, E.Div) and dt.is_float(e.dtype):
            return self._infix(e, "/", _MUL), _MUL
        if isinstance(e, E.Not):
            inner, prec = self._expr(e.a)
            return "not " + self._paren(inner, prec, _NOT), _NOT
        name = _CALLS.get(type(e))
        if name is not None and isinstance(e, E.BinaryOp):
            return self._call(name, e.a, e.b), _ATOM
        return self._other(e), _ATOM

    def _other(self, e: E.PrimExpr) -> Text:
        if isinstance(e, E.Div):
            return self._call("T.truncdiv", e.a, e.b)
        if isinstance(e, E.Select):
            return self._call("T.if_then_else", e.condition, e.true_value, e.false_value)
        if isinstance(e, E.Cast):
            return f"T.Cast({quote(e.dtype)}, " + self.expr(e.value) + ")"
        if isinstance(e, E.Ramp):
            return "T.Ramp(" + self.expr(e.base) + ", " + self.expr(e.stride) + f", {e.lanes})"
        if isinstance(e, E.Broadcast):
            return "T.Broadcast(" + self.expr(e.value) + f", {e.lanes})"
        if isinstance(e, E.Let):
            return (
                "T.Let("
                + self._var(e.var)
                + ", "
                + self.expr(e.value)
                + ", "
                + self.expr(e.body)
                + ")"
            )
        if isinstance(e, E.Call):
            return self._intrinsic(e)
        if isinstance(e, E.BufferLoad):
            return (
                self.buffer_name(e.buffer) + "[" + Text.join(", ", map(self.expr, e.indices)) + "]"
            )
        raise TypeError(f"the TIR printer does not know {type(e).__name__}")

    # -- pieces -----------------------------------------------------------------------
    def _var(self, v: E.Var) -> Text:
        owner = self.buffer_data.get(id(v))
        if owner is not None and not self.param_mode:
            return Text(self.buffer_name(owner) + ".data")
        name = self.var_name(v)
        if not self.param_mode:
            return Text(name)
        kind = "T.SizeVar" if isinstance(v, E.SizeVar) else None
        if kind:
            return Text(f"{kind}({quote(name)}, {quote(v.dtype)})")
        return Text(f"T.{v.dtype}({quote(name)})")

    def _literal(self, e: E.IntImm | E.FloatImm) -> Text:
        if isinstance(e, E.FloatImm):
            return Text(f"T.{e.dtype}({float_literal(e.value)})")
        if e.dtype == "bool":
            return Text(repr(bool(e.value)))
        if e.dtype == "int32":
            return Text(str(e.value))
        return Text(f"T.{e.dtype}({e.value})")

    def _infix(self, e: E.BinaryOp, op: str, prec: int) -> Text:
        left, lp = self._expr(e.a)
        right, rp = self._expr(e.b)
        if _is_literal(e.a) and _is_literal(e.b):  # keep `2 + 3` from folding in Python
            left, lp = self._typed_literal(e.a), _ATOM
        left_min = prec + 1 if prec == _CMP else prec
        return self._paren(left, lp, left_min) + f" {op} " + self._paren(right, rp, prec + 1)

    def _typed_literal(self, e: E.PrimExpr) -> Text:
        if isinstance(e, E.IntImm) and e.dtype in ("int32", "bool"):
            return Text(f"T.{e.dtype}({e.value if e.dtype == 'int32' else bool(e.value)})")
        return self.expr(e)

    @staticmethod
    def _paren(text: Text, prec: int, needed: int) -> Text:
        return "(" + text + ")" if prec < needed else text

    def _call(self, name: str, *args: E.PrimExpr) -> Text:
        return name + "(" + Text.join(", ", [self.expr(a) for a in args]) + ")"

    def _intrinsic(self, e: E.Call) -> Text:
        short = e.op.name.removeprefix("tir.")
        args = [self.expr(a) for a in e.args]
        if e.op.name.startswith("tir.") and e.dtype == _intrinsic_dtype(e):
            return f"T.{short}(" + Text.join(", ", args) + ")"
        return Text.join(", ", [f"T.call_intrin({quote(e.dtype)}", quote(e.op.name), *args]) + ")"


def _intrinsic_dtype(e: E.Call) -> str | None:
    """The dtype `T.<name>(args)` would give the call (as `tir.call_intrin` infers it)."""
    if not e.args or not dt.is_float(e.args[0].dtype):
        return None
    out = e.op.attrs.get("returns") or e.args[0].dtype
    return dt.with_lanes("bool", dt.lanes(e.args[0].dtype)) if out == "bool" else out


def _is_literal(e: E.PrimExpr) -> bool:
    return isinstance(e, E.IntImm | E.FloatImm)


def _is_zero(e: E.PrimExpr, dtype: str) -> bool:
    return isinstance(e, E.IntImm) and e.value == 0 and e.dtype == dtype
