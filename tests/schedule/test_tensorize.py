"""`tensorize` with a registered intrinsic: IR after, numbers unchanged, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result

from unity import te
from unity.schedule import Schedule, ScheduleError, TensorIntrin
from unity.script import tir as T


@T.prim_func
def dot4_desc(
    a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32"), c: T.Buffer((1,), "float32")
):
    for k in T.serial(4):
        with T.block("update"):
            vk = T.axis.reduce(4, k)
            c[0] = c[0] + a[vk] * b[vk]


@T.prim_func
def dot4_impl(
    a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32"), c: T.Buffer((1,), "float32")
):
    c[0] = c[0] + a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]


TensorIntrin.register("test_dot_4", dot4_desc, dot4_impl, override=True)


def _matvec(m: int = 6, k: int = 8):
    a = te.placeholder((m, k), name="A")
    b = te.placeholder((k,), name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m,), lambda i: te.sum(a[i, r] * b[r], axis=r), name="C")
    return te.create_prim_func([a, b, c])


def test_tensorize_a_matvec_with_a_dot_product():
    func = _matvec()
    sch = Schedule(func)
    block = sch.get_block("C")
    _, k = sch.get_loops(block)
    ko, ki = sch.split(k, factors=[None, 4])
    sch.decompose_reduction(block, ko)
    sch.tensorize(ki, "test_dot_4")
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((6, 8), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((6,), "float32")):
            T.func_attr({"tir.noalias": True})
            for i in T.serial(6):
                with T.block("C_init"):
                    v_i = T.axis.spatial(6, i)
                    T.reads()
                    T.writes(C[v_i])
                    C[v_i] = T.float32(0.0)
                for k_0 in T.serial(2):
                    with T.block("C_update_o"):
                        vi, vk_0 = T.axis.remap("SR", [i, k_0])
                        T.reads(A[vi, vk_0 * 4:vk_0 * 4 + 4], B[vk_0 * 4:vk_0 * 4 + 4])
                        T.writes(C[vi])
                        a = T.match_buffer(A[vi, vk_0 * 4:vk_0 * 4 + 4], (4,), "float32")
                        b = T.match_buffer(B[vk_0 * 4:vk_0 * 4 + 4], (4,), "float32")
                        c = T.match_buffer(C[vi], (1,), "float32")
                        c[0] = c[0] + a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
    """,
    )
    check_same_result(func, sch.mod)


def test_tensorize_errors():
    func = _matvec()
    sch = Schedule(func)
    block = sch.get_block("C")
    _, k = sch.get_loops(block)
    before = sch.mod
    with pytest.raises(
        ScheduleError, match=r"tensorize: no tensor intrinsic 'nope' \(registered: .*test_dot_4"
    ):
        sch.tensorize(k, "nope")
    with pytest.raises(
        ScheduleError, match=r"loop extents \['8'\] do not match intrinsic test_dot_4's \['4'\]"
    ):
        sch.tensorize(k, "test_dot_4")
    _, ki = sch.split(k, factors=[None, 4])
    with pytest.raises(ScheduleError, match="differ in having an init"):
        sch.tensorize(ki, "test_dot_4")
    assert sch.mod is not before
    with pytest.raises(ValueError, match="already registered"):
        TensorIntrin.register("test_dot_4", dot4_desc, dot4_impl)


def test_each_use_of_an_intrinsic_binds_its_own_buffers():
    """Two blocks tensorized with one intrinsic: their matched views are distinct buffers
    (lowering replaces each view by its own region; shared ones would alias)."""
    from unity.tir.functor import post_order_visit
    from unity.tir.stmt import Block

    a = te.placeholder((6, 8), name="A")
    b = te.placeholder((8,), name="B")
    r = te.reduce_axis((0, 8), name="k")
    c = te.compute((6,), lambda i: te.sum(a[i, r] * b[r], axis=r), name="C")
    x = te.compute((6, 8), lambda i, k: a[i, k] + c[i], name="X")
    r2 = te.reduce_axis((0, 8), name="k2")
    d = te.compute((6,), lambda i: te.sum(x[i, r2] * b[r2], axis=r2), name="D")
    func = te.create_prim_func([a, b, d])
    sch = Schedule(func)
    for name in ("C", "D"):
        block = sch.get_block(name)
        ko, ki = sch.split(sch.get_loops(block)[-1], factors=[None, 4])
        sch.decompose_reduction(block, ko)
        sch.tensorize(ki, "test_dot_4")
    matched = []
    post_order_visit(sch.mod["main"].body, lambda n: matched.extend(m.buffer for m in n.match_buffers)
                     if isinstance(n, Block) else None)
    assert len(matched) == 6 and len({id(m) for m in matched}) == 6
    check_same_result(func, sch.mod)
