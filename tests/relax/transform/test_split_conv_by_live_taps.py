"""SplitConvByLiveTaps: a conv reading mostly padding is computed tap by tap, each tap
over the outputs it reaches."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import unity
from unity import relax
from unity.relax import Constant
from unity.relax.transform import FoldConstant, SplitConvByLiveTaps
from unity.relax.transform.split_conv_by_live_taps import tap_outputs

from .reference import evaluate
from .test_trim_conv_taps import _module

RNG = np.random.default_rng(7)


def _calls(mod, name: str) -> list:
    return [
        b.value for blk in mod["main"].body.blocks for b in blk.bindings
        if isinstance(b.value, relax.Call) and getattr(b.value.op, "name", "") == name
    ]  # fmt: skip


def test_deeplab_rate_12_branch_becomes_a_centre_conv_and_eight_cropped_taps():
    """Rate 12 on 14 x 14: the centre tap reaches every output (one 1 x 1 conv over the
    whole image); each other tap reaches a 2-row or 2-column band or a 2 x 2 corner, a
    1 x 1 conv over the crop it reads, padded back into place and summed."""
    w = RNG.standard_normal((8, 6, 3, 3)).astype("float32")
    before = _module((1, 6, 14, 14), Constant(w), padding=12, dilation=12)
    after = FoldConstant()(SplitConvByLiveTaps(min_macs=0)(before))
    convs = _calls(after, "relax.nn.conv2d")
    assert len(convs) == 9 and all(c.attrs.padding == (0, 0, 0, 0) for c in convs)
    outputs = sorted(tuple(int(d) for d in c.struct_info.shape[2:]) for c in convs)
    assert outputs == [(2, 2)] * 4 + [(2, 14)] * 2 + [(14, 2)] * 2 + [(14, 14)]
    crops = sorted(tuple(int(d) for d in c.args[0].struct_info.shape[2:]) for c in convs)
    assert crops == outputs  # each 1 x 1 tap reads exactly the input its outputs need
    pads = sorted(c.attrs.pad_width[4:] for c in _calls(after, "relax.nn.pad"))
    spans = ((12, 0), (0, 0), (0, 12))  # taps 0, 1, 2: rows 12-13, all, rows 0-1
    assert pads == sorted((*r, *c) for r in spans for c in spans if (r, c) != ((0, 0), (0, 0)))
    x = RNG.standard_normal((1, 6, 14, 14)).astype("float32")
    want = evaluate(before, x)
    np.testing.assert_allclose(evaluate(after, x), want, rtol=1e-4, atol=1e-4)
    got = relax.VirtualMachine(unity.compile(after), unity.cpu())["main"](x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


GRID = list(itertools.product((3, 5), (1, 2), (4, 9), ((4, 4), (9, 2), (0, 6))))  # kernel, stride, dilation, pads


@pytest.mark.parametrize(("k", "s", "d", "p"), GRID)
def test_split_conv_keeps_every_output(k, s, d, p):
    w = RNG.standard_normal((3, 2, k, k)).astype("float32")
    x = RNG.standard_normal((1, 2, 10, 11)).astype("float32")
    before, after_pad = p
    if 10 + before + after_pad - (k - 1) * d - 1 < 0:
        return  # no output position: not a conv
    mod = _module((1, 2, 10, 11), Constant(w), strides=s, padding=(before, before, after_pad, after_pad),
                  dilation=d)  # fmt: skip
    split = SplitConvByLiveTaps(min_macs=0)(mod)
    rows = [(o, t) for o in range((10 + before + after_pad - (k - 1) * d - 1) // s + 1) for t in range(k)]
    live = [o * s - before + t * d for o, t in rows]
    live_rows = sum(0 <= r < 10 for r in live)
    cols = [(o, t) for o in range((11 + before + after_pad - (k - 1) * d - 1) // s + 1) for t in range(k)]
    live_cols = sum(0 <= o * s - before + t * d < 11 for o, t in cols)
    wasteful = live_rows * live_cols * 2 <= len(rows) * len(cols)  # at least half on padding
    assert (split is not mod) == wasteful, (live_rows, live_cols, len(rows), len(cols))
    assert split["main"].ret_struct_info == mod["main"].ret_struct_info
    np.testing.assert_allclose(evaluate(FoldConstant()(split), x), evaluate(mod, x), rtol=1e-4, atol=1e-4)


def test_tap_outputs_against_every_output_position():
    for size, k, s, d, before, after in itertools.product((1, 5), (1, 3), (1, 3), (1, 4), (0, 5), (0, 6)):
        outputs = (size + before + after - (k - 1) * d - 1) // s + 1
        for t, span in enumerate(tap_outputs(size, k, s, d, before, after)):
            reached = [o for o in range(outputs) if 0 <= o * s - before + t * d < size]
            assert span == ((reached[0], reached[-1] + 1) if reached else (0, 0))


def test_left_alone_when_little_is_saved_small_or_symbolic():
    w = Constant(RNG.standard_normal((4, 2, 3, 3)).astype("float32"))
    plain = _module((1, 2, 7, 7), w, padding=1)  # 18% of its products on padding
    assert SplitConvByLiveTaps(min_macs=0)(plain) is plain
    atrous = _module((1, 2, 14, 14), w, padding=12, dilation=12)
    assert SplitConvByLiveTaps()(atrous) is atrous  # 64 K multiply-adds: not worth kernels
    symbolic = _module((1, 2, "h", "w"), w, padding=12, dilation=12)
    assert SplitConvByLiveTaps(min_macs=0)(symbolic) is symbolic
    grouped = _module((1, 4, 14, 14), w, padding=12, dilation=12, groups=2)
    assert SplitConvByLiveTaps(min_macs=0)(grouped) is grouped
