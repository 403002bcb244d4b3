import numpy as np

from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.script import tir as T
from unity.tir import Broadcast, For, ForKind, IfThenElse, Ramp, SeqStmt
from unity.tir.transform import VectorizeLoop

from ._workloads import assert_same_results, collect, loop, module


def test_docstring_example():
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.vectorized(8):
            B[i] = A[i] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        B[T.Ramp(0, 1, 8)] = A[T.Ramp(0, 1, 8)] * T.Broadcast(T.float32(2), 8)

    after = VectorizeLoop()(module(before))
    assert_structural_equal(after["main"], expected)
    assert_same_results(module(before), after)


V = ForKind.VECTORIZED


def _scale(extent: int | tir.PrimExpr, kind: ForKind = V) -> tir.PrimFunc:
    n = extent if isinstance(extent, int) else 64
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    i = tir.Var("i")
    return tir.PrimFunc((A, B), loop(i, extent, tir.BufferStore(B, A[i] * 2.0, (i,)), kind))


def test_turns_loop_into_ramp_and_broadcast():
    before = module(_scale(8))
    A, B = before["main"].params
    ramp = Ramp(tir.const(0), tir.const(1), 8)
    two = Broadcast(tir.const(2.0), 8)
    expected = tir.PrimFunc((A, B), tir.BufferStore(B, A[ramp] * two, (ramp,)))
    after = VectorizeLoop()(before)
    assert_structural_equal(after["main"], expected)
    assert after["main"].body.value.dtype == "float32x8"
    assert_same_results(before, after)


def test_extent_above_vector_width_gets_chunks_and_a_vector_tail():
    before = module(_scale(40))
    after = VectorizeLoop()(before)  # float32 in 512 bits: 16 lanes, 2 chunks, tail of 8
    main, tail = after["main"].body.seq
    assert isinstance(main, For) and main.kind is ForKind.SERIAL and main.extent.value == 2
    assert main.body.value.dtype == "float32x16"
    assert isinstance(tail, tir.BufferStore) and tail.value.dtype == "float32x8"
    assert_structural_equal(tail.indices[0], Ramp(tir.const(32), tir.const(1), 8))
    assert_same_results(before, after)


def test_single_chunk_needs_no_outer_loop():
    after = VectorizeLoop(vector_bits=256)(module(_scale(12)))  # 8 lanes + tail of 4
    main, tail = after["main"].body.seq
    assert main.value.dtype == "float32x8" and tail.value.dtype == "float32x4"


def test_a_one_element_tail_stays_scalar():
    after = VectorizeLoop()(module(_scale(17)))
    main, tail = after["main"].body.seq
    assert main.value.dtype == "float32x16" and isinstance(tail, For) and tail.extent.value == 1


def test_a_vector_tail_proves_its_guarded_loads_in_bounds():
    """A load under a vector select (padding) is vectorized only when provably in bounds;
    the tail's lanes (8..11 of 12) are proved over the tail's own range, so the tail is a
    vector too, as the chunks are (it stayed a scalar loop: a stride-2 max pool ran 4x
    slower in ShuffleNet)."""
    A = tir.decl_buffer((20,), "float32", "A")
    B = tir.decl_buffer((12,), "float32", "B")
    i = tir.Var("i")
    value = tir.Select(i >= 1, A[i + 8], tir.const(0.0))  # A[i + 8]: in bounds for i < 12
    before = module(tir.PrimFunc((A, B), loop(i, 12, tir.BufferStore(B, value, (i,)), V)))
    after = VectorizeLoop(vector_bits=256)(before)  # 8 lanes + tail of 4
    main, tail = after["main"].body.seq
    assert main.value.dtype == "float32x8" and tail.value.dtype == "float32x4"
    assert_same_results(before, after)


def test_inner_loop_of_2d_nest_uses_contiguous_ramp():
    A = tir.decl_buffer((64,), "float32", "A")
    b = tir.decl_buffer((16,), "float32", "b")
    i, j = tir.Var("i"), tir.Var("j")
    store = tir.BufferStore(A, A[i * 16 + j] + b[j], (i * 16 + j,))
    before = module(tir.PrimFunc((A, b), loop(i, 4, loop(j, 16, store, V))))
    after = VectorizeLoop()(before)
    vstore = after["main"].body.body
    assert_structural_equal(vstore.indices[0], Ramp(i * 16, tir.const(1), 16))
    assert_same_results(before, after)


def test_scalar_condition_select_cast_and_call_vectorize():
    A = tir.decl_buffer((16,), "float32", "A")
    B = tir.decl_buffer((16,), "float32", "B")
    n = tir.Var("n")
    i = tir.Var("i")
    value = tir.select(A[i] > 0.0, tir.exp(A[i]), tir.cast("float32", i))
    body = IfThenElse(n > 3, tir.BufferStore(B, value, (i,)))
    before = module(tir.PrimFunc((A, B, n), loop(i, 16, body, V)))
    after = VectorizeLoop()(before)
    vif = after["main"].body
    assert isinstance(vif, IfThenElse) and vif.then_case.value.dtype == "float32x16"


def test_reduction_into_one_element_stays_serial():
    A = tir.decl_buffer((16,), "float32", "A")
    s = tir.decl_buffer((1,), "float32", "s")
    k = tir.Var("k")
    body = tir.BufferStore(s, s[0] + A[k], (tir.const(0),))
    before = module(tir.PrimFunc((A, s), loop(k, 16, body, V)))
    after = VectorizeLoop()(before)
    assert isinstance(after["main"].body, For) and after["main"].body.kind is ForKind.SERIAL
    assert_same_results(before, after)


def test_symbolic_extent_gets_vector_chunks_and_scalar_tail():
    n = tir.SizeVar("n")
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    i = tir.Var("i")
    before = module(tir.PrimFunc((A, B), loop(i, n, tir.BufferStore(B, A[i] * 2.0, (i,)), V)))
    main, tail = VectorizeLoop()(before)["main"].body.seq
    assert_structural_equal(main.extent, n // 16)
    assert main.body.value.dtype == "float32x16"
    assert_structural_equal((tail.min, tail.extent), (n // 16 * 16, n - n // 16 * 16))
    after = VectorizeLoop()(before)
    for size in (5, 16, 37):
        a = np.arange(size, dtype="float32")
        b = np.zeros(size, "float32")
        tir.interpret(after, a, b)
        np.testing.assert_array_equal(b, a * 2)


def test_nested_loop_inside_stays_serial():
    A = tir.decl_buffer((8, 4), "float32", "A")
    i, j = tir.Var("i"), tir.Var("j")
    body = loop(j, 4, tir.BufferStore(A, tir.const(1.0), (i, j)))
    after = VectorizeLoop()(module(tir.PrimFunc((A,), loop(i, 8, body, V))))
    assert after["main"].body.kind is ForKind.SERIAL


def test_nothing_to_do_returns_same_module():
    mod = module(_scale(8, ForKind.SERIAL))
    assert VectorizeLoop()(mod) is mod
    assert not isinstance(mod["main"].body, SeqStmt)


def test_an_index_widened_to_int64_stays_a_ramp():
    """``B[Cast(int64, i) + 8]`` over an int32 loop (a symbolic shape's int64 indices):
    the widened lanes are ``Ramp(int64(0) + 8, 1, 8)``, a contiguous access, not a cast
    vector that codegen would gather lane by lane."""
    A = tir.decl_buffer((16,), "float32", "A")
    B = tir.decl_buffer((16,), "float32", "B")
    i = tir.Var("i")
    idx = tir.Cast("int64", i) + tir.const(8, "int64")
    before = module(tir.PrimFunc((A, B), loop(i, 8, tir.BufferStore(B, A[idx], (idx,)), V)))
    after = VectorizeLoop()(before)
    store = after["main"].body
    assert isinstance(store.indices[0], Ramp) and store.indices[0].dtype == "int64x8"
    assert isinstance(store.value.indices[0], Ramp)
    assert_same_results(before, after)


def _guarded_tile(value, store_local: bool = True):
    """``for i0 in range((n + 15) // 16)``: a 16-lane tile of a symbolic `n` accumulated in a
    local buffer under the guard ``i0 * 16 + j < n`` (vectorized), written back guarded."""
    n = tir.SizeVar("n")
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    acc = tir.decl_buffer((16,), "float32", "acc", scope="local")
    i0, j, k = tir.Var("i0"), tir.Var("j"), tir.Var("k")
    col = i0 * 16 + j
    target, where = (acc, j) if store_local else (B, col)
    compute = loop(j, 16, tir.IfThenElse(col < n, tir.BufferStore(target, value(A, col, acc, j), (where,))), V)
    back = loop(k, 16, tir.IfThenElse(i0 * 16 + k < n, tir.BufferStore(B, acc[k], (i0 * 16 + k,))))
    body = tir.Allocate(acc, SeqStmt((compute, back)) if store_local else compute)
    return module(tir.PrimFunc((A, B), loop(i0, (n + 15) // 16, body))), n


def test_a_guarded_tile_of_a_symbolic_extent_runs_as_vectors_on_every_lane():
    """The last tile's lanes past `n` compute too (into the local tile, never written back);
    the loads of `A` read lane `j` at ``min(j, n - 1 - i0 * 16)``: a masked load, in bounds."""
    before, n = _guarded_tile(lambda A, col, acc, j: A[col] * 2.0 + 1.0)
    after = VectorizeLoop()(before)
    stores = [s for s in _walk_stmts(after["main"].body) if isinstance(s, tir.BufferStore)]
    vector = [s for s in stores if s.buffer.name == "acc"]
    assert len(vector) == 1 and vector[0].value.dtype == "float32x16"
    guard = next(s for s in _walk_stmts(after["main"].body) if isinstance(s, IfThenElse))
    assert guard.condition.script() == "0 <= n - i0 * 16 - 1"  # the first lane is taken
    assert "T.min(T.Ramp(" in vector[0].value.script()
    import unity

    lib = unity.build(before)  # lowered (HoistGuards: a guard-free copy of whole tiles) and vectorized
    assert "llvm.masked.load" in lib.get_source("ll")
    for size in (5, 16, 37):
        a = np.arange(size, dtype="float32")
        for run in (tir.interpret, lambda m, *args: lib["main"](*args)):
            b = np.zeros(size, "float32")
            run(after, a, b)
            np.testing.assert_array_equal(b, a * 2 + 1)


def test_guarded_stores_to_global_buffers_and_integer_division_stay_serial():
    global_store, _ = _guarded_tile(lambda A, col, acc, j: A[col], store_local=False)
    assert VectorizeLoop()(global_store)["main"].body.body.body.kind is ForKind.SERIAL
    divides, _ = _guarded_tile(lambda A, col, acc, j: tir.Cast("float32", 64 // tir.Cast("int32", A[col])))
    compute = VectorizeLoop()(divides)["main"].body.body.body.seq[0]
    assert isinstance(compute, For) and compute.kind is ForKind.SERIAL


def _walk_stmts(stmt):
    found = []
    tir.post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, tir.Stmt) else None)
    return found


def test_a_guarded_tile_into_an_accumulator_shared_by_every_tile_stays_serial():
    """``acc[j] += A[i0 * 16 + j]`` over all tiles `i0` (column sums): the lanes past `n`
    in the last tile would add to sums of earlier tiles, so that loop stays serial."""
    n = tir.SizeVar("n")
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((16,), "float32", "B")
    acc = tir.decl_buffer((16,), "float32", "acc", scope="local")
    i0, j, k, m = (tir.Var(v) for v in ("i0", "j", "k", "m"))
    zero = loop(k, 16, tir.BufferStore(acc, tir.const(0.0), (k,)))
    add = tir.IfThenElse(i0 * 16 + j < n, tir.BufferStore(acc, acc[j] + A[i0 * 16 + j], (j,)))
    tiles = loop(i0, (n + 15) // 16, loop(j, 16, add, V))
    out = loop(m, 16, tir.BufferStore(B, acc[m], (m,)))
    before = module(tir.PrimFunc((A, B), tir.Allocate(acc, SeqStmt((zero, tiles, out)))))
    after = VectorizeLoop()(before)
    assert after["main"].body.body.seq[1].body.kind is ForKind.SERIAL
    a = np.arange(37, dtype="float32")
    b = np.zeros(16, "float32")
    tir.interpret(after, a, b)
    np.testing.assert_array_equal(b, np.pad(a, (0, 11)).reshape(3, 16).sum(axis=0))


def _symbolic_pad():
    """A zero-padded copy of a (4, H, W) tensor over symbolic sizes, its rows vectorized:
    the read clamps its indices, in bounds only when H and W are at least 1."""
    from unity import te
    from unity.schedule import Schedule

    H, W = tir.SizeVar("H", "int64"), tir.SizeVar("W", "int64")
    one, zero = tir.const(1, "int64"), tir.const(0, "int64")
    x = te.placeholder((tir.const(4, "int64"), H, W), name="x")

    def body(c, i, j):
        inside = tir.logical_and(tir.logical_and(i >= one, j >= one), tir.logical_and(i - one < H, j - one < W))
        row, col = tir.max(tir.min(i - one, H - one), zero), tir.max(tir.min(j - one, W - one), zero)
        return te.if_then_else(inside, x[c, row, col], tir.const(0.0))

    y = te.compute((tir.const(4, "int64"), H + 2, W + 2), body, name="y")
    sch = Schedule(te.create_prim_func([x, y]))
    sch.vectorize(sch.get_loops(sch.get_block("y"))[-1])
    return sch.mod["main"]


def test_a_clamped_read_over_symbolic_sizes_vectorizes_for_non_empty_tensors():
    """The padded copy of a depthwise conv over a symbolic image size ran lane by lane:
    the clamped read is in bounds only for a non-empty input, which the linear analyzer
    cannot see.  Now vectorized behind ``H >= 1 and W >= 1``; empty inputs take the
    serial loop (nothing read), and every size matches numpy."""
    import unity

    func = _symbolic_pad()
    lowered = tir.lower(func)["main"]
    checks = [s for s in collect(lowered.body, IfThenElse) if "H >= T.int64(1)" in s.condition.script()]
    assert checks and "T.Ramp(" in checks[0].then_case.script()
    assert "T.Ramp(" not in checks[0].else_case.script()
    lib = unity.build(func)
    rng = np.random.default_rng(0)
    for h, w in ((5, 37), (1, 1), (3, 16), (0, 5), (4, 0), (0, 0)):
        x = rng.standard_normal((4, h, w)).astype("float32")
        out = np.full((4, h + 2, w + 2), 7.0, "float32")
        lib["main"](x, out)
        np.testing.assert_array_equal(out, np.pad(x, ((0, 0), (1, 1), (1, 1))))
