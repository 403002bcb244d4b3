"""Move a function's convolutions to channel-blocked activations when all of them fit.

Before::

    @R.function
    def main(x: R.Tensor((1, 16, 8, 8), "float32")):
        with R.dataflow():
            c = R.nn.conv2d(x, R.const(W))          # W: (32, 16, 3, 3)
            r = R.nn.relu(c)
            gv = R.nn.max_pool2d(r, pool_size=(2, 2), strides=(2, 2))
            R.output(gv)
        return gv

After ``AlterConvLayout(16)`` (what ``ConvertLayout({"relax.nn.conv2d": ["NCHW16c",
"OIHW"]})`` makes of it)::

    @R.function
    def main(x: R.Tensor((1, 16, 8, 8), "float32")):
        with R.dataflow():
            x_16c = R.reshape(x, R.shape([1, 1, 16, 8, 8]))      # one copy in ...
            c = R.nn.conv2d(R.permute_dims(x_16c, [0, 1, 3, 4, 2]), R.const(W),
                            data_layout="NCHW16c", kernel_layout="OIHW")
            r = R.nn.relu(c)
            p = R.nn.max_pool2d(r, pool_size=(2, 2), strides=(2, 2), layout="NCHW16c")
            gv = R.reshape(R.permute_dims(p, [0, 1, 4, 2, 3]), R.shape([1, 32, 3, 3]))  # ... one out
            R.output(gv)
        return gv

The CPU schedules run a conv 1.1-1.5x faster on (N, C/16, H, W, 16) data than on NCHW
(whole-vector output rows, weights broadcast against packed lanes), and a depthwise conv
2-3x faster.  Channel counts that are no multiple of the block but pad to whole blocks
within half their count (MobileNets' 24, 40, 72, 88, 120: `pads_blocked`, for convs
without groups and depthwise ones) are held blocked with the last block padded, the
kernels zero-padded (MobileNet v3-small 1.59x -> 1.27x onnxruntime, v2 1.24x -> 1.16x).
A conv whose input channels are not whole blocks, nor held blocked (no groups:
`writes_blocked`; an image's 3 channels) reads NCHW data and writes the blocked result
itself (``out_layout="NCHW16c"``), costing at most one layout copy, on its input.  Any
other conv that does not fit the block (`aligned`: channel counts, and groups, multiples
of it; or depthwise; or padded) stays NCHW and costs a layout copy on each side, so
the policy is per function: it converts when at most `max_misfit_share` of its convs are
such misfits (groups straddling the blocks, a conv writing 8 channels), not counting
convs over an image of at most `max_image_channels` channels, whose result is blocked
once, nor convs over one pixel (the squeeze-and-excitation blocks of EfficientNet and
RegNet-Y squeeze to 4, 6 or 10 channels after a global pool: their copies are a few
values).  ShuffleNet (most of its convs in groups of 34 channels) stays NCHW.

With an image conv (C = 3, W0: (32, 3, 3, 3)) first, ``AlterConvLayout(16)`` gives::

    c0 = R.nn.conv2d(x, R.const(W0), out_layout="NCHW16c")        # NCHW in, blocked out
    c = R.nn.conv2d(c0, R.const(W), data_layout="NCHW16c", kernel_layout="OIHW")
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax import op
from unity.relax.expr import Call, Function
from unity.relax.expr_functor import ExprVisitor
from unity.relax.op.nn.convolution import Conv2DAttrs
from unity.relax.struct_info import TensorStructInfo
from unity.relax.transform.blocked_layout_rules import aligned, pads_blocked, writes_blocked
from unity.relax.transform.convert_layout import convert_function_layout


@dataclass(frozen=True)
class AlterConvLayout(ModulePass):
    """Run each function's conv2d on "NCHW{block}c" activations when all of them fit.

    Example:
        >>> AlterConvLayout(16)(IRModule()).functions
        {}
    """

    block: int = 16
    """Channels per block: the target's float32 vector lanes."""
    max_image_channels: int = 4
    """A conv over this many input channels or fewer (an image) may stay NCHW without counting
    as a misfit, even where it cannot write blocked output (groups, O not whole blocks)."""
    max_misfit_share: float = 0.125
    """The largest share of a function's other convs that may stay NCHW (each adds two
    layout copies)."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Convert every relax function of `mod` whose convolutions all fit the block."""
        table = {op.nn.conv2d: (f"NCHW{self.block}c", "OIHW")}

        def alter(func: Function) -> Function:
            fits = _fits_of_convs(func, self.block, self.max_image_channels)
            misfits = sum(f is False for f in fits)
            if True not in fits or misfits > self.max_misfit_share * len(fits):
                return func
            return convert_function_layout(mod, func, table)

        return mod.map_functions(Function, alter)


def _fits_of_convs(func: Function, block: int, image_channels: int) -> list[bool | None]:
    """`_fits` of each conv2d of `func`."""
    found = _Convs()
    found.visit_expr(func)
    return [_fits(call, block, image_channels) for call in found.calls]


def _fits(call: Call, block: int, image_channels: int) -> bool | None:
    """True: the conv runs blocked; None: it reads NCHW and writes blocked, or is an image
    conv left NCHW (at most one layout copy); False: a misfit (a copy on each side)."""
    attrs = call.attrs
    x, w = (a.struct_info_ for a in call.args)
    if not (isinstance(attrs, Conv2DAttrs) and isinstance(x, TensorStructInfo)):
        return False
    if not isinstance(w, TensorStructInfo) or x.shape is None or w.shape is None:
        return False
    if attrs.data_layout != "NCHW" or x.ndim != 4 or w.ndim != 4:
        return False
    c, o = x.shape[1], w.shape[attrs.kernel_layout.index("O")]
    if not (c.is_number and o.is_number):
        return False
    fit = (int(c), int(o), attrs.groups, block)
    if aligned(*fit) or pads_blocked(*fit):
        return True
    if writes_blocked(*fit) or int(c) <= image_channels:
        return None
    h, wd = x.shape[2], x.shape[3]
    if h.is_number and wd.is_number and int(h) * int(wd) == 1:
        return None  # squeeze-and-excitation over pooled channels: its copies are one pixel
    return False


class _Convs(ExprVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[Call] = []

    def visit_call_(self, expr: Call) -> None:
        if expr.op is op.nn.conv2d:
            self.calls.append(expr)
        super().visit_call_(expr)
