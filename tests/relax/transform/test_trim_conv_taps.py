"""TrimConvTaps: kernel rows and columns that only read padding are sliced off."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import unity
from unity import relax
from unity.ir.structural import assert_structural_equal
from unity.relax import BlockBuilder, Constant, TensorStructInfo, Var, op
from unity.relax.transform import FoldConstant, TrimConvTaps, TrimConvTapsBySize
from unity.relax.transform.trim_conv_taps import live_taps

from .reference import evaluate

RNG = np.random.default_rng(5)


def _module(xshape, w, **attrs):
    x = Var("x", TensorStructInfo(xshape, "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(op.nn.conv2d(x, w, **attrs))
        bb.emit_func_output(gv)
    return bb.get()


def test_atrous_branch_wider_than_the_image_becomes_a_pointwise_conv():
    w = RNG.standard_normal((8, 6, 3, 3)).astype("float32")
    before = _module((1, 6, 5, 5), Constant(w), padding=7, dilation=7)
    x = Var("x", TensorStructInfo((1, 6, 5, 5), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            kernel = bb.emit(Constant(w[:, :, 1:2, 1:2].copy()))  # the folded slice
            gv = bb.emit_output(op.nn.conv2d(x, kernel))
        bb.emit_func_output(gv)
    assert_structural_equal(FoldConstant()(TrimConvTaps()(before)), bb.get())


def test_rows_and_columns_trim_apart_with_nhwc_and_uneven_padding():
    # rows: 4 taps of dilation 3 over 4 rows padded (6, 1), 2 outputs: taps 2 and 3 live;
    # columns: dilation 1 over 9 columns: every tap lives, the columns stay
    w = RNG.standard_normal((4, 3, 2, 5)).astype("float32")  # HWIO
    x = RNG.standard_normal((2, 4, 9, 2)).astype("float32")
    before = _module((2, 4, 9, 2), Constant(w), padding=(6, 2, 1, 2), dilation=(3, 1),
                     data_layout="NHWC", kernel_layout="HWIO")  # fmt: skip
    after = FoldConstant()(TrimConvTaps()(before))
    call = after["main"].body.blocks[0].bindings[-1].value
    assert call.attrs.padding == (0, 2, 1, 2) and call.attrs.dilation == (3, 1)
    assert [int(d) for d in call.args[1].struct_info.shape] == [2, 3, 2, 5]
    want = np.zeros((2, 2, 11, 5), "float32")  # NHWC out: rows 6 + 4 + 1 - 10 + 1, columns 9 + 4 - 2
    wt = w.transpose(3, 2, 0, 1)  # OIHW
    xp = np.pad(x, ((0, 0), (6, 1), (2, 2), (0, 0)))
    for o, c in itertools.product(range(2), range(11)):
        patch = xp[:, o : o + 10 : 3, c : c + 3, :]  # (n, 4, 3, ci)
        want[:, o, c, :] = np.einsum("nhwi,oihw->no", patch, wt)
    got = relax.VirtualMachine(unity.compile(after, target="llvm"), unity.cpu())["main"](x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


GRID = list(itertools.product((1, 3, 4), (1, 2), (1, 4, 9), (0, 3, 10)))  # kernel, stride, dilation, pad


@pytest.mark.parametrize(("k", "s", "d", "p"), GRID)
def test_trimmed_conv_keeps_every_output(k, s, d, p):
    w = RNG.standard_normal((3, 2, k, k)).astype("float32")
    x = RNG.standard_normal((1, 2, 6, 5)).astype("float32")
    if (6 + 2 * p - (k - 1) * d - 1) < 0 or (5 + 2 * p - (k - 1) * d - 1) < 0:
        return  # no output position: not a conv
    before = _module((1, 2, 6, 5), Constant(w), strides=s, padding=(p, p, p + 1, p), dilation=d)
    after = FoldConstant()(TrimConvTaps()(before))
    assert after["main"].ret_struct_info == before["main"].ret_struct_info
    np.testing.assert_allclose(evaluate(after, x), evaluate(before, x), rtol=1e-5, atol=1e-5)


def test_live_taps_against_every_output_position():
    for size, k, s, d, before, after in itertools.product((1, 5), (1, 3), (1, 3), (1, 4), (0, 5), (0, 6)):
        outputs = (size + before + after - (k - 1) * d - 1) // s + 1
        live = [t for t in range(k) for o in range(outputs) if 0 <= o * s - before + t * d < size]
        want = (min(live), max(live)) if live else None
        assert live_taps(size, k, s, d, before, after) == want


def test_a_symbolic_batch_still_trims():
    w = RNG.standard_normal((4, 2, 3, 3)).astype("float32")
    after = TrimConvTaps()(_module(("n", 2, 5, 5), Constant(w), padding=6, dilation=6))
    assert "strided_slice" in after.script() and "padding=(0, 0, 0, 0)" in after.script()


def test_a_symbolic_image_size_chooses_the_trimmed_conv_at_run_time():
    """Rate 9 over h x w: up to 9 rows (and 9 columns) only the centre tap reads the
    image; a run-time If picks the 1 x 1 conv there, the whole conv above."""
    from unity.relax.expr import DataflowBlock, If
    from unity.relax.transform.trim_conv_taps_by_size import live_up_to

    assert live_up_to(3, 1, 9, 9, 9) == (9, (1, 1))
    w = RNG.standard_normal((4, 2, 3, 3)).astype("float32")
    before = _module((1, 2, "h", "w"), Constant(w), padding=9, dilation=9)
    assert TrimConvTaps()(before) is before or "If" not in TrimConvTaps()(before).script()
    after = TrimConvTapsBySize()(before)
    blocks = after["main"].body.blocks
    (choice,) = [b.value for blk in blocks for b in blk.bindings if isinstance(b.value, If)]
    assert str(choice.cond.value) == "Min(1, Max(0, 10 - h))*Min(1, Max(0, 10 - w))"
    assert "strided_slice" in after.script()
    assert any(isinstance(blk, DataflowBlock) for blk in choice.true_branch.blocks)  # dataflow again
    vms = [relax.VirtualMachine(unity.compile(m), unity.cpu()) for m in (before, after)]
    for h, wd in ((5, 7), (9, 9), (10, 4), (12, 15)):  # trimmed, the bound, then the whole conv
        x = RNG.standard_normal((1, 2, h, wd)).astype("float32")
        want = evaluate(before, x)
        for vm in vms:
            np.testing.assert_allclose(vm["main"](x).numpy(), want, rtol=1e-5, atol=1e-5)


def test_the_kernel_trimmed_for_small_images_is_prepacked_too():
    """The trimmed kernel is a constant bound inside the If branch: the prepacked
    variant of the conv takes it packed, as it takes the whole kernel."""
    w = RNG.standard_normal((64, 32, 3, 3)).astype("float32")
    mod = _module((1, 32, "h", "w"), Constant(w), padding=9, dilation=9)
    ex = unity.compile(mod)
    names = [n for n in str(ex.program["functions"]["main"]["code"]).split("'") if "conv2d" in n]
    assert sorted(names) == ["conv2d1_prepacked", "conv2d_prepacked"]
    x = RNG.standard_normal((1, 32, 6, 8)).astype("float32")
    got = relax.VirtualMachine(ex, unity.cpu())["main"](x).numpy()
    np.testing.assert_allclose(got, evaluate(mod, x), rtol=1e-4, atol=1e-4)


def test_left_alone_symbolic_sizes_and_negative_padding():
    w = Constant(RNG.standard_normal((4, 2, 3, 3)).astype("float32"))
    for attrs in ({"padding": 1}, {"padding": 4, "dilation": 4}):  # only a tiny image would trim
        symbolic = _module((1, 2, "h", "w"), w, **attrs)
        assert TrimConvTapsBySize()(symbolic) is symbolic
    # no padding: tap 0 reads row 0, the last tap the last row; all live, nothing to trim
    plain = _module((1, 2, 7, 7), w)
    assert "strided_slice" not in TrimConvTaps()(plain).script()
    # one output row reads rows -1, 1, 3 of 3 (padding 1 and 3, dilation 2): only tap 1
    # lives, but it starts 2 rows later than the padding of 1 allows: left alone
    negative = _module((1, 2, 3, 3), w, strides=5, padding=(1, 1, 3, 3), dilation=2)
    assert "strided_slice" not in TrimConvTaps()(negative).script()


def test_a_symbolic_image_between_the_rate_and_twice_it_runs_the_conv_tap_by_tap():
    """DeepLabv3's rate-12 branch over a feature map 1/16 of a symbolic image (14 x 14 at
    224): up to 12 rows only the centre tap is live (trimmed); from 13 to 27 every tap
    reaches part of the outputs, and a run-time If picks the conv tap by tap, each tap a
    1 x 1 conv over the crop it reads, padded to the output (the outer taps' crops cast to
    ``n - 12`` rows or columns); above, the whole conv.  All three match the reference
    (before and after at each size)."""
    from unity.relax.expr import If

    w = RNG.standard_normal((64, 64, 3, 3)).astype("float32")
    x = Var("x", TensorStructInfo((1, 64, "h", "w"), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(op.strided_slice(x, [2, 3], [0, 0], [relax.sym("h"), relax.sym("w")], [16, 16]))
            gv = bb.emit_output(op.nn.conv2d(lv, Constant(w), padding=12, dilation=12))
        bb.emit_func_output(gv)
    before = bb.get()
    after = TrimConvTapsBySize()(before)
    (trim,) = [b.value for blk in after["main"].body.blocks for b in blk.bindings if isinstance(b.value, If)]
    (split,) = [b.value for blk in trim.false_branch.blocks for b in blk.bindings if isinstance(b.value, If)]
    bounds = str(split.cond.value)
    assert "Max(0, 28 - ceiling(h/16))" in bounds and "Max(0, ceiling(w/16) - 12)" in bounds, bounds
    pieces = split.true_branch.script()
    assert pieces.count("R.nn.conv2d(") == 9 and pieces.count("R.match_cast(") == 8
    assert "padding=(12, 12, 12, 12)" not in pieces
    vms = [relax.VirtualMachine(unity.compile(m), unity.cpu()) for m in (before, after)]
    for h, wd in ((160, 176), (208, 224), (224, 400), (432, 432), (448, 450)):  # 10-28 rows
        a = RNG.standard_normal((1, 64, h, wd)).astype("float32")
        sub = a[:, :, ::16, ::16]  # the reference of the conv over the same static size
        want = evaluate(_module(sub.shape, Constant(w), padding=12, dilation=12), sub)
        for vm in vms:
            np.testing.assert_allclose(vm["main"](a).numpy(), want, rtol=1e-4, atol=1e-3)
