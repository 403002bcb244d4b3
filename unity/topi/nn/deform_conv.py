"""`deform_conv2d`: a 2-D convolution whose taps are moved by learned offsets (ONNX DeformConv).

Tap ``(r, s)`` of output point ``(y, x)`` reads the input at ``(y * sh - pad_top + r * dh +
offset_h, x * sw - pad_left + s * dw + offset_w)``, bilinearly interpolated with zeros
outside the image, scaled by the optional mask.  The channels split into `offset_groups`
groups, each with its own offsets and mask.

Stages: one table per ``(n, offset group, r, s, y, x)`` holding the two taps of each
axis and their weights, zeros padding folded in (a block of eight outputs: the GPU
schedules inline a single-output producer into each reader); then the direct
convolution, which reads the four taps of each sample (no im2col buffer).

Example:
    >>> from unity import te
    >>> x = te.placeholder((1, 4, 5, 5), name="x")
    >>> w = te.placeholder((6, 4, 3, 3), name="w")
    >>> off = te.placeholder((1, 18, 3, 3), name="off")
    >>> [d.value for d in deform_conv2d(x, w, off).shape]
    [1, 6, 3, 3]
"""

from __future__ import annotations

from collections.abc import Sequence

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const


def deform_conv2d(
    data: Tensor, kernel: Tensor, offset: Tensor, mask: Tensor | None = None,
    strides: Sequence[int] = (1, 1), padding: Sequence[int] = (0, 0, 0, 0),
    dilation: Sequence[int] = (1, 1), groups: int = 1, offset_groups: int = 1,
) -> Tensor:  # fmt: skip
    """Deformable convolution of NCHW `data` with an OIHW `kernel` (ONNX DeformConv, no bias).

    Args:
        data: ``(N, C, H, W)``.
        kernel: ``(O, C / groups, KH, KW)``.
        offset: ``(N, offset_groups * KH * KW * 2, OH, OW)``: per offset group and tap
            ``(r, s)`` (row-major), the row offset then the column offset.
        mask: ``(N, offset_groups * KH * KW, OH, OW)`` tap scales, or None (all ones).
        strides: ``(sh, sw)``.
        padding: ``(top, left, bottom, right)``.
        dilation: ``(dh, dw)``.
        groups: channel groups of the convolution.
        offset_groups: channel groups sharing one set of offsets and mask.

    Returns:
        ``(N, O, OH, OW)`` in `data`'s dtype.

    Raises:
        ValueError: channels that do not divide into the groups, or an offset or mask of
            the wrong shape.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((2, 4, 6, 6), name="x")
        >>> w = te.placeholder((4, 2, 2, 2), name="w")
        >>> off = te.placeholder((2, 16, 3, 3), name="off")
        >>> m = te.placeholder((2, 8, 3, 3), name="m")
        >>> y = deform_conv2d(x, w, off, m, (2, 2), (1, 1, 0, 0), groups=2, offset_groups=2)
        >>> [d.value for d in y.shape]
        [2, 4, 3, 3]
    """
    _check(data, kernel, offset, mask, groups, offset_groups)
    f = "float64" if data.dtype == "float64" else "float32"
    kh, kw = (_int(d) for d in kernel.shape[2:])
    table = _sample_table(data, offset, (kh, kw), strides, padding, dilation, offset_groups, f)
    channels, out_channels = data.shape[1], kernel.shape[0]
    per_group, per_out_group = kernel.shape[1], out_channels // groups
    per_offset_group = channels // offset_groups
    rc = te.reduce_axis((0, per_group), name="rc")
    rr, rs = te.reduce_axis((0, kh), name="rr"), te.reduce_axis((0, kw), name="rs")

    def conv(n: PrimExpr, o: PrimExpr, y: PrimExpr, x: PrimExpr) -> PrimExpr:
        c = o // per_out_group * per_group + rc
        g = c // per_offset_group
        value = _bilinear(data, table, (n, c, g, rr, rs, y, x), f)
        if mask is not None:
            value = value * mask[n, (g * kh + rr) * kw + rs, y, x].astype(f)
        return te.sum(kernel[o, rc, rr, rs].astype(f) * value, axis=[rc, rr, rs])

    out_shape = [data.shape[0], out_channels, offset.shape[2], offset.shape[3]]
    out = te.compute(out_shape, conv, name="T_deform_conv2d_sum")
    if f == data.dtype:
        return out
    return te.compute(out_shape, lambda *i: out[i].astype(data.dtype), name="T_deform_conv2d")


_Table = tuple[Tensor, ...]
"""Per ``(n, offset group, r, s, y, x)``: rows and columns of the two taps of each axis
(clamped inside), then their weights (zero for a tap outside)."""


def _sample_table(data: Tensor, offset: Tensor, kernel_size: tuple[int, int],
                  strides: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
                  offset_groups: int, f: str) -> _Table:  # fmt: skip
    """Where each tap of each output point samples: its taps and their weights per axis."""
    kh, kw = kernel_size
    one = const(1.0, f)

    def sample(n: PrimExpr, g: PrimExpr, r: PrimExpr, s: PrimExpr, y: PrimExpr,
               x: PrimExpr) -> tuple[PrimExpr, ...]:  # fmt: skip
        channel = ((g * kh + r) * kw + s) * 2
        taps: list[PrimExpr] = []
        weights: list[PrimExpr] = []
        for axis, (point, tap) in enumerate(((y, r), (x, s))):
            size = data.shape[2 + axis]
            start = point * strides[axis] - padding[axis] + tap * dilation[axis]
            pos = start.astype(f) + offset[n, channel + axis, y, x].astype(f)
            # beyond one pixel outside, every tap reads a zero: the clamp keeps that
            pos = tir.max(tir.min(pos, size.astype(f) + one), const(-2.0, f))
            low = tir.floor(pos)
            frac, first = pos - low, low.astype(size.dtype)
            for i, weight in ((first, one - frac), (first + 1, frac)):
                inside = tir.logical_and(i >= 0, i < size)
                taps.append(tir.max(tir.min(i, size - 1), const(0, size.dtype)))
                weights.append(tir.select(inside, weight, const(0.0, f)))
        return (*taps, *weights)

    shape = [data.shape[0], const(offset_groups), const(kh), const(kw), *offset.shape[2:]]
    table = te.compute(shape, sample, name="T_deform_conv2d_sample")
    return table  # type: ignore[return-value]  # eight outputs


def _bilinear(data: Tensor, table: _Table, index: tuple[PrimExpr, ...], f: str) -> PrimExpr:
    """The bilinear value of channel `c` at sample ``(n, g, r, s, y, x)`` (zeros outside)."""
    n, c, *point = index
    y0, y1, x0, x1, wy0, wy1, wx0, wx1 = (t[(n, *point)] for t in table)
    total: PrimExpr | None = None
    for iy, wy in ((y0, wy0), (y1, wy1)):
        for ix, wx in ((x0, wx0), (x1, wx1)):
            term = wy * wx * data[n, c, iy, ix].astype(f)
            total = term if total is None else total + term
    assert total is not None
    return total


def _check(data: Tensor, kernel: Tensor, offset: Tensor, mask: Tensor | None, groups: int,
           offset_groups: int) -> None:  # fmt: skip
    if data.ndim != 4 or kernel.ndim != 4 or offset.ndim != 4:
        shapes = ", ".join(_dims(t.shape) for t in (data, kernel, offset))
        raise ValueError(f"deform_conv2d: expects 4-D data, kernel and offset, got {shapes}")
    if not all(isinstance(d, tir.IntImm) for d in [data.shape[1], offset.shape[1], *kernel.shape]):
        raise ValueError("deform_conv2d: needs static channel and kernel sizes")
    channels, out_channels, per_group = (_int(d) for d in (data.shape[1], *kernel.shape[:2]))
    if groups < 1 or channels != per_group * groups or out_channels % groups:
        raise ValueError(f"deform_conv2d: {channels} input and {out_channels} output channels "
                         f"do not split into {groups} groups of {per_group} inputs")  # fmt: skip
    if offset_groups < 1 or channels % offset_groups:
        raise ValueError(f"deform_conv2d: {channels} channels do not split into "
                         f"{offset_groups} offset groups")  # fmt: skip
    taps = _int(kernel.shape[2]) * _int(kernel.shape[3])
    if _int(offset.shape[1]) != offset_groups * taps * 2:
        raise ValueError(f"deform_conv2d: offset needs {offset_groups * taps * 2} channels "
                         f"(offset_groups * KH * KW * 2), got {_dims(offset.shape)}")  # fmt: skip
    mask_channels = None if mask is None or mask.ndim != 4 else _dims(mask.shape[1:2])
    if mask is not None and mask_channels != f"({offset_groups * taps})":
        raise ValueError(f"deform_conv2d: mask needs {offset_groups * taps} channels "
                         f"(offset_groups * KH * KW), got {_dims(mask.shape)}")  # fmt: skip


def _int(dim: PrimExpr) -> int:
    assert isinstance(dim, tir.IntImm)  # checked static by `_check`
    return dim.value


def _dims(shape: Sequence[PrimExpr]) -> str:
    dims = (str(d.value) if isinstance(d, tir.IntImm) else str(d) for d in shape)
    return "(" + ", ".join(dims) + ")"
