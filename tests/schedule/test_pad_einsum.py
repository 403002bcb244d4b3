"""`pad_einsum`: IR after, numbers unchanged, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, elementwise, matmul, softmax

from unity.schedule import Schedule, ScheduleError


def test_pad_a_matmul_to_multiples_of_four():
    func = matmul(6, 6, 5)
    sch = Schedule(func)
    sch.pad_einsum(sch.get_block("C"), [4, 4, 4])
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((6, 5), "float32"), B: T.Buffer((5, 6), "float32"), C: T.Buffer((6, 6), "float32")):
            T.func_attr({"tir.noalias": True})
            C_pad = T.alloc_buffer((8, 8), "float32")
            A_pad = T.alloc_buffer((8, 8), "float32")
            B_pad = T.alloc_buffer((8, 8), "float32")
            for ax0, ax1 in T.grid(8, 8):
                with T.block("A_pad"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(A[0:6, 0:5])
                    T.writes(A_pad[v0, v1])
                    A_pad[v0, v1] = T.if_then_else(v0 < 6 and v1 < 5, A[v0, v1], T.float32(0.0))
            for ax0, ax1 in T.grid(8, 8):
                with T.block("B_pad"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(B[0:5, 0:6])
                    T.writes(B_pad[v0, v1])
                    B_pad[v0, v1] = T.if_then_else(v0 < 5 and v1 < 6, B[v0, v1], T.float32(0.0))
            for i, j, k in T.grid(8, 8, 8):
                with T.block("C"):
                    v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                    T.reads(A_pad[v_i, v_k], B_pad[v_k, v_j])
                    T.writes(C_pad[v_i, v_j])
                    with T.init():
                        C_pad[v_i, v_j] = T.float32(0.0)
                    C_pad[v_i, v_j] = C_pad[v_i, v_j] + A_pad[v_i, v_k] * B_pad[v_k, v_j]
            for ax0, ax1 in T.grid(6, 6):
                with T.block("C_unpad"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(C_pad[v0, v1])
                    T.writes(C[v0, v1])
                    C[v0, v1] = C_pad[v0, v1]
    """,
    )
    check_same_result(func, sch.mod)


def test_pad_then_split_without_guards():
    func = matmul(6, 6, 5)
    sch = Schedule(func)
    block = sch.get_block("C")
    sch.pad_einsum(block, [4, 4, 4])
    i, _, _ = sch.get_loops(block)
    _, ii = sch.split(i, factors=[None, 4])
    assert sch.get(ii).body.body.body.predicate.value == 1  # 4 divides 8: no guard
    check_same_result(func, sch.mod)


def test_pad_einsum_errors():
    sch = Schedule(softmax())
    with pytest.raises(ScheduleError, match="pad_einsum: block M is a reduction other than a sum"):
        sch.pad_einsum(sch.get_block("M"), [4, 4])
    sch = Schedule(elementwise())
    with pytest.raises(
        ScheduleError, match=r"block B has 2 iteration variables; got paddings \[4\]"
    ):
        sch.pad_einsum(sch.get_block("B"), [4])


def test_a_sum_whose_term_is_not_zero_on_padding_is_refused():
    """softmax's denominator, exp(A - M) inlined: every padded k would add exp(0) = 1
    (found by the random-schedule property test)."""
    func = softmax(3, 5)
    sch = Schedule(func)
    sch.compute_inline(sch.get_block("E"))
    with pytest.raises(ScheduleError, match="block S adds a term that is not zero where the "
                       "reduction variable v_k2 is padded"):
        sch.pad_einsum(sch.get_block("S"), [2, 2])
    sch.pad_einsum(sch.get_block("S"), [2, 1])  # the spatial axis alone: the padded rows are dropped
    check_same_result(func, sch.mod)


def test_pad_einsum_pads_a_symbolic_extent_to_a_multiple():
    import numpy as np

    from unity import te, tir
    from unity.tir.interpreter import interpret

    n = tir.SizeVar("n", "int64")
    a = te.placeholder((n, 8), name="A")
    b = te.placeholder((8, 6), name="B")
    k = te.reduce_axis((0, 8), name="k")
    c = te.compute((n, 6), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    sch = Schedule(te.create_prim_func([a, b, c]))
    sch.pad_einsum(sch.get_block("C"), [16, 4, 1])
    text = sch.mod.script()
    assert 'C_pad = T.alloc_buffer(((n + T.int64(15)) // T.int64(16) * T.int64(16), 8), "float32")' in text
    assert "T.if_then_else(n > v0 and v1 < 8, A[v0, v1], T.float32(0.0))" in text
    rng = np.random.default_rng(0)
    for rows in (1, 16, 21):
        av, bv = rng.standard_normal((rows, 8), dtype=np.float32), rng.standard_normal((8, 6), dtype=np.float32)
        out = np.zeros((rows, 6), np.float32)
        interpret(sch.mod["main"], av, bv, out)
        np.testing.assert_allclose(out, av @ bv, rtol=1e-5, atol=1e-5)
