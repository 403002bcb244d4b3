"""`conv2d_transpose`: the transposed (fractionally strided) 2-D convolution.

Example:
    >>> from unity import te
    >>> x = te.placeholder((1, 4, 5, 5), name="x")
    >>> w = te.placeholder((4, 2, 3, 3), name="w")
    >>> [d.value for d in conv2d_transpose(x, w, strides=2, padding=1).shape]
    [1, 2, 9, 9]
"""

from __future__ import annotations

from collections.abc import Sequence

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import ExprLike, PrimExpr, const
from unity.topi.nn.layout import axis_of, padding4, pair, pick
from unity.topi.utils import const_int


def _out_dim(size: PrimExpr, kernel: PrimExpr, before: int, after: int, stride: int,
             dilation: int, extra: int) -> PrimExpr:  # fmt: skip
    cs, ck = const_int(size), const_int(kernel)
    if cs is not None and ck is not None:
        return const(
            (cs - 1) * stride - before - after + dilation * (ck - 1) + extra + 1, size.dtype
        )
    return (size - 1) * stride + (const(kernel) - 1) * dilation + (extra + 1 - before - after)


def _source(out: PrimExpr, r: PrimExpr, before: int, stride: int, dilation: int,
            size: ExprLike) -> tuple[PrimExpr, PrimExpr]:  # fmt: skip
    """The input index feeding output `out` through kernel tap `r`, and whether it exists."""
    pos = out + before - r * dilation
    idx = pos // stride if stride != 1 else pos
    valid = tir.logical_and(pos >= 0, idx < size)
    if stride != 1:
        valid = tir.logical_and(valid, tir.eq(pos % stride, 0))
    return tir.max(tir.min(idx, const(size) - 1), const(0, idx.dtype)), valid


def conv2d_transpose(
    data: Tensor, kernel: Tensor, strides: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0, output_padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1, groups: int = 1, data_layout: str = "NCHW",
    kernel_layout: str = "IOHW", out_dtype: str | None = None,
) -> Tensor:  # fmt: skip
    """The gradient of `conv2d` with respect to its input; the kernel is (C, O / groups, KH, KW).

    `out[n, o, y, x] = sum data[n, c, iy, ix] * kernel[c, o % Og, r, s]` over the taps with
    `iy * sh = y + pad_top - r * dh` (and likewise for x), `c` in the group of `o`.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 2, 3, 3), name="x")
        >>> w = te.placeholder((2, 1, 2, 2), name="w")
        >>> conv2d_transpose(x, w, strides=2, groups=2).shape[1].value
        2
    """
    (sh, sw), (dh, dw), pads = (
        pair(strides, "strides"),
        pair(dilation, "dilation"),
        padding4(padding),
    )
    oph, opw = pair(output_padding, "output_padding")
    n, c, h, w = (data.shape[axis_of(data_layout, ch)] for ch in "NCHW")
    ci, og, kh, kw = (kernel.shape[axis_of(kernel_layout, ch)] for ch in "IOHW")
    if None not in (const_int(c), const_int(ci)) and const_int(c) != const_int(ci):
        raise ValueError(
            f"conv2d_transpose: data has {const_int(c)} channels, kernel {const_int(ci)}"
        )
    if const_int(c) is not None and const_int(c) % groups:  # type: ignore[operator]
        raise ValueError(
            f"conv2d_transpose: {const_int(c)} channels do not divide into {groups} groups"
        )
    cg = (
        c
        if groups == 1
        else (const(const_int(c) // groups, c.dtype) if const_int(c) else c // groups)
    )
    oc_total = (
        og
        if groups == 1
        else (const(const_int(og) * groups, og.dtype) if const_int(og) else og * groups)
    )
    oh = _out_dim(h, kh, pads[0], pads[2], sh, dh, oph)
    ow = _out_dim(w, kw, pads[1], pads[3], sw, dw, opw)
    dtype = out_dtype or data.dtype
    rc, ry, rx = (te.reduce_axis((0, e), name=nm) for e, nm in ((cg, "rc"), (kh, "ry"), (kw, "rx")))

    def body(*idx: PrimExpr) -> PrimExpr:
        at = dict(zip(data_layout, idx, strict=True))
        o = at["C"]
        ic = rc.var if groups == 1 else (o // og) * cg + rc.var
        iy, vy = _source(at["H"], ry.var, pads[0], sh, dh, h)
        ix, vx = _source(at["W"], rx.var, pads[1], sw, dw, w)
        lhs = data[pick(data_layout, {"N": at["N"], "C": ic, "H": iy, "W": ix})].astype(dtype)
        oc = o if groups == 1 else o % og
        rhs = kernel[pick(kernel_layout, {"I": ic, "O": oc, "H": ry.var, "W": rx.var})].astype(
            dtype
        )
        return te.sum(
            tir.select(tir.logical_and(vy, vx), lhs * rhs, const(0, dtype)), axis=[rc, ry, rx]
        )

    shape = pick(data_layout, {"N": n, "C": oc_total, "H": oh, "W": ow})
    return te.compute(shape, body, name="T_conv2d_transpose")
