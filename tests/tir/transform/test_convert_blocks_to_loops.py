import pytest

from unity import tir
from unity.ir.diagnostics import DiagnosticError
from unity.ir.structural import assert_structural_equal
from unity.script import tir as T
from unity.tir import Allocate, Block, BufferRegion, IfThenElse, MatchBufferRegion, Range
from unity.tir.transform import ConvertBlocksToLoops, LowerInitBlock

from ._workloads import (
    assert_same_results, collect, iv, loop, matmul, module, realize, root, softmax_rows,
)  # fmt: skip


def test_docstring_example():
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.serial(10):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                T.where(i < 8)
                B[vi] = A[vi] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.serial(10):
            if i < 8:
                B[i] = A[i] * T.float32(2)

    after = ConvertBlocksToLoops()(module(before))
    assert_structural_equal(after["main"], expected)
    assert_same_results(module(before), after)


def test_substitutes_iter_vars_and_turns_predicate_into_if():
    A = tir.decl_buffer((8,), "float32", "A")
    B = tir.decl_buffer((8,), "float32", "B")
    i, vi = tir.Var("i"), tir.Var("vi")
    block = Block((iv(vi, 8),), (), (), "B", tir.BufferStore(B, A[vi] * 2.0, (vi,)))
    before = tir.PrimFunc((A, B), root(loop(i, 10, realize([i], block, i < 8))))
    expected = tir.PrimFunc(
        (A, B), loop(i, 10, IfThenElse(i < 8, tir.BufferStore(B, A[i] * 2.0, (i,))))
    )
    after = ConvertBlocksToLoops()(module(before))
    assert_structural_equal(after["main"], expected)


def test_alloc_buffers_become_allocate_around_the_root_body():
    after = ConvertBlocksToLoops()(module(softmax_rows()))
    body = after["main"].body
    assert isinstance(body, Allocate) and isinstance(body.body, Allocate)
    assert [body.buffer.name, body.body.buffer.name] == ["mx", "sm"]
    assert not _has_blocks(body)


def test_init_is_lowered_when_still_present():
    before = module(matmul())
    direct = ConvertBlocksToLoops()(before)
    staged = ConvertBlocksToLoops()(LowerInitBlock()(before))
    assert_structural_equal(direct, staged)
    assert_same_results(before, direct)


def test_softmax_keeps_results():
    before = module(softmax_rows())
    assert_same_results(before, ConvertBlocksToLoops()(before))


def test_match_buffer_view_reads_the_source_with_offsets():
    A = tir.decl_buffer((4, 8), "float32", "A")
    B = tir.decl_buffer((4, 8), "float32", "B")
    view = tir.decl_buffer((8,), "float32", "row")
    i, j, vi = tir.Var("i"), tir.Var("j"), tir.Var("vi")
    region = BufferRegion(A, (Range.from_min_extent(vi, 1), Range.from_min_extent(0, 8)))
    inner = loop(j, 8, tir.BufferStore(B, view[j] + 1.0, (vi, j)))
    match = (MatchBufferRegion(view, region),)
    block = Block((iv(vi, 4),), (), (), "rows", inner, match_buffers=match)
    before = tir.PrimFunc((A, B), root(loop(i, 4, realize([i], block))))
    after = ConvertBlocksToLoops()(module(before))
    store = tir.BufferStore(B, A[i, j] + 1.0, (i, j))
    expected = tir.PrimFunc((A, B), loop(i, 4, loop(j, 8, store)))
    assert_structural_equal(after["main"], expected)


def test_wrong_number_of_bindings_is_reported():
    A = tir.decl_buffer((8,), "float32", "A")
    vi = tir.Var("vi")
    block = Block((iv(vi, 8),), (), (), "B", tir.BufferStore(A, tir.const(0.0), (vi,)))
    bad = tir.PrimFunc((A,), realize([], block))
    with pytest.raises(DiagnosticError, match="block 'B' has 1 iter vars but is bound to 0"):
        ConvertBlocksToLoops()(module(bad))


def test_nothing_to_do_returns_same_module():
    A = tir.decl_buffer((8,), "float32", "A")
    i = tir.Var("i")
    mod = module(tir.PrimFunc((A,), loop(i, 8, tir.BufferStore(A, tir.const(1.0), (i,)))))
    assert ConvertBlocksToLoops()(mod) is mod


def _has_blocks(stmt: tir.Stmt) -> bool:
    return bool(collect(stmt, (Block, tir.BlockRealize)))
