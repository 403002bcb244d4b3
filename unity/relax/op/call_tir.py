"""Calls out of relax: `call_tir` (a PrimFunc in the module), `call_dps_packed` (a packed
function writing into outputs) and `call_pure_packed` (a pure packed function).

The output struct info is given by the caller (`sinfo_args`): these ops cannot infer it.

Example:
    >>> from unity.ir import GlobalVar
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n",), "float32"))
    >>> call = call_tir(GlobalVar("exp"), [x], TensorStructInfo(("n",), "float32"))
    >>> call.sinfo_args[0].shape
    (n,)
"""

from __future__ import annotations

from collections.abc import Sequence

from unity.ir.module import GlobalVar
from unity.relax.expr import Call, Expr, ExternFunc, ShapeExpr
from unity.relax.op.base import RelaxOp, as_tuple_expr, fail, register_op
from unity.relax.struct_info import (
    ObjectStructInfo, StructInfo, TensorStructInfo, TupleStructInfo,
)  # fmt: skip


def _out_sinfo(out: StructInfo | Sequence[StructInfo]) -> StructInfo:
    if isinstance(out, StructInfo):
        return out
    out = tuple(out)
    return out[0] if len(out) == 1 else TupleStructInfo(out)


def _check_outputs(call: Call, sinfo: StructInfo) -> None:
    fields = sinfo.fields if isinstance(sinfo, TupleStructInfo) else (sinfo,)
    for f in fields:
        if not isinstance(f, TensorStructInfo):
            raise fail(call, f"expects tensor outputs, got {type(f).__name__}")


def _infer_from_sinfo_args(call: Call) -> StructInfo:
    if not call.sinfo_args:
        raise fail(call, "needs the struct info of its result (sinfo_args)")
    args = call.args[1] if len(call.args) > 1 else None
    if isinstance(args, Expr) and not isinstance(args.struct_info, TupleStructInfo):
        raise fail(call, "expects its arguments as a tuple")
    _check_outputs(call, call.sinfo_args[0])
    return call.sinfo_args[0]


@register_op("call_tir", infer=_infer_from_sinfo_args, pure=True)
def call_tir(
    op: RelaxOp,
    gvar: GlobalVar,
    args: Sequence[Expr] | Expr,
    out_sinfo: StructInfo | Sequence[StructInfo],
    tir_vars: Sequence[object] | ShapeExpr | None = None,
) -> Call:
    """Call PrimFunc `gvar` in destination-passing style; outputs are allocated for it.

    `tir_vars` passes extra symbolic values as the PrimFunc's trailing scalar params.

    Example:
        >>> call_tir(gv, [x], TensorStructInfo(("n",), "float32")).op is call_tir  # doctest: +SKIP
        True
    """
    call_args: list[object] = [gvar, as_tuple_expr(args)]
    if tir_vars is not None:
        call_args.append(tir_vars if isinstance(tir_vars, ShapeExpr) else ShapeExpr(tuple(tir_vars)))
    return Call(op, tuple(call_args), sinfo_args=(_out_sinfo(out_sinfo),))  # type: ignore[arg-type]


@register_op("call_dps_packed", infer=_infer_from_sinfo_args, pure=True)
def call_dps_packed(
    op: RelaxOp,
    func: str | ExternFunc,
    args: Sequence[Expr] | Expr,
    out_sinfo: StructInfo | Sequence[StructInfo],
) -> Call:
    """Call packed function `func` with the inputs then freshly allocated outputs.

    Example:
        >>> call_dps_packed("my_exp", [x], x.struct_info).args[0].global_symbol  # doctest: +SKIP
        'my_exp'
    """
    fn = ExternFunc(func) if isinstance(func, str) else func
    return Call(op, (fn, as_tuple_expr(args)), sinfo_args=(_out_sinfo(out_sinfo),))


def _infer_pure_packed(call: Call) -> StructInfo:
    if not call.sinfo_args:
        return ObjectStructInfo()
    return call.sinfo_args[0]


@register_op("call_pure_packed", infer=_infer_pure_packed, pure=True)
def call_pure_packed(
    op: RelaxOp, func: str | ExternFunc, *args: Expr, sinfo_args: StructInfo | Sequence[StructInfo] = ()
) -> Call:
    """Call packed function `func(*args)`, declared pure; its result is `sinfo_args`.

    Example:
        >>> call_pure_packed("shape_of", x, sinfo_args=ObjectStructInfo()).op.name  # doctest: +SKIP
        'relax.call_pure_packed'
    """
    fn = ExternFunc(func) if isinstance(func, str) else func
    sinfos = (sinfo_args,) if isinstance(sinfo_args, StructInfo) else tuple(sinfo_args)
    return Call(op, (fn, *args), sinfo_args=sinfos)
