"""Convolution and pooling ONNX ops (1-D runs as 2-D with a unit height, a 3-D conv as one
2-D conv over stacked depth taps, a 3-D transposed conv as a 2-D one per depth tap, 3-D
pooling as two 2-D poolings; auto_pad resolved here).  A 2-D transposed conv stays one
`conv2d_transpose` (the `DecomposeConvTranspose` pass runs it as a conv over its phases).

Example:
    >>> same_pads(7, 3, 2, 1, "SAME_UPPER")
    (1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from unity.relax import op as R
from unity.relax.expr import Expr
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter, cast, const_like
from unity.relax.frontend.onnx.ops.linalg import shifted_int32
from unity.relax.frontend.onnx.ops.misc import pool_indices
from unity.relax.struct_info import Dim


def same_pads(size: int, kernel: int, stride: int, dilation: int, mode: str) -> tuple[int, int]:
    """(before, after) padding that makes ``out = ceil(size / stride)`` (ONNX SAME_UPPER/LOWER).

    Example:
        >>> same_pads(4, 2, 1, 1, "SAME_LOWER")
        (1, 0)
    """
    out = -(-size // stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    small, big = total // 2, total - total // 2
    return (small, big) if mode == "SAME_UPPER" else (big, small)


def _window(ctx: Context, node: NodeView, spatial: Sequence[Dim], kernel: Sequence[int]) -> tuple[
        list[int], list[int], list[int]]:  # fmt: skip
    """Strides, dilations and ONNX-ordered pads (begins then ends) of a conv/pool node."""
    rank = len(kernel)
    strides = list(node.attr("strides", [1] * rank))
    dilations = list(node.attr("dilations", [1] * rank))
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if not all(d.is_number for d in spatial):
            raise ctx.fail(f"auto_pad={auto_pad} needs static spatial dims, got {list(spatial)}")
        pairs = [same_pads(int(d), k, s, dl, auto_pad)
                 for d, k, s, dl in zip(spatial, kernel, strides, dilations, strict=True)]  # fmt: skip
        pads = [p[0] for p in pairs] + [p[1] for p in pairs]
    elif auto_pad == "VALID":
        pads = [0] * (2 * rank)
    elif auto_pad == "NOTSET":
        pads = list(node.attr("pads", [0] * (2 * rank)))
    else:
        raise ctx.fail(f"has unknown auto_pad {auto_pad!r}")
    return strides, dilations, pads


def _to_2d(ctx: Context, node: NodeView, x: Expr) -> tuple[Expr, int]:
    rank = ctx.ndim(x) - 2
    if rank == 2:
        return x, 2
    if rank == 1:
        return ctx.emit(R.expand_dims(x, [2])), 1
    raise ctx.fail(f"supports 1-D and 2-D spatial inputs, got {rank}-D (input rank {rank + 2})")


def _pads4(pads: list[int], rank: int) -> tuple[int, int, int, int]:
    if rank == 1:
        return (0, pads[0], 0, pads[1])
    return (pads[0], pads[1], pads[2], pads[3])


def _pair(values: list[int], rank: int, fill: int = 1) -> tuple[int, int]:
    return (fill, values[0]) if rank == 1 else (values[0], values[1])


def _bias(ctx: Context, out: Expr, bias: Value | None, rank: int) -> Expr:
    if bias is None:
        return out
    b = ctx.emit(R.reshape(ctx.expr(bias), [-1] + [1] * rank))
    return ctx.emit(R.add(out, b))


def _from_2d(ctx: Context, out: Expr, rank: int) -> Expr:
    return ctx.emit(R.squeeze(out, [2])) if rank == 1 else out


def _conv(ctx: Context, node: NodeView) -> Value:
    x, w = ctx.expr(node.input(0)), ctx.expr(node.input(1))
    return _conv_core(ctx, node, x, w, None)


def _conv_core(ctx: Context, node: NodeView, x: Expr, w: Expr, out_dtype: str | None) -> Expr:
    if ctx.ndim(x) == 5:
        return _bias(ctx, _conv3d(ctx, node, x, w, out_dtype), node.input(2), 3)
    x2, rank = _to_2d(ctx, node, x)
    w2, _ = _to_2d(ctx, node, w)
    kernel = [int(k) for k in node.attr("kernel_shape", [int(d) for d in ctx.shape(w)[2:]])]
    strides, dilations, pads = _window(ctx, node, ctx.shape(x)[2:], kernel)
    out = ctx.emit(R.nn.conv2d(x2, w2, _pair(strides, rank), _pads4(pads, rank), _pair(dilations, rank),
                               node.attr("group", 1), out_dtype=out_dtype))  # fmt: skip
    out = _from_2d(ctx, out, rank)
    return _bias(ctx, out, node.input(2), rank)


def _conv3d(ctx: Context, node: NodeView, x: Expr, w: Expr, out_dtype: str | None) -> Expr:
    """A 3-D conv as one 2-D conv: the `kd` depth taps of each output depth stacked as
    input channels, the output depths folded into the batch.

    ``x (N, C, D, H, W)`` padded in depth, sliced once per tap ``t`` (depths ``t * dd``
    on, stride ``sd``: ``(N, C, Do, H, W)``), stacked per group as ``(N*Do, g*kd*C/g, H,
    W)``; the weight ``(O, C/g, kd, kh, kw)`` reordered to ``(O, kd*C/g, kh, kw)``; the 2-D
    conv's ``(N*Do, O, Ho, Wo)`` reordered to ``(N, O, Do, Ho, Wo)``.  The depth must be
    static (the taps are slices of fixed bounds); batch, height and width may be symbols.
    """
    n, c, d, h, wd = ctx.shape(x)
    o, cg, kd, kh, kw = ctx.shape(w)
    if not all(v.is_number for v in (d, cg, kd, kh, kw)):
        raise ctx.fail(f"3-D convolution needs a static depth and kernel, got input depth {d} "
                       f"and kernel {(kd, kh, kw)}")  # fmt: skip
    kernel = [int(k) for k in node.attr("kernel_shape", [int(kd), int(kh), int(kw)])]
    strides, dilations, pads = _window(ctx, node, ctx.shape(x)[2:], kernel)
    groups = int(node.attr("group", 1))
    (sd, sh, sw), (dd, dh, dw), (pd, ph, pw, ed, eh, ew) = strides, dilations, pads
    depth = int(d) + pd + ed
    out_d = (depth - dd * (kernel[0] - 1) - 1) // sd + 1
    if out_d < 1:
        raise ctx.fail(f"3-D convolution: depth {int(d)} padded by ({pd}, {ed}) is shorter than "
                       f"the kernel's {dd * (kernel[0] - 1) + 1}")  # fmt: skip
    if pd or ed:
        x = ctx.emit(R.nn.pad(x, [0, 0, 0, 0, pd, ed, 0, 0, 0, 0]))
    per_group = (n, groups, int(cg), out_d, h, wd)
    taps = []
    for t in range(kernel[0]):
        tap = ctx.emit(R.strided_slice(x, [2], [t * dd], [t * dd + sd * (out_d - 1) + 1], [sd]))
        taps.append(ctx.emit(R.expand_dims(ctx.emit(R.reshape(tap, per_group)), [2])))
    # (N, g, kd, C/g, Do, H, W)
    stacked = taps[0] if len(taps) == 1 else ctx.emit(R.concat(taps, axis=2))
    stacked = ctx.emit(R.permute_dims(stacked, [0, 4, 1, 2, 3, 5, 6]))
    x2 = ctx.emit(R.reshape(stacked, (n * out_d, groups * kernel[0] * int(cg), h, wd)))
    w2 = ctx.emit(R.permute_dims(w, [0, 2, 1, 3, 4]))
    w2 = ctx.emit(R.reshape(w2, (o, kernel[0] * int(cg), kh, kw)))
    out = ctx.emit(R.nn.conv2d(x2, w2, (sh, sw), (ph, pw, eh, ew), (dh, dw), groups,
                               out_dtype=out_dtype))  # fmt: skip
    _, _, oh, ow = ctx.shape(out)
    out = ctx.emit(R.reshape(out, (n, out_d, o, oh, ow)))
    return ctx.emit(R.permute_dims(out, [0, 2, 1, 3, 4]))


def _conv_transpose(ctx: Context, node: NodeView) -> Value:
    x, w = ctx.expr(node.input(0)), ctx.expr(node.input(1))
    rank = ctx.ndim(x) - 2
    spatial = ctx.shape(x)[2:]
    kernel = [int(k) for k in node.attr("kernel_shape", [int(d) for d in ctx.shape(w)[2:]])]
    strides = list(node.attr("strides", [1] * rank))
    dilations = list(node.attr("dilations", [1] * rank))
    out_pad = list(node.attr("output_padding", [0] * rank))
    pads = list(node.attr("pads", [0] * (2 * rank)))
    output_shape = node.attr("output_shape")
    auto_pad = node.attr("auto_pad", "NOTSET")
    if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        targets = list(output_shape)[-rank:] if output_shape is not None else None
        pads = [0] * (2 * rank)
        for i in range(rank):
            if targets is not None and not spatial[i].is_number:
                raise ctx.fail("output_shape needs static spatial dims")
            # SAME: the output is `size * stride`, whose pads do not depend on the size
            want = targets[i] if targets is not None else spatial[i] * strides[i]
            total = int(strides[i] * (spatial[i] - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] + 1 - want)
            if total < 0:
                out_pad[i] -= total
                total = 0
            small, big = total // 2, total - total // 2
            pads[i], pads[i + rank] = (big, small) if auto_pad == "SAME_LOWER" else (small, big)
    elif auto_pad == "VALID":
        pads = [0] * (2 * rank)
    if rank == 3:
        window = _Transposed(strides, pads, out_pad, dilations, node.attr("group", 1))
        return _bias(ctx, _conv_transpose3d(ctx, x, w, window), node.input(2), rank)
    (x2, _), (w2, _) = _to_2d(ctx, node, x), _to_2d(ctx, node, w)
    out = ctx.emit(R.nn.conv2d_transpose(x2, w2, _pair(strides, rank), _pads4(pads, rank),
                                         _pair(out_pad, rank, 0), _pair(dilations, rank),
                                         node.attr("group", 1)))  # fmt: skip
    return _bias(ctx, _from_2d(ctx, out, rank), node.input(2), rank)


@dataclass(frozen=True)
class _Transposed:
    """A transposed conv's window in ONNX terms (pads: all begins, then all ends)."""

    strides: list[int]
    pads: list[int]
    out_pad: list[int]
    dilations: list[int]
    groups: int


def _conv_transpose3d(ctx: Context, x: Expr, w: Expr, t: _Transposed) -> Expr:
    """A 3-D transposed conv as one 2-D transposed conv whose output channels stack the
    depth taps, each tap's part placed at its depths and the parts summed.

    Input depth ``i`` through tap ``k`` lands on output depth ``i * sd + k * dd`` (before
    the begin pad is cropped): the 2-D result ``(N*D, g*kd*O/g, Ho, Wo)`` (taps inside
    each group's channels) is split per tap into ``(N*D, O, Ho, Wo)``, spread to every
    ``sd``-th depth (a zero-padded axis of ``sd`` folded into the depth), shifted by
    ``k * dd``, and the taps summed; the pads then crop the depth.  The depth and kernel
    must be static.
    """
    n, c, d, h, wd = ctx.shape(x)
    _, og, kd, kh, kw = ctx.shape(w)
    if not all(v.is_number for v in (d, og, kd, kh, kw)):
        raise ctx.fail(f"3-D transposed convolution needs a static depth and kernel, got input "
                       f"depth {d} and kernel {(kd, kh, kw)}")  # fmt: skip
    depth, taps, og = int(d), int(kd), int(og)
    (sd, sh, sw), (dd, dh, dw) = t.strides, t.dilations
    pd, ph, pw, ed, eh, ew = t.pads
    full = sd * (depth - 1) + t.out_pad[0] + (taps - 1) * dd + 1
    length = max(depth * sd + (taps - 1) * dd, full)  # every tap's spread depths fit
    x2 = ctx.emit(R.reshape(ctx.emit(R.permute_dims(x, [0, 2, 1, 3, 4])), (n * depth, c, h, wd)))
    w2 = ctx.emit(R.reshape(ctx.emit(R.permute_dims(w, [0, 2, 1, 3, 4])), (c, taps * og, kh, kw)))
    y = ctx.emit(R.nn.conv2d_transpose(x2, w2, (sh, sw), (ph, pw, eh, ew), (t.out_pad[1], t.out_pad[2]),
                                       (dh, dw), t.groups))  # fmt: skip
    _, _, oh, ow = ctx.shape(y)
    y = ctx.emit(R.reshape(y, (n, depth, t.groups, taps, og, oh, ow)))
    o = t.groups * og
    total = None
    for k in range(taps):
        yk = ctx.emit(R.squeeze(ctx.emit(R.strided_slice(y, [3], [k], [k + 1])), [3]))
        yk = ctx.emit(R.reshape(yk, (n, depth, 1, o, oh, ow)))
        if sd > 1:
            yk = ctx.emit(R.nn.pad(yk, [0, 0, 0, 0, 0, sd - 1] + [0] * 6))
        yk = ctx.emit(R.reshape(yk, (n, depth * sd, o, oh, ow)))
        yk = ctx.emit(R.nn.pad(yk, [0, 0, k * dd, length - depth * sd - k * dd] + [0] * 6))
        total = yk if total is None else ctx.emit(R.add(total, yk))
    out = ctx.emit(R.strided_slice(total, [1], [pd], [full - ed]))
    return ctx.emit(R.permute_dims(out, [0, 2, 1, 3, 4]))


def _pool(kind: str) -> Converter:
    def convert(ctx: Context, node: NodeView) -> Value | list[Value]:
        if node.num_outputs > 1 and kind != "max":
            raise ctx.fail("with an Indices output is not supported")
        x = ctx.expr(node.input(0))
        kernel = [int(k) for k in node.attr("kernel_shape")]
        strides, dilations, pads = _window(ctx, node, ctx.shape(x)[2:], kernel)
        ceil = bool(node.attr("ceil_mode", 0))
        include_pad = bool(node.attr("count_include_pad", 0))
        if ceil:
            new_pads, ceil = _ceil_as_padding(ctx, ctx.shape(x)[2:], kernel, strides, dilations, pads)
            if kind == "avg" and include_pad and new_pads != pads:
                ceil = True  # extra end padding would count in the divisor
            else:
                pads = new_pads
        window = _Window(kind, kernel, strides, dilations, pads, ceil, include_pad)
        if len(kernel) == 3:
            out = _pool3d(ctx, x, window)
        else:
            x2, rank = _to_2d(ctx, node, x)
            out = _from_2d(ctx, _pool2d(ctx, x2, window, rank), rank)
        if node.num_outputs == 1:
            return out
        order, begins = node.attr("storage_order", 0), pads[: len(kernel)]
        return [out, pool_indices(ctx, x, out, kernel, strides, begins, dilations, order)]

    return convert


@dataclass(frozen=True)
class _Window:
    """A pooling window in ONNX terms (pads: all begins, then all ends)."""

    kind: str
    kernel: list[int]
    strides: list[int]
    dilations: list[int]
    pads: list[int]
    ceil: bool
    include_pad: bool


def _pool2d(ctx: Context, x2: Expr, w: _Window, rank: int) -> Expr:
    args = (_pair(w.kernel, rank), _pair(w.strides, rank), _pads4(w.pads, rank), _pair(w.dilations, rank), w.ceil)
    if w.kind == "max":
        return ctx.emit(R.nn.max_pool2d(x2, *args))
    return ctx.emit(R.nn.avg_pool2d(x2, *args, count_include_pad=w.include_pad))


def _pool3d(ctx: Context, x: Expr, w: _Window) -> Expr:
    """Max and average pooling are separable: pool (H, W) in 2-D, then D as a (D, 1) window."""
    n, c, d, h, wd = ctx.shape(x)
    pd, ph, pw, ed, eh, ew = w.pads
    hw = _Window(w.kind, w.kernel[1:], w.strides[1:], w.dilations[1:], [ph, pw, eh, ew], w.ceil, w.include_pad)
    plane = _pool2d(ctx, ctx.emit(R.reshape(x, (n, c * d, h, wd))), hw, 2)
    _, _, oh, ow = ctx.shape(plane)
    depth = _Window(w.kind, [w.kernel[0], 1], [w.strides[0], 1], [w.dilations[0], 1], [pd, 0, ed, 0],
                    w.ceil, w.include_pad)  # fmt: skip
    out = _pool2d(ctx, ctx.emit(R.reshape(plane, (n, c, d, oh * ow))), depth, 2)
    return ctx.emit(R.reshape(out, (n, c, ctx.shape(out)[2], oh, ow)))


def _ceil_as_padding(ctx: Context, spatial: Sequence[Dim], kernel: list[int], strides: list[int],
                     dilations: list[int], pads: list[int]) -> tuple[list[int], bool]:  # fmt: skip
    """Turn ceil_mode into extra end padding: windows must start inside the input or its begin pad."""
    if not all(d.is_number for d in spatial):
        return pads, True
    rank = len(kernel)
    pads = list(pads)
    for i in range(rank):
        size, span = int(spatial[i]), (kernel[i] - 1) * dilations[i] + 1
        room = size + pads[i] + pads[i + rank] - span
        out = -(-room // strides[i]) + 1
        if (out - 1) * strides[i] >= size + pads[i]:
            out -= 1
        pads[i + rank] += max((out - 1) * strides[i] + span - (size + pads[i] + pads[i + rank]), 0)
    return pads, False


def _lp_pool(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    p = float(node.attr("p", 2))
    kernel = [int(k) for k in node.attr("kernel_shape")]
    strides, dilations, pads = _window(ctx, node, ctx.shape(x)[2:], kernel)
    powered = ctx.emit(R.power(ctx.emit(R.abs(x)), const_like(ctx, p, x)))
    window = _Window("avg", kernel, strides, dilations, pads, bool(node.attr("ceil_mode", 0)), True)
    if len(kernel) == 3:
        avg = _pool3d(ctx, powered, window)
    else:
        x2, rank = _to_2d(ctx, node, powered)
        avg = _from_2d(ctx, _pool2d(ctx, x2, window, rank), rank)
    count = 1
    for k in kernel:
        count *= k
    total = ctx.emit(R.multiply(avg, const_like(ctx, count, x)))
    return ctx.emit(R.power(total, const_like(ctx, 1.0 / p, x)))


def _global(kind: str) -> Converter:
    def convert(ctx: Context, node: NodeView) -> Value:
        x = ctx.expr(node.input(0))
        axes = list(range(2, ctx.ndim(x)))
        reduce = R.mean if kind == "avg" else R.max
        return ctx.emit(reduce(x, axes, keepdims=True))

    return convert


def _conv_integer(ctx: Context, node: NodeView) -> Value:
    x = shifted_int32(ctx, node.input(0), node.input(2))
    w = cast(ctx, ctx.expr(node.input(1)), "int32")
    zero = node.input(3)
    if zero is not None:  # one zero point per output channel, or one for all
        z = cast(ctx, ctx.expr(zero), "int32")
        if ctx.ndim(z) == 1:
            z = ctx.emit(R.reshape(z, [-1] + [1] * (ctx.ndim(w) - 1)))
        w = ctx.emit(R.subtract(w, z))
    return _conv_core(ctx, NodeView(node.name, node.op_type, node.inputs[:2], node.attrs, node.opset,
                                    node.num_outputs), x, w, None)  # fmt: skip


CONVERTERS: dict[str, Converter] = {
    "Conv": _conv, "ConvTranspose": _conv_transpose, "ConvInteger": _conv_integer,
    "MaxPool": _pool("max"), "AveragePool": _pool("avg"), "LpPool": _lp_pool,
    "GlobalAveragePool": _global("avg"), "GlobalMaxPool": _global("max"),
}  # fmt: skip
