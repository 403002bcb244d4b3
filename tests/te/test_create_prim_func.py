"""`te.create_prim_func` builds the same PrimFunc one would write by hand in script."""

from __future__ import annotations

import numpy as np
import pytest

from unity import te, tir
from unity.ir.structural import assert_structural_equal

T = pytest.importorskip("unity.script.tir")
script = pytest.importorskip("unity.script")


def _matmul_te() -> tir.PrimFunc:
    A = te.placeholder((16, 16), name="A")
    B = te.placeholder((16, 16), name="B")
    k = te.reduce_axis((0, 16), name="k")
    C = te.compute((16, 16), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def test_matmul_equals_the_hand_written_script() -> None:
    @T.prim_func
    def matmul(
        A: T.Buffer((16, 16), "float32"),
        B: T.Buffer((16, 16), "float32"),
        C: T.Buffer((16, 16), "float32"),
    ):
        T.func_attr({"tir.noalias": True})
        for i, j, k in T.grid(16, 16, 16):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    assert_structural_equal(_matmul_te(), matmul)


def test_padding_with_temporary_equals_the_hand_written_script() -> None:
    X = te.placeholder((2, 6), name="X")
    P = te.compute(
        (2, 8),
        lambda i, j: te.if_then_else((j >= 1) & (j < 7), X[i, j - 1], 0.0),
        name="pad",
    )
    Y = te.compute((2, 6), lambda i, j: P[i, j] + P[i, j + 2], name="Y")
    func = te.create_prim_func([X, Y])

    @T.prim_func
    def expected(X: T.Buffer((2, 6), "float32"), Y: T.Buffer((2, 6), "float32")):
        T.func_attr({"tir.noalias": True})
        pad = T.alloc_buffer((2, 8), "float32")
        for i, j in T.grid(2, 8):
            with T.block("pad"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(X[vi, vj - 1])
                T.writes(pad[vi, vj])
                pad[vi, vj] = T.if_then_else(
                    vj >= 1 and vj < 7, X[vi, vj - 1], T.float32(0)
                )
        for i, j in T.grid(2, 6):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(pad[vi, vj : vj + 3])
                T.writes(Y[vi, vj])
                Y[vi, vj] = pad[vi, vj] + pad[vi, vj + 2]

    assert_structural_equal(func, expected)
    x, y = np.arange(12, dtype="float32").reshape(2, 6), np.zeros((2, 6), "float32")
    tir.interpret(func, x, y)
    padded = np.pad(x, ((0, 0), (1, 1)))
    np.testing.assert_array_equal(y, padded[:, :6] + padded[:, 2:])


def test_te_functions_round_trip_through_the_script() -> None:
    n = te.var("n")
    A = te.placeholder((n, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    S = te.compute((n,), lambda i: te.max(A[i, k], axis=k), name="S")
    for func in (_matmul_te(), te.create_prim_func([A, S])):
        assert_structural_equal(script.from_source(func.script()), func)


def test_computes_of_the_same_name_get_distinct_block_names() -> None:
    # topi names every add "T_add": a schedule must still reach each block by name
    from unity import topi
    from unity.schedule import Schedule

    x = te.placeholder((4, 8), "float32", name="x")
    b = te.placeholder((4, 8), "float32", name="b")
    taken = te.compute((4, 8), lambda i, j: x[i, j] + b[i, j], name="T_add_1")  # kept as is
    y = topi.add(topi.add(topi.add(taken, x), x), x)
    func = te.create_prim_func([x, b, y])
    blocks = [s.block.name_hint for s in _blocks(func)]
    assert blocks == ["T_add_1", "T_add", "T_add_2", "T_add_3"]
    sch = Schedule(func)
    assert [sch.get(sch.get_block(n)).name_hint for n in blocks] == blocks
    xv, bv = np.ones((4, 8), "float32"), np.full((4, 8), 2.0, "float32")
    out = np.zeros((4, 8), "float32")
    tir.interpret(func, xv, bv, out)
    np.testing.assert_allclose(out, 6.0)


def _blocks(func: tir.PrimFunc) -> list[tir.BlockRealize]:
    from unity.schedule.tree import walk

    realizes = [s for s in walk(func.body) if isinstance(s, tir.BlockRealize)]
    return [s for s in realizes if s.block.name_hint != "root"]
