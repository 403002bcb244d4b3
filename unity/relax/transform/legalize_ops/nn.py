"""Legalize `relax.op.nn`: activations, softmax, convolution, pooling, normalization, pad,
dropout (the identity at inference, with a mask of ones), and `recurrent` (a call of the
already scheduled kernel `topi.nn.recurrent_kernel` builds).

Example:
    >>> from unity.relax import op
    >>> op.nn.conv2d.get_attr("legalize").__name__
    'legalize_conv2d'
"""

from __future__ import annotations

from unity import topi
from unity.relax import op
from unity.relax.block_builder import BlockBuilder
from unity.relax.analysis.op_pattern import OpPatternKind
from unity.relax.expr import Call, Expr, Tuple
from unity.relax.struct_info import TupleStructInfo
from unity.relax.transform.legalize_ops.common import (
    attrs_rule,
    call_te,
    register_legalize,
    te_rule,
)


def _conv(a: object) -> dict[str, object]:
    return {
        "strides": a.strides, "padding": a.padding, "dilation": a.dilation,  # type: ignore[attr-defined]
        "groups": a.groups, "data_layout": a.data_layout,  # type: ignore[attr-defined]
        "kernel_layout": a.kernel_layout, "out_dtype": a.out_dtype,  # type: ignore[attr-defined]
    }  # fmt: skip


def _pool(a: object, avg: bool) -> dict[str, object]:
    out = {
        "pool_size": a.pool_size, "strides": a.strides, "padding": a.padding,  # type: ignore[attr-defined]
        "dilation": a.dilation, "ceil_mode": a.ceil_mode, "layout": a.layout,  # type: ignore[attr-defined]
    }  # fmt: skip
    if avg:
        out["count_include_pad"] = a.count_include_pad  # type: ignore[attr-defined]
    return out


def _norm(a: object, *names: str) -> dict[str, object]:
    return {n: getattr(a, n) for n in (*names, "epsilon", "center", "scale")}


def legalize_pad(bb: BlockBuilder, call: Call) -> Expr:
    """`nn.pad(x, (b0, a0, b1, a1, ...), value, mode)` -> `topi.nn.pad`.

    Example:
        >>> legalize_pad(bb, op.nn.pad(x, [0, 0, 1, 1]))  # doctest: +SKIP
    """
    a = call.attrs
    widths = list(a.pad_width)  # type: ignore[union-attr]
    return call_te(bb, call, topi.nn.pad, call.args[0], widths[0::2], widths[1::2],
                   a.pad_value, a.pad_mode)  # type: ignore[union-attr]  # fmt: skip


def legalize_dropout(bb: BlockBuilder, call: Call) -> Expr:
    """`nn.dropout(x)` -> `(x, ones_like(x))`: inference keeps every element.

    Example:
        >>> legalize_dropout(bb, op.nn.dropout(x))  # doctest: +SKIP
    """
    x = call.args[0]
    mask = call_te(bb, call, topi.full_like, x, 1)
    return Tuple((x, mask))


def legalize_recurrent(bb: BlockBuilder, call: Call) -> Expr:
    """`nn.recurrent(xw, rt, bias, h0, c0, peep)` -> a `call_tir` of its kernel (built
    scheduled and opaque: no rule reschedules it, no fusion crosses it).

    Example:
        >>> call = op.nn.recurrent(*args, op.nn.RecurrentAttrs("LSTM"))  # doctest: +SKIP
        >>> legalize_recurrent(bb, call)  # doctest: +SKIP
    """
    a = call.attrs
    assert isinstance(a, op.nn.RecurrentAttrs)
    sinfo = call.struct_info
    assert isinstance(sinfo, TupleStructInfo)
    packed = call.args[1].struct_info.shape  # type: ignore[attr-defined]  # (H/V, H, G, V)
    hidden, width = int(packed[1]), int(packed[3])
    func = topi.nn.recurrent_kernel(
        a.kind, hidden, sinfo.fields[0].dtype, a.activations, a.clip,  # type: ignore[attr-defined]
        a.input_forget, a.linear_before_reset, a.reverse, width, lengths=len(call.args) > 6,
    ).with_attr("op_pattern", int(OpPatternKind.OPAQUE))
    gv = bb.add_func(func, f"recurrent_{a.kind.lower()}")
    return op.call_tir(gv, call.args, list(sinfo.fields))


for _name in ("relu", "gelu", "gelu_tanh", "silu"):
    register_legalize(getattr(op.nn, _name), te_rule(getattr(topi.nn, _name)))
register_legalize(op.nn.softmax, attrs_rule(topi.nn.softmax, lambda a: {"axis": a.axis}))
register_legalize(op.nn.log_softmax, attrs_rule(topi.nn.log_softmax, lambda a: {"axis": a.axis}))
register_legalize(
    op.nn.conv2d,
    attrs_rule(topi.nn.conv2d, lambda a: {**_conv(a), "out_layout": a.out_layout}),
)
register_legalize(
    op.nn.conv2d_transpose,
    attrs_rule(
        topi.nn.conv2d_transpose, lambda a: {**_conv(a), "output_padding": a.output_padding}
    ),
)
register_legalize(op.nn.max_pool2d, attrs_rule(topi.nn.max_pool2d, lambda a: _pool(a, False)))
register_legalize(op.nn.avg_pool2d, attrs_rule(topi.nn.avg_pool2d, lambda a: _pool(a, True)))
register_legalize(
    op.nn.adaptive_avg_pool2d,
    attrs_rule(
        topi.nn.adaptive_avg_pool2d, lambda a: {"output_size": a.output_size, "layout": a.layout}
    ),
)
register_legalize(op.nn.batch_norm, attrs_rule(topi.nn.batch_norm, lambda a: _norm(a, "axis")))
register_legalize(op.nn.layer_norm, attrs_rule(topi.nn.layer_norm, lambda a: _norm(a, "axes")))
register_legalize(
    op.nn.group_norm,
    attrs_rule(topi.nn.group_norm, lambda a: _norm(a, "num_groups", "channel_axis", "axes")),
)
register_legalize(op.nn.pad, legalize_pad)
register_legalize(op.nn.dropout, legalize_dropout)
register_legalize(op.nn.recurrent, legalize_recurrent)
