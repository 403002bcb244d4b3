"""The default Winograd rule: a tile's row pass in a local buffer, the points unrolled, the
lanes in the vector, the epilogue in the column pass; results equal to a direct conv."""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import te, tir
from unity.schedule.default import RuleContext, schedule_primfunc
from unity.schedule.tree import walk
from unity.tir.stmt import Block, For, ForKind
from unity.topi.nn import winograd as W
from unity.topi.testing.conv2d_nchw_python import conv2d_nchw_python

RNG = np.random.default_rng(5)
CTX = RuleContext(lanes=8, num_cores=2)


def _stages(m: int, c: int, o: int, h: int, b: int = 8, panel: int = 16):
    """The data transform, the matmul and the output transform (+ bias, relu) as PrimFuncs."""
    x = te.placeholder((1, c // b, h, h, b), name="x")
    rows = -(-W.winograd_tiles(h, h, m)[2] // 4) * 4
    v = W.winograd_data_transform(x, m, 1, rows)
    vp = te.placeholder(v.shape, name="v")
    u = te.placeholder(((m + 2) ** 2, 1, o // panel, c, panel), name="u")
    mm = W.winograd_batch_matmul(vp, u)
    mp = te.placeholder(mm.shape, name="mm")
    bias = te.placeholder((1, o // b, 1, 1, b), name="bias")
    y = W.winograd_output_transform(mp, m, (h, h), b)
    relu = te.compute(
        y.shape, lambda n, q, i, j, k: te.max(y[n, q, i, j, k] + bias[0, q, 0, 0, k], 0.0),
        name="T_relu",
    )  # fmt: skip
    return [
        te.create_prim_func([x, v]), te.create_prim_func([vp, u, mm]),
        te.create_prim_func([mp, bias, relu]),
    ]  # fmt: skip


def _loops(func: tir.PrimFunc) -> list[For]:
    return [s for s in walk(func.body) if isinstance(s, For)]


def _blocks(func: tir.PrimFunc) -> list[Block]:
    return [s for s in walk(func.body) if isinstance(s, Block) and s.name_hint != "root"]


@pytest.mark.parametrize(
    ("m", "c", "o", "h", "lanes"),
    [(2, 16, 32, 8, 8), (4, 16, 16, 12, 8), (4, 8, 16, 7, 8), (4, 32, 32, 8, 16)],
)  # fmt: skip
def test_scheduled_stages_equal_a_direct_conv(m: int, c: int, o: int, h: int, lanes: int) -> None:
    ctx = RuleContext(lanes=lanes, num_cores=2)  # 16: AVX-512's blocks and panels of 32
    b, panel = lanes, min(o, 2 * lanes)
    funcs = [schedule_primfunc(f, ctx) for f in _stages(m, c, o, h, b, panel)]
    data = RNG.standard_normal((1, c, h, h)).astype("float32")
    weight = RNG.standard_normal((o, c, 3, 3)).astype("float32")
    bias = RNG.standard_normal((1, o // b, 1, 1, b)).astype("float32")
    bufs = [
        [np.zeros([int(d.value) for d in p.shape], "float32") for p in f.buffer_params()]
        for f in funcs
    ]
    bufs[0][0] = np.ascontiguousarray(data.reshape(1, c // b, b, h, h).transpose(0, 1, 3, 4, 2))
    bufs[1][0], bufs[1][1] = bufs[0][1], W.winograd_weight_transform(weight, m, panel)
    bufs[2][0], bufs[2][1] = bufs[1][2], bias
    for f, args in zip(funcs, bufs):
        unity.build(f)["main"](*args)
    ref = conv2d_nchw_python(np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1))), weight, 1, 0)
    ref = np.maximum(ref.reshape(1, o // b, b, h, h).transpose(0, 1, 3, 4, 2) + bias, 0)
    np.testing.assert_allclose(bufs[2][2], ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_data_transform_rows_per_tile_in_registers() -> None:
    data = schedule_primfunc(_stages(4, 16, 16, 12)[0], CTX)
    kinds = [(lp.loop_var.name, lp.kind) for lp in _loops(data)]
    assert ("p", ForKind.PARALLEL) in kinds
    # the row pass: 6 x 6 points unrolled, 8 lanes vectorized; the column pass: 36 points
    unrolled = sorted(int(lp.extent.value) for lp in _loops(data) if lp.kind is ForKind.UNROLLED)
    assert unrolled == [6, 6, 36]
    assert sum(lp.kind is ForKind.VECTORIZED for lp in _loops(data)) == 3  # pad, rows, data
    allocs = [b for s in walk(data.body) if isinstance(s, Block) for b in s.alloc_buffers]
    scopes = {buf.name: buf.scope for buf in allocs}
    assert scopes["T_winograd_rows"] == "local"


def test_output_transform_takes_the_epilogue() -> None:
    out = schedule_primfunc(_stages(2, 16, 32, 8)[2], CTX)
    names = [blk.name_hint for blk in _blocks(out)]
    assert names == ["T_winograd_out_rows", "T_winograd_output"]  # bias + relu inlined
    assert [p.name for p in out.buffer_params()][-1] == "T_relu"
    unrolled = sorted(int(lp.extent.value) for lp in _loops(out) if lp.kind is ForKind.UNROLLED)
    assert unrolled == [2, 2, 2, 4]  # rows: 4 points x 2 columns; output: 2 x 2
    assert sum(lp.kind is ForKind.PARALLEL for lp in _loops(out)) == 1


def test_matmul_stage_is_tiled_by_the_matmul_rule() -> None:
    mm = schedule_primfunc(_stages(4, 16, 32, 8)[1], CTX)  # 16 tiles, panels of 16
    unrolled = [int(lp.extent.value) for lp in _loops(mm) if lp.kind is ForKind.UNROLLED]
    vector = [int(lp.extent.value) for lp in _loops(mm) if lp.kind is ForKind.VECTORIZED]
    assert unrolled == [4] and set(vector) == {16}  # a 4-row x 16-column register tile


def test_matmul_stage_prefetches_the_transformed_weights_panel_by_panel() -> None:
    """The transformed weight `u` is laid out in panels already (``u[point, group, panel,
    c, o]``): the tile's reduction loop prefetches its rows 16 steps ahead as it does a
    packed weight's (Winograd's weights come cold from memory when the model runs now and
    then: GoogLeNet's matmuls 10-20% faster with them, paused, on Sapphire Rapids)."""
    mm = schedule_primfunc(_stages(4, 16, 32, 8)[1], CTX)
    annotated = [lp.annotations["software_prefetch"] for lp in _loops(mm)
                 if "software_prefetch" in lp.annotations]  # fmt: skip
    assert annotated == [("u", 16)]
    assert "@llvm.prefetch" in unity.build(mm).get_source("ll")
