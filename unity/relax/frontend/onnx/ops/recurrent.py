"""RNN, GRU and LSTM: one matmul for every step's input projection, then `nn.recurrent`
(one kernel running the steps) per direction; the sequence length and batch may be symbolic,
and ``sequence_lens`` (any tensor) gives each row its own length.

Example:
    >>> sorted(CONVERTERS)
    ['GRU', 'LSTM', 'RNN']
"""

from __future__ import annotations

import numpy as np

from unity.relax import op as R
from unity.relax.expr import Expr, TupleGetItem
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter
from unity.relax.op.nn import RecurrentAttrs
from unity.topi.nn.recurrent import (
    ACTIVATIONS, DEFAULT_ACTIVATIONS, GATES, Activation, vector_width,
)  # fmt: skip


def _activations(ctx: Context, node: NodeView, dirs: int) -> list[tuple[Activation, ...]]:
    """Each direction's activations as (name, alpha, beta), ONNX's defaults filled in."""
    names = list(node.attr("activations", [])) or list(DEFAULT_ACTIVATIONS[node.op_type]) * dirs
    per_dir = len(DEFAULT_ACTIVATIONS[node.op_type])
    if len(names) != per_dir * dirs:
        raise ctx.fail(f"expects {per_dir * dirs} activations, got {len(names)}")
    for name in names:
        if name not in ACTIVATIONS:
            known = ", ".join(sorted(ACTIVATIONS))
            raise ctx.fail(f"has no activation {name!r} (supported: {known})")
    alphas, betas = list(node.attr("activation_alpha", [])), list(node.attr("activation_beta", []))
    acts = [(n, float(alphas[i]) if i < len(alphas) else None,
             float(betas[i]) if i < len(betas) else None) for i, n in enumerate(names)]  # fmt: skip
    return [tuple(acts[d * per_dir:(d + 1) * per_dir]) for d in range(dirs)]


def _pick(ctx: Context, value: Value | None, d: int) -> Expr | None:
    """Direction `d`'s slice of a per-direction input (None where the input is absent)."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return ctx.expr(np.asarray(value[d], order="C"))
    return ctx.emit(R.take(ctx.expr(value), ctx.expr(np.array(d, "int64")), 0))


def _packed(ctx: Context, r: Expr, gates: int, hidden: int) -> Expr:
    """``R (G*H, H)`` as the kernel's ``(H/V, H, G, V)`` blocks (folded for a constant)."""
    width = vector_width(hidden)
    blocks = ctx.emit(R.reshape(r, [gates, hidden // width, width, hidden]))
    return ctx.emit(R.permute_dims(blocks, [1, 3, 0, 2]))


def _or_zeros(ctx: Context, value: Expr | None, shape: tuple[object, ...], dtype: str) -> Expr:
    if value is not None:
        return value
    if all(getattr(d, "is_number", True) for d in shape):
        dims = tuple(int(d) for d in shape)  # type: ignore[call-overload]  # numbers
        return ctx.expr(np.zeros(dims, dtype))
    return ctx.emit(R.zeros(shape, dtype))


def _recurrent(ctx: Context, node: NodeView) -> list[Value]:
    """One `nn.recurrent` per direction over the input projection ``x @ W^T + Wb``."""
    x = ctx.expr(node.input(0))
    if node.attr("layout", 0):
        x = ctx.emit(R.permute_dims(x, [1, 0, 2]))
    seq, batch, inputs = ctx.shape(x)
    rows = ctx.emit(R.reshape(x, [-1, inputs]))  # every step's rows: one GEMM per direction
    lens = node.input(4)
    lengths = None if lens is None else ctx.emit(R.astype(ctx.expr(lens), "int64"))
    direction = node.attr("direction", "forward")
    dirs = 2 if direction == "bidirectional" else 1
    kind, hidden = node.op_type, int(node.attr("hidden_size"))
    gates, dtype = GATES[kind], ctx.dtype(x)
    clip = node.attr("clip")
    ys, hs, cs = [], [], []
    for d, acts in enumerate(_activations(ctx, node, dirs)):

        def lstm(value: Value | None, d: int = d) -> Expr | None:  # c0 and peepholes: LSTM's
            return _pick(ctx, value, d) if kind == "LSTM" else None

        w, r = _pick(ctx, node.input(1), d), _pick(ctx, node.input(2), d)
        assert w is not None and r is not None, "W and R are required inputs"
        xw = ctx.emit(R.matmul(rows, ctx.emit(R.permute_dims(w, [1, 0]))))
        bias = _pick(ctx, node.input(3), d)
        bias_r = None
        if bias is not None:
            xw = ctx.emit(R.add(xw, ctx.emit(R.strided_slice(bias, [0], [0], [gates * hidden]))))
            bias_r = ctx.emit(R.strided_slice(bias, [0], [gates * hidden], [2 * gates * hidden]))
        xw = ctx.emit(R.reshape(xw, [seq, batch, gates * hidden]))
        states = (batch, hidden)
        args = [
            xw, _packed(ctx, r, gates, hidden),
            _or_zeros(ctx, bias_r, (gates * hidden,), dtype),
            _or_zeros(ctx, _pick(ctx, node.input(5), d), states, dtype),
            _or_zeros(ctx, lstm(node.input(6)), states, dtype),
            _or_zeros(ctx, lstm(node.input(7)), (3 * hidden,), dtype),
        ]  # fmt: skip
        reverse = direction == "reverse" or d == 1
        attrs = RecurrentAttrs(kind, acts, None if clip is None else float(clip),
                               bool(node.attr("input_forget", 0)),
                               bool(node.attr("linear_before_reset", 0)), reverse)  # fmt: skip
        out = ctx.emit(R.nn.recurrent(*args, attrs, lengths))
        ys.append(ctx.emit(TupleGetItem(out, 0)))
        hs.append(ctx.emit(R.expand_dims(ctx.emit(TupleGetItem(out, 1)), [0])))
        cs.append(ctx.emit(R.expand_dims(ctx.emit(TupleGetItem(out, 2)), [0])))
    y = ctx.emit(R.concat([ctx.emit(R.expand_dims(v, [1])) for v in ys], 1))
    y_h = ctx.emit(R.concat(hs, 0))
    if node.attr("layout", 0):
        y = ctx.emit(R.permute_dims(y, [2, 0, 1, 3]))
        y_h = ctx.emit(R.permute_dims(y_h, [1, 0, 2]))
    outputs: list[Value] = [y, y_h]
    if kind == "LSTM":
        y_c = ctx.emit(R.concat(cs, 0))
        outputs.append(ctx.emit(R.permute_dims(y_c, [1, 0, 2])) if node.attr("layout", 0) else y_c)
    return outputs


CONVERTERS: dict[str, Converter] = {"RNN": _recurrent, "GRU": _recurrent, "LSTM": _recurrent}
