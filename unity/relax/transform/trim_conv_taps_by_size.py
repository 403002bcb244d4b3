"""Choose at run time a conv2d trimmed (or split tap by tap) for small images, where the
image size is symbolic.

`TrimConvTaps` slices off the kernel taps that only read padding when the image size is
known.  Over a symbolic size, the taps a one-pixel image leaves live stay the live ones
up to some size (an atrous conv's rate: DeepLabv3's rates 24 and 36 on a 14 x 14
feature map read it through the centre tap alone).  Below that size the trimmed conv
runs, chosen by an `If` on the size.

Before (the ASPP branch of rate 36 over any image; h, w its feature map's size)::

    @R.function
    def main(x: R.Tensor((1, 960, h, w), "float32")):
        with R.dataflow():
            gv = R.nn.conv2d(x, R.const(W), padding=(36, 36, 36, 36), dilation=(36, 36))
            R.output(gv)                                     # W: (256, 960, 3, 3)
        return gv

After ``TrimConvTapsBySize()`` and ``FoldConstant()``::

    @R.function
    def main(x: R.Tensor((1, 960, h, w), "float32")):
        if R.prim_value(Min(1, Max(0, 37 - h)) * Min(1, Max(0, 37 - w))):  # h, w <= 36
            with R.dataflow():
                gv1 = R.nn.conv2d(x, R.const(W[:, :, 1:2, 1:2]))
                R.output(gv1)
            gv = gv1
        else:
            with R.dataflow():
                gv2 = R.nn.conv2d(x, R.const(W), padding=(36, 36, 36, 36), dilation=(36, 36))
                R.output(gv2)
            gv = gv2
        return gv

Above that size, where every tap reaches some outputs but most products still read
padding (the rate-12 branch over 13-27 rows and columns), a second `If` runs the conv
tap by tap, as `SplitConvByLiveTaps` splits one of static size (`_split_by_size`)::

    if R.prim_value(... 13 <= h <= 27 and 13 <= w <= 27 ...):
        c = R.match_cast(R.strided_slice(x, axes=(2, 3), begin=(0, 0), end=(h - 12, w - 12)),
                         R.Tensor((1, 960, h - 12, w - 12), "float32"))
        t00 = R.nn.pad(R.nn.conv2d(c, R.const(W[:, :, 0:1, 0:1])), [.., 12, 0, 12, 0])
        ...  # the other outer taps alike, the centre tap over all of x, the nine summed
    else:
        gv = R.nn.conv2d(x, R.const(W), padding=(12, 12, 12, 12), dilation=(12, 12))

It runs after `FoldScaleAxis` (the `If` would stop a scale from folding into the conv)
and leaves alone the convs whose bound is below `_SMALLEST_BOUND` (every padded 3 x 3
conv trims for a one-pixel image: an `If` for nothing, and its epilogue unfused).  The
function loses its dataflow blocks around the `If`; `ConvertToDataflow` puts them back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax import op
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import Call, Expr, Function, If, PrimValue, SeqExpr, VarBinding
from unity.relax.struct_info import TensorStructInfo
from unity.relax.transform.convert_to_dataflow import ConvertToDataflow
from unity.relax.transform.to_non_dataflow import ToNonDataflow
from unity.relax.transform.trim_conv_taps import _plain, _sliced, _static, _taps_at, live_taps
from unity.schedule.default.conv2d import TYPICAL_IMAGE_SIZE

__all__ = ["TrimConvTapsBySize", "live_up_to"]


@dataclass(frozen=True)
class TrimConvTapsBySize(ModulePass):
    """Choose at run time a conv2d with the taps that small symbolic image sizes leave
    live (after `FoldScaleAxis`, so the conv's weights are final; the `If` stops folding).

    Example:
        >>> TrimConvTapsBySize()(IRModule()).functions
        {}
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Trim in every relax function of `mod`."""
        return mod.map_functions(Function, _trim_by_size)


def live_up_to(kernel: int, stride: int, dilation: int, before: int,
               after: int) -> tuple[int, tuple[int, int]] | None:  # fmt: skip
    """The largest input size whose live taps (`live_taps`) are those of a one-element
    input, and those taps; None when that input already reaches every tap.

    Example:
        >>> live_up_to(3, 1, 36, 36, 36)  # the centre tap alone up to 36 rows
        (36, (1, 1))
        >>> live_up_to(3, 1, 1, 1, 1)  # a padded 3 x 3 conv: a one-row image only
        (1, (1, 1))
    """
    small = live_taps(1, kernel, stride, dilation, before, after)
    if small is None or small == (0, kernel - 1):
        return None
    size = 1
    while live_taps(size + 1, kernel, stride, dilation, before, after) == small:
        size += 1
    return size, small


def _trim_by_size(func: Function) -> Function:
    """`func` with each conv2d over a symbolic image size that small sizes trim chosen at
    run time between the trimmed conv and itself (an `If` on the sizes)."""
    if not any(_size_trim(b.value) for b in _top_bindings(func)):
        return func
    plain = ToNonDataflow()(IRModule({"f": func}))["f"]
    bb = BlockBuilder()
    blocks = []
    for block in plain.body.blocks:
        bindings = []
        for binding in block.bindings:
            choice = _size_trim(binding.value) if isinstance(binding, VarBinding) else None
            bindings.append(binding if choice is None else binding.replace(value=bb.normalize(choice)))
        blocks.append(block.replace(bindings=tuple(bindings)))
    body = plain.body.replace(blocks=tuple(blocks))
    return ConvertToDataflow()(IRModule({"f": plain.replace(body=body)}))["f"]


def _top_bindings(func: Function) -> list[Any]:
    return [b for block in func.body.blocks for b in block.bindings]


def _size_trim(value: Expr) -> If | None:
    """``If(sizes small, trimmed conv, value)`` for a conv2d `value` over a symbolic
    image size whose small sizes leave taps dead; None otherwise."""
    if not (isinstance(value, Call) and value.op is op.nn.conv2d and _plain(value)):
        return None
    a = value.attrs
    x, w = value.args
    xs = x.struct_info
    if not (isinstance(xs, TensorStructInfo) and xs.shape is not None and xs.ndim == 4):
        return None
    if not (_static(w.struct_info, a.kernel_layout) and not _static(xs, a.data_layout)):
        return None
    live: list[tuple[int, int] | None] = []
    small = sympy.Integer(1)
    for i, dim in enumerate("HW"):
        size = xs.shape[a.data_layout.index(dim)]
        if size.is_number:
            live.append(_taps_at(value, i, int(size)))
            continue
        kernel = int(w.struct_info.shape[a.kernel_layout.index(dim)])
        bound = live_up_to(kernel, a.strides[i], a.dilation[i], a.padding[i], a.padding[i + 2])
        if bound is not None and bound[0] < _SMALLEST_BOUND:
            bound = None
        live.append(None if bound is None else bound[1])
        if bound is not None:  # 1 while the size is at most the bound, else 0
            small = small * sympy.Min(1, sympy.Max(0, bound[0] + 1 - size))
    trimmed = _sliced(value, live)
    split = _split_by_size(value)
    whole = value if split is None else If(PrimValue(split[0]), split[1], _branch(value))
    if trimmed is None or small == 1:
        return None if split is None else whole
    return If(PrimValue(small), _branch(trimmed), _branch(whole))


_MIN_SPLIT_MACS = 4_000_000
"""Convs of fewer multiply-adds at the smallest size split are left whole (as
`SplitConvByLiveTaps` leaves small static ones)."""


def _split_by_size(call: Call) -> tuple[sympy.Expr, SeqExpr] | None:
    """``(sizes in range, pieces)`` for a "same" atrous conv2d over a symbolic image size
    (stride 1, padding ``c * d`` around a kernel of ``2c + 1`` taps, alike on both axes)
    whose outer taps reach only part of the outputs: for sizes above ``c * d`` (every tap
    live) up to where half the products read padding, the conv computed tap by tap, each
    over the outputs it reaches (`SplitConvByLiveTaps` for a symbolic size); None when it
    does not apply.

    Made only where the image size at `TYPICAL_IMAGE_SIZE` falls in that range: each
    split adds nine convs to compile (DeepLabv3's three ASPP branches split: 12 -> 25 s).
    DeepLabv3's branch of rate 12 over a feature map of 13-27 rows and columns (a 224 x
    224 image: 14 x 14) multiplies zeros in 82% of its products: its 3 x 3 conv 960 ->
    256 over a symbolic size ran 3.1 ms (onnxruntime's, skipping the padding, 0.9); the
    model's kernels 9.2 -> 7.3 ms, against onnxruntime 1.16x -> 1.07x.
    """
    a = call.attrs
    x, w = call.args
    if a.groups != 1 or a.data_layout != "NCHW" or a.kernel_layout != "OIHW":
        return None
    xs, ws = x.struct_info, w.struct_info
    if not (_static(ws, "OIHW") and ws.shape[0].is_number and ws.shape[1].is_number):
        return None
    sizes = list(xs.shape[2:])
    kernel, d = int(ws.shape[2]), a.dilation[0]
    c = (kernel - 1) // 2
    same = [kernel, d, c * d, c * d, 1]
    if kernel % 2 == 0 or c == 0 or any(s.is_number for s in sizes) or any(
        [int(ws.shape[2 + i]), a.dilation[i], a.padding[i], a.padding[i + 2], a.strides[i]] != same
        for i in range(2)
    ):
        return None
    lo = c * d + 1  # from here every tap reaches some outputs (below: trimmed)
    # live products of one axis over all of them: (kernel n - d c (c + 1)) / (kernel n)
    hi = lo
    while ((kernel * (hi + 1) - d * c * (c + 1)) / (kernel * (hi + 1))) ** 2 <= 0.5:
        hi += 1
    macs = int(ws.shape[0]) * int(ws.shape[1]) * kernel * kernel * lo * lo
    typical = [n.subs({v: TYPICAL_IMAGE_SIZE for v in n.free_symbols}) for n in sizes]
    landed = all(n.is_number and lo <= n <= hi for n in typical)
    if hi == lo or macs < _MIN_SPLIT_MACS or not landed:
        return None  # only where a typical image lands: nine more convs to compile
    within = sympy.Integer(1)
    for size in sizes:  # 1 while lo <= size <= hi, else 0
        below, above = sympy.Max(0, hi + 1 - size), sympy.Max(0, size - lo + 1)
        within = within * sympy.Min(1, below) * sympy.Min(1, above)
    return within, _tap_pieces(call, c, d)


def _tap_pieces(call: Call, c: int, d: int) -> SeqExpr:
    """The branch computing `call` tap by tap: each tap a 1 x 1 conv over the crop of the
    input it reads (cast to its size, ``n - |offset|`` rows and columns, checked at run
    time), padded with zeros to the outputs, the pieces summed."""
    a = call.attrs
    x, w = call.args
    xs = x.struct_info
    taps = range(2 * c + 1)
    bb = BlockBuilder()
    with bb.function("branch", []):
        with bb.nested() as blocks:
            total = None
            for ty, tx in ((ty, tx) for ty in taps for tx in taps):
                offsets = [(ty - c) * d, (tx - c) * d]
                crop = x
                if any(offsets):
                    begins = [max(0, o) for o in offsets]
                    ends = [n + min(0, o) for n, o in zip(xs.shape[2:], offsets)]
                    crop = bb.emit(op.strided_slice(x, [2, 3], begins, ends))
                    dims = [n - abs(o) for n, o in zip(xs.shape[2:], offsets)]
                    crop = bb.match_cast(crop, TensorStructInfo((*xs.shape[:2], *dims), xs.dtype))
                kernel = op.strided_slice(w, [2, 3], [ty, tx], [ty + 1, tx + 1])
                conv = op.nn.conv2d(crop, kernel, (1, 1), (0, 0, 0, 0), (1, 1), 1, "NCHW", "OIHW",
                                    a.out_dtype, a.out_layout)  # fmt: skip
                piece = bb.emit(conv)
                widths = [0, 0, 0, 0]
                for o in offsets:
                    widths += [max(0, -o), max(0, o)]
                if any(widths):
                    piece = bb.emit(op.nn.pad(piece, widths, 0.0))
                total = piece if total is None else bb.emit(op.add(total, piece))
        bb.emit_func_output(total)
    return SeqExpr(tuple(blocks), total)


_SMALLEST_BOUND = 8
"""The size up to which a conv's taps stay trimmed must be at least this (an atrous
conv's rate); smaller bounds come from plain convs on images of a pixel or two."""


def _branch(call: Expr) -> SeqExpr:
    """`call` (its nested calls first) as the body of an `If` branch."""
    bb = BlockBuilder()
    with bb.function("branch", []):
        with bb.nested() as blocks:
            out = bb.emit(call)
        bb.emit_func_output(out)
    return SeqExpr(tuple(blocks), out)
