from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.script import tir as T
from unity.tir import Allocate, For, ForKind
from unity.tir.transform import UnrollLoop

from ._workloads import assert_same_results, loop, module


def test_docstring_example():
    @T.prim_func
    def before(A: T.Buffer((3,), "float32"), B: T.Buffer((3,), "float32")):
        for i in T.unroll(3):
            B[i] = A[i] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((3,), "float32"), B: T.Buffer((3,), "float32")):
        B[0] = A[0] + T.float32(1)
        B[1] = A[1] + T.float32(1)
        B[2] = A[2] + T.float32(1)

    after = UnrollLoop()(module(before))
    assert_structural_equal(after["main"], expected)
    assert_same_results(module(before), after)


def _add_one(kind: ForKind, extent: int = 3) -> tir.PrimFunc:
    A = tir.decl_buffer((extent,), "float32", "A")
    B = tir.decl_buffer((extent,), "float32", "B")
    i = tir.Var("i")
    return tir.PrimFunc((A, B), loop(i, extent, tir.BufferStore(B, A[i] + 1.0, (i,)), kind))


def test_unrolls_small_constant_loop():
    before = module(_add_one(ForKind.UNROLLED))
    func = before["main"]
    A, B = func.params
    expected = tir.PrimFunc(
        (A, B), tir.seq(*(tir.BufferStore(B, A[c] + 1.0, (tir.const(c),)) for c in range(3)))
    )
    after = UnrollLoop()(before)
    assert_structural_equal(after["main"], expected)
    assert_same_results(before, after)


def test_copies_get_fresh_inner_variables():
    A = tir.decl_buffer((2, 4), "float32", "A")
    T = tir.decl_buffer((4,), "float32", "T")
    i, j = tir.Var("i"), tir.Var("j")
    inner = Allocate(T, loop(j, 4, tir.seq(
        tir.BufferStore(T, A[i, j] * 2.0, (j,)), tir.BufferStore(A, T[j], (i, j)),
    )))  # fmt: skip
    before = module(tir.PrimFunc((A,), loop(i, 2, inner, ForKind.UNROLLED)))
    after = UnrollLoop()(before)
    first, second = after["main"].body.seq
    assert first.buffer is T and second.buffer is not T and second.buffer.data is not T.data
    assert first.body.loop_var is j and second.body.loop_var is not j
    assert_same_results(before, after)


def test_large_or_symbolic_unrolled_loop_becomes_serial():
    after = UnrollLoop(max_extent=2)(module(_add_one(ForKind.UNROLLED)))
    body = after["main"].body
    assert isinstance(body, For) and body.kind is ForKind.SERIAL


def test_nothing_to_do_returns_same_module():
    mod = module(_add_one(ForKind.SERIAL))
    assert UnrollLoop()(mod) is mod


def test_selects_the_copy_decides_keep_only_the_branch_taken():
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for o in T.serial(2):
            for i in T.unroll(4):
                B[o * 4 + i] = T.Select((o * 4 + i) % 4 == 1, A[0], T.Select(i == 2, A[1], A[o]))

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for o in T.serial(2):
            B[o * 4 + 0] = A[o]
            B[o * 4 + 1] = A[0]
            B[o * 4 + 2] = A[1]
            B[o * 4 + 3] = A[o]

    after = UnrollLoop()(module(before))
    assert_structural_equal(after["main"], expected)
    assert_same_results(module(before), after)
