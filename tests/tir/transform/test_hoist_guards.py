import numpy as np

import unity
from unity import te, tir, topi
from unity.ir.structural import assert_structural_equal
from unity.schedule import Schedule
from unity.script import tir as T
from unity.tir import IfThenElse
from unity.tir.transform import HoistGuards

from ._workloads import collect, module


@T.prim_func
def _before(a: T.handle, c: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, 64), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i0 in T.parallel((n + 7) // 8):
        for k, i1 in T.grid(64, 8):
            if i0 * 8 + i1 < n:
                C[i0 * 8 + i1] = C[i0 * 8 + i1] + A[i0 * 8 + i1, k]


@T.prim_func
def _expected(a: T.handle, c: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, 64), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i0 in T.parallel((n + 7) // 8):
        if i0 * 8 + 7 < n:
            for k, i1 in T.grid(64, 8):
                C[i0 * 8 + i1] = C[i0 * 8 + i1] + A[i0 * 8 + i1, k]
        else:
            for k, i1 in T.grid(64, 8):
                if i0 * 8 + i1 < n:
                    C[i0 * 8 + i1] = C[i0 * 8 + i1] + A[i0 * 8 + i1, k]


def test_docstring_example():
    assert_structural_equal(HoistGuards()(module(_before))["main"], _expected)


def test_versions_agree_with_the_guarded_loop_for_any_length():
    after = HoistGuards()(module(_before))
    for n in (1, 7, 8, 21, 24):
        a = np.random.default_rng(n).standard_normal((n, 64)).astype("float32")
        want, got = np.zeros(n, "float32"), np.zeros(n, "float32")
        tir.interpret(module(_before), a, want, n)
        tir.interpret(after, a, got, n)
        np.testing.assert_allclose(got, a.sum(1), rtol=1e-5)
        np.testing.assert_array_equal(got, want)


def test_guards_that_read_memory_or_have_an_else_stay():
    @T.prim_func
    def f(a: T.Buffer((8,), "int32"), c: T.Buffer((8,), "float32")):
        for i in T.serial(8):
            if a[i] < 4:
                c[i] = T.float32(1)
            if i < 4:
                c[i] = T.float32(2)
            else:
                c[i] = T.float32(3)

    assert HoistGuards()(module(f))["main"] is f


def test_an_allocation_is_never_duplicated():
    """The check goes inside the allocation of the tile, not above it."""
    @T.prim_func
    def f(a: T.handle, n: T.int32):
        A = T.match_buffer(a, (n,), "float32")
        for i0 in T.serial((n + 3) // 4):
            with T.allocate_buffer((4,), "float32", scope="local") as t:
                for i1 in T.serial(4):
                    if i0 * 4 + i1 < n:
                        t[i1] = A[i0 * 4 + i1]
                for i1 in T.serial(4):
                    if i0 * 4 + i1 < n:
                        A[i0 * 4 + i1] = t[i1] * T.float32(2)

    after = HoistGuards()(module(f))["main"]
    (alloc,) = collect(after.body, tir.Allocate)
    assert isinstance(alloc.body, IfThenElse) and "i0 * 4 + 3 < n" in alloc.body.script()


def _symbolic_matmul_tiles() -> Schedule:
    """Rows of a symbolic count in tiles of 4, accumulated in a local tile."""
    s = tir.SizeVar("seq", "int64")
    x, w = te.placeholder((s, 48), name="x"), te.placeholder((48, 32), name="w")
    sch = Schedule(te.create_prim_func([x, w, topi.matmul(x, w)]))
    c = sch.get_block("T_matmul")
    i, j, k = sch.get_loops(c)
    acc = sch.cache_write(c, 0, "local")
    i0, i1 = sch.split(i, [None, 4])
    sch.reorder(i0, j, k, i1)
    sch.reverse_compute_at(acc, i0)
    sch.decompose_reduction(c, k)
    return sch


def test_symbolic_matmul_tile_moves_its_last_tile_back_and_is_correct():
    """A register tile split over a symbolic row count, accumulated in a local tile and
    stored to an output it does not read: no guard.  Its last tile moves back to end at
    the last row (it recomputes rows the one before computed), every tile's rows at
    constant offsets from its start; for one row (a batch of 1, a decoding step) the
    tile's loops of rows run once; for fewer rows than a tile, each row is clamped to
    the last one.  The built kernel matches numpy for lengths that are and are not
    multiples of the tile, and shorter than one."""
    lowered = tir.lower(_symbolic_matmul_tiles().mod)["main"]
    versions = {v.condition.script(): v for v in collect(lowered.body, IfThenElse)}
    assert sorted(versions) == ["seq == T.int64(1)", "seq >= T.int64(4)"]
    versions, few = versions["seq >= T.int64(4)"], versions["seq == T.int64(1)"]
    assert versions.else_case is few
    whole, one, short = versions.then_case.script(), few.then_case.script(), few.else_case.script()
    assert "x[i0_1 * T.int64(48)" not in one and "i0_1" not in one  # row 0 only, unrolled
    assert "i0_0_start: T.int64 = T.min(i0_0 * T.int64(4), seq - T.int64(4))" in whole
    assert "x[i0_0_start * T.int64(48) + i0_1 * T.int64(48)" in whole and "T.min(i0_0 * T.int64(4) + " not in whole
    assert "x[T.min(i0_0 * T.int64(4) + i0_1, seq - T.int64(1)) * T.int64(48)" in short  # its row
    assert "T_matmul_local[i0_1 * T.int64(32)" in short  # the tile's own rows: not clamped
    lib = unity.build(_symbolic_matmul_tiles().mod)
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 4, 6, 13):
        a, b = rng.standard_normal((n, 48), dtype="float32"), rng.standard_normal((48, 32), dtype="float32")
        out = np.zeros((n, 32), "float32")
        lib["main"](a, b, out)
        np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)


@T.prim_func
def _scratch_by_position(a: T.handle, c: T.handle, n: T.int64):
    A = T.match_buffer(a, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i0 in T.serial((n + T.int64(3)) // T.int64(4)):
        with T.allocate_buffer((n,), "float32", scope="local") as S:
            for i1 in T.serial(T.int64(4)):
                if i0 * T.int64(4) + i1 < n:
                    S[i0 * T.int64(4) + i1] = A[i0 * T.int64(4) + i1] * T.float32(2)
            for i1 in T.serial(T.int64(4)):
                if i0 * T.int64(4) + i1 < n:
                    C[i0 * T.int64(4) + i1] = S[i0 * T.int64(4) + i1] + T.float32(1)


def test_tiles_that_cannot_repeat_a_position_keep_their_guards():
    """Clamped, two positions of a tile would share the slot of a buffer indexed by the
    position (`S`), and a tile that reads what it writes (`C += ...`) would add twice:
    both keep guarded versions, and agree with the guarded loop."""
    for func in (_scratch_by_position, _before):
        after = HoistGuards()(module(func))["main"]
        assert "T.min" not in after.script() and collect(after.body, IfThenElse)
    after = HoistGuards()(module(_scratch_by_position))
    for n in (1, 5, 8):
        a = np.random.default_rng(n).standard_normal(n).astype("float32")
        got = np.zeros(n, "float32")
        tir.interpret(after, a, got, n)
        np.testing.assert_allclose(got, a * 2 + 1, rtol=1e-6)


@T.prim_func
def _row_sums(a: T.handle, c: T.handle, m: T.int32, n: T.int32):
    A = T.match_buffer(a, (m, n), "float32")
    C = T.match_buffer(c, (m, 8), "float32")
    for r in T.parallel(m):
        for k0 in T.serial((n + 7) // 8):
            for k1 in T.serial(8):
                if k0 * 8 + k1 < n:
                    C[r, k1] = C[r, k1] + A[r, k0 * 8 + k1]


def test_the_loop_over_tiles_of_a_symbolic_length_splits_off_its_whole_tiles():
    """A row's reduction in tiles of 8 over a symbolic length: versioned at the row, the
    check would hold only when ``n % 8 == 0`` (a softmax row of 505 ran every tile
    guarded, 1.6x slower); versioned per tile, the branch in the loop kept LLVM from
    holding the accumulator in a register (3x slower).  The loop over tiles splits
    instead: ``n // 8`` whole tiles without a guard, then the rest with it."""
    after = HoistGuards()(module(_row_sums))["main"]
    row = after.body.body  # the body of the loop over rows: the two loops over tiles
    whole, rest = row.seq
    assert "n // 8" in str(whole.extent) and not collect(whole.body, IfThenElse)
    assert str(rest.min) == str(whole.extent) and collect(rest.body, IfThenElse)
    for n in (1, 7, 8, 21, 24):
        a = np.random.default_rng(n).standard_normal((3, n)).astype("float32")
        got = np.zeros((3, 8), "float32")
        tir.interpret(module(after), a, got, 3, n)
        np.testing.assert_allclose(got.sum(1), a.sum(1), rtol=1e-5)


@T.prim_func
def _tile_with_two_spellings(a: T.handle, c: T.handle, w: T.int64):
    A = T.match_buffer(a, ((w - T.int64(1)) // T.int64(8) + T.int64(1),), "float32")
    C = T.match_buffer(c, ((w - T.int64(1)) // T.int64(8) + T.int64(1),), "float32")
    for i0 in T.serial(((w - T.int64(1)) // T.int64(8) + T.int64(4)) // T.int64(4)):
        with T.allocate_buffer((T.int64(4),), "float32", scope="local") as acc:
            for i1 in T.serial(T.int64(4)):
                if i0 * T.int64(4) + i1 < ((w - T.int64(1)) // T.int64(4) + T.int64(1) + T.int64(-1)) // T.int64(2) + T.int64(1):
                    acc[i1] = A[i0 * T.int64(4) + i1] * T.float32(2)
            for i1 in T.serial(T.int64(4)):
                if i0 * T.int64(4) + i1 < (w - T.int64(1)) // T.int64(8) + T.int64(1):
                    C[i0 * T.int64(4) + i1] = acc[i1]


def test_guards_of_one_length_spelled_two_ways_move_the_last_tile_back():
    """A stride-2 conv's reads guard ``((W - 1) // 4 + 1 - 1) // 2 + 1``, its write-back
    ``(W - 1) // 8 + 1``: the same length, so the last tile moves back (the two spellings
    had left every row's last tile guarded, lane by lane)."""
    lowered = tir.lower(_tile_with_two_spellings)["main"]
    assert "i0_start" in lowered.script()
    lib = unity.build(_tile_with_two_spellings)
    rng = np.random.default_rng(0)
    for w in (8, 30, 57, 160):
        n = (w - 1) // 8 + 1
        a, out = rng.standard_normal(n).astype("float32"), np.zeros(n, "float32")
        lib["main"](a, out, w)
        np.testing.assert_allclose(out, a * 2, rtol=1e-6)


@T.prim_func
def _tiles_inside_a_long_row_version(a: T.handle, c: T.handle, n: T.int64):
    A = T.match_buffer(a, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    if n >= T.int64(4):
        for i0 in T.serial((n + T.int64(3)) // T.int64(4)):
            with T.allocate_buffer((T.int64(4),), "float32", scope="local") as acc:
                for i1 in T.serial(T.int64(4)):
                    if i0 * T.int64(4) + i1 < n:
                        acc[i1] = A[i0 * T.int64(4) + i1] + T.float32(1)
                for i1 in T.serial(T.int64(4)):
                    if i0 * T.int64(4) + i1 < n:
                        C[i0 * T.int64(4) + i1] = acc[i1]
    else:
        for i in T.serial(n):
            C[i] = A[i] + T.float32(1)


def test_an_enclosing_test_of_the_length_leaves_only_the_moved_back_version():
    script = HoistGuards().transform_function(_tiles_inside_a_long_row_version).script()
    assert "i0_start: T.int64 = T.min(i0 * T.int64(4), n - T.int64(4))" in script
    assert "T.min(i0 * T.int64(4) + i1, n - T.int64(1))" not in script  # no clamped copy
    lib = unity.build(_tiles_inside_a_long_row_version)
    for n in (2, 4, 7):
        a, out = np.arange(n, dtype="float32"), np.zeros(n, "float32")
        lib["main"](a, out, n)
        np.testing.assert_array_equal(out, a + 1)


def test_a_loop_guarded_by_its_own_variable_ends_at_the_guard():
    @T.prim_func
    def before(a: T.handle, c: T.handle, n: T.int64):
        A = T.match_buffer(a, (n,), "float32")
        C = T.match_buffer(c, (n + T.int64(2),), "float32")
        for i in T.vectorized((n + T.int64(15)) // T.int64(16) * T.int64(16) + T.int64(2)):
            if i < n + T.int64(2):
                C[i] = T.float32(1)

    script = HoistGuards().transform_function(before).script()
    assert "if i <" not in script
    assert "T.vectorized(T.max(T.min((n + T.int64(15)) // T.int64(16) * T.int64(16) + T.int64(2), n + T.int64(2))" in script


@T.prim_func
def _ragged_tiles(a: T.handle, c: T.handle):
    A = T.match_buffer(a, (13, 21), "float32")
    C = T.match_buffer(c, (13, 21), "float32")
    for i0 in T.parallel(4):
        for j0 in T.serial(3):
            with T.allocate_buffer((4, 8), "float32", scope="local") as acc:
                for i1, j1 in T.grid(4, 8):
                    if i0 * 4 + i1 < 13 and j0 * 8 + j1 < 21:
                        acc[i1, j1] = A[i0 * 4 + i1, j0 * 8 + j1] * T.float32(2)
                for i1, j1 in T.grid(4, 8):
                    if i0 * 4 + i1 < 13 and j0 * 8 + j1 < 21:
                        C[i0 * 4 + i1, j0 * 8 + j1] = acc[i1, j1] + T.float32(1)


def test_tiles_of_a_constant_length_no_tile_divides_move_the_last_one_back():
    """ViT's 197 x 197 attention scores in 8 x 32 tiles, small: 13 rows in tiles of 4 and
    21 columns in tiles of 8, guarded in both.  Each loop of tiles starts its last tile
    back (rows 9-12, columns 13-20: recomputed, stored again with the same values), and
    the guards go; the result matches the guarded loops'."""
    after = HoistGuards()(module(_ragged_tiles))["main"]
    text = after.script()
    assert "i0_start: T.int32 = T.min(i0 * 4, 9)" in text
    assert "j0_start: T.int32 = T.min(j0 * 8, 13)" in text
    assert not collect(after.body, IfThenElse)
    a = np.random.default_rng(3).standard_normal((13, 21)).astype("float32")
    got = np.zeros((13, 21), "float32")
    tir.interpret(after, a, got)
    np.testing.assert_allclose(got, a * 2 + 1, rtol=1e-6)


@T.prim_func
def _batch_inside_tiles(a: T.handle, w: T.handle, c: T.handle, batch: T.int64, n: T.int64):
    A = T.match_buffer(a, (batch, n), "float32")
    W = T.match_buffer(w, (40,), "float32")
    C = T.match_buffer(c, (batch, n), "float32")
    for i0 in T.parallel((n + T.int64(3)) // T.int64(4)):
        for b in T.serial(batch):
            with T.allocate_buffer((T.int64(4),), "float32", scope="local") as acc:
                for i1 in T.serial(T.int64(4)):
                    if i0 * T.int64(4) + i1 < n:
                        acc[i1] = T.float32(0)
                for k in T.serial(T.int64(8)):
                    T.evaluate(T.call_intrin("int32", "tir.prefetch", W[k + T.int64(32)]))
                    for i1 in T.serial(T.int64(4)):
                        if i0 * T.int64(4) + i1 < n:
                            acc[i1] = acc[i1] + A[b, i0 * T.int64(4) + i1] * W[k]
                for i1 in T.serial(T.int64(4)):
                    if b < batch and i0 * T.int64(4) + i1 < n:
                        C[b, i0 * T.int64(4) + i1] = acc[i1]


def test_a_write_back_guard_on_an_inner_loop_and_prefetches_still_move_the_last_tile_back():
    """A pointwise conv's tiles over a symbolic pixel count hold a batch loop: its
    write-back's guard also tests ``b < batch``, which holds over that loop, and its
    reduction prefetches the weights (a hint, harmless to run twice).  The last tile
    moves back (both had left the whole loop versioned, the last tile guarded: a
    quarter of a 7x7 conv's tiles of 13 pixels).  Built, it matches numpy for counts
    below, at and above a tile."""
    script = HoistGuards().transform_function(_batch_inside_tiles).script()
    assert "i0_start: T.int64 = T.min(i0 * T.int64(4), n - T.int64(4))" in script
    lib = unity.build(_batch_inside_tiles)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(40).astype("float32")
    for batch, n in ((1, 1), (2, 3), (1, 4), (3, 9)):
        a, out = rng.standard_normal((batch, n)).astype("float32"), np.zeros((batch, n), "float32")
        lib["main"](a, w, out, batch, n)
        np.testing.assert_allclose(out, a * w[:8].sum(), rtol=1e-5, atol=1e-5)
