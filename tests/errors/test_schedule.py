"""Invalid schedule steps raise `ScheduleError` naming the primitive, loop/block and problem."""

from __future__ import annotations

import pytest

from unity import te
from unity.schedule import Schedule, ScheduleError


def _schedule() -> Schedule:
    A = te.placeholder((8, 8), "float32", name="A")
    B = te.placeholder((8, 8), "float32", name="B")
    k = te.reduce_axis((0, 8), name="k")
    C = te.compute((8, 8), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((8, 8), lambda i, j: C[i, j] + 1.0, name="D")
    return Schedule(te.create_prim_func([A, B, D]))


def _loops(sch: Schedule, block: str):
    return sch.get_loops(sch.get_block(block))


def _stale_split(sch):
    i, _, _ = _loops(sch, "C")
    sch.split(i, factors=[2, 4])
    sch.split(i, factors=[2, 4])


def _other_schedule(sch):
    i, _, _ = _loops(_schedule(), "C")
    sch.split(i, factors=[2, None])


CASES = {
    "stale handle": (_stale_split, ["in split", "loop i", "removed"]),
    "reorder across blocks": (
        lambda s: s.reorder(_loops(s, "C")[0], _loops(s, "D")[1]),
        ["in reorder", "not on the same loop nest"],
    ),
    "reorder duplicate": (lambda s: s.reorder(_loops(s, "C")[0], _loops(s, "C")[0]),
                          ["in reorder", "more than once"]),
    "compute_at non-ancestor": (lambda s: s.compute_at(s.get_block("C"), _loops(s, "C")[0]),
                                ["in compute_at", "consumer D of block C is not under loop i"]),
    "vectorize reduction": (lambda s: s.vectorize(_loops(s, "C")[2]),
                            ["in vectorize", "loop k", "reduction", "block C"]),
    "parallel reduction": (lambda s: s.parallel(_loops(s, "C")[2]),
                           ["in parallel", "loop k", "reduction"]),
    "split zero": (lambda s: s.split(_loops(s, "C")[0], factors=[0, None]),
                   ["in split", "factor 0 is not positive"]),
    "split negative": (lambda s: s.split(_loops(s, "C")[0], factors=[None, -2]),
                       ["in split", "factor -2 is not positive"]),
    "split too small": (lambda s: s.split(_loops(s, "C")[0], factors=[2, 2]),
                        ["in split", "multiply to 4 < the loop extent 8"]),
    "split two None": (lambda s: s.split(_loops(s, "C")[0], factors=[None, None]),
                       ["in split", "at most one factor may be None"]),
    "split float": (lambda s: s.split(_loops(s, "C")[0], factors=[2.5, None]),
                    ["in split", "factor 2.5 must be an integer", "float"]),
    "split str": (lambda s: s.split(_loops(s, "C")[0], factors=["a", None]),
                  ["in split", "factor 'a' must be an integer", "str"]),
    "unknown block": (lambda s: s.get_block("Z"), ["in get_block", "no block named 'Z'"]),
    "string as block": (lambda s: s.get_loops("C"), ["in get_loops", "'C' is not a block handle"]),
    "handle of another schedule": (_other_schedule, ["in split", "not a loop handle"]),
    "fuse non-adjacent": (lambda s: s.fuse(_loops(s, "C")[0], _loops(s, "C")[2]), ["in fuse"]),
    "bad thread": (lambda s: s.bind(_loops(s, "C")[0], "threadIdx.q"),
                   ["in bind", "unknown thread axis 'threadIdx.q'"]),
    "decompose non-reduction": (
        lambda s: s.decompose_reduction(s.get_block("D"), _loops(s, "D")[0]),
        ["in decompose_reduction", "block D", "not a reduction"],
    ),
    "inline reduction": (lambda s: s.compute_inline(s.get_block("C")),
                         ["in compute_inline", "block C is a reduction"]),
    "inline output": (lambda s: s.compute_inline(s.get_block("D")),
                      ["in compute_inline", "block D writes D, an output"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_invalid_step(case):
    step, phrases = CASES[case]
    with pytest.raises(ScheduleError) as info:
        step(_schedule())
    for phrase in phrases:
        assert phrase in str(info.value)


def _script_funcs():
    from unity.script import tir as T

    @T.prim_func
    def scan(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.serial(8):
            with T.block("B"):
                vi = T.axis.opaque(8, i)
                B[vi] = B[vi - 1] + A[vi]

    @T.prim_func
    def shifted(A: T.Buffer((8,), "float32"), B: T.Buffer((9,), "float32")):
        for i in T.serial(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                T.reads(B[vi], A[vi])
                T.writes(B[vi + 1])
                B[vi + 1] = B[vi] + A[vi]

    @T.prim_func
    def in_place_rows(X: T.Buffer((4, 8), "float32")):
        for i, j in T.grid(4, 8):
            with T.block("X"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(X[vi, 0:8])
                T.writes(X[vi, vj])
                X[vi, vj] = X[vi, vj] + X[vi, 0]

    return scan, shifted, in_place_rows


@pytest.mark.parametrize("primitive", ["parallel", "vectorize"])
def test_dependent_loop_is_not_parallel(primitive):
    scan, shifted, in_place_rows = _script_funcs()
    sch = Schedule(scan)
    (i,) = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match=f"in {primitive}: loop i is bound to an opaque iter"):
        getattr(sch, primitive)(i)
    sch = Schedule(shifted)
    (i,) = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError) as info:
        getattr(sch, primitive)(i)
    assert "loop i carries a dependence: block B reads B[vi] and writes B[vi + 1]" in str(info.value)
    # Rows are independent (each iteration of i touches only its row); columns are not.
    sch = Schedule(in_place_rows)
    i, j = sch.get_loops(sch.get_block("X"))
    with pytest.raises(ScheduleError, match=r"loop j carries a dependence: block X reads X\[vi, 0:8\]"):
        getattr(sch, primitive)(j)
    getattr(sch, primitive)(i)


@pytest.mark.parametrize(
    "step, phrases",
    [
        (lambda s: s.transform_layout(s.get_block("C"), ("write", 0), lambda i, j: (i,)),
         ["in transform_layout", "drops index j of C", "one-to-one"]),
        (lambda s: s.rfactor(_loops(s, "C")[2], 5),
         ["in rfactor", "factor_axis 5 is out of range for C of rank 2", "[-3, 2]"]),
        (lambda s: s.pad_einsum(s.get_block("C"), [-1, 2, 3]),
         ["in pad_einsum", "padding -1 of iteration variable", "not a positive int"]),
        (lambda s: s.pad_einsum(s.get_block("C"), [8, 8]),
         ["in pad_einsum", "block C has 3 iteration variables"]),
        (lambda s: s.cache_read(s.get_block("C"), 5, "local"),
         ["in cache_read", "block C reads 2 buffers; index 5 is out of range"]),
        (lambda s: s.cache_read(s.get_block("C"), 0, "weird"),
         ["in cache_read", "unknown storage scope 'weird'"]),
        (lambda s: s.storage_align(s.get_block("C"), 0, 7, 16, 1),
         ["in storage_align", "axis 7 is out of range for C of rank 2"]),
        (lambda s: s.rfactor(_loops(s, "C")[0], 0), ["in rfactor", "needs a reduction loop"]),
        (lambda s: s.tensorize(_loops(s, "C")[1], "no_such_intrin"),
         ["in tensorize", "no tensor intrinsic 'no_such_intrin'"]),
        (lambda s: s.set_scope(s.get_block("D"), 0, "local"),
         ["in set_scope", "D is a parameter of the function"]),
        (lambda s: (s.vectorize(_loops(s, "D")[1]), s.parallel(_loops(s, "D")[1])),
         ["in parallel", "loop j is already vectorized"]),
    ],
)
def test_invalid_buffer_and_layout_step(step, phrases):
    with pytest.raises(ScheduleError) as info:
        step(_schedule())
    for phrase in phrases:
        assert phrase in str(info.value)
