"""ConvertLayout to the channel-blocked layout "NCHW16c": convert once in, once out."""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import relax
from unity.ir.module import IRModule
from unity.ir.structural import assert_structural_equal
from unity.relax import BlockBuilder, Call, Constant, TensorStructInfo, Var, op
from unity.relax.transform import ConvertLayout
from unity.script import ir as I
from unity.script import relax as R
from unity.script import tir as T
from unity.topi.nn.layout import blocked_layout
from unity.topi.testing import (
    adaptive_avg_pool2d_python, conv2d_python, from_blocked, pool2d_python, to_blocked,
)  # fmt: skip

from . import reference
from .reference import evaluate

RNG = np.random.default_rng(29)
BLOCK16 = {"relax.nn.conv2d": ["NCHW16c", "OIHW"]}
BLOCK8 = {"relax.nn.conv2d": ["NCHW8c", "OIHW"]}


def _to_nchw(layout: str, x: np.ndarray) -> np.ndarray:
    if blocked_layout(layout) is not None:
        return from_blocked(x)
    return x.transpose([layout.index(c) for c in "NCHW"])


def _from_nchw(layout: str, y: np.ndarray) -> np.ndarray:
    blocked = blocked_layout(layout)
    if blocked is not None:
        return to_blocked(y, blocked[1])
    return y.transpose(["NCHW".index(c) for c in layout])


def _conv2d(call: Call, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    a = call.attrs
    w = w.transpose([a.kernel_layout.index(c) for c in "OIHW"])
    y = conv2d_python(_to_nchw(a.data_layout, x), w, a.strides, a.padding, a.dilation, a.groups)
    return _from_nchw(a.out_layout or a.data_layout, y).astype(x.dtype)


def _pool(kind: str):
    def run(call: Call, x: np.ndarray) -> np.ndarray:
        a, nchw = call.attrs, _to_nchw(call.attrs.layout, x)
        if kind == "adaptive":
            y = adaptive_avg_pool2d_python(nchw, a.output_size)
        else:
            y = pool2d_python(nchw, a.pool_size, a.strides, kind, a.padding, a.dilation,
                              a.ceil_mode, a.count_include_pad)  # fmt: skip
        return _from_nchw(a.layout, y).astype(x.dtype)

    return run


@pytest.fixture(autouse=True)
def _layout_aware_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference evaluator runs conv2d and pooling in NCHW, NHWC and NCHW{b}c."""
    rules = {op.nn.conv2d: _conv2d, op.nn.max_pool2d: _pool("max"), op.nn.avg_pool2d: _pool("avg"),
             op.nn.adaptive_avg_pool2d: _pool("adaptive")}  # fmt: skip
    for key, rule in rules.items():
        monkeypatch.setitem(reference.EXTRA, key, rule)


def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype("float32")


def _compiled(mod: IRModule) -> relax.VirtualMachine:
    return relax.VirtualMachine(unity.compile(mod, target="llvm"), unity.cpu())


def _calls(mod: IRModule, o: object) -> list[Call]:
    bindings = [b for block in mod["main"].body.blocks for b in block.bindings]
    return [b.value for b in bindings if isinstance(b.value, Call) and b.value.op is o]


def _conversions(mod: IRModule) -> int:
    return len(_calls(mod, op.reshape)) + len(_calls(mod, op.permute_dims))


def _module(x: Var, build: object) -> IRModule:
    """`main(x)` whose dataflow block emits `build(bb, x)` as its output."""
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(build(bb, x))  # type: ignore[operator]
        bb.emit_func_output(gv)
    return bb.get()


def _close(a: object, b: object, tol: float = 1e-4) -> None:
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)  # type: ignore[arg-type]


def test_conv_bias_relu_pool_conv_chain_converts_once_in_and_once_out():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor(("n", 16, 8, 8), "float32"), w1: R.Tensor((32, 16, 3, 3), "float32"),
                 b1: R.Tensor((32, 1, 1), "float32"),
                 w2: R.Tensor((16, 32, 1, 1), "float32")):  # fmt: skip
            with R.dataflow():
                c = R.nn.conv2d(x, w1, padding=1)
                a = R.add(c, b1)
                r = R.nn.relu(a)
                p = R.nn.max_pool2d(r, 2)
                gv = R.nn.conv2d(p, w2)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor(("n", 16, 8, 8), "float32"), w1: R.Tensor((32, 16, 3, 3), "float32"),
                 b1: R.Tensor((32, 1, 1), "float32"),
                 w2: R.Tensor((16, 32, 1, 1), "float32")):  # fmt: skip
            n = T.int64()
            with R.dataflow():
                x_split = R.reshape(x, (n, 1, 16, 8, 8))
                x_16c = R.permute_dims(x_split, axes=[0, 1, 3, 4, 2])
                c = R.nn.conv2d(x_16c, w1, padding=1, data_layout="NCHW16c", kernel_layout="OIHW")
                b1_16c = R.reshape(b1, (1, 2, 1, 1, 16))
                a = R.add(c, b1_16c)
                r = R.nn.relu(a)
                p = R.nn.max_pool2d(r, 2, layout="NCHW16c")
                gv_inner = R.nn.conv2d(p, w2, data_layout="NCHW16c", kernel_layout="OIHW")
                gv_merge = R.permute_dims(gv_inner, axes=[0, 1, 4, 2, 3])
                gv = R.reshape(gv_merge, (n, 16, 4, 4))
                R.output(gv)
            return gv

    After = ConvertLayout(BLOCK16)(Before)
    assert_structural_equal(After, Expected)
    args = (_rand(32, 16, 3, 3) * 0.2, _rand(32, 1, 1), _rand(16, 32, 1, 1) * 0.2)
    vms = [_compiled(m) for m in (Before, After)]
    for n in (1, 2):
        x = _rand(n, 16, 8, 8)
        want = evaluate(Before, x, *args)
        _close(evaluate(After, x, *args), want)
        for vm in vms:
            _close(vm["main"](x, *args).numpy(), want)


def test_constant_operands_are_blocked_with_numpy_and_scalars_stay():
    w = Constant(_rand(16, 8, 3, 3))
    channel, row = _rand(16, 1, 1), _rand(1, 16, 1, 1)

    def build(bb: BlockBuilder, x: Var) -> object:
        c = bb.emit(op.nn.conv2d(x, w, padding=1))
        a = bb.emit(op.add(c, Constant(channel)))
        m = bb.emit(op.multiply(a, Constant(row)))
        return op.nn.relu(op.subtract(m, relax.const(0.5, "float32")))

    before = _module(Var("x", TensorStructInfo((2, 8, 6, 6), "float32")), build)
    after = ConvertLayout(BLOCK8)(before)
    assert _conversions(after) == 4  # x in (reshape, permute), the result out (the same)
    add, mul = _calls(after, op.add)[0], _calls(after, op.multiply)[0]
    for call, data in ((add, channel), (mul, row)):
        blocked = call.args[1]
        assert isinstance(blocked, Constant) and blocked.data.shape == (1, 2, 1, 1, 8)
        np.testing.assert_array_equal(blocked.data, to_blocked(data.reshape(1, 16, 1, 1), 8))
    assert _calls(after, op.subtract)[0].args[1].data.shape == ()
    x = _rand(2, 8, 6, 6)
    _close(evaluate(after, x), evaluate(before, x))


def test_concat_of_two_blocked_branches_stays_blocked():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 16, 6, 6), "float32"), w1: R.Tensor((16, 16, 3, 3), "float32"),
                 w2: R.Tensor((32, 16, 1, 1), "float32")):  # fmt: skip
            with R.dataflow():
                a = R.nn.conv2d(x, w1, padding=1)
                b = R.nn.conv2d(x, w2)
                cat = R.concat((a, b), axis=1)
                gv = R.nn.relu(cat)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 16, 6, 6), "float32"), w1: R.Tensor((16, 16, 3, 3), "float32"),
                 w2: R.Tensor((32, 16, 1, 1), "float32")):  # fmt: skip
            with R.dataflow():
                x_split = R.reshape(x, (1, 1, 16, 6, 6))
                x_16c = R.permute_dims(x_split, axes=[0, 1, 3, 4, 2])
                a = R.nn.conv2d(x_16c, w1, padding=1, data_layout="NCHW16c", kernel_layout="OIHW")
                b = R.nn.conv2d(x_16c, w2, data_layout="NCHW16c", kernel_layout="OIHW")
                cat = R.concat((a, b), axis=1)
                gv_inner = R.nn.relu(cat)
                gv_merge = R.permute_dims(gv_inner, axes=[0, 1, 4, 2, 3])
                gv = R.reshape(gv_merge, (1, 48, 6, 6))
                R.output(gv)
            return gv

    After = ConvertLayout(BLOCK16)(Before)
    assert_structural_equal(After, Expected)
    args = (_rand(1, 16, 6, 6), _rand(16, 16, 3, 3), _rand(32, 16, 1, 1))
    want = evaluate(Before, *args)
    _close(evaluate(After, *args), want)
    _close(_compiled(After)["main"](*args).numpy(), want)


def test_concat_with_a_branch_of_other_channels_takes_original_layouts():
    def build(bb: BlockBuilder, x: Var) -> object:
        a = bb.emit(op.nn.conv2d(x, Constant(_rand(8, 8, 1, 1))))
        return op.concat([a, x, a], axis=1)  # 8 + 8 + 8 channels: all whole blocks of 8

    before = _module(Var("x", TensorStructInfo((1, 8, 4, 4), "float32")), build)
    after = ConvertLayout(BLOCK8)(before)
    assert _calls(after, op.concat)[0].struct_info.shape == (1, 3, 4, 4, 8)
    x = _rand(1, 8, 4, 4)
    _close(evaluate(after, x), evaluate(before, x))

    def odd(bb: BlockBuilder, x: Var) -> object:
        a = bb.emit(op.nn.conv2d(x, Constant(_rand(8, 12, 1, 1))))
        return op.concat([a, x], axis=1)  # 12 channels of x are not whole blocks

    before = _module(Var("x", TensorStructInfo((1, 12, 4, 4), "float32")), odd)
    after = ConvertLayout(BLOCK8)(before)
    assert _calls(after, op.concat)[0].struct_info.shape == (1, 20, 4, 4)
    x = _rand(1, 12, 4, 4)
    _close(evaluate(after, x), evaluate(before, x))


def test_image_conv_reads_nchw_and_writes_blocked_directly():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 3, 8, 8), "float32"), w0: R.Tensor((16, 3, 3, 3), "float32"),
                 w1: R.Tensor((16, 16, 3, 3), "float32")):  # fmt: skip
            with R.dataflow():
                c = R.nn.conv2d(x, w0, padding=1)
                r = R.nn.relu(c)
                gv = R.nn.conv2d(r, w1, padding=1)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 3, 8, 8), "float32"), w0: R.Tensor((16, 3, 3, 3), "float32"),
                 w1: R.Tensor((16, 16, 3, 3), "float32")):  # fmt: skip
            with R.dataflow():
                c = R.nn.conv2d(x, w0, padding=1, out_layout="NCHW16c")  # no copy after it
                r = R.nn.relu(c)
                gv_inner = R.nn.conv2d(r, w1, padding=1, data_layout="NCHW16c",
                                       kernel_layout="OIHW")  # fmt: skip
                gv_merge = R.permute_dims(gv_inner, axes=[0, 1, 4, 2, 3])
                gv = R.reshape(gv_merge, (1, 16, 8, 8))
                R.output(gv)
            return gv

    After = ConvertLayout(BLOCK16)(Before)
    assert_structural_equal(After, Expected)
    assert ConvertLayout(BLOCK16)(After) is After  # a conv writing blocked stays as it is
    args = (_rand(1, 3, 8, 8), _rand(16, 3, 3, 3), _rand(16, 16, 3, 3) * 0.2)
    want = evaluate(Before, *args)
    _close(evaluate(After, *args), want)
    for mod in (Before, After):
        _close(_compiled(mod)["main"](*args).numpy(), want)


def test_24_channels_are_held_in_two_blocks_the_last_padded():
    # conv 16 -> 24 writes two blocks (its kernel's 8 padded outputs zeros); conv 24 -> 32
    # reads them (its kernel's 8 padded inputs zeros): no layout change between them
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 16, 8, 8), "float32"), w1: R.Tensor((24, 16, 1, 1), "float32"),
                 w2: R.Tensor((32, 24, 3, 3), "float32"),
                 w3: R.Tensor((32, 32, 3, 3), "float32")):  # fmt: skip
            with R.dataflow():
                a = R.nn.conv2d(x, w1)
                r = R.nn.relu(a)
                b = R.nn.conv2d(r, w2, padding=1)
                p = R.nn.max_pool2d(b, 2)
                gv = R.nn.conv2d(p, w3, padding=1)
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 16, 8, 8), "float32"), w1: R.Tensor((24, 16, 1, 1), "float32"),
                 w2: R.Tensor((32, 24, 3, 3), "float32"),
                 w3: R.Tensor((32, 32, 3, 3), "float32")):  # fmt: skip
            with R.dataflow():
                x_split = R.reshape(x, (1, 1, 16, 8, 8))
                x_16c = R.permute_dims(x_split, axes=[0, 1, 3, 4, 2])
                w1_padded = R.nn.pad(w1, [0, 8, 0, 0, 0, 0, 0, 0])  # 24 -> 32 outputs
                a = R.nn.conv2d(x_16c, w1_padded, data_layout="NCHW16c", kernel_layout="OIHW")
                r = R.nn.relu(a)
                w2_padded = R.nn.pad(w2, [0, 0, 0, 8, 0, 0, 0, 0])  # 24 -> 32 inputs
                b = R.nn.conv2d(r, w2_padded, padding=1, data_layout="NCHW16c", kernel_layout="OIHW")
                p = R.nn.max_pool2d(b, 2, layout="NCHW16c")
                gv_inner = R.nn.conv2d(p, w3, padding=1, data_layout="NCHW16c",
                                       kernel_layout="OIHW")  # fmt: skip
                gv_merge = R.permute_dims(gv_inner, axes=[0, 1, 4, 2, 3])
                gv = R.reshape(gv_merge, (1, 32, 4, 4))
                R.output(gv)
            return gv

    After = ConvertLayout(BLOCK16)(Before)
    assert_structural_equal(After, Expected)
    args = (_rand(1, 16, 8, 8), _rand(24, 16, 1, 1) * 0.3, _rand(32, 24, 3, 3) * 0.1,
            _rand(32, 32, 3, 3) * 0.1)  # fmt: skip
    want = evaluate(Before, *args)
    _close(evaluate(After, *args), want)
    _close(_compiled(After)["main"](*args).numpy(), want)


def test_blocked_data_of_a_conv_writing_blocked_goes_back_to_nchw_first():
    # 24 channels are whole blocks of 8 (the pool) but not of 16 (the conv); HWIO -> OIHW
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 24, 8, 8), "float32"), w: R.Tensor((3, 3, 24, 32), "float32")):
            with R.dataflow():
                p = R.nn.max_pool2d(x, 2)
                gv = R.nn.conv2d(p, w, padding=1, kernel_layout="HWIO")
                R.output(gv)
            return gv

    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 24, 8, 8), "float32"), w: R.Tensor((3, 3, 24, 32), "float32")):
            with R.dataflow():
                x_split = R.reshape(x, (1, 3, 8, 8, 8))
                x_8c = R.permute_dims(x_split, axes=[0, 1, 3, 4, 2])
                p = R.nn.max_pool2d(x_8c, 2, layout="NCHW8c")
                p_merge = R.permute_dims(p, axes=[0, 1, 4, 2, 3])
                p_0123 = R.reshape(p_merge, (1, 24, 4, 4))
                w_3201 = R.permute_dims(w, axes=[3, 2, 0, 1])
                gv_inner = R.nn.conv2d(p_0123, w_3201, padding=1, kernel_layout="OIHW",
                                       out_layout="NCHW16c")  # fmt: skip
                gv_merge = R.permute_dims(gv_inner, axes=[0, 1, 4, 2, 3])
                gv = R.reshape(gv_merge, (1, 32, 4, 4))
                R.output(gv)
            return gv

    After = ConvertLayout({**BLOCK16, "relax.nn.max_pool2d": ["NCHW8c"]})(Before)
    assert_structural_equal(After, Expected)
    args = (_rand(1, 24, 8, 8), _rand(3, 3, 24, 32) * 0.1)
    want = evaluate(Before, *args)
    _close(evaluate(After, *args), want)
    _close(_compiled(After)["main"](*args).numpy(), want)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "groups", "data_layout", "kernel_layout"),
    [((1, 3, 8, 8), (8, 3, 3, 3), 1, "NCHW", "OIHW"),  # C = 3, O = 8 (16 would double it)
     ((1, 16, 8, 8), (8, 16, 1, 1), 1, "NCHW", "OIHW"),  # O = 8
     ((1, 24, 8, 8), (48, 8, 1, 1), 3, "NCHW", "OIHW"),  # C = 24 in groups: no out_layout
     ((1, 32, 8, 8), (32, 8, 1, 1), 4, "NCHW", "OIHW"),  # 8 channels a group
     ((1, 8, 8, 16), (3, 3, 16, 16), 1, "NHWC", "HWIO")],  # not NCHW to start with
)  # fmt: skip
def test_conv_that_does_not_fit_the_block_is_left_alone(x_shape, w_shape, groups, data_layout,
                                                        kernel_layout):  # fmt: skip
    w = Constant(_rand(*w_shape))

    def build(bb: BlockBuilder, x: Var) -> object:
        c = bb.emit(op.nn.conv2d(x, w, groups=groups, data_layout=data_layout,
                                 kernel_layout=kernel_layout))  # fmt: skip
        return op.nn.relu(c)

    mod = _module(Var("x", TensorStructInfo(x_shape, "float32")), build)
    assert ConvertLayout(BLOCK16)(mod) is mod


def test_depthwise_aligned_groups_and_an_hwio_kernel_are_blocked():
    def build(bb: BlockBuilder, x: Var) -> object:
        dw = bb.emit(op.nn.conv2d(x, Constant(_rand(16, 1, 3, 3)), padding=1, groups=16))
        grouped = bb.emit(op.nn.conv2d(dw, Constant(_rand(16, 8, 1, 1)), groups=2))
        hwio = Constant(_rand(3, 3, 16, 8))
        return op.nn.conv2d(grouped, hwio, padding=1, kernel_layout="HWIO")

    before = _module(Var("x", TensorStructInfo((1, 16, 5, 5), "float32")), build)
    after = ConvertLayout(BLOCK8)(before)
    convs = _calls(after, op.nn.conv2d)
    layouts = [(c.attrs.data_layout, c.attrs.kernel_layout) for c in convs]
    assert layouts == [("NCHW8c", "OIHW")] * 3
    kernel = _calls(after, op.permute_dims)[1]  # after the input's
    assert kernel.attrs.axes == (3, 2, 0, 1)  # HWIO -> OIHW
    x = _rand(1, 16, 5, 5)
    _close(evaluate(after, x), evaluate(before, x))


def test_spatial_reductions_stay_blocked_and_channel_ops_get_nchw():
    w = Constant(_rand(16, 8, 3, 3))

    def build(bb: BlockBuilder, x: Var) -> object:
        c = bb.emit(op.nn.conv2d(x, w, padding=1))
        gap = bb.emit(op.mean(c, axis=[2, 3], keepdims=True))  # (n, 16, 1, 1)
        flat = bb.emit(op.reshape(gap, (2, 16)))
        peak = bb.emit(op.max(c, axis=[-1, -2]))  # (n, 16): no keepdims
        soft = bb.emit(op.nn.softmax(c, axis=1))  # over the channels: no blocked rule
        total = bb.emit(op.sum(soft, axis=[1], keepdims=True))  # over the channels: declines
        return relax.Tuple((flat, op.add(peak, relax.const(1.0, "float32")), total))

    before = _module(Var("x", TensorStructInfo((2, 8, 5, 5), "float32")), build)
    after = ConvertLayout(BLOCK8)(before)
    mean, peak = _calls(after, op.mean)[0], _calls(after, op.max)[0]
    assert mean.struct_info.shape == (2, 2, 1, 1, 8) and peak.struct_info.shape == (2, 2, 8)
    assert peak.attrs.axis == (2, 3)
    softmax = _calls(after, op.nn.softmax)[0]
    assert softmax.struct_info.shape == (2, 16, 5, 5) and softmax.attrs.axis == 1
    # c goes back once (shared by the softmax), gap and peak by a single reshape each
    assert len(_calls(after, op.permute_dims)) == 2  # x in, c out
    x = _rand(2, 8, 5, 5)
    for got, want in zip(evaluate(after, x), evaluate(before, x), strict=True):
        _close(got, want)


def test_broadcast_operands_full_rank_spatial_and_scalar():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 8, 4, 4), "float32"), w: R.Tensor((8, 8, 1, 1), "float32"),
                 y: R.Tensor((1, 8, 4, 4), "float32"), m: R.Tensor((4, 4), "float32")):  # fmt: skip
            with R.dataflow():
                c = R.nn.conv2d(x, w)
                a = R.add(c, y)
                b = R.multiply(a, y)
                d = R.subtract(b, m)
                pos = R.greater(d, R.const(0.0, "float32"))
                gv = R.where(pos, d, c)
                R.output(gv)
            return gv

    After = ConvertLayout(BLOCK8)(Before)
    assert len(_calls(After, op.permute_dims)) == 3  # x and y in (once each), gv out
    sub = _calls(After, op.subtract)[0]
    assert sub.args[1].struct_info.shape == (1, 1, 4, 4, 1)  # m, reshaped only
    assert _calls(After, op.where)[0].struct_info.ndim == 5
    args = (_rand(1, 8, 4, 4), _rand(8, 8, 1, 1), _rand(1, 8, 4, 4), _rand(4, 4))
    _close(evaluate(After, *args), evaluate(Before, *args))


def test_pool_anchor_alone_blocks_and_adaptive_pool_follows():
    def build(bb: BlockBuilder, x: Var) -> object:
        p = bb.emit(op.nn.max_pool2d(x, 3, 2, padding=1))
        q = bb.emit(op.nn.adaptive_avg_pool2d(op.nn.relu(p), 1))
        return q

    bb_x = Var("x", TensorStructInfo(("n", 16, 7, 7), "float32"))
    before = _module(bb_x, build)
    after = ConvertLayout({"relax.nn.max_pool2d": ["NCHW8c"]})(before)
    assert {c.attrs.layout for c in _calls(after, op.nn.max_pool2d)} == {"NCHW8c"}
    assert {c.attrs.layout for c in _calls(after, op.nn.adaptive_avg_pool2d)} == {"NCHW8c"}
    assert len(_calls(after, op.permute_dims)) == 1  # in; (n, 2, 1, 1, 8) goes back by reshape
    x = _rand(3, 16, 7, 7)
    want = evaluate(before, x)
    _close(evaluate(after, x), want)
    _close(_compiled(after)["main"](x).numpy(), want)


def test_blocked_and_permuted_anchors_meet_through_the_original_layout():
    w1, w2 = Constant(_rand(8, 8, 3, 3)), Constant(_rand(8, 8, 1, 1))

    def build(bb: BlockBuilder, x: Var) -> object:
        c = bb.emit(op.nn.conv2d(x, w1, padding=1))  # NCHW8c
        p = bb.emit(op.nn.avg_pool2d(c, 3, 1, padding=1))  # NHWC: from the blocked c
        d = bb.emit(op.nn.conv2d(x, w2))  # NCHW8c, sharing x's conversion
        return op.add(p, d)  # NHWC p meets blocked d: p is blocked

    before = _module(Var("x", TensorStructInfo((1, 8, 5, 5), "float32")), build)
    table = {**BLOCK8, "relax.nn.avg_pool2d": ["NHWC"]}
    after = ConvertLayout(table)(before)
    assert _calls(after, op.nn.avg_pool2d)[0].attrs.layout == "NHWC"
    assert _calls(after, op.add)[0].struct_info.shape == (1, 1, 5, 5, 8)
    x = _rand(1, 8, 5, 5)
    _close(evaluate(after, x), evaluate(before, x))


def test_bad_blocked_desired_layouts_are_refused():
    with pytest.raises(ValueError, match="relax.nn.conv2d_transpose takes no blocked layout"):
        ConvertLayout({"relax.nn.conv2d_transpose": ["NCHW16c"]})
    message = "relax.nn.conv2d in 'NCHW16c' takes an 'OIHW' kernel, not 'HWIO'"
    with pytest.raises(ValueError, match=message):
        ConvertLayout({"relax.nn.conv2d": ["NCHW16c", "HWIO"]})


def _onnx_like(params: dict[str, np.ndarray]) -> IRModule:
    """conv+bias+relu, maxpool, conv+bias+relu, global average pool, flatten, gemm."""
    x = Var("x", TensorStructInfo(("n", 3, 12, 12), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            c1 = bb.emit(op.nn.conv2d(x, Constant(params["w1"]), padding=1))
            r1 = bb.emit(op.nn.relu(bb.emit(op.add(c1, Constant(params["b1"])))))
            p = bb.emit(op.nn.max_pool2d(r1, 2, 2))
            c2 = bb.emit(op.nn.conv2d(p, Constant(params["w2"]), padding=1))
            r2 = bb.emit(op.nn.relu(bb.emit(op.add(c2, Constant(params["b2"])))))
            gap = bb.emit(op.mean(r2, axis=[2, 3], keepdims=True))
            flat = bb.emit(op.reshape(gap, (x.struct_info.shape[0], 32)))
            gemm = bb.emit(op.matmul(flat, Constant(params["fc"])))
            gv = bb.emit_output(op.add(gemm, Constant(params["fc_b"])))
        bb.emit_func_output(gv)
    return bb.get()


def _onnx_like_params() -> dict[str, np.ndarray]:
    return {"w1": _rand(16, 3, 3, 3) * 0.3, "b1": _rand(1, 16, 1, 1),
            "w2": _rand(32, 16, 3, 3) * 0.1, "b2": _rand(1, 32, 1, 1), "fc": _rand(32, 10),
            "fc_b": _rand(10)}  # fmt: skip


def test_onnx_like_model_converts_in_once_and_leaves_by_a_reshape():
    before = _onnx_like(_onnx_like_params())
    after = ConvertLayout(BLOCK16)(before)
    convs = _calls(after, op.nn.conv2d)
    layouts = [(c.attrs.data_layout, c.attrs.out_layout) for c in convs]
    assert layouts == [("NCHW", "NCHW16c"), ("NCHW16c", None)]  # 3 input channels
    assert _calls(after, op.mean)[0].struct_info.shape[1:] == (2, 1, 1, 16)
    assert not _calls(after, op.permute_dims)  # the pooled (n, 2, 1, 1, 16) leaves by a reshape
    x = _rand(2, 3, 12, 12)
    _close(evaluate(after, x), evaluate(before, x), 1e-3)


def test_onnx_like_model_keeps_its_numbers_through_the_default_pipeline():
    before = _onnx_like(_onnx_like_params())
    after = ConvertLayout(BLOCK16)(before)
    vms = [_compiled(m) for m in (before, after)]
    for n in (1, 3):
        x = _rand(n, 3, 12, 12)
        want = evaluate(before, x)
        for vm in vms:
            _close(vm["main"](x).numpy(), want, 1e-3)


def test_a_later_dataflow_block_reads_blocked_values_that_are_in_scope():
    # `r` leaves block 1 blocked as well as NCHW (a var, in scope after it); `x`'s blocked
    # copy was a dataflow var of block 1, so block 2 blocks `x` again (DeepLabv3 over a
    # symbolic size: the ASPP's branches in `If`s read the backbone's blocked result)
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 16, 8, 8), "float32"), w1: R.Tensor((32, 16, 3, 3), "float32"),
                 w2: R.Tensor((32, 32, 3, 3), "float32")):  # fmt: skip
            with R.dataflow():
                a = R.nn.conv2d(x, w1, padding=1)
                r = R.nn.relu(a)
                R.output(r)
            with R.dataflow():
                b = R.nn.conv2d(r, w2, padding=1)
                c = R.nn.conv2d(x, w1, padding=1)
                gv = R.add(b, c)
                R.output(gv)
            return gv

    After = ConvertLayout(BLOCK16)(Before)
    assert relax.analysis.well_formed(After)
    blocks = After["main"].body.blocks
    outputs = [b.var.name_hint for b in blocks[0].bindings if not isinstance(b.var, relax.DataflowVar)]
    assert outputs == ["r_inner", "r"]  # both layouts leave (the unread one is dead code)
    block2 = [b.var.name_hint for b in blocks[1].bindings]
    assert "x_16c" in block2 and not [n for n in block2 if n.startswith("r_")]
    args = (_rand(1, 16, 8, 8), _rand(32, 16, 3, 3) * 0.2, _rand(32, 32, 3, 3) * 0.1)
    want = evaluate(Before, *args)
    _close(evaluate(After, *args), want)
    _close(_compiled(After)["main"](*args).numpy(), want)


def test_an_hwio_kernel_on_padded_channels_is_permuted_then_padded():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 16, 6, 6), "float32"), w1: R.Tensor((3, 3, 16, 24), "float32"),
                 w2: R.Tensor((3, 3, 24, 32), "float32")):  # fmt: skip
            with R.dataflow():
                a = R.nn.conv2d(x, w1, padding=1, kernel_layout="HWIO")
                r = R.nn.relu(a)
                gv = R.nn.conv2d(r, w2, padding=1, kernel_layout="HWIO")
                R.output(gv)
            return gv

    After = ConvertLayout(BLOCK16)(Before)
    pads = [c.attrs.pad_width for c in _calls(After, op.nn.pad)]
    assert pads == [(0, 8, 0, 0, 0, 0, 0, 0), (0, 0, 0, 8, 0, 0, 0, 0)]  # O, then I, of OIHW
    args = (_rand(1, 16, 6, 6), _rand(3, 3, 16, 24) * 0.2, _rand(3, 3, 24, 32) * 0.2)
    want = evaluate(Before, *args)
    _close(evaluate(After, *args), want)
    _close(_compiled(After)["main"](*args).numpy(), want)
