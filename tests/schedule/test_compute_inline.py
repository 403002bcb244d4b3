"""`compute_inline` / `reverse_compute_inline`: IR after, numbers unchanged, errors."""

import pytest
from schedule_workloads import (
    assert_ir,
    check_same_result,
    elementwise,
    matmul,
    matmul_relu,
    softmax,
)

from unity.schedule import Schedule, ScheduleError

INLINED = """
    @T.prim_func
    def main(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 6), "float32")):
        T.func_attr({"tir.noalias": True})
        with T.block("root"):
            T.reads()
            T.writes()
            for i, j in T.grid(8, 6):
                with T.block("NAME"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    T.reads(A[v_i, v_j])
                    T.writes(C[v_i, v_j])
                    C[v_i, v_j] = A[v_i, v_j] * T.float32(2.0) + T.float32(1.0)
"""


def test_compute_inline_folds_the_producer_into_its_consumer():
    func = elementwise(8, 6)
    sch = Schedule(func)
    sch.compute_inline(sch.get_block("B"))
    assert_ir(sch.mod, INLINED.replace("NAME", "C"))
    check_same_result(func, sch.mod)


def test_reverse_compute_inline_folds_the_consumer_into_its_producer():
    func = elementwise(8, 6)
    sch = Schedule(func)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert_ir(sch.mod, INLINED.replace("NAME", "B"))
    check_same_result(func, sch.mod)


def test_inline_into_a_reduction_and_epilogue_into_one():
    func = softmax()
    sch = Schedule(func)
    sch.compute_inline(sch.get_block("E"))  # exp moves into the sum and the divide
    check_same_result(func, sch.mod)
    func = matmul_relu()
    sch = Schedule(func)
    with pytest.raises(ScheduleError, match="reverse_compute_inline: block C is a reduction"):
        sch.reverse_compute_inline(sch.get_block("D"))


def test_compute_inline_errors():
    sch = Schedule(matmul(4, 4, 4))
    before = sch.mod
    with pytest.raises(
        ScheduleError, match=r"compute_inline: block C is a reduction \(it has an init\)"
    ):
        sch.compute_inline(sch.get_block("C"))
    sch = Schedule(elementwise())
    with pytest.raises(
        ScheduleError, match="compute_inline: block C writes C, an output of the function"
    ):
        sch.compute_inline(sch.get_block("C"))
    with pytest.raises(
        ScheduleError,
        match="reverse_compute_inline: block B must have exactly one producer, found 0",
    ):
        sch.reverse_compute_inline(sch.get_block("B"))
    assert Schedule(matmul(4, 4, 4)).mod is not before


def test_error_text_underlines_the_block():
    sch = Schedule(matmul(2, 2, 2))
    with pytest.raises(ScheduleError) as info:
        sch.compute_inline(sch.get_block("C"))
    text = str(info.value)
    assert text.startswith(
        "ScheduleError in compute_inline: block C is a reduction (it has an init)"
    )
    lines = text.splitlines()
    at = next(n for n, line in enumerate(lines) if 'with T.block("C"):' in line)
    col = lines[at].index("with")
    assert lines[at + 1] == " " * col + "^" * len('with T.block("C"):')


def test_reverse_compute_inline_refuses_a_consumer_reading_part_of_the_buffer():
    func = elementwise(3, 5)
    sch = Schedule(func)
    sch.pad_einsum(sch.get_block("C"), [2, 2])  # C computes 4x6 into C_pad, C_unpad copies 3x5
    msg = "block C_unpad does not read all of C_pad"
    with pytest.raises(ScheduleError, match=msg):
        sch.reverse_compute_inline(sch.get_block("C_unpad"))


def test_inlining_recomputes_only_the_regions_that_changed():
    """The consumer keeps its regions of buffers the inline did not touch; the producer's
    buffer goes, its inputs come in: the same regions as a full recomputation."""
    from unity import te, topi
    from unity.schedule.analysis import infer_regions
    from unity.schedule.tree import walk
    from unity.tir.stmt import BlockRealize

    a, b, c = (te.placeholder((4, 6), name=n) for n in "abc")
    shifted = te.compute((4, 6), lambda i, j: a[i, j] + b[i, 5 - j], name="shifted")
    out = topi.concatenate([shifted, a, c], axis=0)  # c: not read by the producer, kept
    sch = Schedule(te.create_prim_func([a, b, c, out]))
    sch.compute_inline(sch.get_block("shifted"))
    (block,) = [s.block for s in walk(sch.mod["main"].body)
                if isinstance(s, BlockRealize) and s.block.name_hint.startswith("T_concat")]
    reads, writes = infer_regions(block)
    assert [str(r) for r in block.reads] == [str(r) for r in reads]
    assert sorted(r.buffer.name for r in block.reads) == ["a", "b", "c"]
    assert [str(r) for r in block.writes] == [str(r) for r in writes]
