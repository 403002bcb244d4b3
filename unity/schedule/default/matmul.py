"""Default rule for matmul, dense and batch matmul: register + cache tiling.

Claims a reduction block ``C[b.., i, j] += A[.., i, .., k] * B[.., k, .., j]`` (any order
of `k` and `j` in `B`, optional casts) with a single reduction axis `k`, `i` not in
`B` and `j` not in `A`.  With constant `i`/`j` extents that tile (see `_tiles`):

- `B` (2-D) is packed into ``[N / tj, K, tj]`` so that a `tj`-column panel is one
  contiguous stream (parallel copy, vectorized along the panel);
- `C` is tiled `ti x tj`; the tile accumulates in a `local` buffer that LLVM keeps in
  registers; loops ``(b.., io, j0) parallel / i0 / k0 / k1 / i1 unrolled / j1
  vectorized``: a panel of `B` stays in L2 while the row tiles `i0` of a row block
  `io` stream past it (one block unless A is large or the tasks few, see
  `_row_blocks`), with `K` blocked by 256 when it divides;
- an elementwise epilogue reading `C` (bias, activation) is inlined into the tile's
  write-back.

A symbolic row count (a sequence length) is tiled the same way: the split leaves a
guard on the last tile, which `HoistGuards` tests once per tile (one row block; the
panel loop moves above symbolic batch loops; with fewer than 8 panels the row tiles
run in parallel instead, the panels inside them, see `_few_panels`; over symbolic or
few panels, batches of constant inner extents, attention's heads, run in parallel,
see `parallel_tiles`).  So are columns
that no vector width divides (197, where `B` is not packed), the last tile moved back.
Otherwise (`B` with batch dims and `j` not contiguous, odd columns fewer than two
vectors) the simple schedule: ``(b.., i) parallel / k / j vectorized`` (a vector of
outputs accumulates along `k`, so the summation order per element is unchanged).

Before::

    for i, j, k in T.grid(1024, 1024, 1024):
        with T.block("C"): ...  C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

After ``schedule_matmul`` (abridged)::

    for io_j0_fused in T.parallel(128):  # 4 blocks of 256 rows x 32 panels
        for i0 in range(32):
            for i1_init in T.unroll(8): for j1_init in T.vectorized(32): C_local[...] = 0
            for k0, k1, i1 in T.grid(4, 256, 8): for j1 in T.vectorized(32): C_local += ...
            for ax0 in range(8): for ax1 in T.vectorized(32): C[...] = C_local[...]
"""

from __future__ import annotations

import math

from unity.ir import dtype as dt
from unity.schedule.default import reduction
from unity.schedule.default.analysis import (
    BlockInfo,
    RuleContext,
    const_extent,
    loads_of,
    strip_casts,
    work_size,
)
from unity.schedule.default.epilogue import inline_epilogue
from unity.schedule.default.injective import parallel_outer
from unity.schedule.default.prepack import PREPACK
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule
from unity.tir.arith.linear import to_linear
from unity.tir.expr import Add, BufferLoad, IntImm, IterType, Mul, PrimExpr, Var
from unity.tir.transform.inject_prefetch import LINE_BYTES, PREFETCH

__all__ = ["applies", "match", "parallel_tiles", "schedule_matmul", "seven_rows"]



def match(info: BlockInfo) -> tuple[BufferLoad, BufferLoad, Var, Var, Var] | None:
    """`(A load, B load, i, j, k)` iteration vars of a matmul-like block, else None.

    Example:
        >>> a, b, i, j, k = match(info)  # doctest: +SKIP
    """
    store = info.store
    if store is None or not info.is_reduction or not info.trivial_binding():
        return None
    reduce = [iv.var for iv in info.block.iter_vars if iv.iter_type is not IterType.SPATIAL]
    if len(reduce) != 1 or info.loop_kinds[-1] != "R" or "R" in info.loop_kinds[:-1]:
        return None
    value = store.value
    if not (isinstance(value, Add) and isinstance(value.a, BufferLoad)):
        return None
    acc, prod = value.a, strip_casts(value.b)
    if acc.buffer is not store.buffer or not isinstance(prod, Mul):
        return None
    lhs, rhs = strip_casts(prod.a), strip_casts(prod.b)
    if not (isinstance(lhs, BufferLoad) and isinstance(rhs, BufferLoad)):
        return None
    out = store.indices
    if len(out) < 2 or not all(isinstance(x, Var) for x in (*out, *lhs.indices, *rhs.indices)):
        return None
    if any(a is not b for a, b in zip(acc.indices, out)) or len(set(out)) != len(out):
        return None
    i, j, k = out[-2], out[-1], reduce[0]
    if j in lhs.indices and j not in rhs.indices:
        lhs, rhs = rhs, lhs
    a_vars, b_vars = set(lhs.indices), set(rhs.indices)
    if not (k in a_vars and k in b_vars and i in a_vars and j in b_vars):
        return None
    if j in a_vars or i in b_vars or len(loads_of(store.value)) != 3:
        return None
    return lhs, rhs, i, j, k


def applies(info: BlockInfo) -> bool:
    """True when `match` recognizes the block.

    Example:
        >>> applies(info)  # doctest: +SKIP
        True
    """
    return match(info) is not None


_FEW_ROWS = 8
"""Below this many rows (GEMV, a decoder step) each thread streams its own panels of `B`."""

_MANY_ROWS = 1 << 30
"""What a symbolic row count (a sequence length) is taken to be: tiled, its last tile
guarded (`HoistGuards` gives the full tiles a guard-free version)."""


def _pick(extent: int | None, choices: list[int]) -> int | None:
    if extent is None:
        return None
    return next((c for c in choices if c <= extent and extent % c == 0), None)


def _tiles(
    info: BlockInfo, i: Var, j: Var, k: Var, ctx: RuleContext
) -> tuple[int, int, int | None] | None:
    ext = {v: const_extent(info.loops[info.loop_of(v)]) for v in (i, j, k)}
    # symbolic columns (attention's Q K^T over a sequence): two vectors, a guarded last tile
    widths = [2 * ctx.lanes, ctx.lanes, ctx.lanes // 2]
    tj = widths[0] if ext[j] is None else _pick(ext[j], widths)
    if tj is None and ext[j] > widths[0]:
        # ViT's 197 x 197 attention scores: the last tile moved back (`HoistGuards`),
        # 0.27 -> 0.11 ms against `_simple`'s rows of vectors
        tj = widths[0]
    rows = ext[i] if ext[i] is not None else _MANY_ROWS  # symbolic: a guarded last tile
    ti = _row_tile(ext[i], ctx)
    factor = _constant_factor(info.loops[info.loop_of(i)].extent) if ext[i] is None else 1
    exact = _row_tile(factor, ctx) if factor > 1 else None
    if exact is not None and factor % exact == 0:
        ti = exact  # a tile dividing every count: Winograd's n * 49 rows, in 7-row tiles
    if ti is None and rows < _FEW_ROWS:
        ti = rows  # GEMV-like: every row in one tile
    if tj is None or ti is None:
        return None
    if tj == ctx.lanes // 2 and rows >= _FEW_ROWS and ext[i] is not None:
        ti = _pick(ext[i], [8, 4, 2]) or ti
    if rows >= _FEW_ROWS and _three_vectors(ext[i], ext[j], ctx):
        ti, tj = 4, 3 * ctx.lanes
    blocked = ext[k] is not None and ext[k] % 256 == 0 and ext[k] > 256 and rows >= _FEW_ROWS
    return ti, tj, 256 if blocked else None


def _constant_factor(extent: PrimExpr) -> int:
    """The constant that a symbolic extent is a multiple of by its form (``n * 49``: 49):
    the gcd of its linear form's coefficients and constant.

    Example:
        >>> n = Var("n", "int64")
        >>> _constant_factor(n * 49), _constant_factor(49 * (n * 2)), _constant_factor(n + 1)
        (49, 98, 1)
    """
    form = to_linear(extent)
    return math.gcd(form.const, *(coeff for _, coeff in form.terms.values()))


def _row_tile(m: int | None, ctx: RuleContext) -> int | None:
    """Rows of a register tile two vectors wide: 8 rows (16 accumulators) with 32 vector
    registers; with 16 (AVX2), 6 rows: 12 accumulators, two loads of B and a broadcast of
    A fill the register file, and 8 rows spill (1024^3 on Zen 3: 6x16 at 122 GFLOP/s,
    4x16 at 115, 8x16 at 58).  Constant row counts take a divisor (a guarded last tile of
    6 rows measured slower than 4-row tiles on 128 rows); symbolic ones (a sequence) a
    power of two, which divides the usual lengths: on Zen, 4 rows against 6 ran
    attention's Q K^T at seq 64-256 1.3-2x faster and P V 5-25% faster, the encoder's
    128-row projections level.  With 32 registers a guarded 8-row tile beats the smaller
    divisors (its full tiles run guard-free, see `HoistGuards`; 4 rows x 2 vectors leave
    the FMA units half fed): on Sapphire Rapids ConvNeXt's 196 x 1536 x 384 0.94 -> 0.60
    ms, 52 x 768 x 3072 0.95 -> 0.69, 50 x 768 x 768 0.36 -> 0.18 (2-row tiles); 6 rows
    where they divide (198 x 768 x 768 425 GFLOP/s against 398 guarded); 7 where they
    divide and a guarded 8-row tile would waste a tenth (`seven_rows`).

    Example:
        >>> _row_tile(1024, RuleContext(lanes=8)), _row_tile(None, RuleContext(lanes=8))
        (4, 4)
        >>> _row_tile(196, RuleContext(lanes=16)), _row_tile(198, RuleContext(lanes=16))
        (8, 6)
    """
    full = 8 if ctx.vector_registers >= 32 else 6
    if m is None:
        return 8 if full >= 8 else 4
    if full >= 8 and seven_rows(m):
        return 7
    tile = _pick(m, [8, 6] if full >= 8 else [6, 4, 3, 2])
    if tile is None and m >= _FEW_ROWS:  # 197 rows (ViT's tokens): a guarded last tile
        return 8 if full >= 8 else 4
    return tile


def seven_rows(m: int) -> bool:
    """Whether `m` constant rows take register tiles of 7 rows (2 vectors wide: 14
    accumulators) rather than 8 with a guarded last tile: where 7 divides `m` and the
    8-row tiles would compute a tenth more rows than there are.  On Sapphire Rapids, in
    chains of two matmuls: 49 x 768 x 3072 and back 2.49 -> 2.21 ms (8 guarded -> 7),
    196 x 384 x 1536 and back 1.86 -> 2.04 (2% waste: 8 stays).

    Example:
        >>> seven_rows(49), seven_rows(196), seven_rows(56)
        (True, False, False)
    """
    return m % 7 == 0 and -(-m // 8) * 8 > _SEVEN_ROWS_WASTE * m


_SEVEN_ROWS_WASTE = 1.1
"""Rows computed over rows needed above which `m` rows that 7 divides take 7-row tiles."""


def _three_vectors(m: int | None, n: int | None, ctx: RuleContext) -> bool:
    """True for a 4-row x 3-vector tile on 16 vector registers (AVX2): 12 accumulators, 3
    loads of B and 4 broadcasts of A per 12 FMAs (the 2-vector tiles: 8 FMAs per 6 loads
    at 4 rows, 12 per 8 at 6).  Needs the columns to be a multiple of 3 vectors and the
    rows of 4 (or symbolic, or of no small divisor: a guarded last tile).  On Zen 3, 4x24
    against the 2-vector tile: the encoder's 128x768x3072, 128x3072x768 and 128x768x768
    projections 6-9% faster in the model (23.0 -> 21.3 ms for all of them), 512x768x768
    and 1024x1024x1536 4-6%; against 6x16 where the rows allow it (96, 384 rows) level.

    Example:
        >>> avx2 = RuleContext(lanes=8)
        >>> _three_vectors(128, 3072, avx2), _three_vectors(128, 1024, avx2)
        (True, False)
    """
    if ctx.vector_registers >= 32 or n is None or n % (3 * ctx.lanes):
        return False
    return m is None or m % 4 == 0 or _pick(m, [6, 4, 3, 2]) is None


def schedule_matmul(sch: Schedule, info: BlockInfo, ctx: RuleContext) -> list[str]:
    """Tile the matmul block and its epilogue; return the names of epilogue blocks taken.

    Example:
        >>> schedule_matmul(sch, info, RuleContext())  # doctest: +SKIP
    """
    a_load, b_load, i, j, k = match(info)
    tiles = _tiles(info, i, j, k, ctx)
    b_contig = b_load.indices[-1] is j
    n = const_extent(info.loops[info.loop_of(j)])
    ragged = tiles is not None and n is not None and n % tiles[1] != 0  # unpackable
    if tiles is None or (not b_contig and (len(b_load.indices) != 2 or ragged)):
        return _untiled(sch, info, ctx, b_contig)
    ti, tj, kb = tiles
    m = const_extent(info.loops[info.loop_of(i)])
    symbolic_rows = m is None or m % ti != 0  # a guarded last tile either way
    batch_extents = [const_extent(loop) for loop in info.loops[: info.loop_of(i)]]
    rows_outer = symbolic_rows and _few_panels(m, n, (ti, tj), batch_extents, ctx)
    m = _MANY_ROWS if symbolic_rows else m
    few_rows = m < _FEW_ROWS
    symbolic_columns = n is None or ragged  # a guarded last tile either way
    pack = (
        len(b_load.indices) == 2
        and not symbolic_columns
        and (not b_contig or m >= 32 or few_rows)
    )
    c = sch.get_block(info.name)
    loops = sch.get_loops(c)
    packed = _pack(sch, c, info, b_load, j, tj) if pack else None
    acc = sch.cache_write(c, 0, "local")
    taken = inline_epilogue(sch, acc, info)
    batch = loops[: info.loop_of(i)]
    i0, i1 = sch.split(loops[info.loop_of(i)], [None, ti])
    j0, j1 = sch.split(loops[info.loop_of(j)], [None, tj])
    ks = sch.split(loops[info.loop_of(k)], [None, kb]) if kb else [loops[info.loop_of(k)]]
    # column panels outside row tiles: a packed panel of B stays in L2 while the rows
    # of A stream past it (rows outside: all of B streams from L3 for every row tile,
    # 1.5x slower on 128x768x3072 and 1024^3 on a 2-core Sapphire Rapids)
    blocks = 1 if symbolic_rows else _row_blocks(info, a_load, (i, j, k), (ti, tj), ctx)
    if blocks > 1:
        io, i0 = sch.split(i0, [blocks, None])
        sch.reorder(*batch, io, j0, i0, *ks, i1, j1)
    elif rows_outer:
        sch.reorder(*batch, i0, j0, *ks, i1, j1)
    else:
        sch.reorder(*batch, j0, i0, *ks, i1, j1)
    sch.reverse_compute_at(acc, j0 if rows_outer else i0)
    init = sch.decompose_reduction(c, ks[0])
    # row blocks x panels as one loop, above a symbolic batch like the panels alone
    outer = sch.fuse(io, j0) if blocks > 1 else i0 if rows_outer else j0
    parallel_tiles(sch, info, batch, outer, symbolic_rows, ctx.num_cores)
    sch.unroll(i1)
    sch.vectorize(j1)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.vectorize(sch.get_loops(acc)[-1])
    row_bytes = tj * dt.bits(b_load.buffer.dtype) // 8  # of a panel
    panels = packed or (b_load.buffer.name if _in_panels(b_load, k, j, tj) else None)
    if panels is not None and _prefetched(m, row_bytes, blocks, rows_outer):
        sch.annotate(ks[-1], PREFETCH, (panels, _PREFETCH_AHEAD))
    return taken


def _in_panels(b_load: BufferLoad, k: Var, j: Var, tj: int) -> bool:
    """Whether `B` is read as panels already: ``B[.., k, j]`` with rows of `tj` columns, so
    that each reduction step reads the next contiguous row of the tile's panel (Winograd's
    transformed weights, packed ahead of time).  They were left to the hardware
    prefetchers: after a 100 ms pause (Sapphire Rapids) GoogLeNet's Winograd matmuls took
    0.27-0.64 ms, 0.06-0.08 less with the prefetches; kernels static GoogLeNet 10.28 ->
    9.60 ms, ResNet-50 23.50 -> 22.94, SqueezeNet 3.10 -> 3.03, symbolic GoogLeNet 9.81
    -> 9.63.

    Example:
        >>> _in_panels(u[kk, g, p, c, o], c, o, 32)  # doctest: +SKIP
        True
    """
    *_, kk, jj = b_load.indices
    last = b_load.buffer.shape[-1]
    return jj is j and kk is k and isinstance(last, IntImm) and last.value == tj


def _prefetched(m: int, row_bytes: int, blocks: int, rows_outer: bool) -> bool:
    """Whether the tile loop prefetches its panel of packed weights (`_PREFETCH_AHEAD`):
    over symbolic (or ragged) rows or at most `_PREFETCH_ROWS`, in one row block, panel
    by panel, with rows of a panel (`row_bytes`) of a cache line at least (a GEMV's
    panels of 8 columns, 32 bytes a row: MobileNet v3's and ResNet-50's classifiers
    1-2% slower with them).

    Example:
        >>> _prefetched(_MANY_ROWS, 128, 1, False), _prefetched(1024, 128, 4, False)
        (True, False)
    """
    few = m >= _MANY_ROWS or m <= _PREFETCH_ROWS
    return few and blocks == 1 and not rows_outer and row_bytes >= LINE_BYTES


_PREFETCH_ROWS = 200
"""Constant rows up to which a panel's weights are prefetched (see `_PREFETCH_AHEAD`);
above, each panel serves many row tiles from L2 and the prefetches only cost (1024 x
1024 x 1024 and 768 x 1536 x 384, weights in L2: 8% and 17% slower with them)."""

_PREFETCH_AHEAD = 16
"""Reduction steps ahead that the tile loop prefetches a panel of packed weights
(`InjectPrefetch`; 2 KiB at 32 columns).  The first row tile of each panel streams it
from L3 (in a model the weights of the other layers evict it), past the 4 KiB pages the
hardware prefetchers stop at.  Four 100 x 1536 x 384 matmuls of distinct weights over a
symbolic sequence (Sapphire Rapids): at 100 / 200 / 400 / 800 rows 1.246 / 2.349 /
4.670 / 10.56 ms without, 1.192 / 2.184 / 4.367 / 10.00 with; 8 to 32 steps ahead
alike."""


def _few_panels(
    m: int | None, n: int | None, tile: tuple[int, int], batch: list[int | None], ctx: RuleContext
) -> bool:
    """Whether a matmul of `m` rows (None: symbolic) that end in a guarded tile and `n`
    columns, over batch loops of extents `batch`, runs its row tiles in parallel, the
    panels inside them: when the constant columns make fewer panels than
    `_TASKS_PER_CORE` per core, and the rows (taken to be many when symbolic) twice as
    many tiles.  Each row tile of `A` is then read once, and `B` (fewer than 8 panels)
    stays in L2.  Not over constant batches with symbolic rows: the batches and panels
    fuse (a fused loop of symbolic extent would keep the tile out of registers, see
    `parallel_tiles`).  On Sapphire Rapids over symbolic rows, panels / row tiles:
    ConvNeXt's 3136 x 384 -> 96 (3 panels on 2 threads) 0.92 / 0.59 ms, 3136 x 96 -> 192
    0.39 / 0.31, 784 x 768 -> 192 0.64 / 0.59; 49 x 3072 -> 128 (7 row tiles) 0.13 / 0.16.

    Example:
        >>> ctx = RuleContext(num_cores=2)
        >>> _few_panels(None, 96, (8, 32), [None], ctx)  # 3 panels
        True
        >>> _few_panels(None, 384, (8, 32), [None], ctx)  # 12 panels
        False
    """
    ti, tj = tile
    tasks = _TASKS_PER_CORE * ctx.num_cores
    if n is None or n // tj >= tasks or (m is not None and m < 2 * tasks * ti):
        return False
    constant_batches = bool(batch) and all(e is not None for e in batch)
    return not (constant_batches and m is None)


_A_BLOCK_BYTES = 1 << 20
"""Rows of A one task sweeps past a panel of B: at most this many bytes (about an L2).
The size barely matters once the panel order is right (1024^3, 512x768x3072,
2048x256x1024, 4096x512x512: 256 KiB to unbounded blocks within 3% of each other)."""

_TASKS_PER_CORE = 4
"""Parallel tasks per core at least (row blocks are cut smaller to make them)."""


def _row_blocks(
    info: BlockInfo,
    a_load: BufferLoad,
    ijk: tuple[Var, Var, Var],
    tile: tuple[int, int],
    ctx: RuleContext,
) -> int:
    """How many blocks the (constant) rows split into, each a multiple of the tile's
    rows: as few as keep a block of A within `_A_BLOCK_BYTES` and make
    `_TASKS_PER_CORE` tasks per core (row blocks x panels x batches).

    Example:
        >>> _row_blocks(info, a_load, (i, j, k), (8, 32), RuleContext())  # doctest: +SKIP
        16
    """
    (i, j, k), (ti, tj) = ijk, tile
    m, n, depth = (const_extent(info.loops[info.loop_of(v)]) for v in (i, j, k))
    row_bytes = (depth or 1) * max(1, dt.bits(a_load.buffer.dtype) // 8)
    outer = 1
    for loop in info.loops[: info.loop_of(i)]:
        outer *= const_extent(loop) or 1
    tiles = m // ti
    tasks = _TASKS_PER_CORE * ctx.num_cores
    panels = tasks if n is None else n // tj  # symbolic columns: taken to be many
    for blocks in (b for b in range(1, tiles + 1) if tiles % b == 0):
        if (m // blocks) * row_bytes <= _A_BLOCK_BYTES and outer * blocks * panels >= tasks:
            return blocks
    return tiles


def parallel_tiles(
    sch: Schedule, info: BlockInfo, batch: list, outer, symbolic_rows: bool, num_cores: int
) -> None:
    """Make the batch loops and the outer tile loop `outer` (directly inside them) one
    parallel loop.  With a symbolic batch or row count, `outer` alone moves above the
    batch loops instead: a fused loop's `//` and `%` would keep `CompactBufferAllocation`
    from proving the tiles disjoint, and the tile would not stay in registers.  Except
    when `outer` is symbolic or has fewer than `_TASKS_PER_CORE` panels over batches of
    constant inner extents (attention's heads, Winograd's 16 points) that make two
    tasks per core (see `_over_heads`): then the batch loops alone run in parallel
    (fused with `outer` when both are constant), `outer` inside each task.

    Example:
        >>> parallel_tiles(sch, info, batch, i0, symbolic_rows=False, num_cores=2)  # doctest: +SKIP
    """
    extents = [const_extent(info.loops[n]) for n in range(len(batch))]
    panels = const_extent(sch.get(outer))
    few_panels = panels is None or panels < _TASKS_PER_CORE
    if batch and None not in extents and panels is not None:
        if symbolic_rows and not few_panels:
            sch.reorder(outer, *batch)
            sch.parallel(outer)
        else:
            parallel_outer(sch, [*batch, outer])
    elif few_panels and _over_heads(extents, num_cores):
        sch.parallel(sch.fuse(*batch) if len(batch) > 1 else batch[0])
    elif batch:
        sch.reorder(outer, *batch)
        sch.parallel(outer)
    else:
        parallel_outer(sch, [outer])


def _over_heads(extents: list[int | None], num_cores: int) -> bool:
    """Whether batch loops of `extents` (None: symbolic) run in parallel over a symbolic
    or few-panel tile loop: when all but the first are constant (their fused index
    decodes with constant divisors, which `CompactBufferAllocation` sees through) and
    they make at least two tasks per core.  Attention's scores ``(n, 6, s, 64) x (n, 6,
    64, s)`` at s = 128 / 384 on 2 cores, over the panels / over the heads: 0.064 /
    0.033 ms, 0.63 / 0.38 (the static build's panels and heads fused: 0.034, 0.41).

    Example:
        >>> _over_heads([None, 6], 2), _over_heads([None, 2], 2), _over_heads([6, None], 2)
        (True, False, False)
    """
    if not extents or None in extents[1:]:
        return False
    tasks = (extents[0] or 1) * math.prod(extents[1:])
    return tasks >= 2 * num_cores


def _pack(sch: Schedule, c, info: BlockInfo, b_load: BufferLoad, j: Var, tj: int) -> str:
    """Pack `B` into panels of `tj` columns; return the packed buffer's name."""
    index = [r.buffer for r in info.block.reads].index(b_load.buffer)
    packed = sch.cache_read(c, index, "global")
    if b_load.indices[-1] is j:  # B[k, j]
        sch.transform_layout(packed, ("write", 0), lambda kk, jj: (jj // tj, kk, jj % tj))
        sch.annotate(packed, PREPACK, f"kn:{tj}")
        pk, pj = sch.get_loops(packed)
    else:  # B[j, k] (dense weight)
        sch.transform_layout(packed, ("write", 0), lambda jj, kk: (jj // tj, kk, jj % tj))
        sch.annotate(packed, PREPACK, f"nk:{tj}")
        pj, pk = sch.get_loops(packed)
    pj0, pj1 = sch.split(pj, [None, tj])
    sch.reorder(pj0, pk, pj1)
    sch.parallel(pj0)
    sch.vectorize(pj1)
    return sch.get(packed).writes[0].buffer.name


def _untiled(sch: Schedule, info: BlockInfo, ctx: RuleContext, b_contig: bool) -> list[str]:
    """No register tile: `k` in the vector (rows of a dense/GEMV), or `j` (`_simple`)."""
    factor = reduction.row_vector_factor(info, ctx)
    if not b_contig and factor is not None:
        c = sch.get_block(info.name)
        loops = sch.get_loops(c)
        reduction.vector_rows(sch, info, ctx, loops[:-1], loops[-1], factor)
        return []
    return _simple(sch, info, ctx)


def _simple(sch: Schedule, info: BlockInfo, ctx: RuleContext) -> list[str]:
    """``(b.., i) parallel / k / j vectorized``, valid for any sizes."""
    c = sch.get_block(info.name)
    loops = sch.get_loops(c)
    *outer, j_loop, k_loop = loops
    if info.loop_of(match(info)[3]) != len(loops) - 2:
        raise ScheduleError(
            "default matmul", "the output's last axis is not the inner spatial loop"
        )
    sch.reorder(k_loop, j_loop)
    init = sch.decompose_reduction(c, k_loop)
    sch.vectorize(j_loop)
    sch.vectorize(sch.get_loops(init)[-1])
    work = work_size(info)
    if outer and (work is None or work >= ctx.parallel_min_work):
        parallel_outer(sch, outer)
    return []
