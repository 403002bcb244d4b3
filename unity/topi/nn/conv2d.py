"""`conv2d`: 2-D convolution in any "NCHW"-letter data layout and "OIHW"-letter kernel layout,
with strides, (asymmetric) padding, dilation and groups (depthwise when groups = channels).

Example:
    >>> from unity import te
    >>> x = te.placeholder((te.var("n"), 3, 8, 8), name="x")
    >>> w = te.placeholder((4, 3, 3, 3), name="w")
    >>> [getattr(d, "value", "n") for d in conv2d(x, w, padding=1).shape]
    ['n', 4, 8, 8]
"""

from __future__ import annotations

from collections.abc import Sequence

from unity import te
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.nn.conv2d_blocked import conv2d_blocked, conv2d_to_blocked
from unity.topi.nn.layout import axis_of, blocked_layout, padding4, pair, pick, window_out
from unity.topi.nn.pad import pad
from unity.topi.utils import const_int


def pad_spatial(x: Tensor, layout: str, padding: tuple[int, int, int, int],
                value: float = 0.0) -> Tensor:  # fmt: skip
    """Zero-pad (or `value`-pad) the H and W axes of `x`: padding is (top, left, bottom, right).

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 4, 4, 2), name="x")
        >>> pad_spatial(x, "NHWC", (1, 0, 1, 0)).shape[1].value
        6
    """
    if not any(padding):
        return x
    top, left, bottom, right = padding
    before, after = [0] * 4, [0] * 4
    before[axis_of(layout, "H")], after[axis_of(layout, "H")] = top, bottom
    before[axis_of(layout, "W")], after[axis_of(layout, "W")] = left, right
    return pad(x, before, after, value, name="T_pad_data")


def subsample_spatial(
    x: Tensor, layout: str, strides: tuple[int, int], out: tuple[PrimExpr, PrimExpr]
) -> Tensor:
    """Every `strides`-th row and column of `x`: the `out` (rows, columns) a strided 1x1
    convolution reads.  A 1x1 conv reads its input once, so the copy is cheap, and the
    stride-1 conv over it keeps the input's columns contiguous (256->512 at 56x56 stride 2
    here: 2.97 ms strided, 0.06 + 1.78 ms copied first).

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 4, 7, 7), name="x")
        >>> [d.value for d in subsample_spatial(x, "NCHW", (2, 2), (4, 4)).shape]
        [1, 4, 4, 4]
    """
    (sh, sw), (oh, ow) = strides, out
    h, w = axis_of(layout, "H"), axis_of(layout, "W")
    shape = list(x.shape)
    shape[h], shape[w] = oh, ow

    def body(*idx: PrimExpr) -> PrimExpr:
        src = list(idx)
        src[h], src[w] = idx[h] * sh, idx[w] * sw
        return x[tuple(src)]

    return te.compute(tuple(shape), body, name="T_strided_data")


def conv2d(
    data: Tensor, kernel: Tensor, strides: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1, groups: int = 1,
    data_layout: str = "NCHW", kernel_layout: str = "OIHW", out_dtype: str | None = None,
    out_layout: str | None = None,
) -> Tensor:  # fmt: skip
    """`out[n, o, y, x] = sum data[n, g*I + c, y*sh + r*dh, x*sw + s*dw] * kernel[o, c, r, s]`.

    `g = o // (O / groups)`; the kernel's in-channel dim `I` is `C / groups`.  A
    channel-blocked `data_layout` ("NCHW16c", with an OIHW kernel) gives a result in the
    same layout (`conv2d_blocked`); NCHW data with a blocked `out_layout` (and an OIHW
    kernel, no groups) gives the blocked result directly (`conv2d_to_blocked`).

    Raises:
        ValueError: channels that do not match `groups`, or an unknown layout letter.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 8, 8, 4), name="x")
        >>> w = te.placeholder((3, 3, 1, 4), name="w")
        >>> conv2d(x, w, groups=4, data_layout="NHWC", kernel_layout="HWIO").shape[3].value
        4
    """
    out_blocked = blocked_layout(out_layout) if out_layout not in (None, data_layout) else None
    if out_layout not in (None, data_layout):
        if out_blocked is None or (data_layout, kernel_layout, groups) != ("NCHW", "OIHW", 1):
            raise ValueError(
                f"conv2d: out_layout {out_layout} needs NCHW data, an OIHW kernel and groups=1 "
                f"(got {data_layout}, {kernel_layout}, groups={groups})"
            )
        block = out_blocked[1]
        return conv2d_to_blocked(data, kernel, block, strides, padding, dilation, out_dtype)
    blocked = blocked_layout(data_layout)
    if blocked is not None:
        if kernel_layout != "OIHW":
            msg = f"conv2d: {data_layout} data takes an OIHW kernel, not {kernel_layout}"
            raise ValueError(msg)
        block = blocked[1]
        return conv2d_blocked(data, kernel, block, strides, padding, dilation, groups, out_dtype)
    (sh, sw), (dh, dw), pads = (
        pair(strides, "strides"),
        pair(dilation, "dilation"),
        padding4(padding),
    )
    n, c, h, w = (data.shape[axis_of(data_layout, ch)] for ch in "NCHW")
    o, i, kh, kw = (kernel.shape[axis_of(kernel_layout, ch)] for ch in "OIHW")
    _check_groups(c, i, o, groups)
    dtype = out_dtype or data.dtype
    padded = pad_spatial(data, data_layout, pads)
    oh = window_out(h, kh, pads[0], pads[2], sh, dh)
    ow = window_out(w, kw, pads[1], pads[3], sw, dw)
    if const_int(kh) == 1 and const_int(kw) == 1 and (sh, sw) != (1, 1):
        padded, sh, sw = subsample_spatial(padded, data_layout, (sh, sw), (oh, ow)), 1, 1
    per_group = (
        o
        if groups == 1
        else (const(const_int(o) // groups, o.dtype) if const_int(o) else o // groups)
    )
    rc, ry, rx = (te.reduce_axis((0, e), name=nm) for e, nm in ((i, "rc"), (kh, "ry"), (kw, "rx")))

    def body(*idx: PrimExpr) -> PrimExpr:
        at = dict(zip(data_layout, idx, strict=True))
        oc = at["C"]
        ic = rc.var if groups == 1 else (oc // per_group) * i + rc.var
        src = {
            "N": at["N"],
            "C": ic,
            "H": at["H"] * sh + ry.var * dh,
            "W": at["W"] * sw + rx.var * dw,
        }
        wgt = {"O": oc, "I": rc.var, "H": ry.var, "W": rx.var}
        lhs = padded[pick(data_layout, src)].astype(dtype)
        rhs = kernel[pick(kernel_layout, wgt)].astype(dtype)
        return te.sum(lhs * rhs, axis=[rc, ry, rx])

    shape = pick(data_layout, {"N": n, "C": o, "H": oh, "W": ow})
    return te.compute(shape, body, name="T_conv2d")


def _check_groups(c: PrimExpr, i: PrimExpr, o: PrimExpr, groups: int) -> None:
    cc, ci, co = const_int(c), const_int(i), const_int(o)
    if groups < 1:
        raise ValueError(f"conv2d: groups must be >= 1, got {groups}")
    if cc is not None and ci is not None and cc != ci * groups:
        raise ValueError(f"conv2d: data has {cc} channels, kernel expects {ci} x groups={groups}")
    if co is not None and co % groups:
        raise ValueError(f"conv2d: {co} output channels do not divide into groups={groups}")
