"""`LowerIndexChecks`: where the assertion of a data-dependent index goes, the clamp, and
the error a compiled kernel gives."""

import numpy as np
import pytest

import unity
from unity import te, tir, topi
from unity.tir import AssertStmt, For, ForKind
from unity.tir.op import index_check
from unity.tir.transform import ConvertBlocksToLoops, LowerIndexChecks

from ._workloads import loop


def _stmts(stmt):
    out = []
    tir.post_order_visit(stmt, lambda n: out.append(n) if isinstance(n, tir.Stmt) else None)
    return out


def _take(rows: int = 4):
    w = te.placeholder((100, 8), name="W")
    ids = te.placeholder((rows,), "int64", name="ids")
    return ConvertBlocksToLoops().transform_function(te.create_prim_func([w, ids, topi.take(w, ids)]))


def test_the_check_leaves_the_column_loop_and_the_access_is_clamped():
    after = LowerIndexChecks().transform_function(_take())
    outer = after.body
    assert isinstance(outer, For) and isinstance(outer.body, AssertStmt)  # once per row
    assert isinstance(outer.body.body, For)  # then the 8 columns
    assert outer.body.message == "an index into W axis 0 is outside [0, 100) (it is read from ids)"
    text = after.script()
    assert "index_check" not in text and "T.max(T.min(" in text


def test_clamp_only_for_device_code():
    after = LowerIndexChecks(check=False).transform_function(_take())
    assert not [s for s in _stmts(after.body) if isinstance(s, AssertStmt)]
    assert "index_check" not in after.script()


def test_a_check_stays_inside_a_loop_that_writes_what_it_reads_and_in_front_of_its_item():
    idx = tir.decl_buffer((4,), "int64", "idx")
    table = tir.decl_buffer((10,), "float32", "table")
    out = tir.decl_buffer((4,), "float32", "out")
    i = tir.Var("i", "int64")
    body = tir.seq(
        tir.BufferStore(idx, i * 2, (i,)),  # the index is computed here, then read
        tir.BufferStore(out, table[index_check(idx[i], 10)], (i,)),
    )
    func = tir.PrimFunc((table, out), tir.Allocate(idx, loop(i, 4, body)))
    after = LowerIndexChecks().transform_function(func)
    (for_,) = [s for s in _stmts(after.body) if isinstance(s, For)]
    first, second = for_.body.seq
    assert isinstance(first, tir.BufferStore) and isinstance(second, AssertStmt)


def test_an_index_on_one_side_of_a_select_is_clamped_not_asserted():
    table = tir.decl_buffer((10,), "float32", "table")
    ids = tir.decl_buffer((4,), "int64", "ids")
    out = tir.decl_buffer((4,), "float32", "out")
    i = tir.Var("i", "int64")
    value = tir.Select(ids[i] >= 0, table[index_check(ids[i], 10)], tir.const(0.0, "float32"))
    func = tir.PrimFunc((table, ids, out), loop(i, 4, tir.BufferStore(out, value, (i,))))
    after = LowerIndexChecks().transform_function(func)
    assert not [s for s in _stmts(after.body) if isinstance(s, AssertStmt)]
    assert "index_check" not in after.script()


@pytest.mark.parametrize("rows", [1, 5])
def test_a_compiled_gather_fails_on_a_bad_index_and_runs_on_good_ones(rows):
    w = te.placeholder((100, 8), name="W")
    ids = te.placeholder((tir.Var("n", "int64"),), "int64", name="ids")
    lib = unity.build(te.create_prim_func([w, ids, topi.take(w, ids)]), target="llvm")
    table = np.arange(800, dtype="float32").reshape(100, 8)
    good = np.array([3, -1, 99, 0, 50][:rows], "int64")
    out = np.zeros((rows, 8), "float32")
    lib["main"](table, good, out)
    np.testing.assert_array_equal(out, table[good])
    bad = good.copy()
    bad[-1] = 100
    with pytest.raises(RuntimeError, match=r"index into W axis 0 is outside \[0, 100\)"):
        lib["main"](table, bad, out)
    bad[-1] = -101
    with pytest.raises(RuntimeError, match="outside"):
        lib["main"](table, bad, out)


def test_vectorized_columns_stay_vector_code():
    from unity.schedule.default import schedule_primfunc

    w = te.placeholder((100, 64), name="W")
    ids = te.placeholder((tir.Var("n", "int64"),), "int64", name="ids")
    lowered = tir.lower(schedule_primfunc(te.create_prim_func([w, ids, topi.take(w, ids)])))["main"]
    assert "T.Ramp" in lowered.script()
    asserts = [s for s in _stmts(lowered.body) if isinstance(s, AssertStmt)]
    assert len(asserts) == 1
    kinds = {s.kind for s in _stmts(lowered.body) if isinstance(s, For)}
    assert ForKind.PARALLEL in kinds
