"""Lookup primitives: get_block, get_loops, get_child_blocks, get_producers, get_consumers."""

import pytest
from schedule_workloads import elementwise, matmul, softmax

from unity.schedule import Schedule, ScheduleError


def test_get_block_and_loops_follow_the_nest():
    sch = Schedule(matmul(4, 4, 4))
    block = sch.get_block("C")
    loops = sch.get_loops(block)
    assert [sch.get(lp).loop_var.name for lp in loops] == ["i", "j", "k"]
    assert sch.get(block).name_hint == "C"


def test_get_block_names_the_blocks_it_has():
    sch = Schedule(elementwise())
    with pytest.raises(
        ScheduleError, match=r"get_block: no block named 'X' in 'main' \(blocks: 'B', 'C'\)"
    ):
        sch.get_block("X")
    with pytest.raises(ScheduleError, match="no function 'other'"):
        sch.get_block("B", func_name="other")


def test_get_child_blocks_of_root_and_of_a_loop():
    sch = Schedule(softmax())
    root = sch.get_block("root")
    names = [sch.get(b).name_hint for b in sch.get_child_blocks(root)]
    assert names == ["M", "E", "S", "O"]
    i = sch.get_loops(sch.get_block("E"))[0]
    assert [sch.get(b).name_hint for b in sch.get_child_blocks(i)] == ["E"]


def test_producers_and_consumers_within_the_scope():
    sch = Schedule(softmax())
    e = sch.get_block("E")
    assert [sch.get(b).name_hint for b in sch.get_producers(e)] == ["M"]
    assert [sch.get(b).name_hint for b in sch.get_consumers(e)] == ["S", "O"]
    assert sch.get_producers(sch.get_block("M")) == []


def test_a_handle_of_a_removed_loop_is_reported():
    sch = Schedule(elementwise())
    i, j = sch.get_loops(sch.get_block("B"))
    sch.fuse(i, j)
    with pytest.raises(ScheduleError, match=r"refers to a loop an earlier primitive removed"):
        sch.parallel(i)


def test_lookups_reject_foreign_handles():
    sch = Schedule(elementwise())
    other = Schedule(elementwise())
    b = other.get_block("B")
    for lookup in (sch.get_loops, sch.get_child_blocks, sch.get_producers, sch.get_consumers):
        with pytest.raises(ScheduleError, match=r"b\d+ is not a block handle of this schedule"):
            lookup(b)
