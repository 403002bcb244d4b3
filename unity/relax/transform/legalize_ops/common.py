"""What the legalization families share: the `legalize` rule type and TE-call builders.

A rule is ``legalize(bb, call) -> Expr``: it returns the replacement of `call`, usually a
`call_tir` made by ``bb.call_te(topi_fn, *args)`` (which adds the PrimFunc to the module).
Rules are attached with ``op.set_attr("legalize", rule)``, one family per file.

Example:
    >>> from unity import topi
    >>> from unity.relax import op
    >>> rule = te_rule(topi.exp)
    >>> callable(rule)
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from unity.ir.diagnostics import DiagnosticError
from unity.ir.op import Op
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import Call, Expr
from unity.relax.op.base import op_name
from unity.relax.struct_info import TensorStructInfo

LegalizeFn = Callable[[BlockBuilder, Call], Expr]
"""``legalize(bb, call)``: the expression replacing `call` (arguments are leaves)."""


def register_legalize(op: Op, rule: LegalizeFn) -> None:
    """Attach `rule` as the `legalize` attribute of `op`.

    Example:
        >>> register_legalize(op.exp, te_rule(topi.exp))  # doctest: +SKIP
    """
    op.set_attr("legalize", rule)


def func_name(call: Call) -> str:
    """The PrimFunc name for `call`: the op's short name (`relax.nn.conv2d` -> `conv2d`).

    Example:
        >>> func_name(call)  # doctest: +SKIP
        'conv2d'
    """
    return op_name(call).split(".")[-1]


def call_te(
    bb: BlockBuilder, call: Call, topi_fn: Callable[..., Any], *args: Any, **kwargs: Any
) -> Call:
    """`bb.call_te(topi_fn, *args, **kwargs)` with the PrimFunc named after `call`'s op.

    Example:
        >>> call_te(bb, call, topi.nn.softmax, call.args[0], axis=-1)  # doctest: +SKIP
    """
    return bb.call_te(topi_fn, *args, primfunc_name_hint=func_name(call), **kwargs)


def known_shape(call: Call) -> list[object]:
    """The dims of `call`'s inferred result (a tensor of known shape), for shape-taking ops.

    Raises:
        DiagnosticError: the result shape is unknown.

    Example:
        >>> known_shape(op.reshape(x, (-1,)))  # doctest: +SKIP
        [4*n]
    """
    sinfo = call.struct_info
    if not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None:
        msg = f"{op_name(call)} needs a result of known shape to be legalized"
        raise DiagnosticError(msg, call)
    return list(sinfo.shape)


def te_rule(topi_fn: Callable[..., Any], **fixed: Any) -> LegalizeFn:
    """A rule calling `topi_fn` on all of the call's arguments (plus fixed keyword options).

    Example:
        >>> from unity import topi
        >>> te_rule(topi.add).__name__
        'legalize_add'
    """

    def rule(bb: BlockBuilder, call: Call) -> Expr:
        return call_te(bb, call, topi_fn, *call.args, **fixed)

    rule.__name__ = f"legalize_{getattr(topi_fn, '__name__', 'te')}"
    return rule


def attrs_rule(topi_fn: Callable[..., Any], options: Callable[[Any], dict[str, Any]]) -> LegalizeFn:
    """A rule calling `topi_fn(*args, **options(call.attrs))`.

    Example:
        >>> from unity import topi
        >>> attrs_rule(topi.nn.softmax, lambda a: {"axis": a.axis}).__name__
        'legalize_softmax'
    """

    def rule(bb: BlockBuilder, call: Call) -> Expr:
        return call_te(bb, call, topi_fn, *call.args, **options(call.attrs))

    rule.__name__ = f"legalize_{getattr(topi_fn, '__name__', 'te')}"
    return rule
