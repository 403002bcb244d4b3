import numpy as np

import unity
from unity.ir.structural import assert_structural_equal
from unity.script import tir as T
from unity.tir.transform import InjectPrefetch

from ._workloads import assert_same_results, module


def test_docstring_example():
    """The annotated loop prefetches the packed row 16 steps ahead, one call per 64-byte
    line of the 32 floats its inner loops read; the annotation goes; results unchanged
    (the interpreter skips the hints)."""

    @T.prim_func
    def before(A: T.Buffer((16, 384), "float32"), B_packed: T.Buffer((2, 384, 32), "float32"),
               C: T.Buffer((16, 64), "float32")):
        for j0, i0 in T.grid(2, 2):
            for k in T.serial(384, annotations={"software_prefetch": ("B_packed", 16)}):
                for i1 in T.unroll(8):
                    for j1 in T.vectorized(32):
                        C[i0 * 8 + i1, j0 * 32 + j1] = C[i0 * 8 + i1, j0 * 32 + j1] + A[i0 * 8 + i1, k] * B_packed[j0, k, j1]

    @T.prim_func
    def expected(A: T.Buffer((16, 384), "float32"), B_packed: T.Buffer((2, 384, 32), "float32"),
                 C: T.Buffer((16, 64), "float32")):
        for j0, i0 in T.grid(2, 2):
            for k in T.serial(384):
                T.evaluate(T.call_intrin("int32", "tir.prefetch", B_packed[j0, k + 16, 0]))
                T.evaluate(T.call_intrin("int32", "tir.prefetch", B_packed[j0, k + 16, 16]))
                for i1 in T.unroll(8):
                    for j1 in T.vectorized(32):
                        C[i0 * 8 + i1, j0 * 32 + j1] = C[i0 * 8 + i1, j0 * 32 + j1] + A[i0 * 8 + i1, k] * B_packed[j0, k, j1]

    after = InjectPrefetch()(module(before))
    assert_structural_equal(after["main"], expected)
    assert_same_results(module(before), after)


def test_a_loop_not_reading_the_buffer_only_loses_the_annotation():
    @T.prim_func
    def before(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
        for k in T.serial(64, annotations={"software_prefetch": ("B_packed", 16)}):
            C[k] = A[k] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
        for k in T.serial(64):
            C[k] = A[k] * T.float32(2)

    assert_structural_equal(InjectPrefetch()(module(before))["main"], expected)


def test_prefetches_build_to_llvm_prefetch_and_run_past_the_buffer_end():
    """Built, a prefetch is `llvm.prefetch`; the last iterations' addresses lie past the
    buffer (a prefetch does not fault) and the results are the plain loop's."""

    @T.prim_func
    def func(A: T.Buffer((64, 32), "float32"), C: T.Buffer((32,), "float32")):
        for k in T.serial(64, annotations={"software_prefetch": ("A", 16)}):
            for j in T.vectorized(32):
                C[j] = C[j] + A[k, j]

    lib = unity.build(func)
    assert "@llvm.prefetch.p0(" in lib.get_source("ll")
    a = np.random.default_rng(0).standard_normal((64, 32)).astype("float32")
    c = np.zeros(32, "float32")
    lib["main"](a, c)
    np.testing.assert_allclose(c, a.sum(axis=0), rtol=1e-5, atol=1e-5)
