"""`BlockBuilder.call_te`: lower a TE compute on relax values to a PrimFunc and a `call_tir`.

Relax tensor arguments become `te.placeholder`s whose shapes are tir int64
expressions; each relax shape symbol maps to one `tir.Var` shared by all
arguments, and back again for the output struct info.  Shape symbols that no
argument has as a whole dim (only the outputs use them, or only inside ``n * m``)
are passed to the PrimFunc as trailing scalar params (`tir_vars`).

Example:
    >>> from unity import te
    >>> from unity.relax import BlockBuilder, Var, TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 4), "float32"))
    >>> bb = BlockBuilder()
    >>> with bb.function("main", [x]):
    ...     y = bb.emit_te(lambda a: te.compute(a.shape, lambda i, j: a[i, j] * 2.0), x)
    ...     _ = bb.emit_func_output(y)
    >>> y.struct_info.shape
    (n, 4)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import sympy

from unity import te, tir
from unity.ir.diagnostics import DiagnosticError
from unity.relax.expr import Call, Expr, PrimValue, ShapeExpr
from unity.relax.op.call_tir import call_tir
from unity.relax.struct_info import TensorStructInfo
from unity.relax.utils import sympy_to_tir, tir_to_sympy

if TYPE_CHECKING:
    from unity.relax.block_builder import BlockBuilder


class _Converter:
    """Turns relax arguments into TE ones, remembering placeholders and symbols."""

    def __init__(self) -> None:
        self.symbols: dict[sympy.Symbol, tir.Var] = {}
        self.placeholders: list[te.Tensor] = []
        self.tensor_args: list[Expr] = []

    def convert(self, arg: Any) -> Any:
        if isinstance(arg, Expr):
            return self._expr(arg)
        if isinstance(arg, list | tuple):
            return type(arg)(self.convert(a) for a in arg)
        if isinstance(arg, Mapping):
            return {k: self.convert(v) for k, v in arg.items()}
        if isinstance(arg, sympy.Expr):
            return sympy_to_tir(arg, self.symbols)
        return arg

    def _expr(self, arg: Expr) -> Any:
        if isinstance(arg, ShapeExpr):
            return [sympy_to_tir(d, self.symbols) for d in arg.values]
        if isinstance(arg, PrimValue):
            return sympy_to_tir(arg.value, self.symbols)
        sinfo = arg.struct_info
        if not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None:
            raise DiagnosticError("call_te needs tensor arguments of known shape", arg)
        shape = [sympy_to_tir(d, self.symbols) for d in sinfo.shape]
        name = getattr(arg, "name_hint", "") or f"A{len(self.placeholders)}"
        tensor = te.placeholder(shape, sinfo.dtype, name=name)
        self.placeholders.append(tensor)
        self.tensor_args.append(arg)
        return tensor


def make_call_te(
    bb: BlockBuilder,
    func: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    name_hint: str | None,
) -> Call:
    """Build the PrimFunc of `func(*args, **kwargs)`, add it to `bb`, and return the call.

    Example:
        >>> call = make_call_te(bb, topi.add, (x, y), {}, None)  # doctest: +SKIP
    """
    conv = _Converter()
    te_args = [conv.convert(a) for a in args]
    te_kwargs = {k: conv.convert(v) for k, v in kwargs.items()}
    result = func(*te_args, **te_kwargs)
    outputs = list(result) if isinstance(result, list | tuple) else [result]
    defined = {s for a in conv.tensor_args for s in _bare_dims(a)}
    back = {v: s for s, v in conv.symbols.items()}
    out_sinfo = [_out_sinfo(t, back) for t in outputs]
    used = {s for o in out_sinfo for d in o.shape for s in d.free_symbols} | set(conv.symbols)  # type: ignore[union-attr]
    extra = sorted(used - defined, key=str)
    extra_vars = [conv.symbols[s] for s in extra]  # type: ignore[index]  # sympy symbols
    prim = te.create_prim_func([*conv.placeholders, *outputs, *extra_vars])
    gv = bb.add_func(prim, name_hint or getattr(func, "__name__", "te_func").strip("<>"))
    tir_vars = tuple(extra) if extra else None
    return call_tir(gv, conv.tensor_args, out_sinfo, tir_vars=tir_vars)


def _bare_dims(arg: Expr) -> set[sympy.Symbol]:
    """The symbols that are whole dims of `arg` (a PrimFunc reads them off its buffer)."""
    sinfo = arg.struct_info
    if isinstance(sinfo, TensorStructInfo) and sinfo.shape is not None:
        return {d for d in sinfo.shape if isinstance(d, sympy.Symbol)}
    return set()


def _out_sinfo(tensor: te.Tensor, back: dict[tir.Var, sympy.Symbol]) -> TensorStructInfo:
    var_map = dict(back)
    return TensorStructInfo(tuple(tir_to_sympy(d, var_map) for d in tensor.shape), tensor.dtype)
