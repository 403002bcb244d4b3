import numpy as np

import unity
from unity import te, tir
from unity.ir.structural import assert_structural_equal
from unity.schedule.schedule import Schedule
from unity.tir.transform import HoistShapeArithmetic, lower

from ._workloads import collect, loop, module


def _lets(func: tir.PrimFunc) -> list[tuple[str, str]]:
    """The lets at the top of `func`, outermost first."""
    out, stmt = [], func.body
    while isinstance(stmt, tir.LetStmt):
        out.append((stmt.var.name, stmt.value.script()))
        stmt = stmt.body
    return out


def test_docstring_example():
    n = tir.SizeVar("n", "int64")
    A, B = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer(((n + 3) // 4 * 4,), "float32", "B")
    i, j = tir.Var("i", "int64"), tir.Var("j", "int64")

    def func(tiles: tir.PrimExpr) -> tir.PrimFunc:
        value = A[tir.min(i * 4 + j, n - 1)] * tir.Cast("float32", tiles)
        inner = loop(j, 4, tir.BufferStore(B, value, (i * 4 + j,)), tir.ForKind.UNROLLED)
        return tir.PrimFunc((A, B), tir.For(i, tir.const(0, "int64"), tiles, tir.ForKind.SERIAL, inner))

    after = HoistShapeArithmetic().transform_function(func((n + 3) // 4))
    assert isinstance(after.body, tir.LetStmt) and isinstance(after.body.var, tir.SizeVar)
    name = after.body.var
    expected = func(name)
    assert_structural_equal(after, expected.replace(body=tir.LetStmt(name, (n + 3) // 4, expected.body)))


def test_nested_divisions_are_named_innermost_first_and_shared():
    """Ceil-mode sizes nest divisions; each distinct one is computed once, the simplified
    form of a division the simplifier rebuilt is named too, and loop variables, loads and
    a divisor that may be 0 stay where they are."""
    h, m = tir.SizeVar("h", "int64"), tir.SizeVar("m", "int64")
    A = tir.decl_buffer((h, m), "float32", "A")
    B = tir.decl_buffer((4,), "float32", "B")
    i = tir.Var("i", "int64")
    half = 0 - (0 - (h - 1)) // 2  # ceil((h - 1) / 2)
    quarter = 0 - (0 - half) // 2
    body = tir.seq(
        tir.BufferStore(B, tir.Cast("float32", quarter), (tir.const(0, "int64"),)),
        tir.BufferStore(B, tir.Cast("float32", quarter + half), (tir.const(1, "int64"),)),
        tir.For(i, tir.const(0, "int64"), quarter, tir.ForKind.SERIAL,
                tir.BufferStore(B, tir.Cast("float32", i // quarter + h // m), (tir.const(2, "int64"),))),
    )
    after = HoistShapeArithmetic().transform_function(tir.PrimFunc((A, B), body))
    lets = _lets(after)
    assert lets == [
        ("h_0", "(T.int64(1) - h) // T.int64(2)"),  # -ceil((h - 1) / 2)
        ("h_1", "h_0 // T.int64(2)"),
    ], lets
    text = after.body.script()
    assert "B[T.int64(0)] = T.Cast(\"float32\", T.int64(0) - h_1)" in text
    assert "h // m" in text  # m may be 0: left in the loop it was in
    assert "i // (T.int64(0) - h_1)" in text


def test_returns_the_function_when_nothing_divides_entry_variables():
    A = tir.decl_buffer((16,), "float32", "A")
    i = tir.Var("i", "int64")
    func = tir.PrimFunc((A,), loop(i, 16, tir.BufferStore(A, A[i // 2], (i,))))
    assert HoistShapeArithmetic().transform_function(func) is func


def _ceil_pool():
    """Max of each pair of a symbolic-length row (ceil mode), its output tiled by 4 with
    the tile unrolled: the output length ceil(n / 2) appears in every unrolled copy."""
    n = tir.SizeVar("n", "int64")
    x = te.placeholder((3, n), name="x")
    out = te.compute(
        (3, (n + 1) // 2),
        lambda r, c: te.max(x[r, c * 2], x[r, te.min(c * 2 + 1, n - 1)]),
        name="pool",
    )
    sch = Schedule(te.create_prim_func([x, out]))
    r, c = sch.get_loops(sch.get_block("pool"))
    _, ci = sch.split(c, [None, 4])
    sch.unroll(ci)
    return sch.mod


def test_lowered_pool_names_its_output_length_and_matches_numpy():
    lowered = lower(_ceil_pool())["main"]
    assert ("n_0", "(n + T.int64(1)) // T.int64(2)") in _lets(lowered)
    lib = unity.build(_ceil_pool())
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 8, 11):
        a = rng.standard_normal((3, n), dtype="float32")
        out = np.zeros((3, (n + 1) // 2), "float32")
        lib["main"](a, out)
        padded = np.concatenate([a, a[:, -1:]], axis=1)[:, : 2 * ((n + 1) // 2)]
        np.testing.assert_array_equal(out, padded.reshape(3, -1, 2).max(axis=2))
