"""Print relax functions, expressions and struct info as TVM-style `@R.function` script.

Registered with `unity.ir.printer` when `unity.relax` is imported, so `repr`,
`mod.script()` and `DiagnosticError` renderings (with `^^^` under the bad node) work.
`unity.script.from_source` parses the text back (`unity.script.relax` is the `R` namespace).

Example:
    >>> from unity.relax import TensorStructInfo
    >>> print(TensorStructInfo(("n", 4), "float32").script())
    R.Tensor((n, 4), dtype="float32")
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Collection
from typing import Any

import numpy as np
import sympy

from unity.ir.module import GlobalVar
from unity.ir.op import Op
from unity.ir.printer import Line, NameTable, Text, py_value, register_printer, render
from unity.relax import expr as X
from unity.relax import struct_info as SI
from unity.relax.utils import free_symbols


def format_struct_info(sinfo: SI.StructInfo | None) -> str:
    """Render struct info as script (`R.Tensor((n, 4), dtype="float32")`).

    Example:
        >>> format_struct_info(SI.ShapeStructInfo((2, "n")))
        'R.Shape([2, n])'
    """
    if sinfo is None:
        return "R.Object"
    if isinstance(sinfo, SI.TensorStructInfo):
        dtype = f'dtype="{sinfo.dtype}"'
        if sinfo.shape is not None:
            return f"R.Tensor({SI.format_shape(sinfo.shape)}, {dtype})"
        return f"R.Tensor(ndim={sinfo.ndim}, {dtype})" if sinfo.ndim >= 0 else f"R.Tensor({dtype})"
    if isinstance(sinfo, SI.ShapeStructInfo):
        if sinfo.values is not None:
            return f"R.Shape([{', '.join(map(str, sinfo.values))}])"
        return f"R.Shape(ndim={sinfo.ndim})"
    if isinstance(sinfo, SI.PrimStructInfo):
        if sinfo.value is None:
            return f'R.Prim("{sinfo.dtype}")'
        value = _scalar(sinfo.value)
        if sinfo.dtype == "int64":
            return f"R.Prim(value={value})"
        return f'R.Prim("{sinfo.dtype}", value={value})'
    if isinstance(sinfo, SI.TupleStructInfo):
        return f"R.Tuple({', '.join(format_struct_info(f) for f in sinfo.fields)})"
    if isinstance(sinfo, SI.FuncStructInfo):
        params = "..." if sinfo.params is None else ", ".join(map(format_struct_info, sinfo.params))
        comma = "," if sinfo.params is not None and len(sinfo.params) == 1 else ""
        purity = "" if sinfo.purity else ", purity=False"
        return f"R.Callable(({params}{comma}), {format_struct_info(sinfo.ret)}{purity})"
    return "R.Object"


class _Printer:
    def __init__(self, underline: Collection[object], elide_constants: bool = False) -> None:
        self.names = NameTable()
        self.underline = tuple(underline)
        self.lines: list[Line] = []
        self.elide_constants = elide_constants
        """Print large constants' data as ``...`` (an error message, not script to parse)."""

    def mark(self, node: object, text: Text) -> Text:
        return text.marked(any(node is u for u in self.underline))

    # -- expressions ----------------------------------------------------------------------
    def expr(self, e: object) -> Text:
        return self.mark(e, self._expr(e))

    def _expr(self, e: object) -> Text:
        if isinstance(e, X.Var):
            return Text(self.names.name(e, e.name_hint))
        if isinstance(e, GlobalVar):
            return Text(f"cls.{e.name_hint}")
        if isinstance(e, X.Constant):
            return Text(_const(e.data, self.elide_constants))
        if isinstance(e, X.ShapeExpr):
            return Text(f"R.shape([{', '.join(map(str, e.values))}])")
        if isinstance(e, X.PrimValue):
            dtype = "" if e.dtype == "int64" else f', dtype="{e.dtype}"'
            return Text(f"R.prim_value({_scalar(e.value)}{dtype})")
        if isinstance(e, X.StringImm):
            return Text(f"R.str({e.value!r})")
        if isinstance(e, X.DataTypeImm):
            return Text(f'R.dtype("{e.value}")')
        if isinstance(e, X.ExternFunc):
            return Text(f'R.ExternFunc("{e.global_symbol}")')
        if isinstance(e, X.Tuple):
            inner = Text.join(", ", [self.expr(f) for f in e.fields])
            return "(" + inner + ("," if len(e.fields) == 1 else "") + ")"
        if isinstance(e, X.TupleGetItem):
            return self.expr(e.tuple_value) + f"[{e.index}]"
        if isinstance(e, X.Call):
            return self._call(e)
        return Text(f"<{type(e).__name__}>")

    def _call(self, call: X.Call) -> Text:
        if isinstance(call.op, Op):
            head = "R." + call.op.name.removeprefix("relax.")
        else:
            head = self.expr(call.op).text
        parts: list[Text | str] = [self.expr(a) for a in call.args]
        if dataclasses.is_dataclass(call.attrs):
            for f in dataclasses.fields(call.attrs):
                parts.append(f"{f.name}={_value(getattr(call.attrs, f.name))}")
        if call.sinfo_args:
            key = "sinfo_args" if head == "R.call_pure_packed" else "out_sinfo"
            sinfos = [format_struct_info(s) for s in call.sinfo_args]
            parts.append(f"{key}={sinfos[0] if len(sinfos) == 1 else '[' + ', '.join(sinfos) + ']'}")
        return head + "(" + Text.join(", ", parts) + ")"

    # -- statements -----------------------------------------------------------------------
    def emit(self, indent: int, text: Text | str) -> None:
        self.lines.append(Line(indent, text if isinstance(text, Text) else Text(text)))

    def seq(self, seq: X.SeqExpr, indent: int) -> None:
        for block in seq.blocks:
            if isinstance(block, X.DataflowBlock):
                self.emit(indent, self.mark(block, Text("with R.dataflow():")))
                for b in block.bindings:
                    self.binding(b, indent + 1)
                outs = [b.var for b in block.bindings if not isinstance(b.var, X.DataflowVar)]
                self.emit(indent + 1, f"R.output({', '.join(self.expr(v).text for v in outs)})")
            else:
                for b in block.bindings:
                    self.binding(b, indent)
        self.emit(indent, "return " + self.expr(seq.body))

    def binding(self, b: X.Binding, indent: int) -> None:
        lhs = self.expr(b.var) + f": {format_struct_info(b.var.struct_info_)} = "
        value = b.value  # type: ignore[attr-defined]  # both binding kinds have it
        if isinstance(value, X.If):
            self.if_(b, value, indent)
            return
        if isinstance(b, X.MatchCast):
            rhs = "R.match_cast(" + self.expr(value) + f", {format_struct_info(b.struct_info)})"
        else:
            rhs = self.expr(value)
        self.emit(indent, self.mark(b, lhs + rhs))

    def if_(self, b: X.Binding, value: X.If, indent: int) -> None:
        self.emit(indent, "if " + self.expr(value.cond) + ":")
        for branch in (value.true_branch, value.false_branch):
            sub = _Printer(self.underline, self.elide_constants)
            sub.names = self.names
            sub.seq(branch, indent + 1)
            last = sub.lines.pop()  # "return v" -> "var = v"
            self.lines += sub.lines
            self.emit(indent + 1, self.expr(b.var) + " = " + last.text.text.removeprefix("return "))
            if branch is value.true_branch:
                self.emit(indent, "else:")

    def function(self, func: X.Function, name: str) -> None:
        symbols = sorted(_function_symbols(func), key=str)
        for sym in symbols:  # reserve the symbols' names before any variable is named
            self.names.name(sym, str(sym))
        params = Text.join(", ", [self.expr(p) + f": {format_struct_info(p.struct_info_)}"
                                  for p in func.params])  # fmt: skip
        self.emit(0, "@R.function" + _decorator_options(func, name))
        ret = format_struct_info(func.ret_struct_info)
        self.emit(0, self.mark(func, f"def {name}(" + params + f") -> {ret}:"))
        for sym in symbols:
            self.emit(1, f"{sym} = T.int64()")
        attrs = {k: v for k, v in func.attrs.items() if (k, v) != ("global_symbol", name)}
        if attrs:
            self.emit(1, f"R.func_attr({py_value(attrs)})")
        self.seq(func.body, 1)


def _decorator_options(func: X.Function, name: str) -> str:
    """`(pure=False, private=True)`: private when the function has no "global_symbol"."""
    options = [] if func.is_pure else ["pure=False"]
    if "global_symbol" not in func.attrs:
        options.append("private=True")
    return f"({', '.join(options)})" if options else ""


def _function_symbols(func: X.Function) -> set[Any]:
    """Every shape symbol in the struct info of the function's params, bindings and result."""
    infos: list[SI.StructInfo | None] = [p.struct_info_ for p in func.params]
    infos.append(func.ret_struct_info)

    def collect(seq: X.SeqExpr) -> None:
        for block in seq.blocks:
            for b in block.bindings:
                infos.append(b.var.struct_info_)
                if isinstance(b, X.MatchCast):
                    infos.append(b.struct_info)
                value = b.value  # type: ignore[attr-defined]  # both binding kinds have it
                if isinstance(value, X.If):
                    collect(value.true_branch)
                    collect(value.false_branch)

    collect(func.body)
    out: set[Any] = set()
    for sinfo in infos:
        out |= free_symbols(sinfo) if sinfo is not None else set()
    return out


def _value(v: Any) -> str:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, sympy.Basic):
        return _scalar(v)
    if isinstance(v, tuple | list):
        items = [_value(x) for x in v]  # type: ignore[union-attr]  # a sequence
        text = ", ".join(items) + ("," if isinstance(v, tuple) and len(items) == 1 else "")
        return f"({text})" if isinstance(v, tuple) else f"[{text}]"
    return py_value(v)


def _scalar(value: Any) -> str:
    """A sympy value as script: integers and symbolic dims as sympy prints them, floats exactly."""
    if getattr(value, "is_Float", False):
        return repr(float(value))
    return str(value)


INLINE_CONST_LIMIT = 64
"""Constants with at most this many finite elements print inline; larger ones as base64."""


def _const(data: np.ndarray, elide: bool = False) -> str:
    """`R.const([...], "dtype")` when small and finite, else `R.const_b64(shape, "dtype", "...")`.

    The base64 form holds the raw little-endian bytes, so large constants round-trip exactly;
    with `elide` (in error messages) the bytes print as ``...``.
    """
    if elide and data.size > INLINE_CONST_LIMIT:
        return f'R.const_b64({tuple(int(d) for d in data.shape)!r}, "{data.dtype}", ...)'

    finite = data.dtype.kind not in "fc" or bool(np.isfinite(data).all())
    if data.size <= INLINE_CONST_LIMIT and finite and data.dtype.kind in "biuf":
        return f'R.const({data.tolist()!r}, "{data.dtype}")'
    raw = np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("<")).tobytes()
    payload = base64.b64encode(raw).decode("ascii")
    return f'R.const_b64({tuple(int(d) for d in data.shape)!r}, "{data.dtype}", "{payload}")'


def print_function(func: X.Function, *, underline: Collection[object] = (), name: str | None = None,
                   elide_constants: bool = False, **_: Any) -> str:  # fmt: skip
    """Print a relax function as `@R.function` script.

    Example:
        >>> print(print_function(func))  # doctest: +SKIP
    """
    printer = _Printer(underline, elide_constants)
    printer.function(func, name or str(func.attrs.get("global_symbol", "main")))
    return render(printer.lines)


def print_expr(expr: object, *, underline: Collection[object] = (), elide_constants: bool = False,
               **_: Any) -> str:
    """Print a relax expression (a function body prints as its bindings).

    Example:
        >>> print_expr(op.exp(x))  # doctest: +SKIP
        'R.exp(x)'
    """
    printer = _Printer(underline, elide_constants)
    if isinstance(expr, X.SeqExpr):
        printer.seq(expr, 0)
        return render(printer.lines)
    if isinstance(expr, X.Binding):
        printer.binding(expr, 0)
        return render(printer.lines)
    return render([Line(0, printer.expr(expr))])


def print_struct_info(sinfo: SI.StructInfo, **_: Any) -> str:
    """Print struct info as script.

    Example:
        >>> print_struct_info(SI.ObjectStructInfo())
        'R.Object'
    """
    return format_struct_info(sinfo)


register_printer(X.Function, print_function)
register_printer(X.Expr, print_expr)
register_printer(X.Binding, print_expr)
register_printer(SI.StructInfo, print_struct_info)
