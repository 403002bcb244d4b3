"""RNN, GRU and LSTM, unrolled over a static sequence length (one matmul for all input steps).

Example:
    >>> sorted(CONVERTERS)
    ['GRU', 'LSTM', 'RNN']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from unity.relax import op as R
from unity.relax.expr import Expr
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter, const_like

Act = Callable[[Expr], Expr]

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_DEFAULT_ACTS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}


def _activation(ctx: Context, name: str, alpha: float | None, beta: float | None) -> Act:
    def k(x: Expr, v: float) -> Expr:
        return const_like(ctx, v, x)

    table: dict[str, Act] = {
        "Sigmoid": lambda x: ctx.emit(R.sigmoid(x)),
        "Tanh": lambda x: ctx.emit(R.tanh(x)),
        "Relu": lambda x: ctx.emit(R.nn.relu(x)),
        "Softsign": lambda x: ctx.emit(R.divide(x, ctx.emit(R.add(ctx.emit(R.abs(x)), k(x, 1))))),
        "Softplus": lambda x: ctx.emit(R.log(ctx.emit(R.add(ctx.emit(R.exp(x)), k(x, 1))))),
        "Affine": lambda x: ctx.emit(R.add(ctx.emit(R.multiply(x, k(x, alpha or 1.0))), k(x, beta or 0.0))),
        "LeakyRelu": lambda x: ctx.emit(R.where(ctx.emit(R.less(x, k(x, 0))),
                                                ctx.emit(R.multiply(x, k(x, alpha or 0.01))), x)),
        "ScaledTanh": lambda x: ctx.emit(R.multiply(ctx.emit(R.tanh(ctx.emit(R.multiply(x, k(x, beta or 1.0))))),
                                                    k(x, alpha or 1.0))),
        "HardSigmoid": lambda x: ctx.emit(R.clip(ctx.emit(R.add(ctx.emit(R.multiply(x, k(x, alpha or 0.2))),
                                                                 k(x, beta or 0.5))), 0.0, 1.0)),
    }  # fmt: skip
    if name not in table:
        raise ctx.fail(f"has no activation {name!r} (supported: {', '.join(sorted(table))})")
    return table[name]


@dataclass
class _Cell:
    """One direction's weights (already transposed for ``x @ w``) and its activations."""

    w: Expr
    r: Expr
    bias_w: Expr | None
    bias_r: Expr | None
    peep: Expr | None
    acts: list[Act]


def _pick(ctx: Context, value: Value | None, d: int) -> Expr | None:
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return ctx.expr(np.asarray(value[d], order="C"))
    return ctx.emit(R.take(ctx.expr(value), ctx.expr(np.array(d, "int64")), 0))


def _transposed(ctx: Context, value: Value | None, d: int) -> Expr:
    if isinstance(value, np.ndarray):
        return ctx.expr(np.asarray(value[d].T, order="C"))
    picked = _pick(ctx, value, d)
    assert picked is not None
    return ctx.emit(R.permute_dims(picked, [1, 0]))


def _cells(ctx: Context, node: NodeView, dirs: int, gates: int, hidden: int) -> list[_Cell]:
    names = list(node.attr("activations", []))
    per_dir = len(_DEFAULT_ACTS[node.op_type])
    names = names or _DEFAULT_ACTS[node.op_type] * dirs
    alphas, betas = list(node.attr("activation_alpha", [])), list(node.attr("activation_beta", []))
    acts = [_activation(ctx, n, alphas[i] if i < len(alphas) else None, betas[i] if i < len(betas) else None)
            for i, n in enumerate(names)]  # fmt: skip
    cells = []
    for d in range(dirs):
        bias = _pick(ctx, node.input(3), d)
        bias_w = bias_r = None
        if bias is not None:
            bias_w = ctx.emit(R.strided_slice(bias, [0], [0], [gates * hidden]))
            bias_r = ctx.emit(R.strided_slice(bias, [0], [gates * hidden], [2 * gates * hidden]))
        peep = _pick(ctx, node.input(7), d) if node.op_type == "LSTM" else None
        cells.append(_Cell(_transposed(ctx, node.input(1), d), _transposed(ctx, node.input(2), d),
                           bias_w, bias_r, peep, acts[d * per_dir:(d + 1) * per_dir]))  # fmt: skip
    return cells


def _parts(ctx: Context, x: Expr, count: int) -> list[Expr]:
    if count == 1:
        return [x]
    from unity.relax.expr import TupleGetItem

    tup = ctx.emit(R.split(x, count, axis=-1))
    return [ctx.emit(TupleGetItem(tup, i)) for i in range(count)]


def _clip(ctx: Context, node: NodeView, x: Expr) -> Expr:
    limit = node.attr("clip")
    return x if limit is None else ctx.emit(R.clip(x, -float(limit), float(limit)))


def _step(ctx: Context, node: NodeView, cell: _Cell, xw: Expr, h: Expr, c: Expr | None, hidden: int) -> tuple[
        Expr, Expr | None]:  # fmt: skip
    kind = node.op_type
    if kind == "GRU":
        return _gru_step(ctx, node, cell, xw, h, hidden), None
    hr = ctx.emit(R.matmul(h, cell.r))
    if cell.bias_r is not None:
        hr = ctx.emit(R.add(hr, cell.bias_r))
    pre = ctx.emit(R.add(xw, hr))
    if kind == "RNN":
        return cell.acts[0](_clip(ctx, node, pre)), None
    assert c is not None
    i, o, f, g = _parts(ctx, pre, 4)
    if cell.peep is not None:
        pi, po, pf = _parts(ctx, cell.peep, 3)
        i = ctx.emit(R.add(i, ctx.emit(R.multiply(pi, c))))
        f = ctx.emit(R.add(f, ctx.emit(R.multiply(pf, c))))
    act_f, act_g, act_h = cell.acts
    i, f = act_f(_clip(ctx, node, i)), act_f(_clip(ctx, node, f))
    if node.attr("input_forget", 0):
        f = ctx.emit(R.subtract(const_like(ctx, 1, f), i))
    c_new = ctx.emit(R.add(ctx.emit(R.multiply(f, c)), ctx.emit(R.multiply(i, act_g(_clip(ctx, node, g))))))
    if cell.peep is not None:
        o = ctx.emit(R.add(o, ctx.emit(R.multiply(po, c_new))))
    h_new = ctx.emit(R.multiply(act_f(_clip(ctx, node, o)), act_h(c_new)))
    return h_new, c_new


def _gru_step(ctx: Context, node: NodeView, cell: _Cell, xw: Expr, h: Expr, hidden: int) -> Expr:
    xz, xr, xh = _parts(ctx, xw, 3)
    rz, rr, rh = _parts(ctx, cell.r, 3)
    bz = br = bh = None
    if cell.bias_r is not None:
        bz, br, bh = _parts(ctx, cell.bias_r, 3)

    def recur(w: Expr, b: Expr | None, state: Expr) -> Expr:
        out = ctx.emit(R.matmul(state, w))
        return out if b is None else ctx.emit(R.add(out, b))

    act_f, act_g = cell.acts
    z = act_f(_clip(ctx, node, ctx.emit(R.add(xz, recur(rz, bz, h)))))
    r = act_f(_clip(ctx, node, ctx.emit(R.add(xr, recur(rr, br, h)))))
    if node.attr("linear_before_reset", 0):
        gated = ctx.emit(R.multiply(r, recur(rh, bh, h)))
    else:
        gated = recur(rh, bh, ctx.emit(R.multiply(r, h)))
    cand = act_g(_clip(ctx, node, ctx.emit(R.add(xh, gated))))
    keep = ctx.emit(R.multiply(z, h))
    return ctx.emit(R.add(ctx.emit(R.multiply(ctx.emit(R.subtract(const_like(ctx, 1, z), z)), cand)), keep))


def _initial(ctx: Context, value: Value | None, d: int, batch: int, hidden: int, dtype: str) -> Expr:
    picked = _pick(ctx, value, d)
    return picked if picked is not None else ctx.expr(np.zeros((batch, hidden), dtype))


def _recurrent(ctx: Context, node: NodeView) -> list[Value]:
    x = ctx.expr(node.input(0))
    if node.attr("layout", 0):
        x = ctx.emit(R.permute_dims(x, [1, 0, 2]))
    seq, batch, _ = ctx.shape(x)
    if not (seq.is_number and batch.is_number):
        raise ctx.fail(f"needs a static sequence length and batch, got ({seq}, {batch})")
    seq_n, batch_n = int(seq), int(batch)
    lens = node.input(4)
    if lens is not None and any(v != seq_n for v in ctx.ints(lens, "sequence_lens")):
        raise ctx.fail("supports only sequence_lens equal to the sequence length")
    direction = node.attr("direction", "forward")
    dirs = 2 if direction == "bidirectional" else 1
    gates, hidden = _GATES[node.op_type], int(node.attr("hidden_size"))
    dtype = ctx.dtype(x)
    ys, hs, cs = [], [], []
    for d, cell in enumerate(_cells(ctx, node, dirs, gates, hidden)):
        xw = ctx.emit(R.matmul(x, cell.w))
        if cell.bias_w is not None:
            xw = ctx.emit(R.add(xw, cell.bias_w))
        h = _initial(ctx, node.input(5), d, batch_n, hidden, dtype)
        c = _initial(ctx, node.input(6), d, batch_n, hidden, dtype) if node.op_type == "LSTM" else None
        reverse = direction == "reverse" or d == 1
        steps: list[Expr] = [None] * seq_n  # type: ignore[list-item]
        for t in (reversed(range(seq_n)) if reverse else range(seq_n)):
            xt = ctx.emit(R.take(xw, ctx.expr(np.array(t, "int64")), 0))
            h, c = _step(ctx, node, cell, xt, h, c, hidden)
            steps[t] = ctx.emit(R.expand_dims(h, [0]))
        ys.append(ctx.emit(R.concat(steps, 0)))
        hs.append(ctx.emit(R.expand_dims(h, [0])))
        if c is not None:
            cs.append(ctx.emit(R.expand_dims(c, [0])))
    y = ctx.emit(R.concat([ctx.emit(R.expand_dims(v, [1])) for v in ys], 1))
    y_h = ctx.emit(R.concat(hs, 0))
    if node.attr("layout", 0):
        y = ctx.emit(R.permute_dims(y, [2, 0, 1, 3]))
        y_h = ctx.emit(R.permute_dims(y_h, [1, 0, 2]))
    outputs: list[Value] = [y, y_h]
    if cs:
        y_c = ctx.emit(R.concat(cs, 0))
        outputs.append(ctx.emit(R.permute_dims(y_c, [1, 0, 2])) if node.attr("layout", 0) else y_c)
    return outputs


CONVERTERS: dict[str, Converter] = {"RNN": _recurrent, "GRU": _recurrent, "LSTM": _recurrent}
