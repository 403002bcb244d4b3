"""Scheduling a matmul by hand: the worked example (also shown in README.md).

`C[i, j] = sum_k A[i, k] * B[k, j]` written in TE is correct but slow: one scalar
multiply-add per iteration, B read down its columns.  A schedule rewrites the loop
nest without changing what it computes; every step is checked and recorded.  The
steps below are those of `bench/matmul.py`, which runs them on 1024^3 (over 80% of
the machine's FMA peak there):

1. **Pack B** into `[N/32, K, 32]` (`cache_read` + `transform_layout`): for one block
   of 32 columns, B becomes one contiguous stream over k.  The copy is split into
   panels (parallel) and 32-wide rows (vectorized).
2. **Tile C** into 8x32 register tiles and **block K** (`split`, `reorder`): the loop
   nest `j0 / i0 / k0 / k1 / i1 / j1`.  With `j0` outermost, one 128 KB panel of packed
   B stays in the core's L2 cache while `i0` sweeps the rows of A.
3. **Accumulate in a local buffer** (`cache_write(..., "local")` then
   `reverse_compute_at` under `i0`): the 8x32 tile lives in 16 vector registers for
   the whole k loop and is written to C once.
4. **Move the zeroing out of the k loop** (`decompose_reduction`).
5. **Annotate** the loops: `parallel(j0)`, `unroll(i1)`, `vectorize(j1)`.

`unity.build(sch.mod)` then gives, per k: two 16-lane loads of packed B, eight
broadcasts of A and sixteen FMAs on zmm registers.

Run ``python -m pytest -s tests/schedule/test_matmul_schedule_example.py`` to see the
trace and the scheduled IR.
"""

import numpy as np
import pytest

import unity
from unity import te, tir
from unity.ir.structural import assert_structural_equal
from unity.schedule import Schedule, ScheduleError
from unity.target import Target
from unity.tir.interpreter import interpret


def matmul(m: int, n: int, k: int) -> tir.PrimFunc:
    """The computation: what to compute, with no word about how."""
    A = te.placeholder((m, k), name="A")
    B = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return te.create_prim_func([A, B, C])


def schedule_matmul(func: tir.PrimFunc, ti: int = 8, tj: int = 32, kb: int = 256) -> Schedule:
    """The hand schedule: a `ti` x `tj` register tile, B packed, K blocked by `kb`."""
    sch = Schedule(func)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)

    # 1. pack B: B_global[j // tj, k, j % tj] = B[k, j], copied panel by panel
    packed = sch.cache_read(c, 1, "global")
    sch.transform_layout(packed, ("write", 0), lambda kk, jj: (jj // tj, kk, jj % tj))
    pk, pj = sch.get_loops(packed)
    pj0, pj1 = sch.split(pj, [None, tj])
    sch.reorder(pj0, pk, pj1)
    sch.parallel(pj0)
    sch.vectorize(pj1)

    # 2. + 3. tile, block K, and accumulate each tile in a local buffer
    acc = sch.cache_write(c, 0, "local")
    i0, i1 = sch.split(i, [None, ti])
    j0, j1 = sch.split(j, [None, tj])
    k0, k1 = sch.split(k, [None, kb])
    sch.reorder(j0, i0, k0, k1, i1, j1)
    sch.reverse_compute_at(acc, i0)  # copy the tile back to C right after its k loop

    # 4. zero the tile before the k loop, not inside it
    init = sch.decompose_reduction(c, k0)

    # 5. loop annotations
    sch.parallel(j0)
    sch.unroll(i1)
    sch.vectorize(j1)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.vectorize(sch.get_loops(acc)[-1])
    return sch


def _inputs(m: int, n: int, k: int):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    return a, b, np.zeros((m, n), "float32")


def test_scheduled_matmul_matches_numpy():
    sch = schedule_matmul(matmul(256, 256, 256))
    print(sch.trace.show())
    sch.show()
    a, b, c = _inputs(256, 256, 256)
    unity.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)


def test_rectangular_shapes_keep_the_interpreter_result():
    func = matmul(16, 64, 32)
    sch = schedule_matmul(func, ti=8, tj=32, kb=16)
    a, b, expected = _inputs(16, 64, 32)
    interpret(func, a, b, expected)
    got = np.zeros_like(expected)
    interpret(sch.mod, a, b, got)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    unity.build(sch.mod)["main"](a, b, got)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_trace_shows_every_step_and_replays_to_the_same_module():
    func = matmul(64, 64, 64)
    sch = schedule_matmul(func, kb=32)
    text = sch.trace.show()
    for step in ("cache_read", "transform_layout", "cache_write", "reverse_compute_at",
                 "decompose_reduction", "parallel", "unroll", "vectorize"):  # fmt: skip
        assert f"sch.{step}(" in text
    replay = Schedule(func)
    sch.trace.apply_to_schedule(replay)
    assert_structural_equal(replay.mod, sch.mod)


def test_scheduled_loop_nest_has_the_planned_shape():
    sch = schedule_matmul(matmul(64, 64, 64), kb=32)
    loops = [sch.get(loop) for loop in sch.get_loops(sch.get_block("C_update"))]
    kinds = [loop.kind for loop in loops]
    extents = [loop.extent.value for loop in loops]
    assert extents == [2, 8, 2, 32, 8, 32]  # j0, i0, k0, k1, i1, j1
    assert kinds == [tir.ForKind.PARALLEL, *[tir.ForKind.SERIAL] * 3,
                     tir.ForKind.UNROLLED, tir.ForKind.VECTORIZED]  # fmt: skip
    alloc = {b.name: b for b in _allocated(sch.mod["main"])}
    assert [d.value for d in alloc["B_global"].shape] == [2, 64, 32]
    assert alloc["C_local"].scope == "local"


def test_the_register_tile_leaves_no_stack_buffer_behind():
    """The 8x32 local tile is promoted to registers: no alloca survives LLVM's O3."""
    lib = unity.build(schedule_matmul(matmul(64, 64, 64), kb=32).mod)
    ll = lib.get_source("ll")
    assert "alloca [256 x float]" not in ll
    assert "fmuladd" in ll or "llvm.fma" in ll or "fmul" in ll


def test_a_tile_that_does_not_divide_is_guarded():
    """20 rows in tiles of 8: `split` adds a guard, the last tile computes 4 rows."""
    func = matmul(20, 64, 32)
    sch = schedule_matmul(func, ti=8, tj=32, kb=16)
    a, b, c = _inputs(20, 64, 32)
    unity.build(sch.mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def _allocated(func: tir.PrimFunc):
    found = []
    tir.post_order_visit(
        func.body, lambda n: found.extend(n.alloc_buffers) if isinstance(n, tir.Block) else None
    )
    return found


@pytest.mark.skipif(not Target("llvm").has_feature("avx512f"), reason="host without AVX-512")
def test_inner_loop_is_zmm_fmas():
    lib = unity.build(schedule_matmul(matmul(64, 64, 64), kb=32).mod)
    asm = lib.get_source("asm")
    assert asm.count("vfmadd231ps") >= 16
    fmas = [line for line in asm.splitlines() if "vfmadd231ps" in line]
    assert all("zmm" in line for line in fmas)


def test_a_wrong_step_is_refused_and_leaves_the_schedule_unchanged():
    """Parallelizing the reduction loop would race on C: the primitive says so."""
    sch = Schedule(matmul(64, 64, 64))
    _, _, k = sch.get_loops(sch.get_block("C"))
    before = sch.mod
    with pytest.raises(ScheduleError, match="parallel") as err:
        sch.parallel(k)
    print(err.value)
    assert sch.mod is before
    assert "parallel" not in sch.trace.show()
