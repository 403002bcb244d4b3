"""Drop the kernel rows and columns of a 2-D convolution that only ever read padding.

Before (DeepLabv3's ASPP branch of rate 36 on a 14 x 14 feature map)::

    @R.function
    def main(x: R.Tensor((1, 960, 14, 14), "float32")):
        with R.dataflow():
            gv = R.nn.conv2d(x, R.const(W), padding=(36, 36, 36, 36), dilation=(36, 36))
            R.output(gv)                                     # W: (256, 960, 3, 3)
        return gv

After ``TrimConvTaps()`` and ``FoldConstant()``::

    @R.function
    def main(x: R.Tensor((1, 960, 14, 14), "float32")):
        with R.dataflow():
            gv = R.nn.conv2d(x, R.const(W[:, :, 1:2, 1:2]))  # a 1 x 1 conv, no padding
            R.output(gv)
        return gv

Why: output row ``o`` reads input row ``o * stride - pad + k * dilation`` through tap
``k``.  Where that row is outside the input for every output row, the tap multiplies
zeros: with a dilation wider than the image (atrous pyramids on small inputs) most of
the kernel does.  The conv keeps its output size: the live taps ``k0 .. k1`` start
``k0 * dilation`` later, so the front padding shrinks by that much, and the back padding
by ``(K - 1 - k1) * dilation``.  Left as they are:
a weight of unknown shape, a trim that would need negative padding, and symbolic image
sizes (`TrimConvTapsBySize` chooses trimmed convs for them at run time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax import op
from unity.relax.dpl import is_op, rewrite_call, wildcard
from unity.relax.expr import Call, Expr, Function
from unity.relax.op.nn.convolution import Conv2DAttrs
from unity.relax.struct_info import TensorStructInfo

__all__ = ["TrimConvTaps", "conv_outputs", "live_taps", "tap_outputs"]


@dataclass(frozen=True)
class TrimConvTaps(ModulePass):
    """Slice every `conv2d`'s kernel to the taps that can read the input.

    Example:
        >>> TrimConvTaps()(IRModule()).functions
        {}
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Trim in every relax function of `mod`."""
        pattern = is_op(op.nn.conv2d)(wildcard(), wildcard())
        return mod.map_functions(Function, lambda f: rewrite_call(pattern, _trim, f))


def live_taps(size: int, kernel: int, stride: int, dilation: int, before: int,
              after: int) -> tuple[int, int] | None:  # fmt: skip
    """The first and last tap of one axis that read an input position for some output
    position (None: none does), for an input of `size` padded by `before` and `after`.

    Example:
        >>> live_taps(14, 3, 1, 36, 36, 36)  # only the centre tap reaches the 14 rows
        (1, 1)
        >>> live_taps(14, 3, 1, 12, 12, 12)
        (0, 2)
    """
    spans = tap_outputs(size, kernel, stride, dilation, before, after)
    live = [k for k, (start, end) in enumerate(spans) if end > start]
    return (live[0], live[-1]) if live else None


def tap_outputs(size: int, kernel: int, stride: int, dilation: int, before: int,
                after: int) -> list[tuple[int, int]]:  # fmt: skip
    """For each tap of one axis, the outputs ``[start, end)`` it reads the input for
    (``(0, 0)``: none).

    Example:
        >>> tap_outputs(14, 3, 1, 12, 12, 12)  # 14 outputs; tap 1 reaches all of them
        [(12, 14), (0, 14), (0, 2)]
    """
    outputs = conv_outputs(size, kernel, stride, dilation, before, after)
    spans = []
    for k in range(kernel):
        reached = [o for o in range(outputs) if 0 <= o * stride - before + k * dilation < size]
        spans.append((reached[0], reached[-1] + 1) if reached else (0, 0))
    return spans


def conv_outputs(size: int, kernel: int, stride: int, dilation: int, before: int, after: int) -> int:
    """The output length of one conv axis over an input of `size` padded by `before` and
    `after`.

    Example:
        >>> conv_outputs(14, 3, 1, 12, 12, 12)
        14
    """
    return (size + before + after - (kernel - 1) * dilation - 1) // stride + 1


def _trim(call: Expr, matches: dict[Any, Any]) -> Expr:
    """`call` with its kernel sliced to the live taps, or `call` itself."""
    if not isinstance(call, Call) or not _plain(call):
        return call  # an alias of a matched call (``gv = lv``), a blocked layout
    a = call.attrs
    x, w = call.args
    if not (_static(x.struct_info, a.data_layout) and _static(w.struct_info, a.kernel_layout)):
        return call  # a symbolic batch is fine; a symbolic image size: `_trim_by_size`
    sizes = [int(x.struct_info.shape[a.data_layout.index(dim)]) for dim in "HW"]
    return _sliced(call, [_taps_at(call, i, size) for i, size in enumerate(sizes)]) or call


def _plain(call: Call) -> bool:
    """A conv2d in plain (4-D, unblocked) layouts: AlterConvLayout's come after this pass."""
    a = call.attrs
    if not isinstance(a, Conv2DAttrs) or len(a.data_layout) != 4 or len(a.kernel_layout) != 4:
        return False
    return a.out_layout in (None, a.data_layout)


def _taps_at(call: Call, i: int, size: int) -> tuple[int, int] | None:
    a = call.attrs
    kernel = int(call.args[1].struct_info.shape[a.kernel_layout.index("HW"[i])])
    return live_taps(size, kernel, a.strides[i], a.dilation[i], a.padding[i], a.padding[i + 2])


def _sliced(call: Call, live: list[tuple[int, int] | None]) -> Expr | None:
    """`call` with its kernel sliced to the `live` taps of H and W (None: all of them), or
    None when nothing is cut or a cut needs negative padding."""
    a = call.attrs
    x, w = call.args
    ws = w.struct_info
    axes, begins, ends, pads, dilation = [], [], [], list(a.padding), list(a.dilation)
    for i, dim in enumerate("HW"):
        axis = a.kernel_layout.index(dim)
        kernel = int(ws.shape[axis])  # type: ignore[index]
        before, after, d = a.padding[i], a.padding[i + 2], a.dilation[i]
        taps = live[i]
        if taps is None or taps == (0, kernel - 1):
            continue
        first, last = taps
        pads[i], pads[i + 2] = before - first * d, after - (kernel - 1 - last) * d
        if pads[i] < 0 or pads[i + 2] < 0:
            return None
        if first == last:
            dilation[i] = 1  # one tap left: its spacing means nothing
        axes.append(axis)
        begins.append(first)
        ends.append(last + 1)
    if not axes:
        return None
    kernel = op.strided_slice(w, axes, begins, ends)
    return op.nn.conv2d(x, kernel, a.strides, pads, dilation, a.groups, a.data_layout, a.kernel_layout,
                        a.out_dtype, a.out_layout)  # fmt: skip


def _static(sinfo: object, layout: str) -> bool:
    """Whether `sinfo` is a 4-D tensor whose H and W (in `layout`) are numbers."""
    if not (isinstance(sinfo, TensorStructInfo) and sinfo.shape is not None and sinfo.ndim == 4):
        return False
    return all(sinfo.shape[layout.index(dim)].is_number for dim in "HW")
