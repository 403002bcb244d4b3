"""The tensor-core matmul rule: float16 GEMMs on `wmma` 16 x 16 x 16 fragments.

For `C[b, i, j] += A[b, i, k] * B[b, k, j]` with float16 operands and a float16 or
float32 accumulator (the same ``(b.., i, j, k)`` loop form as
`matmul.schedule_matmul_tiled`), each thread block computes a `bm x bn` tile of C with
`wm x wn` warps (`threadIdx.z`, `threadIdx.y`; `threadIdx.x` is the 32 lanes); each warp
holds `fm x fn` accumulator fragments of 16 x 16 (`wmma.accumulator`) over k.  Per
`bk`-wide slice of k the whole block copies the A and B tiles into shared memory, then
each warp loads its 16-row strips of A and 16-column strips of B into operand fragments
and multiplies every pair; at the end each warp stores its fragments straight into C::

    for by, bx in blockIdx.y, blockIdx.x:
        C_frag[fm, fn] = 0                       # per warp (tz, ty)
        for ko:
            A_shared, B_shared <- A, B tiles     # all 256 threads
            for ki:                              # bk / 16
                A_frag[f] <- A_shared strip f    # wmma_load, per warp
                B_frag[g] <- B_shared strip g
                C_frag[f, g] += A_frag[f] @ B_frag[g]
        C tiles <- C_frag                        # wmma_store; with an epilogue, per
                                                 # fragment: into the warp's shared
                                                 # tile, then C <- epilogue(tile)

The rows of the shared tiles are padded by 16 bytes (`storage_align`), so that the 8
rows a fragment load reads at once fall in different banks.  The fragment blocks are
tensorized with the intrinsics of `wmma_intrin`.  Sizes that do not divide into the
tiles, and symbolic ones (a sequence length), are zero-padded (`pad_einsum`: the
padding computed in the copies to shared memory, the unpadding copy staged like an
epilogue).  An operand read transposed
(``B[n, k]``) is transposed by its copy into shared memory.

Example:
    >>> schedule_matmul_wmma(sch, "C")  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.schedule.analysis import as_int
from unity.schedule.default.analysis import loads_of
from unity.schedule.default_gpu import wmma_intrin as intrin
from unity.schedule.default_gpu.matmul import (
    ENOUGH_BLOCKS, _pad, _swap_last_two, batch_count, tile_count,
)  # fmt: skip
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule
from unity.tir.expr import Cast
from unity.tir.functor import post_order_visit
from unity.tir.transform.gpu.wmma import TILE

P = "matmul_wmma"


@dataclass(frozen=True)
class WmmaTile:
    """A thread block's shape: `warps` (rows, columns) of warps, each holding `frags`
    (rows, columns) of 16 x 16 accumulators; `bk` the k-slice per shared-memory tile.

    Example:
        >>> WmmaTile((2, 4), (4, 2)).block
        (128, 128)
    """

    warps: tuple[int, int]
    frags: tuple[int, int]
    bk: int = 32

    @property
    def block(self) -> tuple[int, int]:
        """The block tile's rows and columns of C.

        Example:
            >>> WmmaTile((2, 2), (2, 2)).block
            (64, 64)
        """
        return (self.warps[0] * self.frags[0] * TILE, self.warps[1] * self.frags[1] * TILE)


TILES = (WmmaTile((2, 4), (4, 2)), WmmaTile((2, 2), (2, 2)), WmmaTile((2, 2), (1, 1)))
"""Block shapes, largest first: 128 x 128 (8 warps of 64 x 32), 64 x 64, 32 x 32 (square,
so that `matmul.tile_count` counts them)."""


def pick_wmma_tile(batch: int | None, m: int | None, n: int | None, k: int | None) -> WmmaTile:
    """The largest of `TILES` that divides the GEMM and makes `ENOUGH_BLOCKS` thread blocks,
    else the smallest that divides it; when none divides it (the GEMM will be padded),
    the largest that makes enough blocks, else the smallest.  k goes by 32, or by 16
    when 32 does not divide it.  A symbolic size (None: a sequence length, padded at run
    time) takes the middle, 64 x 64 tile.

    Example:
        >>> pick_wmma_tile(1, 4096, 4096, 4096).block, pick_wmma_tile(1, 512, 512, 64).block
        ((128, 128), (32, 32))
        >>> pick_wmma_tile(1, 100, 64, 40)
        WmmaTile(warps=(2, 2), frags=(1, 1), bk=16)
    """
    if batch is None or m is None or n is None:
        t = TILES[1]
    else:
        fits = [t for t in TILES if m % t.block[0] == 0 and n % t.block[1] == 0]
        enough = [t for t in fits or TILES if tile_count(batch, m, n, t.block[0]) >= ENOUGH_BLOCKS]
        t = enough[0] if enough else (fits or TILES)[-1]
    return t if k is None or k % t.bk == 0 else WmmaTile(t.warps, t.frags, TILE)


def wmma_operands(sch: Schedule, block_name: str) -> tuple[str, list[tuple[int, bool]], bool] | None:
    """The accumulator dtype; for A (indexed by m and k) and B (k and n), the read index
    of each and whether it is read transposed; and whether the block multiplies them in
    the order ``B * A`` (a conv: the pixels' factor first).  None when the block is not
    a float16 GEMM ``C += A * B``.

    Example:
        >>> wmma_operands(sch, "C")  # doctest: +SKIP
        ('float32', [(0, False), (1, True)], False)
    """
    blk = sch.get(sch.get_block(block_name))
    store = blk.body
    acc = store.buffer.dtype
    if acc not in intrin.ACCUMULATORS or len(blk.iter_vars) < 3:
        return None
    m, n, k = (iv.var for iv in blk.iter_vars[-3:])
    factors = [ld for ld in loads_of(store.value) if ld.buffer is not store.buffer]
    if len(factors) != 2 or any(f.buffer.dtype != "float16" or len(f.indices) < 2 for f in factors):
        return None
    if acc == "float32" and not all(_cast_of(store.value, f) for f in factors):
        return None
    reads = [r.buffer for r in blk.reads]
    for order in (factors, factors[::-1]):  # ``A * B``, else ``B * A``
        out = []
        for load, (row, col) in zip(order, ((m, k), (k, n))):
            last = tuple(load.indices[-2:])
            if last not in ((row, col), (col, row)):
                break
            out.append((reads.index(load.buffer), last == (col, row)))
        else:
            return acc, out, order is not factors
    return None


def _copy_vector(sch: Schedule, copy, threads: int) -> int:
    """Elements per thread and step of a tile copy: 8 (16 bytes of float16) or fewer,
    dividing the tile's rows (a vector stays in one row) and the tile by the threads."""
    rows, cols = (as_int(sch.get(loop).extent) for loop in sch.get_loops(copy)[-2:])
    for vec in (8, 4, 2):
        if cols % vec == 0 and (rows * cols) % (threads * vec) == 0:  # type: ignore[operator]
            return vec
    return 1


def _warp_stores(sch: Schedule, c, bx, tile: WmmaTile, epilogue: str | None):
    """The accumulator (`wmma.accumulator`), stored by each warp a fragment at a time;
    with an `epilogue` block, into the warp's `shared.warp` tile, which its lanes then
    compute the epilogue from.  Returns the store block."""
    (wm, wn) = tile.warps
    store = sch.cache_write(c, 0, "wmma.accumulator")
    sch.reverse_compute_at(store, bx)
    rows, cols = sch.get_loops(store)[-2:]
    sz, sf, si = sch.split(rows, [wm, None, TILE])
    sy, sg, sj = sch.split(cols, [wn, None, TILE])
    sch.reorder(sz, sy, sf, sg, si, sj)
    sch.bind(sz, "threadIdx.z")
    sch.bind(sy, "threadIdx.y")
    if epilogue is not None:
        sch.set_scope(store, 0, "shared.warp")
        copy = sch.get_block(epilogue)
        sch.reverse_compute_at(copy, sg)
        erows, ecols = sch.get_loops(copy)[-2:]
        _, lanes = sch.split(sch.fuse(erows, ecols), [None, 32])
        sch.bind(lanes, "threadIdx.x")
    return store


def _operand_tiles(sch: Schedule, frag, transposed: bool, pad: str | None, at: tuple, tile: WmmaTile) -> None:
    """An operand's path: a tile copied by the whole block into shared memory at `ko`
    (16 bytes per thread, padded rows; transposed there if read so; the zero padding
    `pad` inlined into it), then each warp's 16 x 16 fragments loaded from it at `kf`."""
    ko, kf = at
    (wm, wn) = tile.warps
    rank = len(sch.get(frag).writes[0].buffer.shape)
    if transposed:
        sch.transform_layout(frag, ("write", 0), _swap_last_two(rank))
    sch.compute_at(frag, kf)
    shared = sch.cache_read(frag, 0, "shared")
    if pad is not None:
        sch.compute_inline(sch.get_block(pad))
    if transposed:
        sch.transform_layout(shared, ("write", 0), _swap_last_two(rank))
    sch.compute_at(shared, ko)
    sch.storage_align(shared, 0, rank - 2, 16, 8)  # rows 16 bytes past a 32-byte multiple
    srows, scols = sch.get_loops(shared)[-2:]
    vec = 1 if transposed else _copy_vector(sch, shared, wm * wn * 32)
    _, tz, ty, tx, lanes = sch.split(sch.fuse(srows, scols), [None, wm, wn, 32, vec])
    sch.bind(tz, "threadIdx.z")
    sch.bind(ty, "threadIdx.y")
    sch.bind(tx, "threadIdx.x")
    if vec > 1:
        sch.vectorize(lanes)
    frows, fcols = sch.get_loops(frag)[-2:]
    if transposed:  # its loops still walk the source's order
        frows, fcols = fcols, frows
    r0, r1 = sch.split(frows, [None, TILE])
    c0, c1 = sch.split(fcols, [None, TILE])
    sch.reorder(r0, c0, r1, c1)


def _cast_of(value, load) -> bool:
    """`load` appears cast (to the float32 accumulator) in `value`."""
    found: list[Cast] = []
    post_order_visit(value, lambda n: found.append(n) if isinstance(n, Cast) and n.value is load else None)
    return bool(found)


def schedule_matmul_wmma(sch: Schedule, block_name: str, tile: WmmaTile | None = None,
                         tensorize: bool = True, epilogue: str | None = None) -> None:
    """Schedule GEMM block `block_name` on the tensor cores (see the module docstring);
    `tile` defaults to `pick_wmma_tile`'s.  With `tensorize=False` the fragment blocks
    stay loop nests over 16 x 16 tiles (the same computation, which the interpreter and
    an `llvm` build can run with the thread bindings as loops).  `epilogue` names the
    block that reads the GEMM's output (an output copy with bias, residual, activation
    inlined): each warp then stores a fragment at a time into its own 16 x 16 tile of
    shared memory (`shared.warp`) and its 32 lanes compute the epilogue from there.

    Raises:
        ScheduleError: the block is not a float16 GEMM, or a primitive refused.

    Example:
        >>> schedule_matmul_wmma(sch, "C", WmmaTile((2, 2), (2, 2)))  # doctest: +SKIP
    """
    c = sch.get_block(block_name)
    found = wmma_operands(sch, block_name)
    if found is None:
        raise ScheduleError(P, f"block {block_name} is not a float16 GEMM C += A * B")
    acc, operands, swapped = found
    loops = sch.get_loops(c)
    if len(loops) < 3:
        raise ScheduleError(P, f"block {block_name} must sit under 3 or more loops")
    extents = [as_int(sch.get(loop).extent) for loop in loops]
    *batch_sizes, m, n, k = extents
    tile = tile or pick_wmma_tile(batch_count(batch_sizes), m, n, k)
    padding = [1] * len(batch_sizes) + [*tile.block, tile.bk]
    pads: dict[int, str] = {}
    if any(p > 1 and (e is None or e % p) for e, p in zip(extents, padding)):  # to whole tiles
        output = sch.get(c).writes[0].buffer
        pads = _pad(sch, c, padding)
        if sch.get(c).writes[0].buffer is not output:  # m or n padded: an unpadding copy
            unpad = sch.get(sch.get_consumers(c)[0]).name_hint
            if epilogue is not None:  # which computes the epilogue too
                sch.reverse_compute_inline(sch.get_block(epilogue))
            epilogue = unpad
        loops = sch.get_loops(c)
        acc, operands, swapped = wmma_operands(sch, block_name) or (acc, operands, swapped)
    (wm, wn), (fm, fn) = tile.warps, tile.frags
    *batch, i, j, kl = loops
    by, wi, fi, ii = sch.split(i, [None, wm, fm, TILE])
    bx, wj, fj, jj = sch.split(j, [None, wn, fn, TILE])
    ko, kf, kk = sch.split(kl, [None, tile.bk // TILE, TILE])
    sch.reorder(*batch, by, bx, ko, wi, wj, kf, fi, fj, ii, jj, kk)
    if batch:
        sch.bind(sch.fuse(*batch) if len(batch) > 1 else batch[0], "blockIdx.z")
    for loop, axis in ((by, "blockIdx.y"), (bx, "blockIdx.x"), (wi, "threadIdx.z"), (wj, "threadIdx.y")):
        sch.bind(loop, axis)
    store = _warp_stores(sch, c, bx, tile, epilogue)
    init = sch.decompose_reduction(c, ko)
    iz, iy = sch.get_loops(init)[-6:-4]
    sch.bind(iz, "threadIdx.z")
    sch.bind(iy, "threadIdx.y")
    reads = [r.buffer for r in sch.get(c).reads]
    for (index, transposed), operand in zip(operands, ("a", "b")):
        frag = sch.cache_read(c, [r.buffer for r in sch.get(c).reads].index(reads[index]),
                              f"wmma.matrix_{operand}")
        _operand_tiles(sch, frag, transposed, pads.get(index), (ko, kf), tile)
        if tensorize:
            sch.tensorize(sch.get_loops(frag)[-2], intrin.load_intrin(operand))
    if not tensorize:
        return
    sch.tensorize(sch.get_loops(init)[-2], intrin.fill_intrin(acc))
    sch.tensorize(sch.get_loops(c)[-3], intrin.mma_intrin(acc, swapped))
    sch.tensorize(sch.get_loops(store)[-2], intrin.store_intrin(acc))
