"""`conv2d_blocked`: 2-D convolution on channel-blocked activations ("NCHW16c" in and out).

The data is (N, C/b, H, W, b) and the result (N, O/b, OH, OW, b), element ``[n, c // b, y,
x, c % b]`` holding the NCHW element ``[n, c, y, x]``; the kernel stays OIHW.  The input
channels are reduced as two axes, a block `rc0` and a lane `rc1`, so that a schedule can
keep `rc1` innermost (consecutive input values) and put the output lanes `ob` in a vector:

    out[n, oc, y, x, ob] = sum_{rc0, ry, rx, rc1} kernel[oc*b + ob, rc0*b + rc1, ry, rx]
        * data[n, g * I/b + rc0, y*sh + ry*dh, x*sw + rx*dw, rc1]

with `g` the group of output channel ``oc*b + ob``.  Depthwise convolutions (groups = C =
O) read their own lane: ``data[n, oc, y + ry, x + rx, ob] * kernel[oc*b + ob, 0, ry, rx]``.

Example:
    >>> from unity import te
    >>> x = te.placeholder((1, 4, 8, 8, 16), name="x")
    >>> w = te.placeholder((32, 64, 3, 3), name="w")
    >>> [d.value for d in conv2d_blocked(x, w, 16, padding=1).shape]
    [1, 2, 8, 8, 16]
"""

from __future__ import annotations

from collections.abc import Sequence

from unity import te
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.nn.layout import padding4, pair, window_out
from unity.topi.nn.pad import pad
from unity.topi.utils import const_int

__all__ = ["conv2d_blocked", "conv2d_to_blocked"]


def conv2d_blocked(
    data: Tensor, kernel: Tensor, block: int, strides: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1, groups: int = 1,
    out_dtype: str | None = None,
) -> Tensor:  # fmt: skip
    """Convolve "NCHW{block}c" `data` with an OIHW `kernel` into "NCHW{block}c".

    Raises:
        ValueError: data that is not 5-D with `block` lanes, channels that are not multiples
            of `block`, or groups whose channels are not (and that are not depthwise).

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 2, 6, 6, 8), name="x")
        >>> w = te.placeholder((16, 1, 3, 3), name="w")
        >>> conv2d_blocked(x, w, 8, groups=16).shape[1].value
        2
    """
    (sh, sw), (dh, dw) = pair(strides, "strides"), pair(dilation, "dilation")
    top, left, bottom, right = padding4(padding)
    n, cb, h, w, lanes = _data_dims(data, block)
    o, i, kh, kw = kernel.shape
    depthwise = _check_channels(cb * block, const_int(i), const_int(o), groups, block)
    padded = data
    if top or left or bottom or right:
        padded = pad(data, [0, 0, top, left, 0], [0, 0, bottom, right, 0], name="T_pad_data")
    oh, ow = window_out(h, kh, top, bottom, sh, dh), window_out(w, kw, left, right, sw, dw)
    if const_int(kh) == 1 and const_int(kw) == 1 and (sh, sw) != (1, 1):
        padded, sh, sw = _subsample(padded, (sh, sw), (oh, ow)), 1, 1
    dtype = out_dtype or data.dtype
    ry, rx = te.reduce_axis((0, kh), name="ry"), te.reduce_axis((0, kw), name="rx")
    shape = (n, const(const_int(o) // block, data.shape[1].dtype), oh, ow, lanes)

    if depthwise:
        def depthwise_body(nn: PrimExpr, oc: PrimExpr, y: PrimExpr, x: PrimExpr,
                           ob: PrimExpr) -> PrimExpr:  # fmt: skip
            lhs = padded[nn, oc, y * sh + ry.var * dh, x * sw + rx.var * dw, ob].astype(dtype)
            rhs = kernel[oc * block + ob, 0, ry.var, rx.var].astype(dtype)
            return te.sum(lhs * rhs, axis=[ry, rx])

        return te.compute(shape, depthwise_body, name="T_conv2d")

    in_blocks = const_int(i) // block
    out_blocks_per_group = const_int(o) // groups // block
    rc0, rc1 = te.reduce_axis((0, in_blocks), name="rc0"), te.reduce_axis((0, block), name="rc1")

    def body(nn: PrimExpr, oc: PrimExpr, y: PrimExpr, x: PrimExpr, ob: PrimExpr) -> PrimExpr:
        src = rc0.var if groups == 1 else (oc // out_blocks_per_group) * in_blocks + rc0.var
        lhs = padded[nn, src, y * sh + ry.var * dh, x * sw + rx.var * dw, rc1.var].astype(dtype)
        rhs = kernel[oc * block + ob, rc0.var * block + rc1.var, ry.var, rx.var].astype(dtype)
        return te.sum(lhs * rhs, axis=[rc0, ry, rx, rc1])

    return te.compute(shape, body, name="T_conv2d")


def conv2d_to_blocked(
    data: Tensor, kernel: Tensor, block: int, strides: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
    out_dtype: str | None = None,
) -> Tensor:  # fmt: skip
    """Convolve NCHW `data` with an OIHW `kernel` into "NCHW{block}c" (an image's few
    channels, or any count that is not whole blocks, read as they are):

        out[n, oc, y, x, ob] = sum_{rc, ry, rx} data[n, rc, y*sh + ry*dh, x*sw + rx*dw]
            * kernel[oc*b + ob, rc, ry, rx]

    Raises:
        ValueError: output channels that are not a multiple of `block`, or data and kernel
            channels that differ (groups are not supported here).

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 3, 8, 8), name="x")
        >>> w = te.placeholder((16, 3, 3, 3), name="w")
        >>> [d.value for d in conv2d_to_blocked(x, w, 8, padding=1).shape]
        [1, 2, 8, 8, 8]
    """
    from unity.topi.nn.conv2d import pad_spatial, subsample_spatial

    (sh, sw), (dh, dw) = pair(strides, "strides"), pair(dilation, "dilation")
    pads = padding4(padding)
    n, c, h, w = data.shape
    o, i, kh, kw = kernel.shape
    co, ci, cc = const_int(o), const_int(i), const_int(c)
    if co is None or co % block:
        raise ValueError(f"conv2d: {co} output channels are not a multiple of the block {block}")
    if ci is not None and cc is not None and ci != cc:
        raise ValueError(f"conv2d: data has {cc} channels, the kernel expects {ci} (no groups)")
    padded = pad_spatial(data, "NCHW", pads)
    oh = window_out(h, kh, pads[0], pads[2], sh, dh)
    ow = window_out(w, kw, pads[1], pads[3], sw, dw)
    if const_int(kh) == 1 and const_int(kw) == 1 and (sh, sw) != (1, 1):
        padded, sh, sw = subsample_spatial(padded, "NCHW", (sh, sw), (oh, ow)), 1, 1
    dtype = out_dtype or data.dtype
    rc = te.reduce_axis((0, i), name="rc")
    ry, rx = te.reduce_axis((0, kh), name="ry"), te.reduce_axis((0, kw), name="rx")

    def body(nn: PrimExpr, oc: PrimExpr, y: PrimExpr, x: PrimExpr, ob: PrimExpr) -> PrimExpr:
        lhs = padded[nn, rc.var, y * sh + ry.var * dh, x * sw + rx.var * dw].astype(dtype)
        rhs = kernel[oc * block + ob, rc.var, ry.var, rx.var].astype(dtype)
        return te.sum(lhs * rhs, axis=[rc, ry, rx])

    shape = (n, const(co // block, n.dtype), oh, ow, const(block, n.dtype))
    return te.compute(shape, body, name="T_conv2d")


def _data_dims(data: Tensor, block: int) -> tuple[PrimExpr, int, PrimExpr, PrimExpr, PrimExpr]:
    if data.ndim != 5 or const_int(data.shape[4]) != block or const_int(data.shape[1]) is None:
        shape = ", ".join(str(const_int(d) if const_int(d) is not None else d) for d in data.shape)
        raise ValueError(
            f"conv2d: layout NCHW{block}c needs 5-D data (N, C/{block}, H, W, {block}) "
            f"with a constant channel-block count, got ({shape})"
        )
    n, cb, h, w, lanes = data.shape
    return n, int(const_int(cb)), h, w, lanes  # type: ignore[arg-type]  # checked above


def _check_channels(c: int, i: int | None, o: int | None, groups: int, block: int) -> bool:
    """Check the channel counts against `block`; True for a depthwise convolution."""
    if i is None or o is None:
        raise ValueError("conv2d: a blocked layout needs constant kernel channels")
    if groups < 1 or c != i * groups or o % groups:
        raise ValueError(
            f"conv2d: data has {c} channels, kernel expects {i} x groups={groups} "
            f"and {o} outputs"
        )
    if o % block:
        raise ValueError(f"conv2d: {o} output channels are not a multiple of the block {block}")
    if groups > 1 and i == 1 and o == c == groups:
        return True
    if i % block or (o // groups) % block:
        raise ValueError(
            f"conv2d: groups of {i} input and {o // groups} output channels do not align "
            f"with the block {block} (only depthwise or block-aligned groups are supported)"
        )
    return False


def _subsample(x: Tensor, strides: tuple[int, int], out: tuple[PrimExpr, PrimExpr]) -> Tensor:
    """Every stride-th row and column: what a strided 1x1 convolution reads, copied so that
    the stride-1 convolution over it reads contiguous pixels."""
    (sh, sw), (oh, ow) = strides, out
    n, cb, _, _, lanes = x.shape
    return te.compute(
        (n, cb, oh, ow, lanes),
        lambda a, b, y, xx, c: x[a, b, y * sh, xx * sw, c],
        name="T_strided_data",
    )
