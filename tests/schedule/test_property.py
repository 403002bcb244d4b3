"""Property: random sequences of primitives keep the interpreter's result, and replay.

Each step draws a primitive and its operands at random; a primitive whose
precondition fails raises `ScheduleError` and must leave the schedule unchanged, so
whatever sequence survives is a valid schedule and must compute the same numbers.
"""

from hypothesis import given, settings
from hypothesis import strategies as st
from schedule_workloads import check_same_result, conv2d, matmul, softmax

from unity.ir.structural import assert_structural_equal
from unity.schedule import Schedule, ScheduleError
from unity.tir.stmt import BlockRealize

WORKLOADS = {
    "matmul": lambda: matmul(6, 4, 5),
    "conv2d": lambda: conv2d(1, 2, 5, 2, 3),
    "softmax": lambda: softmax(3, 5),
}


def _block_names(sch: Schedule) -> list[str]:
    from unity.schedule.tree import walk

    body = sch.mod["main"].body
    return [
        s.block.name_hint
        for s in walk(body)
        if isinstance(s, BlockRealize) and s.block.name_hint != "root"
    ]


def _step(sch: Schedule, data: st.DataObject) -> None:
    block = sch.get_block(data.draw(st.sampled_from(_block_names(sch))))
    loops = sch.get_loops(block)
    op = data.draw(st.sampled_from(sorted(_OPS)))
    if not loops and op in _NEEDS_LOOP:
        return
    _OPS[op](sch, block, loops, data)


def _pick(loops, data):
    return data.draw(st.sampled_from(loops))


_NEEDS_LOOP = {"split", "fuse", "reorder", "parallel", "vectorize", "unroll", "decompose_reduction",
               "rfactor", "blockize"}  # fmt: skip
_OPS = {
    "split": lambda s, b, ls, d: s.split(_pick(ls, d), [None, d.draw(st.integers(1, 4))]),
    "fuse": lambda s, b, ls, d: s.fuse(*ls[d.draw(st.integers(0, len(ls) - 1)) :][:2]),
    "reorder": lambda s, b, ls, d: s.reorder(*d.draw(st.permutations(ls))[:3]),
    "parallel": lambda s, b, ls, d: s.parallel(_pick(ls, d)),
    "vectorize": lambda s, b, ls, d: s.vectorize(ls[-1]),
    "unroll": lambda s, b, ls, d: s.unroll(_pick(ls, d)),
    "decompose_reduction": lambda s, b, ls, d: s.decompose_reduction(b, _pick(ls, d)),
    "compute_inline": lambda s, b, ls, d: s.compute_inline(b),
    "reverse_compute_inline": lambda s, b, ls, d: s.reverse_compute_inline(b),
    "cache_read": lambda s, b, ls, d: s.cache_read(b, 0, "local"),
    "cache_write": lambda s, b, ls, d: s.cache_write(b, 0, "local"),
    "add_unit_loop": lambda s, b, ls, d: s.add_unit_loop(b),
    "rfactor": lambda s, b, ls, d: s.rfactor(_pick(ls, d), d.draw(st.integers(0, 1))),
    "blockize": lambda s, b, ls, d: s.blockize(ls[-1]),
    "pad_einsum": lambda s, b, ls, d: s.pad_einsum(
        b, [d.draw(st.integers(1, 4))] * len(s.get(b).iter_vars)
    ),
    "compute_at": lambda s, b, ls, d: _to_other_block(s, b, d, s.get_consumers, s.compute_at),
    "reverse_compute_at": lambda s, b, ls, d: _to_other_block(
        s, b, d, s.get_producers, s.reverse_compute_at
    ),
}


def _to_other_block(sch, block, data, neighbours, primitive):
    others = neighbours(block)
    if not others:
        return
    loops = sch.get_loops(data.draw(st.sampled_from(others)))
    if loops:
        primitive(block, data.draw(st.sampled_from(loops)))


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(WORKLOADS)), data=st.data())
def test_random_schedules_keep_the_result(name, data):
    func = WORKLOADS[name]()
    sch = Schedule(func)
    for _ in range(data.draw(st.integers(1, 6))):
        before = sch.mod
        try:
            _step(sch, data)
        except ScheduleError:
            assert sch.mod is before  # a refused primitive changes nothing
    check_same_result(func, sch.mod)
    replay = Schedule(func)
    sch.trace.apply_to_schedule(replay)
    assert_structural_equal(replay.mod, sch.mod)
