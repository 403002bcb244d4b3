"""`nn.recurrent`: one direction of an RNN / GRU / LSTM over a whole sequence.

The input projection is done before (``xw = x @ W^T + Wb``, any matmul); the op runs the
recurrence, step after step, over a sequence length and batch that may be symbolic.  Its
recurrent weights come packed by blocks of hidden units, the layout its kernel streams
(`unity.topi.nn.recurrent`): ``rt[block, k, gate, lane] = R[gate * H + block * V + lane, k]``
with ``V`` lanes per block.  An optional last argument ``lens (batch,)`` (int64) gives each
row's length (ONNX's ``sequence_lens``).  The result is the tuple ``(Y, Hn, C)``: every
step's ``h`` ``(seq, batch, H)`` in input order (zero beyond a row's length), the last
``h``, and the last cell state (LSTM) or the last ``h``.

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo as T
    >>> xw = Var("xw", T(("s", "n", 64), "float32"))
    >>> args = [Var(k, T(s, "float32")) for k, s in [("rt", (1, 16, 4, 16)), ("b", (64,)),
    ...         ("h0", ("n", 16)), ("c0", ("n", 16)), ("p", (48,))]]
    >>> [f.shape for f in _infer_recurrent(recurrent(xw, *args, RecurrentAttrs("LSTM"))).fields]
    [(s, n, 16), (n, 16), (n, 16)]
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import RelaxOp, fail, register_op, tensor_arg
from unity.relax.struct_info import StructInfo, TensorStructInfo, TupleStructInfo
from unity.topi.nn.recurrent import GATES as _GATES


@dataclass(frozen=True, slots=True)
class RecurrentAttrs(Attrs):
    """The kind (``RNN``, ``GRU``, ``LSTM``), the activations as (name, alpha, beta) (empty:
    ONNX's defaults), the clip, LSTM's ``input_forget``, GRU's ``linear_before_reset`` and
    whether the steps run from the last input to the first.

    Example:
        >>> RecurrentAttrs("GRU", linear_before_reset=True).kind
        'GRU'
    """

    kind: str
    activations: tuple[tuple[str, float | None, float | None], ...] = ()
    clip: float | None = None
    input_forget: bool = False
    linear_before_reset: bool = False
    reverse: bool = False


_ARGS = (("xw", 3, "(seq, batch, gates * H)"), ("rt", 4, "(H / V, H, gates, V)"),
         ("bias", 1, "(gates * H,)"), ("h0", 2, "(batch, H)"), ("c0", 2, "(batch, H)"),
         ("peep", 1, "(3 * H,)"))  # fmt: skip


def _infer_recurrent(call: Call) -> StructInfo:
    attrs = call.attrs
    assert isinstance(attrs, RecurrentAttrs)
    if attrs.kind not in _GATES:
        raise fail(call, f"has no kind {attrs.kind!r} (RNN, GRU or LSTM)")
    if len(call.args) not in (len(_ARGS), len(_ARGS) + 1):
        raise fail(call, f"takes {len(_ARGS)} arguments and optional lengths, got {len(call.args)}")
    infos = [tensor_arg(call, i, name) for i, (name, _, _) in enumerate(_ARGS)]
    if len(call.args) > len(_ARGS):
        lens = tensor_arg(call, len(_ARGS), "lens")
        if lens.dtype != "int64" or lens.ndim not in (-1, 1):
            raise fail(call, f"expects lens of shape (batch,) and int64, got {lens.dtype} "
                             f"of rank {lens.ndim}")  # fmt: skip
    dtype = infos[0].dtype
    for info, (name, rank, layout) in zip(infos, _ARGS, strict=True):
        if info.dtype != dtype or not dtype.startswith(("float", "bfloat")):
            raise fail(call, f"expects {name} of xw's float dtype {dtype}, got {info.dtype}")
        if info.ndim not in (-1, rank):
            raise fail(call, f"expects {name} of shape {layout}, got rank {info.ndim}")
    xw, rt = infos[0], infos[1]
    if xw.shape is None or rt.shape is None or not all(d.is_number for d in rt.shape):
        raise fail(call, "needs the shapes of xw and of the (constant-shaped) packed weights")
    blocks, hidden, gates, lanes = (int(d) for d in rt.shape)
    if gates != _GATES[attrs.kind] or blocks * lanes != hidden:
        raise fail(call, f"expects {attrs.kind} weights packed as (H / V, H, "
                         f"{_GATES[attrs.kind]}, V), got {tuple(rt.shape)}")  # fmt: skip
    seq, batch, columns = xw.shape
    if columns.is_number and int(columns) != gates * hidden:
        raise fail(call, f"expects xw of {gates * hidden} columns, got {columns}")
    state = TensorStructInfo((batch, hidden), dtype)
    return TupleStructInfo((TensorStructInfo((seq, batch, hidden), dtype), state, state))


@register_op("nn.recurrent", infer=_infer_recurrent)
def recurrent(op: RelaxOp, xw: Expr, rt: Expr, bias: Expr, h0: Expr, c0: Expr, peep: Expr,
              attrs: RecurrentAttrs, lens: Expr | None = None) -> Call:  # fmt: skip
    """Run one direction of a recurrent layer over every step of `xw` (see the module).

    Example:
        >>> recurrent(xw, rt, b, h0, c0, p, RecurrentAttrs("RNN")).op.name  # doctest: +SKIP
        'relax.nn.recurrent'
    """
    args = (xw, rt, bias, h0, c0, peep) if lens is None else (xw, rt, bias, h0, c0, peep, lens)
    return Call(op, args, attrs)
