"""`transform_block_layout`: IR after, numbers unchanged, trace replay, the tile it makes
possible, errors."""

import pytest
from schedule_workloads import assert_ir, check_same_result, matmul

from unity import te
from unity.ir.structural import assert_structural_equal
from unity.schedule import Schedule, ScheduleError


def _flat_read(m: int = 4, n: int = 6):
    """`B[i, j] = A[i * n + j] * 2`: the block's variables fuse into `A`'s one index."""
    a = te.placeholder((m * n,), name="A")
    b = te.compute((m, n), lambda i, j: a[i * n + j] * 2.0, name="B")
    return te.create_prim_func([a, b])


def test_fuses_two_variables_into_one():
    func = _flat_read()
    sch = Schedule(func)
    sch.transform_block_layout(sch.get_block("B"), lambda i, j: (i * 6 + j,))
    assert_ir(
        sch.mod,
        """
        @T.prim_func
        def main(A: T.Buffer((24,), "float32"), B: T.Buffer((4, 6), "float32")):
            T.func_attr({"tir.noalias": True})
            for ax0 in T.serial(24):
                with T.block("B"):
                    v_i_v_j = T.axis.spatial(24, ax0)
                    T.reads(A[v_i_v_j])
                    T.writes(B[v_i_v_j // 6, v_i_v_j % 6])
                    B[v_i_v_j // 6, v_i_v_j % 6] = A[v_i_v_j] * T.float32(2.0)
    """,
    )
    check_same_result(func, sch.mod)
    assert "index_map=lambda i, j: (i * 6 + j,))" in sch.trace.show()
    again = Schedule(func)
    exec(sch.trace.show(), {"sch": again})  # noqa: S102 - the printed trace is the API
    assert_structural_equal(again.mod, sch.mod)


def test_permutes_spatial_and_reduction_variables():
    func = matmul(4, 6, 5)
    sch = Schedule(func)
    sch.transform_block_layout(sch.get_block("C"), lambda i, j, k: (k, j, i))
    loops = [sch.get(lp) for lp in sch.get_loops(sch.get_block("C"))]
    assert [int(lp.extent.value) for lp in loops] == [5, 6, 4]
    block = sch.get(sch.get_block("C"))
    assert [iv.iter_type.name for iv in block.iter_vars] == ["REDUCE", "SPATIAL", "SPATIAL"]
    check_same_result(func, sch.mod)


def test_fused_write_back_can_follow_a_tile_that_crosses_rows():
    """A tile of 4 pixels of 6-wide rows is not a box of ``(y, x)``; once the producer and
    its consumer both iterate the fused pixel, the consumer follows the tile."""
    a = te.placeholder((4, 6), name="A")
    b = te.compute((4, 6), lambda i, j: a[i, j] * 2.0, name="B")
    c = te.compute((4, 6), lambda i, j: b[i, j] + 1.0, name="C")
    func = te.create_prim_func([a, c])
    sch = Schedule(func)
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i * 6 + j,))
    for name in ("B", "C"):
        sch.transform_block_layout(sch.get_block(name), lambda i, j: (i * 6 + j,))
    outer, _ = sch.split(sch.get_loops(sch.get_block("B"))[0], [None, 4])
    sch.reverse_compute_at(sch.get_block("C"), outer)
    assert [int(sch.get(lp).extent.value) for lp in sch.get_loops(sch.get_block("C"))] == [6, 4]
    check_same_result(func, sch.mod)


def test_rows_of_a_symbolic_width_fuse_and_a_tile_crosses_them():
    """``y * w + x`` over a symbolic `w` (and height): the fused variable spans ``w * h``,
    the intermediate is stored flat, and a tile of 4 pixels crossing rows runs right."""
    import numpy as np

    import unity
    from unity import tir

    h, w = tir.SizeVar("h", "int64"), tir.SizeVar("w", "int64")
    a = te.placeholder((h, w), name="A")
    b = te.compute((h, w), lambda i, j: a[i, j] * 2.0, name="B")
    c = te.compute((h, w), lambda i, j: b[i, j] + 1.0, name="C")
    func = te.create_prim_func([a, c])
    sch = Schedule(func)
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i * w + j,))
    for name in ("B", "C"):
        sch.transform_block_layout(sch.get_block(name), lambda i, j: (i * w + j,))
    (fused,) = sch.get_loops(sch.get_block("B"))
    assert sch.get(fused).extent.script() == "w * h"
    outer, _ = sch.split(fused, [None, 4])
    sch.reverse_compute_at(sch.get_block("C"), outer)
    built = unity.build(sch.mod["main"])
    for shape in ((3, 5), (1, 7), (4, 4)):
        x = np.arange(np.prod(shape), dtype="float32").reshape(shape)
        out = np.zeros(shape, "float32")
        built["main"](x, out)
        np.testing.assert_array_equal(out, x * 2 + 1)


def test_a_symbolic_fusion_must_be_mixed_radix():
    from unity import tir

    h, w = tir.SizeVar("h", "int64"), tir.SizeVar("w", "int64")
    a = te.placeholder((h, w), name="A")
    b = te.compute((h, w), lambda i, j: a[i, j] * 2.0, name="B")
    sch = Schedule(te.create_prim_func([a, b]))
    with pytest.raises(ScheduleError, match="mixed-radix"):
        sch.transform_block_layout(sch.get_block("B"), lambda i, j: (i * h + j,))


def _grouped_conv():
    """A 1x1 conv in 2 groups (4 input, 6 output channels each): the output channel `o`
    reads input channels ``o // 6 * 4 + rc``."""
    x, w = te.placeholder((1, 8, 5, 5), name="X"), te.placeholder((12, 4, 1, 1), name="W")
    rc = te.reduce_axis((0, 4), name="rc")
    y = te.compute((1, 12, 5, 5), lambda n, o, h, q: te.sum(x[n, o // 6 * 4 + rc, h, q] * w[o, rc, 0, 0],
                                                             axis=rc), name="Y")
    return te.create_prim_func([x, w, y])


def test_splits_a_variable_into_group_and_member():
    func = _grouped_conv()
    sch = Schedule(func)
    sch.transform_block_layout(sch.get_block("Y"), lambda n, o, h, q, rc: (o // 6, o % 6, h * 5 + q, rc))
    text = sch.mod.script()
    assert 'v_o_o, v_o_i, v_h_v_q, v_rc = T.axis.remap("SSSR", [ax0, ax1, ax2, ax3])' in text
    assert "X[0, v_o_o * 4 + v_rc, v_h_v_q // 5, v_h_v_q % 5] * W[v_o_o * 6 + v_o_i, v_rc, 0, 0]" in text
    assert [sch.get(lp).extent.value for lp in sch.get_loops(sch.get_block("Y"))] == [2, 6, 25, 4]
    check_same_result(func, sch.mod)
    fresh = Schedule(func)
    y = fresh.get_block("Y")
    with pytest.raises(ScheduleError, match=r"must use variable v_o exactly as v_o // c and v_o % c"):
        fresh.transform_block_layout(y, lambda n, o, h, q, rc: (o // 6, h * 5 + q, rc))
    with pytest.raises(ScheduleError, match="the split factor must be a constant dividing v_o's extent 12"):
        fresh.transform_block_layout(y, lambda n, o, h, q, rc: (o // 5, o % 5, h, q, rc))
    with pytest.raises(ScheduleError, match="split twice or by two factors"):
        fresh.transform_block_layout(y, lambda n, o, h, q, rc: (o // 6, o % 4, h, q, rc))


def test_transform_block_layout_errors():
    func = matmul(4, 6, 5)
    sch = Schedule(func)
    before = sch.mod
    block = sch.get_block("C")
    with pytest.raises(ScheduleError, match="the index map takes 2 variables; block C has 3"):
        sch.transform_block_layout(block, lambda i, j: (i, j))
    with pytest.raises(ScheduleError, match="fuses spatial and reduction variables"):
        sch.transform_block_layout(block, lambda i, j, k: (i, j * 5 + k))
    with pytest.raises(ScheduleError, match="is not one variable or a mixed-radix fusion"):
        sch.transform_block_layout(block, lambda i, j, k: (i * 7 + j, k))
    with pytest.raises(ScheduleError, match="the index map uses variable v_i twice"):
        sch.transform_block_layout(block, lambda i, j, k: (i, i * 6 + j, k))
    with pytest.raises(ScheduleError, match="the index map drops variable v_k"):
        sch.transform_block_layout(block, lambda i, j, k: (i, j))
    assert sch.mod is before
    i, _, _ = sch.get_loops(block)
    sch.split(i, [None, 3])  # 3 does not divide 4: a guard
    with pytest.raises(ScheduleError, match="block C is guarded"):
        sch.transform_block_layout(block, lambda i, j, k: (i, j, k))
    sch = Schedule(func)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    sch.fuse(i, j)
    with pytest.raises(ScheduleError, match="must be bound to its own loops"):
        sch.transform_block_layout(sch.get_block("C"), lambda i, j, k: (i, j, k))


def test_a_symbolic_batch_stays_a_variable_while_the_rest_fuse():
    """A conv exported with a dynamic batch: ``(n, y, x) -> (n, y * 6 + x)``; the batch keeps
    its symbolic extent, the pixels fuse (the conv rule's row flattening)."""
    import numpy as np

    import unity
    from unity import tir

    n = tir.Var("n", "int64")
    a = te.placeholder((n, 4, 6), name="A")
    b = te.compute((n, 4, 6), lambda i, y, x: a[i, y, x] * 2.0, name="B")
    func = te.create_prim_func([a, b])
    sch = Schedule(func)
    sch.transform_block_layout(sch.get_block("B"), lambda i, y, x: (i, y * 6 + x))
    loops = [sch.get(lp) for lp in sch.get_loops(sch.get_block("B"))]
    assert [str(lp.extent) for lp in loops] == ["n", "24"]
    x = np.random.default_rng(0).standard_normal((3, 4, 6)).astype("float32")
    out = np.zeros_like(x)
    unity.build(sch.mod)["main"](x, out)
    np.testing.assert_array_equal(out, x * 2)
    with pytest.raises(ScheduleError, match="not one variable or a mixed-radix fusion"):
        sch2 = Schedule(func)
        sch2.transform_block_layout(sch2.get_block("B"), lambda i, y, x: (y * (4 * 6) + i * 6 + x,))
