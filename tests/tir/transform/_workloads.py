"""Hand-built TensorIR functions shared by the lowering-pass tests."""

from __future__ import annotations

import numpy as np

from unity import tir
from unity.ir.module import IRModule
from unity.tir import Block, BlockRealize, BufferRegion, For, ForKind, IterType, IterVar, Range


def loop(
    var: tir.Var, extent: int | tir.PrimExpr, body: tir.Stmt, kind: ForKind = ForKind.SERIAL
) -> For:
    """`for var in range(extent)` with an int32 zero minimum."""
    return For(var, tir.const(0, var.dtype), tir.const(extent, var.dtype), kind, body)


def realize(
    values: list[tir.PrimExpr], block: Block, predicate: tir.PrimExpr | None = None
) -> BlockRealize:
    """Bind `block`'s iter vars to `values`."""
    pred = predicate if predicate is not None else tir.const(True)
    return BlockRealize(tuple(values), pred, block)


def collect(node: object, cls: type | tuple[type, ...]) -> list[object]:
    """Every node of class `cls` under `node`."""
    found: list[object] = []
    keep = lambda n: found.append(n) if isinstance(n, cls) else None  # noqa: E731
    tir.post_order_visit(node, keep)  # type: ignore[arg-type]  # a Node
    return found


def iv(var: tir.Var, extent: int, kind: IterType = IterType.SPATIAL) -> IterVar:
    """An iter var over `[0, extent)`."""
    return IterVar(var, Range.from_min_extent(0, extent), kind)


def root(body: tir.Stmt, allocs: tuple[tir.Buffer, ...] = ()) -> BlockRealize:
    """The root block around `body`."""
    return realize([], Block((), (), (), "root", body, alloc_buffers=allocs))


def matmul(n: int = 8, m: int = 6, k: int = 4) -> tir.PrimFunc:
    """C[i, j] = sum_k A[i, k] * B[k, j] as one block with init."""
    A = tir.decl_buffer((n, k), "float32", "A")
    B = tir.decl_buffer((k, m), "float32", "B")
    C = tir.decl_buffer((n, m), "float32", "C")
    i, j, kk = tir.Var("i"), tir.Var("j"), tir.Var("k")
    vi, vj, vk = tir.Var("vi"), tir.Var("vj"), tir.Var("vk")
    block = Block(
        (iv(vi, n), iv(vj, m), iv(vk, k, IterType.REDUCE)),
        (BufferRegion.from_point(A, (vi, vk)), BufferRegion.from_point(B, (vk, vj))),
        (BufferRegion.from_point(C, (vi, vj)),),
        "C",
        tir.BufferStore(C, C[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj)),
        init=tir.BufferStore(C, tir.const(0.0), (vi, vj)),
    )
    body = loop(i, n, loop(j, m, loop(kk, k, realize([i, j, kk], block))))
    return tir.PrimFunc((A, B, C), root(body))


def softmax_rows(n: int = 4, m: int = 16) -> tir.PrimFunc:
    """Row softmax with an intermediate max buffer and sum buffer (root-block allocs)."""
    A = tir.decl_buffer((n, m), "float32", "A")
    B = tir.decl_buffer((n, m), "float32", "B")
    mx = tir.decl_buffer((n,), "float32", "mx")
    sm = tir.decl_buffer((n,), "float32", "sm")
    i, j = tir.Var("i"), tir.Var("j")

    def reduce_block(name: str, out: tir.Buffer, init: float, update) -> tir.Stmt:  # noqa: ANN001
        vi, vj = tir.Var("vi"), tir.Var("vj")
        block = Block(
            (iv(vi, n), iv(vj, m, IterType.REDUCE)), (), (), name,
            tir.BufferStore(out, update(out[vi], vi, vj), (vi,)),
            init=tir.BufferStore(out, tir.const(init), (vi,)),
        )  # fmt: skip
        ii, jj = tir.Var("i"), tir.Var("j")
        return loop(ii, n, loop(jj, m, realize([ii, jj], block)))

    s1 = reduce_block("max", mx, -3.0e38, lambda acc, vi, vj: tir.max(acc, A[vi, vj]))
    s2 = reduce_block("sum", sm, 0.0, lambda acc, vi, vj: acc + tir.exp(A[vi, vj] - mx[vi]))
    vi, vj = tir.Var("vi"), tir.Var("vj")
    norm = Block(
        (iv(vi, n), iv(vj, m)), (), (), "norm",
        tir.BufferStore(B, tir.exp(A[vi, vj] - mx[vi]) / sm[vi], (vi, vj)),
    )  # fmt: skip
    s3 = loop(i, n, loop(j, m, realize([i, j], norm)))
    return tir.PrimFunc((A, B), root(tir.seq(s1, s2, s3), (mx, sm)))


def module(func: tir.PrimFunc) -> IRModule:
    """`func` as the "main" of a module."""
    return IRModule({"main": func})


def random_args(func: tir.PrimFunc, seed: int = 0) -> list[np.ndarray]:
    """Random float inputs (and zeroed outputs) shaped like `func`'s buffer params."""
    rng = np.random.default_rng(seed)
    out = []
    for buf in func.buffer_params():
        shape = tuple(int(d.value) for d in buf.shape)  # type: ignore[attr-defined]
        out.append(rng.standard_normal(shape).astype(buf.dtype))
    return out


def assert_same_results(before: IRModule, after: IRModule, seed: int = 0) -> None:
    """Run both modules' "main" in the reference interpreter on the same random inputs."""
    import pytest

    interpret = getattr(tir, "interpret", None)
    if interpret is None:
        pytest.skip("the reference interpreter (unity.tir.interpret) is not there yet")
    func = before["main"]
    args_before = random_args(func, seed)  # type: ignore[arg-type]
    args_after = [a.copy() for a in args_before]
    interpret(before, *args_before)
    interpret(after, *args_after)
    for x, y in zip(args_before, args_after):
        np.testing.assert_allclose(y, x, rtol=1e-5, atol=1e-6)
