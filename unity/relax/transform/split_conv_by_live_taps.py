"""Compute an atrous conv2d that reads mostly padding tap by tap, each tap over the outputs
it reaches.

Before (DeepLabv3's ASPP branch of rate 12 on a 14 x 14 feature map)::

    @R.function
    def main(x: R.Tensor((1, 960, 14, 14), "float32")):
        with R.dataflow():
            gv = R.nn.conv2d(x, R.const(W), padding=(12, 12, 12, 12), dilation=(12, 12))
            R.output(gv)                                     # W: (256, 960, 3, 3)
        return gv

After ``SplitConvByLiveTaps()`` and ``FoldConstant()`` (two of the eight outer taps shown)::

    @R.function
    def main(x: R.Tensor((1, 960, 14, 14), "float32")):
        with R.dataflow():
            # tap (0, 0) reads x[y - 12, x - 12]: only outputs 12-13 x 12-13 reach the image
            t00 = R.nn.conv2d(x[:, :, 0:2, 0:2], R.const(W[:, :, 0:1, 0:1]))
            # tap (0, 1) reads x[y - 12, x]: output rows 12-13, every column
            t01 = R.nn.conv2d(x[:, :, 0:2, 0:14], R.const(W[:, :, 0:1, 1:2]))
            ...
            centre = R.nn.conv2d(x, R.const(W[:, :, 1:2, 1:2]))  # every output
            gv = centre + R.nn.pad(t00, [0, 0, 0, 0, 12, 0, 12, 0]) + R.nn.pad(t01, [.., 12, 0, 0, 0]) + ...
            R.output(gv)
        return gv

Why: output row ``o`` reads input row ``o * stride - pad + k * dilation`` through tap
``k``; with a dilation close to the image size most outputs read padding through most
taps (the rate-12 branch above multiplies zeros in 82% of its products), and
`TrimConvTaps` can drop only the taps dead for every output.  The taps live for every
output along both axes stay one conv (the centre above); each other tap is a 1 x 1 conv
over the crop of the input it reads (`tap_outputs` gives the outputs it reaches), padded
with zeros to the output's size, and the pieces are summed (the pads and the sum fuse
into one kernel after the convs).  Every weight is still read once.  Applied when that
saves at least half the products of a conv of at least ``min_macs`` multiply-adds (a plain
3 x 3 conv on a 7 x 7 map wastes 18% and is left alone), with at most `_MAX_PIECES` pieces.

It runs after `FoldScaleAxis` (a batch norm's scale must fold into the weights before
they are sliced) and before `FoldConstant`, which slices them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax import op
from unity.relax.dpl import is_op, rewrite_call, wildcard
from unity.relax.expr import Call, Expr, Function
from unity.relax.transform.trim_conv_taps import _plain, _static, conv_outputs, tap_outputs

__all__ = ["SplitConvByLiveTaps", "tap_outputs"]

_MAX_PIECES = 25
"""At most this many convs replace one (a 5 x 5 kernel's taps)."""


@dataclass(frozen=True)
class SplitConvByLiveTaps(ModulePass):
    """Compute each static-size `conv2d` that reads mostly padding tap by tap.

    Example:
        >>> SplitConvByLiveTaps()(IRModule()).functions
        {}
    """

    min_macs: int = 4_000_000
    """Smaller convs are left whole: the pieces' kernels cost more than they save."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Split in every relax function of `mod`."""
        pattern = is_op(op.nn.conv2d)(wildcard(), wildcard())
        split = functools.partial(_split, min_macs=self.min_macs)
        return mod.map_functions(Function, lambda f: rewrite_call(pattern, split, f))


def _split(call: Expr, matches: dict[Any, Any], min_macs: int) -> Expr:
    """`call` as a sum of per-tap convs, or `call` itself."""
    if not isinstance(call, Call) or not _plain(call):
        return call
    a = call.attrs
    x, w = call.args
    if a.groups != 1 or a.data_layout != "NCHW" or a.kernel_layout != "OIHW":
        return call
    if not (_static(x.struct_info, "NCHW") and _static(w.struct_info, "OIHW")):
        return call
    xs, ws = x.struct_info.shape, w.struct_info.shape
    if not (ws[0].is_number and ws[1].is_number):
        return call
    axes = [
        (int(xs[2 + i]), int(ws[2 + i]), a.strides[i], a.dilation[i], a.padding[i], a.padding[i + 2])
        for i in range(2)
    ]  # fmt: skip
    spans = [tap_outputs(*axis) for axis in axes]
    outputs = [conv_outputs(*axis) for axis in axes]
    full = [[k for k, span in enumerate(axis) if span == (0, n)] for axis, n in zip(spans, outputs)]
    pieces = [
        (ky, kx) for ky, rows in enumerate(spans[0]) for kx, cols in enumerate(spans[1])
        if rows[1] > rows[0] and cols[1] > cols[0] and not (ky in full[0] and kx in full[1])
    ]  # fmt: skip
    per_tap = int(ws[0]) * int(ws[1])  # multiply-adds per output pixel and tap
    whole = per_tap * len(spans[0]) * len(spans[1]) * outputs[0] * outputs[1]
    live = per_tap * sum(_count(spans[0][ky]) * _count(spans[1][kx]) for ky, kx in pieces)
    live += per_tap * len(full[0]) * len(full[1]) * outputs[0] * outputs[1]
    if whole < min_macs or live * 2 > whole or len(pieces) + 1 > _MAX_PIECES:
        return call
    parts = [
        _padded(_piece(call, ((*spans[0][ky], ky, ky), (*spans[1][kx], kx, kx))), spans[0][ky],
                spans[1][kx], outputs)
        for ky, kx in pieces
    ]  # fmt: skip
    if full[0] and full[1]:  # the taps every output reads through: one conv, no padding
        runs = tuple((0, n, taps[0], taps[-1]) for n, taps in zip(outputs, full))
        parts.append(_piece(call, runs))
    if not parts:
        return call  # every output reads only padding
    total = parts[-1]
    for part in parts[:-1]:
        total = op.add(total, part)
    return total


def _count(span: tuple[int, int]) -> int:
    return span[1] - span[0]


def _padded(piece: Expr, rows: tuple[int, int], cols: tuple[int, int], outputs: list[int]) -> Expr:
    """`piece` (outputs ``rows`` x ``cols``) padded with zeros to the whole output."""
    if rows == (0, outputs[0]) and cols == (0, outputs[1]):
        return piece
    widths = [0, 0, 0, 0, rows[0], outputs[0] - rows[1], cols[0], outputs[1] - cols[1]]
    return op.nn.pad(piece, widths, 0.0)


def _piece(call: Call, runs: tuple[tuple[int, int, int, int], ...]) -> Expr:
    """The conv of taps ``first .. last`` over outputs ``start .. end`` of each axis
    (``runs``: one ``(start, end, first, last)`` per axis), all of which read the input:
    no padding, over the crop of the input they read."""
    a = call.attrs
    x, w = call.args
    begins, ends, k_begins, k_ends, dilation = [], [], [], [], []
    for i, (start, end, first, last) in enumerate(runs):
        begins.append(start * a.strides[i] - a.padding[i] + first * a.dilation[i])
        ends.append((end - 1) * a.strides[i] - a.padding[i] + last * a.dilation[i] + 1)
        k_begins.append(first)
        k_ends.append(last + 1)
        dilation.append(a.dilation[i] if last > first else 1)
    whole = begins == [0, 0] and ends == [int(d) for d in x.struct_info.shape[2:]]
    crop = x if whole else op.strided_slice(x, [2, 3], begins, ends)
    kernel = op.strided_slice(w, [2, 3], k_begins, k_ends)
    return op.nn.conv2d(crop, kernel, a.strides, (0, 0, 0, 0), dilation, 1, "NCHW", "OIHW",
                        a.out_dtype, a.out_layout)  # fmt: skip
