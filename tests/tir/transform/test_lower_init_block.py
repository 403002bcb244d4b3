from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.script import tir as T
from unity.tir import Block, IfThenElse, IterType
from unity.tir.transform import LowerInitBlock

from ._workloads import assert_same_results, iv, loop, matmul, module, realize, root


def test_docstring_example():
    @T.prim_func
    def before(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 8):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 8):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                if vk == 0:
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]

    after = LowerInitBlock()(module(before))
    assert_structural_equal(after["main"], expected)
    assert_same_results(module(before), after)


def _reduce_block(with_init: bool) -> tir.PrimFunc:
    A = tir.decl_buffer((4, 8), "float32", "A")
    C = tir.decl_buffer((4,), "float32", "C")
    i, k, vi, vk = tir.Var("i"), tir.Var("k"), tir.Var("vi"), tir.Var("vk")
    init = tir.BufferStore(C, tir.const(0.0), (vi,))
    update = tir.BufferStore(C, C[vi] + A[vi, vk], (vi,))
    ivs = (iv(vi, 4), iv(vk, 8, IterType.REDUCE))
    if with_init:
        block = Block(ivs, (), (), "C", update, init=init)
    else:
        body = tir.seq(IfThenElse(tir.eq(vk, 0), init), update)
        block = Block(ivs, (), (), "C", body)
    return tir.PrimFunc((A, C), root(loop(i, 4, loop(k, 8, realize([i, k], block)))))


def test_lowers_init_to_if_on_reduce_var_at_min():
    before = module(_reduce_block(with_init=True))
    after = LowerInitBlock()(before)
    assert_structural_equal(after["main"], _reduce_block(with_init=False))
    assert_same_results(before, after)


def test_nothing_to_do_returns_same_module():
    mod = module(_reduce_block(with_init=False))
    assert LowerInitBlock()(mod) is mod


def test_matmul_keeps_results():
    before = module(matmul())
    assert_same_results(before, LowerInitBlock()(before))
