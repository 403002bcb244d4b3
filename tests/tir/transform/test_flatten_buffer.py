import pytest

from unity import tir
from unity.ir.diagnostics import DiagnosticError
from unity.ir.structural import assert_structural_equal
from unity.script import tir as T
from unity.tir import Allocate, Buffer
from unity.tir.functor import post_order_visit
from unity.tir.transform import ConvertBlocksToLoops, FlattenBuffer, LowerInitBlock

from ._workloads import assert_same_results, loop, matmul, module


def test_docstring_example():
    @T.prim_func
    def before(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        for i, j in T.grid(4, 8):
            B[i, j] = A[i, j]

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        A_1 = T.Buffer((32,), "float32", data=A.data)
        B_1 = T.Buffer((32,), "float32", data=B.data)
        for i, j in T.grid(4, 8):
            B_1[i * 8 + j] = A_1[i * 8 + j]

    after = FlattenBuffer()(module(before))
    assert_structural_equal(after["main"], expected)
    assert_same_results(module(before), after)


def _flat(buf: Buffer, size: int | tir.PrimExpr) -> Buffer:
    return Buffer(buf.data, (tir.const(size),), buf.dtype, buf.name)


def test_flattens_2d_access_into_row_major_index():
    A = tir.decl_buffer((4, 8), "float32", "A")
    B = tir.decl_buffer((4, 8), "float32", "B")
    i, j = tir.Var("i"), tir.Var("j")
    before = tir.PrimFunc((A, B), loop(i, 4, loop(j, 8, tir.BufferStore(B, A[i, j], (i, j)))))
    A1, B1 = _flat(A, 32), _flat(B, 32)
    index = i * 8 + j
    expected = tir.PrimFunc(
        (A, B), loop(i, 4, loop(j, 8, tir.BufferStore(B1, A1[index], (index,))))
    )
    after = FlattenBuffer()(module(before))
    assert_structural_equal(after["main"], expected)
    store = after["main"].body.body.body
    assert store.buffer.data is B.data and store.value.buffer.data is A.data
    assert after["main"].params == before.params
    assert_same_results(module(before), after)


def test_folds_strides_and_elem_offset():
    A = tir.decl_buffer((3, 4), "float32", "A", strides=(10, 2), elem_offset=5)
    i, j = tir.Var("i"), tir.Var("j")
    func = tir.PrimFunc((A,), loop(i, 3, loop(j, 4, tir.BufferStore(A, tir.const(1.0), (i, j)))))
    store = FlattenBuffer()(module(func))["main"].body.body.body
    expected = i * 10 + j * 2 + 5
    assert_structural_equal(store.indices[0], expected)


def test_symbolic_shape_and_int64_indices_keep_their_dtype():
    n = tir.SizeVar("n", "int64")
    A = tir.decl_buffer((n, 16), "float32", "A")
    i, j = tir.Var("i", "int64"), tir.Var("j", "int64")
    func = tir.PrimFunc((A,), loop(i, n, loop(j, 16, tir.BufferStore(A, tir.const(0.0), (i, j)))))
    store = FlattenBuffer()(module(func))["main"].body.body.body
    assert store.indices[0].dtype == "int64"
    assert_structural_equal(store.buffer.shape[0], n * 16)


def test_rows_of_a_symbolic_width_split_by_a_schedule_address_without_a_division():
    """``A[p // w, p % w]`` (a pixel `p` of flattened rows) is ``A[p]``, and with offsets
    ``A[p // w + 1, p % w + 2]`` is ``A[p + w + 2]``; a split by another extent stays."""
    h, w = tir.SizeVar("h", "int64"), tir.SizeVar("w", "int64")
    p = tir.Var("p", "int64")
    one, two = tir.const(1, "int64"), tir.const(2, "int64")

    def flat(width: tir.PrimExpr, indices: tuple) -> tir.PrimExpr:
        buf = tir.decl_buffer((h, width), "float32", "A")
        func = tir.PrimFunc((buf,), loop(p, h * w - w - two, tir.BufferStore(buf, tir.const(0.0), indices)))
        found: list[tir.BufferStore] = []
        post_order_visit(FlattenBuffer()(module(func))["main"].body,
                         lambda n: found.append(n) if isinstance(n, tir.BufferStore) else None)  # fmt: skip
        return found[0].indices[0]

    assert_structural_equal(flat(w, (p // w, p % w)), p)
    assert_structural_equal(flat(w, (p // w + one, p % w + two)), p + w + two)
    assert "//" in flat(w + one, (p // w, p % w)).script()  # rows of w + 1: not a split of them
    # a strided conv's output rows: the buffer says (w - 1) // 16 + 1, the schedule (w + 15) // 16
    c15, c16 = tir.const(15, "int64"), tir.const(16, "int64")
    rows = (w + c15) // c16
    assert_structural_equal(flat((w - one) // c16 + one, (p // rows, p % rows)), p)


def test_allocate_holds_the_flat_buffer():
    T = tir.decl_buffer((2, 3), "float32", "T")
    A = tir.decl_buffer((2, 3), "float32", "A")
    i, j = tir.Var("i"), tir.Var("j")
    body = loop(i, 2, loop(j, 3, tir.seq(
        tir.BufferStore(T, A[i, j] * 2.0, (i, j)), tir.BufferStore(A, T[i, j] + 1.0, (i, j))
    )))  # fmt: skip
    before = module(tir.PrimFunc((A,), Allocate(T, body)))
    after = FlattenBuffer()(before)
    alloc = after["main"].body
    assert alloc.buffer.shape[0].value == 6 and alloc.buffer.data is T.data
    assert_same_results(before, after)


def test_blocks_left_are_an_error():
    with pytest.raises(DiagnosticError, match="run ConvertBlocksToLoops before it"):
        FlattenBuffer()(module(matmul()))


def test_matmul_keeps_results():
    before = module(matmul())
    lowered = ConvertBlocksToLoops()(LowerInitBlock()(before))
    assert_same_results(before, FlattenBuffer()(lowered))


def test_nothing_to_do_returns_same_module():
    A = tir.decl_buffer((8,), "float32", "A")
    i = tir.Var("i")
    mod = module(tir.PrimFunc((A,), loop(i, 8, tir.BufferStore(A, tir.const(1.0), (i,)))))
    assert FlattenBuffer()(mod) is mod
