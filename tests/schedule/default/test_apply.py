"""`apply_default_schedules` / `DefaultSchedules`: rule choice, skipping, `unity.compile`."""

from __future__ import annotations

import numpy as np
from default_workloads import WORKLOADS

import unity
from unity import te, tir, topi
from unity.ir.module import IRModule
from unity.schedule import Schedule
from unity.schedule.default import (
    RuleContext,
    analysis,
    apply_default_schedules,
    conv2d,
    conv2d_blocked,
    matmul,
    reduction,
    schedule_primfunc,
)
from unity.schedule.default import injective as inj
from unity.schedule.tree import walk
from unity.tir.stmt import BlockRealize, For, ForKind


def _loop_kinds(func: tir.PrimFunc) -> list[ForKind]:
    return [s.kind for s in walk(func.body) if isinstance(s, For)]


def _rename_blocks(func: tir.PrimFunc) -> tir.PrimFunc:
    """The same function with every block renamed (rules must not read names)."""
    changes = {}
    for k, s in enumerate(walk(func.body)):
        if isinstance(s, BlockRealize) and s.block.name_hint != "root":
            changes[s.block] = s.block.replace(name_hint=f"blk{k}")
    from unity.schedule.tree import replace_stmts

    return func.replace(body=replace_stmts(func.body, changes))


def _rule_of(func: tir.PrimFunc) -> list[str]:
    out = []
    for info in analysis.block_infos(func):
        rule = "matmul" if matmul.applies(info) else "conv2d" if conv2d.applies(info) else (
            "conv2d_blocked" if conv2d_blocked.applies(info) else
            "reduction" if reduction.applies(info) else "injective" if inj.applies(info) else "fallback"
        )  # fmt: skip
        out.append(rule)
    return out


def test_rules_are_chosen_from_structure():
    assert _rule_of(WORKLOADS["conv3x3"]()) == ["injective", "conv2d"]
    assert _rule_of(WORKLOADS["conv_depthwise"]()) == ["injective", "conv2d"]
    assert _rule_of(WORKLOADS["conv1x1s2"]()) == ["injective", "conv2d"]  # subsample, conv
    assert _rule_of(WORKLOADS["conv_blocked3x3"]()) == ["injective", "conv2d_blocked"] + [
        "injective"] * 2  # pad, conv, bias add, relu
    assert _rule_of(WORKLOADS["conv_blocked_depthwise"]()) == ["injective", "conv2d_blocked"]
    assert _rule_of(WORKLOADS["conv_image_to_blocked"]())[:2] == ["injective", "conv2d_blocked"]
    assert _rule_of(WORKLOADS["matmul_odd"]()) == ["matmul"]
    assert _rule_of(WORKLOADS["dense_bias_relu"]()) == ["matmul", "injective", "injective"]
    # max, exp (kept: the sum and the output both read it), sum, output
    assert _rule_of(WORKLOADS["softmax"]()) == ["reduction", "injective", "reduction", "injective"]
    assert _rule_of(WORKLOADS["max_pool3x3s2"]()) == ["reduction"]
    renamed = _rename_blocks(WORKLOADS["conv_bias_relu"]())
    assert _rule_of(renamed) == _rule_of(WORKLOADS["conv_bias_relu"]())


def test_same_schedule_whatever_the_block_names():
    for name in ("conv_bias_relu", "dense_bias_relu", "layer_norm"):
        a = apply_default_schedules(IRModule({"main": WORKLOADS[name]()}))["main"]
        b = apply_default_schedules(IRModule({"main": _rename_blocks(WORKLOADS[name]())}))["main"]
        loops_a = [(s.kind, str(s.extent)) for s in walk(a.body) if isinstance(s, For)]
        loops_b = [(s.kind, str(s.extent)) for s in walk(b.body) if isinstance(s, For)]
        assert loops_a == loops_b, name


def test_epilogue_is_taken_into_the_conv_tile():
    mod = apply_default_schedules(IRModule({"main": WORKLOADS["conv_bias_relu"]()}))
    names = [s.block.name_hint for s in walk(mod["main"].body) if isinstance(s, BlockRealize)]
    assert "T_relu" not in names and "T_add" not in names  # inlined into the write-back


def test_producers_are_not_inlined_into_a_concat_of_many_parts():
    """SSDlite concatenates 90 per-class results: inlining each part would walk and grow
    the concat's expression 90 times.  A few parts are still inlined."""
    from unity.schedule.default.apply import _MANY_READS

    def scaled_concat(parts: int) -> tir.PrimFunc:
        xs = [te.placeholder((3, 2), name=f"x{k}") for k in range(parts)]
        doubled = [topi.multiply(x, 2.0) for x in xs]
        return te.create_prim_func([*xs, topi.concatenate(doubled, axis=0)])

    def blocks(func: tir.PrimFunc) -> list[str]:
        return [s.block.name_hint for s in walk(func.body) if isinstance(s, BlockRealize) and s.block.name_hint != "root"]

    few, many = (schedule_primfunc(scaled_concat(n)) for n in (4, _MANY_READS + 1))
    assert not any(name.startswith("T_multiply") for name in blocks(few))
    assert sum(name.startswith("T_multiply") for name in blocks(many)) == _MANY_READS + 1
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((3, 2), dtype=np.float32) for _ in range(_MANY_READS + 1)]
    out = np.empty((3 * len(xs), 2), np.float32)
    unity.build(many)["main"](*xs, out)
    np.testing.assert_array_equal(out, np.concatenate(xs) * 2)


def test_a_costly_producer_gathered_along_another_axis_is_computed_once():
    """T5's relative position bias: a bucket per (query, key), from a `log`, gathered from a
    table per head and laid out heads first.  Inlined into the gather, every head
    evaluated the log again (6x the work); it stays a block of its own, computed once.
    A cheap producer (no math call) is still inlined, and the result matches numpy."""
    seq = tir.SizeVar("seq", "int64")
    table = te.placeholder((32, 6), name="table")
    pos = te.placeholder((seq, seq), name="pos")
    bucket = te.compute((seq, seq), lambda i, j: te.log(pos[i, j] + 1.0).astype("int64"), name="bucket")
    biased = te.compute((6, seq, seq), lambda h, i, j: table[bucket[i, j], h], name="bias")
    shifted = te.compute((seq, seq), lambda i, j: (pos[i, j] + 1.0).astype("int64"), name="shift")
    cheap = te.compute((6, seq, seq), lambda h, i, j: table[shifted[i, j], h], name="bias")

    def blocks(func: tir.PrimFunc) -> list[str]:
        return [s.block.name_hint for s in walk(func.body) if isinstance(s, BlockRealize) and s.block.name_hint != "root"]

    once = schedule_primfunc(te.create_prim_func([table, pos, biased]))
    assert blocks(once) == ["bucket", "bias"]
    assert blocks(schedule_primfunc(te.create_prim_func([table, pos, cheap]))) == ["bias"]
    rng = np.random.default_rng(2)
    t = rng.standard_normal((32, 6)).astype("float32")
    p = rng.uniform(0, 20, (9, 9)).astype("float32")
    out = np.empty((6, 9, 9), np.float32)
    unity.build(once)["main"](t, p, out)
    np.testing.assert_array_equal(out, t[np.log(p + 1).astype(np.int64)].transpose(2, 0, 1))


def test_user_scheduled_functions_are_left_alone():
    func = WORKLOADS["matmul_tiled"]()
    sch = Schedule(func)
    sch.parallel(sch.get_loops(sch.get_block("T_matmul"))[0])
    mine = sch.mod["main"].with_attr("tir.is_scheduled", True)
    mod = IRModule({"mine": mine, "other": WORKLOADS["add_relu_chain"]()})
    out = apply_default_schedules(mod, "llvm")
    assert out["mine"] is mine
    assert out["other"].attrs["tir.is_scheduled"] is True
    assert apply_default_schedules(out)["other"] is out["other"]  # idempotent


def test_non_cpu_target_is_refused():
    import pytest

    with pytest.raises(ValueError, match="only llvm"):
        apply_default_schedules(IRModule({"main": WORKLOADS["add_relu_chain"]()}), "cuda")


def test_small_copies_stay_serial_and_large_ones_go_parallel():
    def concat_relu(c: int, hw: int) -> tir.PrimFunc:
        a, b = te.placeholder((1, c, hw, hw), name="a"), te.placeholder((1, c, hw, hw), name="b")
        return te.create_prim_func([a, b, topi.nn.relu(topi.concatenate([a, b], axis=1))])

    avx2 = RuleContext(lanes=8)
    small, large = concat_relu(136, 14), concat_relu(128, 28)  # 53K and 200K elements
    assert ForKind.PARALLEL not in _loop_kinds(schedule_primfunc(small, avx2))
    assert ForKind.PARALLEL in _loop_kinds(schedule_primfunc(large, avx2))
    eager = RuleContext(lanes=8, parallel_min_copy=0)
    assert ForKind.PARALLEL in _loop_kinds(schedule_primfunc(small, eager))
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((1, 136, 14, 14), dtype=np.float32) for _ in range(2))
    out = np.empty((1, 272, 14, 14), np.float32)
    unity.build(schedule_primfunc(small, avx2))["main"](a, b, out)
    np.testing.assert_array_equal(out, np.maximum(np.concatenate([a, b], axis=1), 0))


def test_pooling_window_accumulates_a_vector_in_registers_and_divides_on_write_back():
    """A 3x3 average pool (padding not counted): per output pixel the window loops sit
    outside the vector of 8 outputs, which accumulates in a local buffer; the division by
    the window's size is taken into the write-back.  The channel blocks are the parallel
    loop, the rows and columns stay nested inside it (no `//` and `%` per pixel)."""
    x = te.placeholder((1, 8, 5, 5, 8), name="x")
    pool = topi.nn.avg_pool2d(x, 3, 1, 1, layout="NCHW8c", count_include_pad=False)
    func = te.create_prim_func([x, pool])
    scheduled = schedule_primfunc(func, RuleContext(lanes=8, parallel_min_work=0))
    loops = [(s.kind, int(s.extent.value)) for s in walk(scheduled.body) if isinstance(s, For)]
    assert loops == [(ForKind.PARALLEL, 8), (ForKind.SERIAL, 1), (ForKind.SERIAL, 5),
                     (ForKind.SERIAL, 5), (ForKind.VECTORIZED, 8),  # init
                     (ForKind.SERIAL, 3), (ForKind.SERIAL, 3), (ForKind.VECTORIZED, 8),
                     (ForKind.VECTORIZED, 8)]  # fmt: skip  # window; write-back / count
    names = [s.block.name_hint for s in walk(scheduled.body) if isinstance(s, BlockRealize)]
    assert len(names) == 4  # root, init, update, write-back with the division
    data = np.random.default_rng(0).standard_normal((1, 8, 5, 5, 8)).astype(np.float32)
    out = np.empty_like(data)
    unity.build(scheduled)["main"](data, out)
    padded = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1), (0, 0)))
    ones = np.pad(np.ones((5, 5), np.float32), 1)
    sums = sum(padded[:, :, i:i + 5, j:j + 5] for i in range(3) for j in range(3))
    counts = sum(ones[i:i + 5, j:j + 5] for i in range(3) for j in range(3))
    np.testing.assert_allclose(out, sums / counts[None, None, :, :, None], rtol=1e-5)


def test_global_pool_over_a_large_window_keeps_its_lanes_in_a_vector():
    x = te.placeholder((1, 4, 13, 13, 8), name="x")
    mean = topi.mean(x, axis=[2, 3], keepdims=True)  # a global pool on blocked data
    func = te.create_prim_func([x, mean])
    scheduled = schedule_primfunc(func, RuleContext(lanes=8, parallel_min_work=0))
    kinds = [(s.kind, int(s.extent.value)) for s in walk(scheduled.body) if isinstance(s, For)]
    assert (ForKind.SERIAL, 13) in kinds and kinds[-1] == (ForKind.VECTORIZED, 8)
    data = np.random.default_rng(0).standard_normal((1, 4, 13, 13, 8)).astype(np.float32)
    out = np.empty((1, 4, 1, 1, 8), np.float32)
    unity.build(scheduled)["main"](data, out)
    np.testing.assert_allclose(out, data.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6)


def test_injective_nest_parallelizes_a_prefix_and_keeps_its_rows_nested():
    """A concat of channel-blocked tensors: n x channel blocks (16 tasks for 2 cores)
    are the parallel loop, rows and columns stay nested, the lanes are the vector."""
    a, b = (te.placeholder((1, 8, 55, 55, 8), name=n) for n in "ab")
    func = te.create_prim_func([a, b, topi.concatenate([a, b], axis=1)])
    scheduled = schedule_primfunc(func, RuleContext(lanes=8))
    loops = [(s.kind, int(s.extent.value)) for s in walk(scheduled.body) if isinstance(s, For)]
    assert loops == [(ForKind.PARALLEL, 16), (ForKind.SERIAL, 55), (ForKind.SERIAL, 55),
                     (ForKind.VECTORIZED, 8)]  # fmt: skip
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((1, 8, 55, 55, 8), dtype=np.float32) for _ in range(2))
    out = np.empty((1, 16, 55, 55, 8), np.float32)
    unity.build(scheduled)["main"](x, y, out)
    np.testing.assert_array_equal(out, np.concatenate([x, y], axis=1))
