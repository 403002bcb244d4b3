"""Run 3x3 and 5x5 stride-1 convolutions on blocked data as Winograd F(m x m, r x r).

Before (after ``AlterConvLayout(8)``; W: (64, 64, 3, 3))::

    @R.function
    def main(x: R.Tensor((1, 8, 56, 56, 8), "float32")):
        with R.dataflow():
            c = R.nn.conv2d(x, R.const(W), padding=(1, 1, 1, 1), data_layout="NCHW8c")
            gv = R.nn.relu(c)
            R.output(gv)
        return gv

After ``Conv2dWinograd(8)``::

    @R.function
    def main(x: R.Tensor((1, 8, 56, 56, 8), "float32")):
        with R.dataflow():
            v = R.call_tir(winograd_data, (x,), R.Tensor((36, 196, 64), "float32"))
            mm = R.call_tir(winograd_matmul, (v, R.const(U)), R.Tensor((36, 4, 196, 16), "float32"))
            c = R.call_tir(winograd_output, (mm,), R.Tensor((1, 8, 56, 56, 8), "float32"))
            gv = R.nn.relu(c)
            R.output(gv)
        return gv

with ``U = topi.nn.winograd_weight_transform(W, 4, 16)`` computed here (the weight is a
constant), and the three PrimFuncs from `topi.nn.winograd`.  The output transform is
marked out-elementwise-fusable, so the conv's bias, residual add and activation fuse
into it as they did into the conv; the data transform is opaque (nothing fuses into it).

F(4x4, 3x3) multiplies 4x less than the direct conv, F(2x2, 3x3) 2.25x less, at the
price of transforms (memory-bound, a few % of the time) and of a larger transformed
weight (36/9 or 16/9 times the original).  On Zen 3 (AVX2) against the direct blocked
conv, in ResNet-50's shapes: 64->64 at 56x56 0.62 vs 1.21 ms, 128->128 at 28x28 0.47
vs 1.19, 256->256 at 14x14 0.54 vs 1.25 (F(4x4)); 512->512 at 7x7 0.98 vs 1.39 (F(2x2):
7x7 makes 4 tiles of 4x4; its transformed weight, 16 MiB, is at `max_weight_bytes`, beyond
which a weight streams from memory at every call).  Timed later in whole models on a
Sapphire Rapids (AVX-512), with pauses between runs, 14 x 14 takes F(2x2) from about 112
channels in and out, and 7 x 7 and convs of fewer than 64 channels in or out stay direct
(see `winograd_tile`, `Conv2dWinograd.transform_macs`).  The float32 results differ
from the direct conv's by about 1e-6 relative (F(4x4); F(2x2) less);
``PassContext(disabled_pass=["Conv2dWinograd"])`` keeps the direct conv.
5x5 convs take F(2x2, 5x5) (36 multiplies per tile against 100): Inception v1's kernels
12.64 -> 12.18 ms in the model.  Grouped convs (whole blocks per group) take one matmul
per point and group: AlexNet's 5x5 conv in two groups 2.25 -> ~1.3 ms with its
transforms, the model's kernels 13.4 -> 12.7 ms (both on Zen 3; on the Sapphire Rapids
AlexNet's groups of 48 channels and most of Inception v1's 5x5 convs, 16-48 channels in,
ran faster direct and stay so: AlexNet 11.4 -> 10.95 ms, Inception v1 10.8 -> 10.3).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from unity.ir.module import GlobalVar, IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax import op
from unity.relax.analysis.op_pattern import OpPatternKind
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import Binding, Call, Constant, Expr, Function, VarBinding
from unity.relax.expr_functor import ExprMutator
from unity.relax.op.call_tir import call_tir
from unity.relax.op.nn.convolution import Conv2DAttrs
from unity.relax.struct_info import TensorStructInfo
from unity.schedule.default.conv2d import TYPICAL_IMAGE_SIZE
from unity.schedule.default.matmul import seven_rows
from unity.tir.function import PrimFunc
from unity.topi.nn.winograd import (
    winograd_batch_matmul, winograd_data_transform, winograd_output_transform, winograd_tiles,
    winograd_weight_transform,
)  # fmt: skip

__all__ = ["Conv2dWinograd", "matmul_rows", "winograd_gain", "winograd_tile"]

TRANSFORM_MACS = 56.0
"""Multiply-adds one transformed value costs (see `Conv2dWinograd.transform_macs`)."""

_TILES = {3: (4, 2), 5: (2,)}
"""Kernel size -> the output tiles tried, largest first (6 x 6 transformed points at most:
F(4x4, 5x5) would need 8, whose transforms lose float32 accuracy)."""


@dataclass(frozen=True)
class Conv2dWinograd(ModulePass):
    """Replace each qualifying conv2d on "NCHW{block}c" data by the three Winograd stages.

    Example:
        >>> Conv2dWinograd(8)(IRModule()).functions
        {}
    """

    block: int = 16
    """Channels per block of the data layout the convs must have (the vector lanes)."""
    flops_per_byte: float = 25.0
    """What the cores compute in the time memory delivers a byte: the price, in
    multiply-adds, of each byte the transformed weight adds (see `winograd_gain`)."""
    min_channels: int = 64
    """The fewest input and output channels per group worth the transforms."""
    typical_size: int = TYPICAL_IMAGE_SIZE
    """The height and width a symbolic image's size is evaluated at (see `winograd_tile`)."""
    max_weight_bytes: int = 16 << 20
    """The largest transformed weight: beyond it the matmul streams it from memory."""
    transform_macs: float = TRANSFORM_MACS
    """The price, in multiply-adds, of one transformed value (a point of a tile of one
    channel) in the data or output transform (see `winograd_gain`).  Measured after pauses
    on a Sapphire Rapids (AVX-512), with the matmuls prefetching their weights, direct /
    Winograd ms: SqueezeNet's 64 -> 256 at 13 x 13 0.133 / 0.174, GoogLeNet's 96 -> 208
    at 14 x 14 0.211 / 0.235, 112 -> 224 0.248 / 0.238, 128 -> 256 0.289 / 0.273, 160 ->
    320 0.449 / 0.405; its 28 x 28 and 56 x 56 convs (F(4x4)) 1.2-1.7x faster as
    Winograd.  The transforms took 0.3-0.5 ns per value (the data's 25-60 us at 13-14),
    56 multiply-adds of the direct conv's ~190 G a second."""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Rewrite every relax function of `mod` (`mod` itself when no conv qualifies)."""
        bb = BlockBuilder(mod)
        rewriter = _Rewriter(bb, self)
        changed = {
            gv: rewriter.visit_expr(f) for gv, f in mod.functions.items() if isinstance(f, Function)
        }
        if not rewriter.funcs:
            return mod
        out = bb.get()
        for gv, func in changed.items():
            out.update_func(gv, func)
        return out


def winograd_gain(
    h: int,
    w: int,
    r: int,
    m: int,
    flops_per_byte: float,
    n: int = 1,
    channels: tuple[int, int] | None = None,
    transform_macs: float = 0.0,
) -> float:
    """Multiply-adds F(m x m, r x r) saves per input-output channel pair on `n` images of
    `h x w` outputs, less the price of the bytes its larger weight adds and, given the
    input and output `channels`, of its transforms: ``n h w r^2 - tiles p - 2 (p - r^2)
    flops_per_byte - tiles p transform_macs (1 / c_in + 1 / c_out)`` (`p` = ``(m + r -
    1)^2`` points; 4 bytes per weight, 2 flops per multiply-add).  The weight is read once
    per call, from memory when the model runs now and then (its weights long out of
    cache): where it is large against the work, its bytes cost more than the multiplies
    they save.  Each transformed value costs `transform_macs`, the data transform's shared
    by the output channels, the output transform's by the input channels: few channels
    leave the products too small to pay for them.

    Example:
        >>> winograd_gain(14, 14, 3, 2, 25.0), winograd_gain(7, 7, 3, 2, 25.0)
        (630.0, -165.0)
        >>> winograd_gain(13, 13, 3, 2, 25.0, channels=(64, 256), transform_macs=56.0) < 0
        True
    """
    points = (m + r - 1) ** 2
    tiles = winograd_tiles(h, w, m, n)[2]
    gain = n * h * w * r * r - tiles * points - 2 * (points - r * r) * flops_per_byte
    if channels is not None:
        c, o = channels
        gain -= tiles * points * transform_macs * (1 / c + 1 / o)
    return gain


def winograd_tile(
    call: Call,
    block: int,
    flops_per_byte: float = 25.0,
    max_weight_bytes: int = 16 << 20,
    min_channels: int = 64,
    typical_size: int = TYPICAL_IMAGE_SIZE,
    transform_macs: float = TRANSFORM_MACS,
) -> int | None:
    """The output tile `m` (4 or 2) to run the conv2d `call` with, or None to leave it.

    Qualifies: a 3x3 or 5x5 stride-1 undilated conv on "NCHW{block}c" data of constant
    channels, with a constant OIHW float32 weight whose channels per group are whole
    blocks, `min_channels` at least in and out.  The tile is the largest (F(4x4), then
    F(2x2) for 3x3; F(2x2) for 5x5) whose `winograd_gain` (its transforms counted at
    `transform_macs` a value) is positive and whose transformed weight takes at most
    `max_weight_bytes`.  A symbolic height or width is evaluated with each of its symbols
    at `typical_size` (an ImageNet image: a conv after four halvings is taken to be 14 x
    14), a symbolic batch taken to be one image.  The largest, not the one of the most
    gain: the gain prices all values alike, where F(2x2)'s transforms cost more per output
    (a 3x3 over 128 and 256 channels at 20 x 20, alone, ran 5-25% faster as F(4x4); at 16
    x 16 level with F(2x2) between runs, faster back to back).

    Measured in whole models on a 2-core Sapphire Rapids (AVX-512, 16 lanes; 100 ms
    between runs, as the benches time them) against the earlier rule (two channel
    blocks, 16 tiles per image): F(4x4) at 13 x 13 and 14 x 14 (16 tiles, 31-51% of the
    outputs computed past the image) streamed a weight 4x the direct conv's for 16 tiles
    (F(2x2) covers them in 49); F(2x2) at 7 x 7 over 512 channels read its 16 MiB weight
    in 1.1 ms, onnxruntime's direct conv took 0.8 with the rest; and fewer than 64
    channels in or out leave the products too small for the transforms around them
    (SqueezeNet's 32 -> 128 at 27 x 27, DenseNet's 128 -> 32, AlexNet's 5 x 5 over groups
    of 48; RegNet-Y's groups of 8 on Zen 3: 0.13 ms with the transforms against 0.09
    direct).  ``flops_per_byte``: ~400 GFLOP/s of direct conv over ~15 GB/s from memory.
    Over a symbolic image size every such conv had taken F(4x4) ("a symbolic image makes
    enough tiles"); evaluated at 224, GoogLeNet's and ResNet-50's symbolic builds ran
    11.1 -> 10.3 ms and 27.2 -> 25.5 at 224 x 224 (onnxruntime 8.7 and 23.8).

    Example:
        >>> winograd_tile(conv_call, 8)  # doctest: +SKIP
        4
    """
    attrs = call.attrs
    if call.op is not op.nn.conv2d or not isinstance(attrs, Conv2DAttrs):
        return None
    w = call.args[1]
    if attrs.data_layout != f"NCHW{block}c" or attrs.kernel_layout != "OIHW":
        return None
    if attrs.out_layout not in (None, attrs.data_layout):
        return None
    if attrs.out_dtype not in (None, "float32"):
        return None
    if attrs.strides != (1, 1) or attrs.dilation != (1, 1):
        return None
    if not isinstance(w, Constant) or w.data.dtype != "float32":
        return None
    r = w.data.shape[2]
    if w.data.shape[2:] != (r, r) or r not in _TILES:
        return None
    sinfo = call.struct_info
    if not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None:
        return None
    if not all(d.is_number for d in (sinfo.shape[1], sinfo.shape[4])):  # sizes may be symbolic
        return None
    _, _, oh, ow, _ = sinfo.shape
    o, c = w.data.shape[:2]  # c: the input channels of a group
    if (o // attrs.groups) % block or c % block or o % attrs.groups:
        return None
    if min(c, o // attrs.groups) < min_channels:  # small products: the transforms dominate
        return None
    fits = [m for m in _TILES[r] if (m + r - 1) ** 2 * o * c * 4 <= max_weight_bytes]
    oh, ow = (int(d.subs({s: typical_size for s in d.free_symbols})) for d in (oh, ow))
    n = int(sinfo.shape[0]) if sinfo.shape[0].is_number else 1
    pair = (c, o // attrs.groups)
    gains = (winograd_gain(oh, ow, r, m, flops_per_byte, n, pair, transform_macs) for m in fits)
    return next((m for m, gain in zip(fits, gains, strict=True) if gain > 0), None)


def matmul_rows(tiles: int | sympy.Expr, block: int) -> int | sympy.Expr:
    """The rows of the Winograd matmul for an image's `tiles` tiles (each image of a batch
    takes as many: ``n * 49`` rows over a symbolic batch are whole register tiles too): a
    multiple of the register tile's rows, so that no tile is guarded: `tiles` itself
    where 7-row tiles take them (`seven_rows`: 49 tiles at 14 x 14 and 28 x 28, 196 at 56
    x 56 fall to 8), else up to a multiple of 8 with 16 lanes, of 4 with fewer; a symbolic
    count (a symbolic image size) up to a multiple of 4.
    Sapphire Rapids, the matmuls alone, rows as before (a multiple of 4, the last 8-row
    tile guarded) -> now: 64 -> 192 at 56 x 56 0.90 -> 0.60 ms (196 -> 200 rows), 128 ->
    256 at 14 x 14 0.197 -> 0.178 (52 -> 49), 256 -> 256 0.302 -> 0.272, 128 -> 128 at 28 x
    28 0.183 -> 0.164.

    Example:
        >>> matmul_rows(49, 16), matmul_rows(196, 16), matmul_rows(49, 8)
        (49, 200, 52)
    """
    if not isinstance(tiles, int):
        return 4 * sympy.ceiling(tiles / 4)
    if block >= 16 and seven_rows(tiles):
        return tiles
    step = 8 if block >= 16 else 4
    return -(-tiles // step) * step


class _Rewriter(ExprMutator):
    def __init__(self, bb: BlockBuilder, config: Conv2dWinograd) -> None:
        super().__init__()
        self.bb = bb
        self.config = config
        self.funcs: dict[tuple, tuple[GlobalVar, TensorStructInfo, Expr | None]] = {}

    def visit_binding(self, binding: Binding) -> list[Binding]:
        if not isinstance(binding, VarBinding) or not isinstance(binding.value, Call):
            return super().visit_binding(binding)
        call = self.visit_expr(binding.value)
        cfg = self.config
        m = winograd_tile(
            call, cfg.block, cfg.flops_per_byte, cfg.max_weight_bytes, cfg.min_channels,
            cfg.typical_size, cfg.transform_macs,
        )  # fmt: skip
        if m is None:
            return super().visit_binding(binding)
        x, w = call.args
        attrs = call.attrs
        n, _, oh, ow, _ = call.struct_info.shape
        n, oh, ow = (int(d) if d.is_number else d for d in (n, oh, ow))  # symbolic: symbolic tile rows
        o, r, groups = w.data.shape[0], w.data.shape[2], attrs.groups
        panel = 2 * cfg.block if (o // groups) % (2 * cfg.block) == 0 else cfg.block
        rows = matmul_rows(winograd_tiles(oh, ow, m)[2], cfg.block)  # an image's
        u = Constant(winograd_weight_transform(w.data, m, panel, groups))
        v = self._call(
            "winograd_data", winograd_data_transform, [x], (m, attrs.padding, rows, r, groups),
            OpPatternKind.OPAQUE,
        )  # fmt: skip
        v_var = self.fresh_var("winograd_v", v.struct_info)
        mm = self._call("winograd_matmul", winograd_batch_matmul, [v_var, u], (), None)
        mm_var = self.fresh_var("winograd_m", mm.struct_info)
        y = self._call(
            "winograd_output", winograd_output_transform, [mm_var],
            (m, (oh, ow), cfg.block, n, r, rows), OpPatternKind.OUT_ELEMWISE_FUSABLE,
        )  # fmt: skip
        var = self.visit_var_def(binding.var)
        return [VarBinding(v_var, v), VarBinding(mm_var, mm), VarBinding(var, y, span=binding.span)]

    def _call(
        self, name: str, compute, args: list[Expr], params: tuple, pattern: OpPatternKind | None
    ) -> Call:
        """A `call_tir` to the PrimFunc of `compute(*args, *params)`, made once per shape."""
        key = (name, tuple((a.struct_info.shape, a.struct_info.dtype) for a in args), params)
        if key not in self.funcs:
            made = self.bb.call_te(compute, *args, *params, primfunc_name_hint=name)
            gv = made.args[0]
            if pattern is not None:
                func = self.bb.get()[gv]
                assert isinstance(func, PrimFunc)
                self.bb.update_func(gv, func.with_attr("op_pattern", int(pattern)))
            tir_vars = made.args[2] if len(made.args) > 2 else None  # a symbolic batch
            self.funcs[key] = (gv, made.sinfo_args[0], tir_vars)
        gv, sinfo, tir_vars = self.funcs[key]
        return self.bb.normalize(call_tir(gv, args, sinfo, tir_vars=tir_vars))
