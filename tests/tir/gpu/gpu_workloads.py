"""Scheduled GPU kernels shared by the GPU tests: each a `(Schedule, inputs, reference)` maker.

The schedules are the usual hand-written CUDA ones: a shared-memory tiled matmul, a
row-per-block softmax and layer norm with cross-thread reductions, a direct conv2d
with one output pixel per thread, and a fused elementwise kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from unity import te, topi
from unity.schedule import Schedule
from unity.schedule.default_gpu.matmul import schedule_matmul_tiled
from unity.schedule.default_gpu.tensor_core import WmmaTile, schedule_matmul_wmma


@dataclass
class Workload:
    """A scheduled kernel, its arguments (outputs zeroed) and the expected outputs."""

    name: str
    sch: Schedule
    args: list[np.ndarray]
    expected: dict[int, np.ndarray]
    """Expected value of each output argument, by position."""
    rtol: float = 1e-5
    atol: float = 1e-5
    plain: Schedule | None = None
    """The same schedule before tensorization, for the interpreter and `llvm` builds
    (which do not run tensor-core calls); None when `sch` has none."""

    def fresh_args(self) -> list[np.ndarray]:
        return [a.copy() for a in self.args]

    def check(self, args: list[np.ndarray]) -> None:
        for k, want in self.expected.items():
            np.testing.assert_allclose(args[k], want, rtol=self.rtol, atol=self.atol)


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def matmul(m: int = 64, n: int = 64, k: int = 64, tile: int = 16) -> Workload:
    """C = A @ B with 16x16 thread blocks, A/B tiles staged in shared memory per k step."""
    A = te.placeholder((m, k), name="A")
    B = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    sch = Schedule(te.create_prim_func([A, B, C]))
    c = sch.get_block("C")
    i, j, kk = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, tile])
    j0, j1 = sch.split(j, [None, tile])
    k0, k1 = sch.split(kk, [None, tile])
    sch.reorder(i0, j0, k0, i1, j1, k1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    local = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(local, j0)
    ty, tx = sch.get_loops(local)[-2:]
    sch.bind(ty, "threadIdx.y")
    sch.bind(tx, "threadIdx.x")
    for index in (0, 1):
        shared = sch.cache_read(c, index, "shared")
        sch.compute_at(shared, k0)
        fused = sch.fuse(*sch.get_loops(shared)[-2:])
        _, fy, fx = sch.split(fused, [None, tile, tile])
        sch.bind(fy, "threadIdx.y")
        sch.bind(fx, "threadIdx.x")
    a = _rng().standard_normal((m, k), dtype=np.float32)
    b = _rng().standard_normal((k, n), dtype=np.float32)
    return Workload("matmul", sch, [a, b, np.zeros((m, n), np.float32)], {2: a @ b}, 1e-4, 1e-4)


def matmul_register_tiled(m: int = 64, n: int = 64, k: int = 32) -> Workload:
    """C = A @ B by `schedule_matmul_tiled`: 32x32 block tiles, 4x4 register tiles per thread."""
    A = te.placeholder((m, k), name="A")
    B = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    sch = Schedule(te.create_prim_func([A, B, C]))
    schedule_matmul_tiled(sch, "C", threads=8, tm=4, bk=8)
    a = _rng().standard_normal((m, k), dtype=np.float32)
    b = _rng().standard_normal((k, n), dtype=np.float32)
    return Workload("matmul_register_tiled", sch, [a, b, np.zeros((m, n), np.float32)], {2: a @ b},
                    1e-4, 1e-4)


def _row_reductions(sch: Schedule, out_block: str, producers: list[str], threads: int) -> None:
    """One block per row: each reduction split over `threads` threads (cross-thread), each
    per-row scalar (mean, variance) computed by thread 0, each per-row vector (softmax's
    exponentials) by all threads, all kept in shared memory."""
    out = sch.get_block(out_block)
    row, col = sch.get_loops(out)[:2]
    sch.bind(row, "blockIdx.x")
    _, tx = sch.split(col, [None, threads])
    sch.bind(tx, "threadIdx.x")
    for name in reversed(producers):
        sch.compute_at(sch.get_block(name), row, preserve_unit_loops=True)
    for name in producers:
        block = sch.get_block(name)
        last = sch.get_loops(block)[-1]
        if _reduction_blocks_named(sch, name):
            k0, k1 = sch.split(last, [None, threads])
            sch.reorder(k1, k0)
            sch.bind(k1, "threadIdx.x")
        elif sch.get(last).extent.value > 1:  # a row of values, split over the threads
            sch.bind(sch.split(last, [None, threads])[1], "threadIdx.x")
        else:
            sch.bind(last, "threadIdx.x")  # a unit loop: thread 0 computes the row's scalar
        sch.set_scope(block, 0, "shared")


def softmax(rows: int = 4, cols: int = 256, threads: int = 64) -> Workload:
    """Row softmax: max and exp-sum as cross-thread reductions (2 warps), then normalize."""
    x = te.placeholder((rows, cols), name="x")
    y = topi.nn.softmax(x)
    sch = Schedule(te.create_prim_func([x, y]))
    producers = ["T_softmax_max", "T_softmax_exp", "T_softmax_expsum"]
    _row_reductions(sch, "T_softmax", producers, threads)
    xv = _rng().standard_normal((rows, cols), dtype=np.float32)
    e = np.exp(xv - xv.max(1, keepdims=True))
    return Workload("softmax", sch, [xv, np.zeros_like(xv)], {1: e / e.sum(1, keepdims=True)}, 1e-5, 1e-6)


def layer_norm(rows: int = 4, cols: int = 128, threads: int = 32) -> Workload:
    """Layer norm over the last axis: mean and variance as cross-thread reductions (1 warp)."""
    x = te.placeholder((rows, cols), name="x")
    g = te.placeholder((cols,), name="gamma")
    b = te.placeholder((cols,), name="beta")
    y = topi.nn.layer_norm(x, g, b, axes=[1])
    func = te.create_prim_func([x, g, b, y])
    sch = Schedule(func)
    names = _block_names(sch)
    _row_reductions(sch, names[-1], names[:-1], threads)
    rng = _rng()
    xv = rng.standard_normal((rows, cols), dtype=np.float32)
    gv = rng.standard_normal(cols, dtype=np.float32)
    bv = rng.standard_normal(cols, dtype=np.float32)
    mean = xv.mean(1, keepdims=True)
    ref = (xv - mean) / np.sqrt(xv.var(1, keepdims=True) + 1e-5) * gv + bv
    return Workload("layer_norm", sch, [xv, gv, bv, np.zeros_like(xv)], {3: ref}, 1e-4, 1e-4)


def _block_names(sch: Schedule) -> list[str]:
    from unity.tir.functor import post_order_visit
    from unity.tir.stmt import Block

    names: list[str] = []
    post_order_visit(sch.mod["main"].body,
                     lambda n: names.append(n.name_hint) if isinstance(n, Block) else None)
    return [n for n in names if n != "root"]


def _reduction_blocks(sch: Schedule) -> list:
    from unity.tir.functor import post_order_visit
    from unity.tir.stmt import BlockRealize

    found: list = []
    post_order_visit(sch.mod["main"].body,
                     lambda n: found.append(n) if isinstance(n, BlockRealize)
                     and n.block.init is not None else None)
    return found


def conv2d(n: int = 1, c: int = 4, h: int = 10, w: int = 10, f: int = 8, k: int = 3) -> Workload:
    """NCHW conv2d (pad 1), padding inlined; one block per (n, f), threads over (y, x)."""
    from unity.topi.testing import conv2d_nchw_python

    X = te.placeholder((n, c, h, w), name="X")
    W = te.placeholder((f, c, k, k), name="W")
    Y = topi.nn.conv2d(X, W, strides=1, padding=1)
    sch = Schedule(te.create_prim_func([X, W, Y]))
    for name in _block_names(sch):
        block = sch.get_block(name)
        if not _reduction_blocks_named(sch, name):
            sch.compute_inline(block)
    conv = sch.get_block(_block_names(sch)[0])
    nn, ff, yy, xx = sch.get_loops(conv)[:4]
    sch.bind(sch.fuse(nn, ff), "blockIdx.x")
    sch.bind(yy, "threadIdx.y")
    sch.bind(xx, "threadIdx.x")
    rng = _rng()
    xv = rng.standard_normal((n, c, h, w), dtype=np.float32)
    wv = rng.standard_normal((f, c, k, k), dtype=np.float32)
    ref = conv2d_nchw_python(xv, wv, 1, 1)
    out = np.zeros(ref.shape, np.float32)
    return Workload("conv2d", sch, [xv, wv, out], {2: ref}, 1e-4, 1e-4)


def _reduction_blocks_named(sch: Schedule, name: str) -> bool:
    return any(r.block.name_hint == name for r in _reduction_blocks(sch))


def fused_elementwise(n: int = 1000, threads: int = 128) -> Workload:
    """relu(a * b + c) in one kernel: the producers inlined, a guard for the ragged tail."""
    a = te.placeholder((n,), name="a")
    b = te.placeholder((n,), name="b")
    cc = te.placeholder((n,), name="c")
    t = te.compute((n,), lambda i: a[i] * b[i] + cc[i], name="t")
    y = te.compute((n,), lambda i: te.max(t[i], te.const(0.0, "float32")), name="y")
    sch = Schedule(te.create_prim_func([a, b, cc, y]))
    sch.compute_inline(sch.get_block("t"))
    (i,) = sch.get_loops(sch.get_block("y"))
    bx, tx = sch.split(i, [None, threads])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    rng = _rng()
    av, bv, cv = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
    return Workload("fused_elementwise", sch, [av, bv, cv, np.zeros(n, np.float32)],
                    {3: np.maximum(av * bv + cv, 0)})


def two_kernels(n=128) -> Schedule:
    """``c = (a + 1) * 3`` as two blocks, each its own kernel of 32-thread blocks (`n` may
    be a `tir.SizeVar`)."""
    a = te.placeholder((n,), name="a")
    b = te.compute((n,), lambda i: a[i] + 1.0, name="b")
    c = te.compute((n,), lambda i: b[i] * 3.0, name="c")
    sch = Schedule(te.create_prim_func([a, c]))
    for name in ("b", "c"):
        (i,) = sch.get_loops(sch.get_block(name))
        bx, tx = sch.split(i, [None, 32])
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")
    return sch


def matmul_wmma(m: int = 128, n: int = 128, k: int = 64, acc: str = "float16",
                transposed: bool = False, tile: WmmaTile | None = None) -> Workload:
    """C = A @ B (B stored ``(n, k)`` when `transposed`) in float16 on the tensor cores
    (`schedule_matmul_wmma`), accumulated in `acc`."""
    A = te.placeholder((m, k), "float16", name="A")
    B = te.placeholder((n, k) if transposed else (k, n), "float16", name="B")
    r = te.reduce_axis((0, k), name="k")

    def b_at(j):
        return B[j, r] if transposed else B[r, j]

    if acc == "float16":
        C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * b_at(j), axis=r), name="C")
    else:
        C = te.compute((m, n), lambda i, j: te.sum(A[i, r].astype(acc) * b_at(j).astype(acc), axis=r),
                       name="C")
    func = te.create_prim_func([A, B, C])
    sch, plain = Schedule(func), Schedule(func)
    schedule_matmul_wmma(sch, "C", tile)
    schedule_matmul_wmma(plain, "C", tile, tensorize=False)
    rng = _rng()
    a = rng.standard_normal((m, k)).astype("float16")
    b = rng.standard_normal((n, k) if transposed else (k, n)).astype("float16")
    want = a.astype("float32") @ (b.T if transposed else b).astype("float32")
    tol = 5e-2 if acc == "float16" else 1e-4  # float16 sums round at every step
    return Workload(f"matmul_wmma_{acc}", sch, [a, b, np.zeros((m, n), acc)], {2: want.astype(acc)},
                    tol, tol * 4, plain)


def matmul_wmma_f32_transposed() -> Workload:
    """64 x 64 x 64, a float32 accumulator, B stored ``(n, k)``, 2 x 2 warps of 2 x 2 fragments."""
    return matmul_wmma(64, 64, 64, "float32", True, WmmaTile((2, 2), (1, 1)))


ALL: dict[str, Callable[[], Workload]] = {
    "matmul": matmul, "matmul_register_tiled": matmul_register_tiled, "softmax": softmax, "layer_norm": layer_norm, "conv2d": conv2d,
    "fused_elementwise": fused_elementwise, "matmul_wmma": matmul_wmma,
    "matmul_wmma_f32_transposed": matmul_wmma_f32_transposed,
}
"""Every workload, by name."""
