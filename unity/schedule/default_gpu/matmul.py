"""The GPU matmul rule: shared-memory tiles and a register tile per thread.

For `C[b, i, j] += A[b, i, k] * B[b, k, j]` (a block under loops ``(b.., i, j, k)``:
batch loops, the two GEMM sides and the reduction; `gemm.prepare_gemm` brings a
conv2d or a dense layer to that form), each thread block computes a `(threads * tm)^2`
tile of C (the batch loops fused onto `blockIdx.z`) with `threads x threads` threads;
each thread accumulates a `tm x tm` register tile (a `local` buffer) over k, reading A
and B from `shared` tiles that all threads of the block fill cooperatively once per
`bk`-wide slice of k.  Constant sizes that do not
divide into tiles are padded (`pad_einsum`): the shared tiles are zero-filled past the
edges, so the FMA loop has no guard, and only the write-back is guarded; symbolic sizes
(a sequence length) keep guards in the copies, the update and the write-back.

    for by, bx in blockIdx.y, blockIdx.x:
        C_local[...] = 0                       # per thread, tm x tm
        for ko:
            A_shared, B_shared <- A, B tiles   # cooperative, threadIdx.y/x
            for ki, (ty, tx), ii, jj:          # tm x tm FMAs per ki
                C_local[ii, jj] += A_shared[ty * tm + ii, ki] * B_shared[ki, tx * tm + jj]
        C[...] = C_local[...]

Example:
    >>> schedule_matmul_tiled(sch, "C")  # doctest: +SKIP
"""

from __future__ import annotations

import inspect

from unity.schedule.analysis import as_int
from unity.schedule.default.analysis import loads_of
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule


def _n_then_k(blk) -> set[int]:
    """The reads of GEMM block `blk` indexed ``[.., n, k]``: the operand whose rows the
    threads along `threadIdx.x` take.  Kept so in shared memory, the 16 threads of a
    half-warp would read addresses `tm * 8` floats apart at each `k` (8-way bank
    conflicts); stored ``[.., k, n]`` they read `tm` apart."""
    n, k = blk.iter_vars[-2].var, blk.iter_vars[-1].var
    found = set()
    for index, region in enumerate(blk.reads[:2]):
        loads = [ld for ld in loads_of(blk.body.value) if ld.buffer is region.buffer]
        if loads and len(loads[0].indices) >= 2 and loads[0].indices[-2] is n and loads[0].indices[-1] is k:
            found.add(index)
    return found


def _swap_last_two(rank: int):
    """``lambda *i: (*i[:-2], i[-1], i[-2])`` with `rank` named parameters."""
    def index_map(*dims):
        return (*dims[:-2], dims[-1], dims[-2])

    index_map.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(f"d{n}", inspect.Parameter.POSITIONAL_ONLY) for n in range(rank)])
    return index_map


def _pad(sch: Schedule, c, padding: list[int]) -> dict[int, str]:
    """`pad_einsum` the block to whole tiles; its zero-padding copies by read index."""
    before = {r.buffer for r in sch.get(c).reads}
    sch.pad_einsum(c, padding)
    copies = {sch.get(p).writes[0].buffer: sch.get(p).name_hint for p in sch.get_producers(c)}
    return {n: copies[r.buffer] for n, r in enumerate(sch.get(c).reads)
            if r.buffer not in before and r.buffer in copies}


ENOUGH_BLOCKS = 256
"""Thread blocks that keep a large GPU busy (two per SM on a 132-SM H100/H200)."""


def pick_register_tile(batch: int | None, m: int | None, n: int | None, threads: int = 16) -> int:
    """Each thread's `tm x tm` tile: the largest of 8, 4 whose `(threads * tm)^2` block
    tiles still make `ENOUGH_BLOCKS` thread blocks, else 2 (a batch-1 conv late in a
    network has a few hundred pixels: 64 x 64 tiles would leave most SMs idle).  4 when
    a size is symbolic.

    Example:
        >>> pick_register_tile(1, 4096, 4096), pick_register_tile(1, 1024, 3136), pick_register_tile(1, 512, 49)
        (8, 4, 2)
    """
    if batch is None or m is None or n is None:
        return 4
    for tm in (8, 4):
        if tile_count(batch, m, n, threads * tm) >= ENOUGH_BLOCKS:
            return tm
    return 2


def batch_count(sizes: list[int | None]) -> int | None:
    """The product of the batch loops' extents (None when one is symbolic).

    Example:
        >>> batch_count([2, 3]), batch_count([]), batch_count([2, None])
        (6, 1, None)
    """
    count: int | None = 1
    for size in sizes:
        count = None if size is None or count is None else count * size
    return count


def tile_count(batch: int, m: int, n: int, side: int) -> int:
    """Thread blocks of `side x side` output tiles over a `batch` of `m x n` outputs.

    Example:
        >>> tile_count(1, 512, 49, 32)
        32
    """
    return batch * -(-m // side) * -(-n // side)


def schedule_matmul_tiled(sch: Schedule, block_name: str, threads: int = 16, tm: int | None = None,
                          bk: int = 8, rows_fastest: frozenset[str] = frozenset()) -> None:
    """Tile matmul block `block_name` (see the module docstring for the loop nest), each
    thread a `tm x tm` register tile (`pick_register_tile` when None).

    The threads copying an operand's tile into shared memory walk its `k` dimension
    fastest, or its rows for the operands named in `rows_fastest` (an im2col tile, whose
    source is contiguous along the pixels), so that neighbouring threads read
    neighbouring addresses.

    Raises:
        ScheduleError: the block's loops do not split into the tiles.

    Example:
        >>> schedule_matmul_tiled(sch, "C", threads=16, tm=4, bk=8)  # doctest: +SKIP
    """
    c = sch.get_block(block_name)
    loops = sch.get_loops(c)
    if len(loops) < 3:
        raise ScheduleError("matmul_tiled", f"block {block_name} must sit under 3 or more loops")
    fast = [sch.get(c).reads[index].buffer.name in rows_fastest for index in (0, 1)]
    transpose = _n_then_k(sch.get(c))
    extents = [as_int(sch.get(loop).extent) for loop in loops]
    if tm is None:
        *batch_sizes, m, n, _ = extents
        tm = pick_register_tile(batch_count(batch_sizes), m, n, threads)
    padding = [1] * (len(loops) - 3) + [threads * tm, threads * tm, bk]
    pads: dict[int, str] = {}
    if None not in extents and any(e % p for e, p in zip(extents, padding)):  # type: ignore[operator]
        pads = _pad(sch, c, padding)
        loops = sch.get_loops(c)
    operands = [r.buffer for r in sch.get(c).reads]  # A and B (a reduction's own output is not listed)
    *batch, i, j, k = loops
    by, ty, ii = sch.split(i, [None, threads, tm])
    bx, tx, jj = sch.split(j, [None, threads, tm])
    ko, ki = sch.split(k, [None, bk])
    sch.reorder(*batch, by, bx, ko, ki, ty, tx, ii, jj)
    if batch:
        sch.bind(sch.fuse(*batch) if len(batch) > 1 else batch[0], "blockIdx.z")
    for loop, axis in ((by, "blockIdx.y"), (bx, "blockIdx.x"), (ty, "threadIdx.y"), (tx, "threadIdx.x")):
        sch.bind(loop, axis)
    if pads:  # the padded accumulator lives in registers; its unpadding copy writes back
        local = sch.get_consumers(c)[0]
        sch.set_scope(c, 0, "local")
    else:
        local = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(local, bx)
    rows, cols = sch.get_loops(local)[-2:]
    wy, wi = sch.split(rows, [threads, tm])
    wx, wj = sch.split(cols, [threads, tm])
    sch.reorder(wy, wx, wi, wj)
    sch.bind(wy, "threadIdx.y")
    sch.bind(wx, "threadIdx.x")
    init = sch.decompose_reduction(c, ko)
    iy, ix = sch.get_loops(init)[-4:-2]
    sch.bind(iy, "threadIdx.y")
    sch.bind(ix, "threadIdx.x")
    for index, operand in enumerate(operands):  # (rewriting a block recomputes its reads)
        shared = sch.cache_read(c, [r.buffer for r in sch.get(c).reads].index(operand), "shared")
        if index in transpose:  # read along threadIdx.x: store it k-major, see above
            rank = len(sch.get(shared).writes[0].buffer.shape)
            sch.transform_layout(shared, ("write", 0), _swap_last_two(rank))
        sch.compute_at(shared, ko)
        if index in pads:
            sch.compute_inline(sch.get_block(pads[index]))
        rows, cols = sch.get_loops(shared)[-2:]
        if fast[index]:
            sch.reorder(cols, rows)
            rows, cols = cols, rows
        fused = sch.fuse(rows, cols)
        _, fy, fx = sch.split(fused, [None, threads, threads])
        sch.bind(fy, "threadIdx.y")
        sch.bind(fx, "threadIdx.x")
