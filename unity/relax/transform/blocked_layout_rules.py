"""Per-op layout rules for `ConvertLayout` on channel-blocked values ("NCHW16c").

A value in layout ``Blocked(b)`` is the original NCHW value with its channels split into
blocks of ``b`` lanes moved last: (N, C/b, H, W, b).  Rules that keep a value blocked:

- conv2d (an anchor: desired ``["NCHW16c", "OIHW"]``) when its data is 4-D NCHW, C and O
  are multiples of b, and its groups are block-aligned ((C/groups) % b == 0 and
  (O/groups) % b == 0) or depthwise (groups == C == O); the kernel becomes OIHW.
- conv2d whose input channels are not whole blocks (an image's 3, or 24) with groups == 1
  and O a multiple of b: it reads its data in the original NCHW layout and writes the
  blocked result directly (``out_layout="NCHW16c"``), so only its input may need a copy.
- max/avg/adaptive-avg pooling (layout "NCHW" -> "NCHW{b}c"), as an anchor or a follower.
- unary elementwise ops; broadcast binary ops, whose other operands are blocked the same way
  (per-channel operands such as (C, 1, 1) become (1, C/b, 1, 1, b), scalar-like ones stay).
- concat of blocked 4-D values whose channel counts are all multiples of b (the axis keeps
  its number: axis 1 of the 5-D tensors concatenates whole blocks).
- sum/mean/max/min/prod/variance over spatial axes only (axes >= 2), with or without
  keepdims (a global average pool written as ``mean(x, [2, 3], keepdims=True)``).

Channel counts that are no multiple of b (MobileNets' 24, 40, 72, 88, 120) stay blocked
with their last block padded (``Blocked(b, channels=C)``, `paddable`: at most `MAX_PADDING`
more channels): a conv without groups, or depthwise, takes a kernel zero-padded to whole
blocks of output and input channels (`Padded`), so the padded lanes of its result are
zeros and padded input lanes meet zero weights.  Between convs the padded lanes only have
to stay finite (a NaN or an infinity times a zero weight would reach real channels), so on
padded values only the ops in `FINITE_UNARY` and `FINITE_BINARY` stay blocked, a division
only by a scalar-like divisor; per-channel operands are padded with zeros.  A padded value
is unblocked by slicing its first C channels.

Every other op (and every rule above that declines) gets its inputs in the original layout.

Example:
    >>> decide_blocked_layout(op.nn.relu(x), [Blocked(16)], None).out  # doctest: +SKIP
    Blocked(block=16, ndim=4)
"""

from __future__ import annotations

from collections.abc import Sequence

from unity.ir.op import Op
from unity.relax import op
from unity.relax.expr import Call
from unity.relax.op.nn.convolution import Conv2DAttrs
from unity.relax.struct_info import Dim, TensorStructInfo, TupleStructInfo
from unity.relax.transform.layout_rules import (
    Blocked,
    Decision,
    Desired,
    Layout,
    Layouts,
    Padded,
    Rule,
    TupleLayout,
    normalize,
    perm_between,
    whole_blocks,
    with_attrs,
)  # fmt: skip
from unity.topi.nn.layout import blocked_layout


def desired_block(desired: Desired) -> int | None:
    """The block of a desired channel-blocked data layout ("NCHW16c" -> 16), else None.

    Example:
        >>> desired_block(["NCHW16c", "OIHW"]), desired_block(["NHWC"]), desired_block(None)
        (16, None, None)
    """
    blocked = blocked_layout(desired[0]) if desired else None
    return None if blocked is None else blocked[1]


def wants_blocked(layouts: Layouts, desired: Desired) -> bool:
    """Whether the blocked rules decide a call: a blocked desired layout, or (for a call
    without one) an argument held blocked.

    Example:
        >>> wants_blocked([Blocked(8), None], None), wants_blocked([Blocked(8)], ["NHWC"])
        (True, False)
    """
    if desired:
        return desired_block(desired) is not None
    return any(_has_blocked(layout) for layout in layouts)


def _has_blocked(layout: Layout) -> bool:
    if isinstance(layout, TupleLayout):
        return any(_has_blocked(f) for f in layout.fields)
    return isinstance(layout, Blocked)


def _static(dim: Dim) -> int | None:
    return int(dim) if dim.is_number else None


def _shape(sinfo: object) -> tuple[Dim, ...] | None:
    return sinfo.shape if isinstance(sinfo, TensorStructInfo) else None


def _channels(sinfo: object, ndim: int) -> int | None:
    """The static channel count of a tensor of rank `ndim` (axis 1), else None."""
    shape = _shape(sinfo)
    if shape is None or len(shape) != ndim:
        return None
    return _static(shape[1])


def aligned(c: int, o: int, groups: int, block: int) -> bool:
    """Whether a conv2d of `c` -> `o` channels in `groups` runs on `block`-lane blocks.

    Example:
        >>> aligned(32, 64, 1, 16), aligned(32, 32, 32, 16), aligned(32, 32, 4, 16)
        (True, True, False)
    """
    if c % block or o % block:
        return False
    if groups == 1 or c == o == groups:
        return True
    return (c // groups) % block == 0 and (o // groups) % block == 0


def writes_blocked(c: int, o: int, groups: int, block: int) -> bool:
    """Whether a conv2d of `c` -> `o` channels that does not run on `block`-lane blocks reads
    NCHW data and writes "NCHW{block}c" (``out_layout``): no groups, output channels
    `paddable` (the last block padded where they are no whole blocks).

    Example:
        >>> writes_blocked(3, 64, 1, 16), writes_blocked(24, 32, 1, 16)
        (True, True)
        >>> writes_blocked(3, 24, 1, 16)  # 24 output channels: two blocks, the last padded
        True
        >>> writes_blocked(32, 64, 1, 16), writes_blocked(3, 8, 1, 16)
        (False, False)
        >>> writes_blocked(24, 48, 3, 16)  # groups: the conv keeps its NCHW layout
        False
    """
    return c % block != 0 and groups == 1 and paddable(o, block)


MAX_PADDING = 0.5
"""The largest share of a channel count its padding to whole blocks may add (24 -> 32 and
40 -> 48 take it; 8 -> 16 does not)."""


def paddable(c: int, block: int) -> bool:
    """Whether `c` channels are whole blocks or pad to them within `MAX_PADDING`.

    Example:
        >>> [paddable(c, 16) for c in (32, 24, 40, 72, 8, 3)]
        [True, True, True, True, False, False]
    """
    return whole_blocks(c, block) - c <= MAX_PADDING * c


def blocked(block: int, c: int, ndim: int = 4) -> Blocked:
    """The blocked layout of a value of `c` channels: padded where `c` is no multiple of
    `block`.

    Example:
        >>> blocked(16, 32), blocked(16, 24)
        (Blocked(block=16, ndim=4, channels=None), Blocked(block=16, ndim=4, channels=24))
    """
    return Blocked(block, ndim, None if c % block == 0 else c)


def pads_blocked(c: int, o: int, groups: int, block: int) -> bool:
    """Whether a conv2d of `c` -> `o` channels runs on `block`-lane blocks with its channels
    padded to whole blocks: no groups or depthwise, both counts `paddable`.

    Example:
        >>> pads_blocked(24, 144, 1, 16), pads_blocked(72, 72, 72, 16), pads_blocked(8, 32, 1, 16)
        (True, True, False)
        >>> pads_blocked(48, 48, 2, 16)  # grouped: its groups would straddle the blocks
        False
    """
    if not (groups == 1 or c == o == groups):
        return False
    return paddable(c, block) and paddable(o, block)


def _conv(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    block, attrs = desired_block(desired), call.attrs
    assert isinstance(attrs, Conv2DAttrs)
    if block is None or call.op is not op.nn.conv2d or attrs.data_layout != "NCHW":
        return None
    if attrs.out_layout not in (None, "NCHW"):
        return None  # already writes another layout
    kernel_layout = attrs.kernel_layout
    c = _channels(call.args[0].struct_info_, 4)
    w = _shape(call.args[1].struct_info_)
    if c is None or w is None or len(w) != 4 or any(_static(d) is None for d in w):
        return None
    kernel = tuple(int(w[kernel_layout.index(a)]) for a in "OIHW")  # its (O, I, KH, KW)
    o, pk = kernel[0], normalize(perm_between(kernel_layout, "OIHW"))
    data = layouts[0]  # held in these blocks already, or whole blocks: no padding copy in
    held = (isinstance(data, Blocked) and data.block == block) or c % block == 0
    if aligned(c, o, attrs.groups, block) or (held and pads_blocked(c, o, attrs.groups, block)):
        groups, k = attrs.groups, pk
        if c % block or o % block:  # the kernel's padded outputs and inputs are zeros
            depthwise = attrs.groups > 1  # (`pads_blocked` takes no other groups)
            groups = whole_blocks(c, block) if depthwise else 1
            inputs = kernel[1] if depthwise else whole_blocks(c, block)
            k = Padded(pk, (whole_blocks(o, block), inputs, *kernel[2:]))
        new = with_attrs(attrs, data_layout=f"NCHW{block}c", kernel_layout="OIHW", out_layout=None,
                         groups=groups)  # fmt: skip
        return Decision((blocked(block, c), k), blocked(block, o), new)
    if writes_blocked(c, o, attrs.groups, block):
        k = pk if o % block == 0 else Padded(pk, (whole_blocks(o, block), *kernel[1:]))
        new = with_attrs(attrs, kernel_layout="OIHW", out_layout=f"NCHW{block}c")
        return Decision((None, k), blocked(block, o), new)
    return None


def _pool(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    block = desired_block(desired)
    if block is None and isinstance(layouts[0], Blocked):
        block = layouts[0].block
    c = _channels(call.args[0].struct_info_, 4)
    layout: str = call.attrs.layout  # type: ignore[union-attr]  # (Adaptive)Pool2DAttrs
    if block is None or layout != "NCHW" or c is None:
        return None
    held = layouts[0]
    if c % block and not (isinstance(held, Blocked) and (held.block, held.channels) == (block, c)):
        return None  # pads only what is held padded already
    new = with_attrs(call.attrs, layout=f"NCHW{block}c")
    return Decision((blocked(block, c),), blocked(block, c), new)


def _unary(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    layout = layouts[0]
    if not isinstance(layout, Blocked) or (layout.channels and call.op not in FINITE_UNARY):
        return None
    return Decision((layout,), layout, call.attrs)


def _broadcast(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    out = _shape(call.struct_info_)
    full = [b for b in layouts if isinstance(b, Blocked) and out is not None and b.ndim == len(out)]
    if not full or out is None:
        return None
    layout, c = full[0], _static(out[1])  # the first blocked full-rank input sets the layout
    shapes = [_shape(a.struct_info_) for a in call.args]
    if c is None or any(s is None or not _blockable(s, layout.ndim, c) for s in shapes):
        return None
    if layout.channels and not _keeps_finite(call, shapes):  # type: ignore[arg-type]
        return None
    return Decision(tuple(layout for _ in call.args), layout, call.attrs)


def _keeps_finite(call: Call, shapes: Sequence[Sequence[Dim]]) -> bool:
    """Whether a binary op on padded values leaves finite padded lanes finite: an op of
    `FINITE_BINARY`, or a division by a scalar-like divisor."""
    if call.op is op.divide:
        return all(_static(d) == 1 for d in shapes[1])
    return call.op in FINITE_BINARY


def _blockable(shape: Sequence[Dim], ndim: int, c: int) -> bool:
    """An operand broadcast against (N, C, ...) of rank `ndim` is scalar-like, has no channel
    extent (1), or has all `c` channels (at axis 1 of its shape padded to rank `ndim`)."""
    static = [_static(d) for d in shape]
    if len(static) > ndim:
        return False
    if all(d == 1 for d in static):
        return True
    padded = [1] * (ndim - len(static)) + static
    return padded[1] in (1, c)


def _concat(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    fields, sinfo = layouts[0], call.args[0].struct_info_
    if not isinstance(fields, TupleLayout) or not isinstance(sinfo, TupleStructInfo):
        return None
    blocked = [f for f in fields.fields if isinstance(f, Blocked)]
    if not blocked or blocked[0].ndim != 4:
        return None
    layout = blocked[0]
    channels = [_channels(f, 4) for f in sinfo.fields]
    if any(c is None or c % layout.block for c in channels):
        return None
    new = with_attrs(call.attrs, axis=call.attrs.axis % 4)  # type: ignore[union-attr]
    return Decision((TupleLayout((layout,) * len(channels)),), layout, new)


def _reduce(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    layout, attrs = layouts[0], call.attrs
    if not isinstance(layout, Blocked):
        return None
    keepdims: bool = attrs.keepdims  # type: ignore[union-attr]  # ReduceAttrs
    if attrs.axis is None:  # type: ignore[union-attr]
        return None if keepdims else Decision((layout,), None, attrs)  # a scalar: any layout
    axes = tuple(sorted({a % layout.ndim for a in attrs.axis}))  # type: ignore[union-attr]
    if axes[0] < 2:
        return None  # reduces over the batch or the channels
    out = layout if keepdims else Blocked(layout.block, layout.ndim - len(axes), layout.channels)
    return Decision((layout,), out, with_attrs(attrs, axis=axes))


_UNARY = (
    op.abs, op.negative, op.sign, op.square, op.floor, op.ceil, op.round, op.exp, op.log,
    op.sqrt, op.rsqrt, op.sin, op.cos, op.tan, op.tanh, op.sigmoid, op.erf, op.logical_not,
    op.bitwise_not, op.isnan, op.isinf, op.isfinite, op.clip, op.astype, op.nn.relu,
    op.nn.gelu, op.nn.gelu_tanh, op.nn.silu,
)
_BROADCAST = (
    op.add, op.subtract, op.multiply, op.divide, op.floor_divide, op.mod, op.floor_mod,
    op.power, op.maximum, op.minimum, op.bitwise_and, op.bitwise_or, op.equal, op.not_equal,
    op.less, op.less_equal, op.greater, op.greater_equal, op.logical_and, op.logical_or,
    op.where,
)
_REDUCE = (op.sum, op.mean, op.max, op.min, op.prod, op.variance)

FINITE_UNARY = frozenset({
    op.abs, op.negative, op.sign, op.square, op.floor, op.ceil, op.round, op.tanh,
    op.sigmoid, op.erf, op.logical_not, op.bitwise_not, op.isnan, op.isinf, op.isfinite,
    op.clip, op.astype, op.nn.relu, op.nn.gelu, op.nn.gelu_tanh, op.nn.silu,
})  # fmt: skip
"""Unary ops that keep a padded value blocked: a finite input gives a finite output
(`log`, `sqrt` and `rsqrt` of the zeros a conv leaves would not, `exp` and `tan` of
moderate values may not)."""
FINITE_BINARY = frozenset({
    op.add, op.subtract, op.multiply, op.maximum, op.minimum, op.bitwise_and, op.bitwise_or,
    op.equal, op.not_equal, op.less, op.less_equal, op.greater, op.greater_equal,
    op.logical_and, op.logical_or, op.where,
})  # fmt: skip
"""Broadcast ops that keep padded values blocked (and `divide` by a scalar-like divisor)."""

BLOCKED_RULES: dict[Op, Rule] = {
    op.nn.conv2d: _conv,
    op.nn.max_pool2d: _pool,
    op.nn.avg_pool2d: _pool,
    op.nn.adaptive_avg_pool2d: _pool,
    **{o: _unary for o in _UNARY},
    **{o: _broadcast for o in _BROADCAST},
    **{o: _reduce for o in _REDUCE},
    op.concat: _concat,
}
"""The rule of each op that can keep a value channel-blocked; others get original layouts."""


def decide_blocked_layout(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    """Ask the blocked rule of `call`'s op how it runs on arguments in `layouts`.

    Example:
        >>> decide_blocked_layout(op.nn.relu(x), [Blocked(16)], None).out  # doctest: +SKIP
        Blocked(block=16, ndim=4)
    """
    rule = BLOCKED_RULES.get(call.op) if isinstance(call.op, Op) else None
    return None if rule is None else rule(call, layouts, desired)
