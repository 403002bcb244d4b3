"""The trace: every primitive recorded, printed as runnable Python, replayed equal."""

import textwrap

import pytest
from schedule_workloads import check_same_result, elementwise, matmul

from unity.ir.structural import assert_structural_equal
from unity.schedule import Schedule, ScheduleError


def _matmul_schedule(func):
    sch = Schedule(func)
    blk = sch.get_block("C")
    i, j, kk = sch.get_loops(blk)
    io, ii = sch.split(i, factors=[None, 4])
    jo, ji = sch.split(j, factors=[None, 4])
    sch.reorder(io, jo, kk, ii, ji)
    sch.vectorize(ji)
    sch.parallel(io)
    sch.decompose_reduction(blk, kk)
    return sch


def test_trace_show_prints_runnable_python():
    sch = _matmul_schedule(matmul(8, 8, 4))
    assert sch.trace.show() == textwrap.dedent("""\
        b0 = sch.get_block(name='C', func_name='main')
        l1, l2, l3 = sch.get_loops(block=b0)
        l4, l5 = sch.split(loop=l1, factors=[None, 4])
        l6, l7 = sch.split(loop=l2, factors=[None, 4])
        sch.reorder(l4, l6, l3, l5, l7)
        sch.vectorize(loop=l7)
        sch.parallel(loop=l4)
        b8 = sch.decompose_reduction(block=b0, loop=l3)""")
    again = Schedule(matmul(8, 8, 4))
    exec(sch.trace.show(), {"sch": again})  # noqa: S102 - the printed trace is the API
    assert_structural_equal(again.mod, sch.mod)


def test_apply_to_schedule_replays_to_an_equal_module():
    func = matmul(8, 8, 4)
    sch = _matmul_schedule(func)
    replay = Schedule(func)
    sch.trace.apply_to_schedule(replay)
    assert_structural_equal(replay.mod, sch.mod)
    check_same_result(func, replay.mod)


def test_replay_of_block_level_primitives():
    func = elementwise(8, 6)
    sch = Schedule(func)
    i, _ = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, factors=[None, 4])
    sch.compute_at(sch.get_block("B"), io)
    sch.cache_write(sch.get_block("C"), 0, "local")
    sch.annotate(io, "pragma", 1)
    replay = Schedule(func)
    sch.trace.apply_to_schedule(replay)
    assert_structural_equal(replay.mod, sch.mod)


def test_a_failed_primitive_is_not_recorded():
    sch = Schedule(elementwise())
    i, _ = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError):
        sch.split(i, factors=[3, 1])
    assert [inst.kind for inst in sch.trace.insts] == ["get_block", "get_loops"]
