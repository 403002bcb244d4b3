"""Per-op layout rules for `ConvertLayout`: how each op family follows a permuted input.

A tensor's layout is relative to its original value: a *permutation* ``p`` means the
tensor now held is ``permute_dims(original, p)``; a `Blocked` layout means axis 1 of the
original (the channels) is split into blocks with the lanes moved last ("NCHW16c"); ``None``
is the original layout.  A rule sees the call (with its original arguments) and the current
layouts of those arguments, and returns a `Decision`: the layout each argument must be
converted to, the layout of the result, and the new attrs. ``None`` means "no rule": the
pass then feeds the op its arguments in their original layouts.

The rules here handle permutations; `blocked_layout_rules.py` has those for blocked
layouts.  Anchors (conv2d, pooling) take their layout from the desired-layout table; every
other rule only *follows* the layout of its inputs, so an op whose inputs are all in their
original layout never changes.

Example:
    >>> decide_layout(op.nn.relu(x), [(0, 2, 3, 1)], None).out  # doctest: +SKIP
    (0, 2, 3, 1)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from unity.ir.op import Op
from unity.relax import op
from unity.relax.expr import Attrs, Call
from unity.relax.op.nn.convolution import Conv2DAttrs
from unity.relax.struct_info import TensorStructInfo, TupleStructInfo

Perm = tuple[int, ...]
"""``permute_dims`` axes that take the original tensor to the one now held."""


@dataclass(frozen=True)
class Blocked:
    """Axis 1 (the channels) of the original value split into blocks of `block` lanes, which
    move last: ``held[n, c // block, *rest, c % block] == original[n, c, *rest]``.

    An NCHW value in ``Blocked(16)`` is held as "NCHW16c", shape (N, C/16, H, W, 16);
    `ndim` is the rank of the original value (a reduction over H and W may leave 2).
    Where C is no multiple of the block, `channels` is C and the last block is padded:
    (N, ceil(C/16), H, W, 16), the lanes past C holding finite values no result depends on
    (zeros where a conversion or a conv writes them, met by zero weights in the next conv;
    see `blocked_layout_rules`).

    Example:
        >>> Blocked(16).block, Blocked(16).ndim, Blocked(16, 4, 24).padded
        (16, 4, 32)
    """

    block: int
    ndim: int = 4
    channels: int | None = None
    """The original channel count where it is no multiple of `block` (None: whole blocks)."""

    @property
    def padded(self) -> int | None:
        """The channels held (`channels` rounded up to whole blocks), None for whole blocks."""
        return None if self.channels is None else whole_blocks(self.channels, self.block)


def whole_blocks(c: int, block: int) -> int:
    """`c` channels rounded up to whole blocks of `block` lanes.

    Example:
        >>> whole_blocks(24, 16), whole_blocks(32, 16)
        (32, 32)
    """
    return -(-c // block) * block


@dataclass(frozen=True)
class Padded:
    """A weight permuted by `perm` (None: as given), then zero-padded at the end of each
    axis to `shape` (a conv's kernel whose channels were padded to whole blocks).

    Example:
        >>> Padded(None, (32, 32, 3, 3)).shape
        (32, 32, 3, 3)
    """

    perm: tuple[int, ...] | None
    shape: tuple[int, ...]


@dataclass(frozen=True)
class TupleLayout:
    """The layouts of the fields of a tuple value (``None`` per field = original).

    Example:
        >>> layout = TupleLayout(((0, 2, 3, 1), None))  # field 0 is NHWC, field 1 as given
        >>> layout.fields[1] is None
        True
    """

    fields: tuple[Perm | Blocked | TupleLayout | None, ...]


Layout = Perm | Blocked | Padded | TupleLayout | None
"""What a value's layout can be: a tensor perm, a channel-blocked tensor, a padded weight,
per-field layouts, or the original."""


@dataclass(frozen=True)
class Decision:
    """What a rule decided for one call.

    Example:
        >>> d = Decision(args=((0, 2, 3, 1),), out=(0, 2, 3, 1), attrs=None)
        >>> d.out
        (0, 2, 3, 1)
    """

    args: tuple[Layout, ...]
    """The layout each argument must be given in (a lower-rank tensor is broadcast to it)."""
    out: Layout
    """The layout of the result."""
    attrs: Attrs | None
    """The attrs of the rewritten call."""


Layouts = Sequence[Layout]
"""The current layout of each argument of a call."""
Desired = Sequence[str] | None
"""The desired ``[data_layout, kernel_layout]`` of an anchor op (None: follow the inputs)."""
Rule = Callable[[Call, Layouts, Desired], Decision | None]
"""``rule(call, arg_layouts, desired) -> Decision | None``."""


def normalize(perm: Layout) -> Layout:
    """Return None for an identity perm (or a tuple layout of identities), else `perm`.

    Example:
        >>> normalize((0, 1, 2)) is None
        True
    """
    if isinstance(perm, TupleLayout):
        fields = tuple(normalize(f) for f in perm.fields)
        return None if all(f is None for f in fields) else TupleLayout(fields)
    if isinstance(perm, (Blocked, Padded)):
        return perm
    if perm is None or perm == tuple(range(len(perm))):
        return None
    return perm


def perm_between(src: str, dst: str) -> Perm:
    """The perm taking a tensor in layout `src` to layout `dst` (same letters).

    Example:
        >>> perm_between("NCHW", "NHWC")
        (0, 2, 3, 1)
    """
    if sorted(src) != sorted(dst):
        raise ValueError(f"layout {dst!r} is not a permutation of {src!r}")
    return tuple(src.index(c) for c in dst)


def with_attrs(attrs: Attrs | None, **changes: object) -> Attrs:
    """`attrs` with `changes` (every rule's attrs class is a dataclass with those fields).

    Example:
        >>> from unity.relax.op.statistical import ReduceAttrs
        >>> with_attrs(ReduceAttrs((1,), False), keepdims=True)
        ReduceAttrs(axis=(1,), keepdims=True)
    """
    return dataclasses.replace(attrs, **changes)  # type: ignore[arg-type, type-var]  # see above


def _rank(call: Call, index: int) -> int:
    sinfo = call.args[index].struct_info_
    return sinfo.ndim if isinstance(sinfo, TensorStructInfo) else -1


def _out_rank(call: Call) -> int:
    sinfo = call.struct_info_
    return sinfo.ndim if isinstance(sinfo, TensorStructInfo) else -1


def _conv(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    attrs = call.attrs
    if not desired or not isinstance(attrs, Conv2DAttrs):
        return None
    if attrs.out_layout not in (None, attrs.data_layout):
        return None  # its result is in another layout than its data (channel-blocked)
    data = desired[0]
    kernel = attrs.kernel_layout
    if len(desired) > 1 and desired[1] != "default":
        kernel = desired[1]
    p = normalize(perm_between(attrs.data_layout, data))
    pk = normalize(perm_between(attrs.kernel_layout, kernel))
    out_layout = None if attrs.out_layout is None else data
    new = with_attrs(attrs, data_layout=data, kernel_layout=kernel, out_layout=out_layout)
    return Decision((p, pk), p, new)


def _pool(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    attrs = call.attrs
    layout: str = attrs.layout  # type: ignore[union-attr]
    p = perm_between(layout, desired[0]) if desired else layouts[0]
    if not isinstance(p, tuple) or len(p) != 4:
        return None
    new = with_attrs(attrs, layout="".join(layout[i] for i in p))
    return Decision((normalize(p),), normalize(p), new)


def _unary(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    p = layouts[0]
    return Decision((p,), p, call.attrs) if isinstance(p, tuple) else None


def _broadcast(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    rank = _out_rank(call)
    ranks = [_rank(call, i) for i in range(len(call.args))]
    if rank < 0 or any(r < 0 for r in ranks):
        return None
    full = [p for p, r in zip(layouts, ranks, strict=True) if r == rank and isinstance(p, tuple)]
    if not full:
        return None
    p = full[0]  # the first permuted full-rank input sets the layout; the others follow
    return Decision(tuple(p for _ in call.args), p, call.attrs)


def _position(p: Perm, axis: int) -> int:
    return p.index(axis % len(p))


def _reduce(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    p, attrs = layouts[0], call.attrs
    if not isinstance(p, tuple):
        return None
    if attrs.axis is None:  # type: ignore[union-attr]
        return Decision((p,), p if attrs.keepdims else None, attrs)  # type: ignore[union-attr]
    axes = {a % len(p) for a in attrs.axis}  # type: ignore[union-attr]
    new = with_attrs(attrs, axis=tuple(sorted(p.index(a) for a in axes)))
    if attrs.keepdims:  # type: ignore[union-attr]
        return Decision((p,), p, new)
    kept = [a for a in range(len(p)) if a not in axes]  # original axes left, in original order
    out = tuple(kept.index(a) for a in p if a not in axes)
    return Decision((p,), normalize(out), new)


def _axis(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    p = layouts[0]
    if not isinstance(p, tuple):
        return None
    new = with_attrs(call.attrs, axis=_position(p, call.attrs.axis))
    return Decision((p,), p, new)


def _batch_norm(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    p = layouts[0]
    if not isinstance(p, tuple):
        return None
    new = with_attrs(call.attrs, axis=_position(p, call.attrs.axis))
    return Decision((p, None, None, None, None), TupleLayout((p, None, None)), new)


def _layer_norm(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    p = layouts[0]
    if not isinstance(p, tuple):
        return None
    # gamma/beta are indexed in the order of `axes`, so mapping each axis keeps their shape
    axes = tuple(_position(p, a) for a in call.attrs.axes)  # type: ignore[union-attr]
    return Decision((p, None, None), p, with_attrs(call.attrs, axes=axes))


def _concat(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    fields = layouts[0]
    if not isinstance(fields, TupleLayout):
        return None
    full = [f for f in fields.fields if isinstance(f, tuple)]
    if not full:
        return None
    p = full[0]
    arity = len(fields.fields)
    if any(_rank_of_field(call, i) != len(p) for i in range(arity)):
        return None
    new = with_attrs(call.attrs, axis=_position(p, call.attrs.axis))
    return Decision((TupleLayout((p,) * arity),), p, new)


def _pad(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    p = layouts[0]
    if not isinstance(p, tuple):
        return None
    widths = call.attrs.pad_width  # type: ignore[union-attr]  # PadAttrs
    new = tuple(w for a in p for w in (widths[2 * a], widths[2 * a + 1]))
    return Decision((p,), p, with_attrs(call.attrs, pad_width=new))


def _split(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    p, sinfo = layouts[0], call.struct_info_
    if not isinstance(p, tuple) or not hasattr(sinfo, "fields"):
        return None
    new = with_attrs(call.attrs, axis=_position(p, call.attrs.axis))  # type: ignore[union-attr]
    return Decision((p,), TupleLayout((p,) * len(sinfo.fields)), new)  # type: ignore[union-attr]


def _strided_slice(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    p = layouts[0]
    if not isinstance(p, tuple):
        return None
    axes = tuple(_position(p, a) for a in call.attrs.axes)  # type: ignore[union-attr]
    return Decision((p,), p, with_attrs(call.attrs, axes=axes))


def _rank_of_field(call: Call, index: int) -> int:
    sinfo = call.args[0].struct_info_  # a tuple literal or a var bound to one
    field = sinfo.fields[index] if isinstance(sinfo, TupleStructInfo) else None
    return field.ndim if isinstance(field, TensorStructInfo) else -1


ANCHORS: frozenset[Op] = frozenset({
    op.nn.conv2d, op.nn.conv2d_transpose, op.nn.max_pool2d, op.nn.avg_pool2d,
    op.nn.adaptive_avg_pool2d,
})  # fmt: skip
"""Ops that may be given a desired layout."""

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
_REDUCE = (op.sum, op.mean, op.max, op.min, op.prod, op.variance, op.argmax, op.argmin)

RULES: dict[Op, Rule] = {
    op.nn.conv2d: _conv,
    op.nn.conv2d_transpose: _conv,
    op.nn.max_pool2d: _pool,
    op.nn.avg_pool2d: _pool,
    op.nn.adaptive_avg_pool2d: _pool,
    **{o: _unary for o in _UNARY},
    **{o: _broadcast for o in _BROADCAST},
    **{o: _reduce for o in _REDUCE},
    op.nn.softmax: _axis,
    op.nn.log_softmax: _axis,
    op.concat: _concat,
    op.split: _split,
    op.strided_slice: _strided_slice,
    op.nn.pad: _pad,
    op.nn.batch_norm: _batch_norm,
    op.nn.layer_norm: _layer_norm,
}
"""The layout rule of each op family; ops not listed get their inputs in the original layout."""


def decide_layout(call: Call, layouts: Layouts, desired: Desired) -> Decision | None:
    """Ask the rule of `call`'s op how it runs on arguments in `layouts` (None: no rule).

    Example:
        >>> decide_layout(op.nn.relu(x), [(0, 2, 3, 1)], None).out  # doctest: +SKIP
        (0, 2, 3, 1)
    """
    rule = RULES.get(call.op) if isinstance(call.op, Op) else None
    return None if rule is None else rule(call, layouts, desired)
