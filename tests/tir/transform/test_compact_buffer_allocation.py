from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.script import tir as T
from unity.tir import Allocate, For, ForKind
from unity.tir.transform import CompactBufferAllocation

from ._workloads import assert_same_results, loop, module


def test_docstring_example():
    @T.prim_func
    def before(X: T.Buffer((4, 4), "float32"), Y: T.Buffer((4, 4), "float32")):
        with T.allocate_buffer((16, 16), "float32") as A:
            for i in T.serial(4):
                for j in T.serial(4):
                    A[i, j + 2] = X[i, j] * T.float32(3)
                for j in T.serial(4):
                    Y[i, j] = A[i, 5 - j]

    @T.prim_func
    def expected(X: T.Buffer((4, 4), "float32"), Y: T.Buffer((4, 4), "float32")):
        for i in T.serial(4):
            with T.allocate_buffer((1, 4), "float32") as A:
                for j in T.serial(4):
                    A[0, j] = X[i, j] * T.float32(3)
                for j in T.serial(4):
                    Y[i, j] = A[0, 3 - j]

    after = CompactBufferAllocation()(module(before))
    assert_structural_equal(after["main"], expected)
    assert_same_results(module(before), after)


def _staged(shape: tuple[int, int], offset: int) -> tir.PrimFunc:
    X = tir.decl_buffer((4,), "float32", "X")
    Y = tir.decl_buffer((4,), "float32", "Y")
    A = tir.decl_buffer(shape, "float32", "A")
    j = tir.Var("j")
    col = j + offset if offset else j
    body = loop(j, 4, tir.seq(
        tir.BufferStore(A, X[j] * 3.0, (tir.const(0), col)),
        tir.BufferStore(Y, A[0, col], (j,)),
    ))  # fmt: skip
    return tir.PrimFunc((X, Y), Allocate(A, body))


def test_moves_into_loop_with_disjoint_iterations_and_shrinks_to_one_element():
    before = module(_staged((16, 16), 2))
    after = CompactBufferAllocation()(before)
    loop_ = after["main"].body
    assert isinstance(loop_, For) and isinstance(loop_.body, Allocate)
    assert [d.value for d in loop_.body.buffer.shape] == [1, 1]
    assert_same_results(before, after)


def test_parallel_tile_buffer_becomes_private_to_each_iteration():
    X = tir.decl_buffer((8, 16), "float32", "X")
    Y = tir.decl_buffer((8, 16), "float32", "Y")
    acc = tir.decl_buffer((8, 16), "float32", "acc")
    io, j, k = tir.Var("io"), tir.Var("j"), tir.Var("k")
    init = loop(j, 16, tir.BufferStore(acc, tir.const(0.0), (io, j)))
    update = loop(k, 3, loop(j, 16, tir.BufferStore(acc, acc[io, j] + X[io, j] * 2.0, (io, j))))
    out = loop(j, 16, tir.BufferStore(Y, acc[io, j], (io, j)))
    body = loop(io, 8, tir.seq(init, update, out), ForKind.PARALLEL)
    before = module(tir.PrimFunc((X, Y), Allocate(acc, body)))
    after = CompactBufferAllocation()(before)
    par = after["main"].body
    assert par.kind is ForKind.PARALLEL and isinstance(par.body, Allocate)
    assert [d.value for d in par.body.buffer.shape] == [1, 16]
    assert_same_results(before, after)


def test_values_carried_across_iterations_keep_the_buffer_outside():
    X = tir.decl_buffer((4,), "float32", "X")
    s = tir.decl_buffer((1,), "float32", "s")
    k = tir.Var("k")
    body = loop(k, 4, tir.BufferStore(s, s[0] + X[k], (tir.const(0),)))
    mod = module(tir.PrimFunc((X,), Allocate(s, body)))
    assert CompactBufferAllocation()(mod) is mod


def test_nothing_to_do_returns_same_module():
    X = tir.decl_buffer((4,), "float32", "X")
    A = tir.decl_buffer((4,), "float32", "A")
    j = tir.Var("j")
    fill = loop(j, 4, tir.BufferStore(A, X[j], (j,)))
    j2 = tir.Var("j")
    back = loop(j2, 4, tir.BufferStore(X, A[3 - j2], (j2,)))
    mod = module(tir.PrimFunc((X,), Allocate(A, tir.seq(fill, back))))
    assert CompactBufferAllocation()(mod) is mod


def _fused_tiles(col_index) -> tir.PrimFunc:
    """`acc` cached per iteration of a fused loop `f` over 4 x 3 tiles of 2 x 8."""
    X = tir.decl_buffer((8, 24), "float32", "X")
    Y = tir.decl_buffer((8, 24), "float32", "Y")
    acc = tir.decl_buffer((8, 24), "float32", "acc")
    f, i, j = tir.Var("f"), tir.Var("i"), tir.Var("j")
    row, col = f // 3 * 2 + i, col_index(f, j)
    fill = loop(i, 2, loop(j, 8, tir.BufferStore(acc, X[row, col] * 2.0, (row, col))))
    out = loop(i, 2, loop(j, 8, tir.BufferStore(Y, acc[row, col] + 1.0, (row, col))))
    return tir.PrimFunc((X, Y), Allocate(acc, loop(f, 12, tir.seq(fill, out), ForKind.PARALLEL)))


def test_fused_loop_tiles_become_private_to_each_iteration():
    # rows follow f // 3, columns f % 3: distinct iterations touch distinct tiles
    before = module(_fused_tiles(lambda f, j: f % 3 * 8 + j))
    after = CompactBufferAllocation()(before)
    par = after["main"].body
    assert par.kind is ForKind.PARALLEL and isinstance(par.body, Allocate)
    assert [d.value for d in par.body.buffer.shape] == [2, 8]
    assert_same_results(before, after)


def test_fused_loop_sharing_columns_keeps_the_buffer_outside():
    # the columns do not follow f % 3: iterations 0, 1 and 2 write the same 2 x 8 tile
    before = module(_fused_tiles(lambda f, j: j))
    after = CompactBufferAllocation()(before)
    outside = after["main"].body
    assert isinstance(outside, Allocate) and outside.body.kind is ForKind.PARALLEL
    assert [d.value for d in outside.buffer.shape] == [8, 8]  # shrunk, still shared


def _fused_rows(row_index) -> tir.PrimFunc:
    """`e` (a softmax's exponentials) cached per row of a loop `f` fused from a batch of
    2, 6 heads and 5 rows, indexed ``(f // 30, f // 5 % 6, row_index(f), j)``."""
    X = tir.decl_buffer((2, 6, 5, 8), "float32", "X")
    Y = tir.decl_buffer((2, 6, 5, 8), "float32", "Y")
    e = tir.decl_buffer((2, 6, 5, 8), "float32", "e")
    f, j = tir.Var("f"), tir.Var("j")
    at = (f // 30, f // 5 % 6, row_index(f), j)
    fill = loop(j, 8, tir.BufferStore(e, X[(f // 30, f // 5 % 6, f % 5, j)] * 2.0, at))
    out = loop(j, 8, tir.BufferStore(Y, e[at] + 1.0, (f // 30, f // 5 % 6, f % 5, j)))
    return tir.PrimFunc((X, Y), Allocate(e, loop(f, 60, tir.seq(fill, out), ForKind.PARALLEL)))


def test_a_loop_fused_from_three_makes_each_row_private():
    """Batch, heads and rows fused (ViT's softmax over a symbolic batch): the divisors 5
    and 30 write `f` in mixed radix, and each digit moves one dimension, so each
    iteration gets its own row (the intermediate stayed batch-sized, in memory)."""
    before = module(_fused_rows(lambda f: f % 5))
    after = CompactBufferAllocation()(before)
    par = after["main"].body
    assert par.kind is ForKind.PARALLEL and isinstance(par.body, Allocate)
    assert [d.value for d in par.body.buffer.shape] == [1, 1, 1, 8]
    assert_same_results(before, after)


def test_a_loop_fused_from_three_sharing_rows_keeps_the_buffer_outside():
    # rows f % 5 // 2: iterations 0 and 1 of each head share a row
    before = module(_fused_rows(lambda f: f % 5 // 2))
    after = CompactBufferAllocation()(before)
    assert isinstance(after["main"].body, Allocate)


def test_symbolic_dimension_keeps_its_size_unless_the_region_is_a_constant_tile():
    """An intermediate over all of a symbolic `n` keeps the dimension `n` (it became `n`'s
    dtype maximum, 2^31 elements, and `(n, 4)` wrapped around int32 to a tiny block that
    the kernel overran); a constant tile of it still shrinks."""
    import numpy as np

    import unity
    from unity import te, topi
    from unity.tir.transform.pipeline import lower

    n = te.var("n")
    x = te.placeholder((n, 4), name="x")
    doubled = te.compute((n, 4), lambda i, j: x[i, j] * 2.0, name="doubled")
    plus = te.compute((n, 4), lambda i, j: doubled[i, j] + 1.0, name="plus")
    lowered = lower(te.create_prim_func([x, topi.nn.softmax(x)]))["main"]
    allocs = [s.buffer for s in _stmts(lowered.body) if isinstance(s, Allocate)]
    assert sorted(b.shape[0].script() for b in allocs) == ["n", "n", "n * 4"]  # max, sum, exp
    lowered = lower(te.create_prim_func([x, plus]))["main"]
    (alloc,) = [s.buffer for s in _stmts(lowered.body) if isinstance(s, Allocate)]
    assert alloc.shape[0].script() == "n * 4"
    a = np.random.default_rng(0).standard_normal((3, 4)).astype("float32")
    out = np.zeros_like(a)
    unity.build(te.create_prim_func([x, topi.nn.softmax(x)]))["main"](a, out)
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5)

    m, i, j = tir.SizeVar("m"), tir.Var("i"), tir.Var("j")
    X, Y = (tir.decl_buffer((m, 4), "float32", name) for name in "XY")
    A = tir.decl_buffer((m, 4), "float32", "A")
    fill = loop(j, 4, tir.BufferStore(A, X[i, j] * 2.0, (i, j)))
    copy = loop(j, 4, tir.BufferStore(Y, A[i, j], (i, j)))
    body = tir.For(i, tir.const(0), m, ForKind.SERIAL, Allocate(A, tir.seq(fill, copy)))
    out = CompactBufferAllocation()(module(tir.PrimFunc((X, Y), body)))["main"].body
    (alloc,) = [s for s in _stmts(out) if isinstance(s, Allocate)]
    assert [d.script() for d in alloc.buffer.shape] == ["1", "4"]


def _stmts(stmt):
    from unity.schedule.tree import walk

    return list(walk(stmt))


def test_moves_through_a_unit_loop_to_the_tile_inside():
    """A conv over one row (wav2vec's 1 x 3 kernels): the row loop has one iteration, so
    the tile's buffer goes on into the pixel loop and shrinks to the tile (it stayed a
    whole row, in memory instead of registers: 3.4x slower)."""
    X = tir.decl_buffer((1, 40), "float32", "X")
    Y = tir.decl_buffer((1, 40), "float32", "Y")
    A = tir.decl_buffer((1, 40), "float32", "A")
    y, x0, x1 = tir.Var("y"), tir.Var("x0"), tir.Var("x1")
    tile = tir.seq(
        loop(x1, 5, tir.BufferStore(A, X[y, x0 * 5 + x1] * 2.0, (y, x0 * 5 + x1))),
        loop(x1, 5, tir.BufferStore(Y, A[y, x0 * 5 + x1] + 1.0, (y, x0 * 5 + x1))),
    )  # fmt: skip
    before = module(tir.PrimFunc((X, Y), Allocate(A, loop(y, 1, loop(x0, 8, tile)))))
    after = CompactBufferAllocation()(before)
    inner = after["main"].body.body
    assert isinstance(inner, For) and inner.loop_var is x0 and isinstance(inner.body, Allocate)
    assert [d.value for d in inner.body.buffer.shape] == [1, 5]
    assert_same_results(before, after)


def test_moves_into_the_branch_of_an_if_that_holds_every_access():
    @T.prim_func
    def before(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32"), n: T.int32):
        with T.allocate_buffer((8,), "float32") as A:
            if n >= 4:
                for i in T.serial(8):
                    A[i] = X[i] * T.float32(2)
                    Y[i] = A[i]
            else:
                for i in T.serial(8):
                    Y[i] = X[i]

    @T.prim_func
    def expected(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32"), n: T.int32):
        if n >= 4:
            for i in T.serial(8):
                with T.allocate_buffer((1,), "float32") as A:
                    A[0] = X[i] * T.float32(2)
                    Y[i] = A[0]
        else:
            for i in T.serial(8):
                Y[i] = X[i]

    after = CompactBufferAllocation()(module(before))
    assert_structural_equal(after["main"], expected)
