"""GEMM-shaped blocks on the GPU: matmul, batch matmul, dense and conv2d (implicit GEMM).

A reduction block ``C[..] += A[..] * B[..]`` whose iteration variables split into
roles -- batch (in both operands and the output), M (in `A` and the output only), N (in
`B` and the output only) and K (the reduction, in both operands) -- is a GEMM over the
fused roles.  `prepare_gemm` makes it one literally:

1. `transform_block_layout` fuses each role into one variable, ``(b, m, n, k)``: an NCHW
   conv2d's ``(n, oc, oh, ow, ic, kh, kw)`` becomes ``m = oc``, ``n = (n, oh, ow)`` (N is
   the side of the output's contiguous dimension), ``k = (ic, kh, kw)``;
2. `reindex` stages every operand not already accessed at a plain point through a
   buffer in those variables: the conv's input patch ``X[.., k // 9, n // 56 + k % 9 // 3,
   ..]`` becomes ``X_reindex[n, k]`` (the im2col matrix, never materialized: the tiled
   rule inlines the copy again into the shared-memory tile that reads it).

A grouped conv's output channel is split into group (a batch piece) and member (an M
piece); a GEMM with too few output tiles for its K first has its reduction split into
parts (`split_k`).  Then `matmul.schedule_matmul_tiled` tiles ``(b, m, n, k)`` and
`finish_gemm` inlines the reindex copies into the shared tiles and the output's copy
into the write-back.  An elementwise epilogue (bias, residual, ReLU) inlined into the
output's copy first (`apply.py`) is computed in the write-back, from registers.

Example:
    >>> roles = gemm_roles(info)             # doctest: +SKIP
    >>> staged = prepare_gemm(sch, info, roles)  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

from unity.schedule.analysis import as_int, used_vars
from unity.schedule.default.analysis import BlockInfo, block_infos, loads_of, multiply_accumulate
from unity.schedule.default_gpu.matmul import ENOUGH_BLOCKS, tile_count
from unity.schedule.error import ScheduleError
from unity.schedule.schedule import Schedule
from unity.tir.expr import (
    BufferLoad, FloatImm, FloorDiv, IntImm, IterType, PrimExpr, Select, Var,
)  # fmt: skip
from unity.tir.functor import ExprMutator, post_order_visit

MIN_SIDE = 16
"""Below this many rows or columns a GEMM is left to the reduction rule (GEMV, one image
row of a tiny conv): a 64 x 64 tile would be mostly idle threads."""


@dataclass(frozen=True)
class Piece:
    """An iteration variable, or one half of it split by `factor` (``part`` "group":
    ``var // factor``, "member": ``var % factor``), as it enters a GEMM role.

    Example:
        >>> from unity.tir.expr import Var
        >>> o = Var("o")
        >>> Piece(o, 28, "group").expr(o).script(), Piece(o, 28, "group").extent(112)
        ('o // 28', 4)
    """

    var: Var
    factor: int = 1
    part: str = "whole"

    def expr(self, value: PrimExpr) -> PrimExpr:
        """This piece of `value` (the variable's value).

        Example:
            >>> from unity.tir.expr import Var
            >>> Piece(Var("o"), 28, "member").expr(Var("x")).script()
            'x % 28'
        """
        if self.part == "whole":
            return value
        return value // self.factor if self.part == "group" else value % self.factor

    def extent(self, whole: int | None) -> int | None:
        """This piece's extent, from the variable's.

        Example:
            >>> from unity.tir.expr import Var
            >>> Piece(Var("o"), 28, "member").extent(112), Piece(Var("o")).extent(112)
            (28, 112)
        """
        if self.part == "whole" or whole is None:
            return whole
        return whole // self.factor if self.part == "group" else self.factor


@dataclass
class GemmRoles:
    """The iteration variables of a GEMM block by role, each in the block's order.

    Attributes:
        a: The load with the M variables; b: the one with the N variables.
        batch, m, n, k: Non-unit iteration variables by role (`Piece`s: a grouped conv's
            output channel is split, its group a batch piece, its member an M piece).
        symbolic: True when some extent is symbolic (a batch or sequence length); then
            N and K must be one variable each and the M variables but the last are
            tiled like batch variables (over the grid), since fusing needs constant
            extents.

    Example:
        >>> roles = gemm_roles(info)  # doctest: +SKIP
        >>> roles.m, roles.n, roles.k  # doctest: +SKIP
        ([v_i1], [v_i2, v_i3], [v_rc, v_ry, v_rx])
    """

    a: BufferLoad
    b: BufferLoad
    batch: list[Piece] = field(default_factory=list)
    m: list[Piece] = field(default_factory=list)
    n: list[Piece] = field(default_factory=list)
    k: list[Piece] = field(default_factory=list)
    symbolic: bool = False

    def groups(self) -> list[list[Piece]]:
        """The non-empty roles in ``(batch, m, n, k)`` order.

        Example:
            >>> from unity.tir.expr import Var
            >>> roles = GemmRoles(None, None, m=[Piece(Var("i"))], k=[Piece(Var("k"))])
            >>> [[p.var.name for p in g] for g in roles.groups()]
            [['i'], ['k']]
        """
        return [g for g in (self.batch, self.m, self.n, self.k) if g]


def gemm_roles(info: BlockInfo, min_side: int = MIN_SIDE) -> GemmRoles | None:
    """The roles of a GEMM-shaped block, or None when it is not one (or too thin).

    N is the side that indexes the output's last (contiguous) dimension: the threads
    along `threadIdx.x` then write consecutive addresses (for an NCHW conv, M is the
    output channel and N the pixels).

    Example:
        >>> from unity import te
        >>> from unity.schedule.default.analysis import block_infos
        >>> A = te.placeholder((64, 32), name="A")
        >>> W = te.placeholder((48, 32), name="W")
        >>> k = te.reduce_axis((0, 32), name="k")
        >>> C = te.compute((64, 48), lambda i, j: te.sum(A[i, k] * W[j, k], axis=k), name="C")
        >>> roles = gemm_roles(block_infos(te.create_prim_func([A, W, C]))[0])
        >>> [p.var.name for p in roles.m], [p.var.name for p in roles.n], roles.b.buffer.name
        (['v_i'], ['v_j'], 'W')
    """
    factors = multiply_accumulate(info)
    if factors is None:
        return None
    store = info.store
    a_expr, b_expr = factors
    a, b = _operand(a_expr), _operand(b_expr)
    if a is None or b is None or a.buffer is b.buffer:
        return None
    a_vars, b_vars = used_vars(a_expr), used_vars(b_expr)
    out_vars = used_vars(store.indices)
    roles = GemmRoles(a, b)
    sizes = {"m": 1, "n": 1}
    for iv in info.block.iter_vars:
        extent = as_int(iv.dom.extent)
        if extent == 1:
            continue
        roles.symbolic |= extent is None
        v, in_a, in_b = iv.var, iv.var in a_vars, iv.var in b_vars
        if iv.iter_type is IterType.REDUCE:
            if not (in_a and in_b):
                return None
            roles.k.append(Piece(v))
            continue
        if iv.iter_type is not IterType.SPATIAL or v not in out_vars or not (in_a or in_b):
            return None
        pieces = [("batch" if in_a and in_b else "m" if in_a else "n", Piece(v))]
        group = _group_factor(a_expr, v, extent), _group_factor(b_expr, v, extent)
        if in_a and in_b and (group[0] is None) != (group[1] is None):  # a grouped conv
            factor, member = (group[0], "n") if group[0] else (group[1], "m")
            pieces = [("batch", Piece(v, factor, "group")), (member, Piece(v, factor, "member"))]
        for role, piece in pieces:
            getattr(roles, role).append(piece)
            if role in sizes:
                size = piece.extent(extent)
                sizes[role] = None if size is None or sizes[role] is None else sizes[role] * size
    if not roles.m or not roles.n or not roles.k:
        return None
    if store.indices and used_vars(store.indices[-1]) & {p.var for p in roles.m}:  # NCHW conv
        roles.a, roles.b, roles.m, roles.n = roles.b, roles.a, roles.n, roles.m
        sizes = {"m": sizes["n"], "n": sizes["m"]}
    if roles.symbolic:  # no fusion over symbolic extents: the outer M variables go to the grid
        if len(roles.n) != 1 or len(roles.k) != 1:
            return None
        roles.batch, roles.m = roles.batch + roles.m[:-1], roles.m[-1:]
    if any(s is not None and s < min_side for s in sizes.values()):
        return None
    return roles


def _group_factor(expr: PrimExpr, var: Var, extent: int | None) -> int | None:
    """`c` when `var` enters `expr` only as ``var // c`` (a grouped conv's input channel
    ``o // c * Cg + rc``), `c` a constant dividing `var`'s extent; else None."""
    factors: set[int | None] = set()
    post_order_visit(expr, lambda n: factors.add(as_int(n.b))
                     if isinstance(n, FloorDiv) and n.a is var else None)
    if len(factors) != 1 or extent is None:
        return None
    factor = factors.pop()
    if factor is None or factor <= 1 or extent % factor:
        return None
    marker = Var("group", var.dtype)
    return factor if var not in used_vars(_ReplaceDiv(var, marker).visit_expr(expr)) else None


class _ReplaceDiv(ExprMutator):
    """Every ``var // c`` -> `marker`."""

    def __init__(self, var: Var, marker: Var) -> None:
        super().__init__()
        self.var, self.marker = var, marker

    def visit_floor_div_(self, node: FloorDiv) -> PrimExpr:
        return self.marker if node.a is self.var else self.visit_prim_expr_(node)


def _operand(expr: PrimExpr) -> BufferLoad | None:
    """The load of a GEMM operand: a load, or one padded as ``if_then_else(c, X[..], 0)``."""
    if isinstance(expr, Select) and isinstance(expr.false_value, IntImm | FloatImm):
        expr = expr.true_value
    return expr if isinstance(expr, BufferLoad) else None


SPLIT_K_FROM = 2048
"""The least reduction length split across thread blocks: below it a 32 x 32 tile is a
few microseconds of work, about what the extra kernel that adds the parts costs."""

SPLIT_K_MIN = 512
"""The least reduction length each part of a split-K GEMM keeps."""


def split_k(sch: Schedule, info: BlockInfo, roles: GemmRoles, enough_blocks: int = ENOUGH_BLOCKS,
            smallest_tile: int = 32) -> tuple[BlockInfo, GemmRoles] | None:
    """Split a GEMM's reduction into parts computed by separate thread blocks when its
    output makes too few of them (a batch-1 conv late in a network: 512 x 49 pixels is 32
    tiles of 32 x 32 for 132 SMs, each looping over K = 4608): the outer reduction loop is
    split and `rfactor`-ed, the new block (the parts as a batch dimension) is the GEMM,
    and a short reduction sums the parts.  `smallest_tile` is the side of the smallest
    block tile `matmul.pick_register_tile` may choose (16 threads x 2).

    Returns:
        The partial-sum block's info and roles, or None when no split is needed.

    Example:
        >>> split = split_k(sch, info, roles)  # doctest: +SKIP
    """
    if roles.symbolic:
        return None
    extents = {iv.var: as_int(iv.dom.extent) for iv in info.block.iter_vars}

    def size(group: list[Piece]) -> int:
        out = 1
        for p in group:
            out *= p.extent(extents[p.var])  # type: ignore[operator]  # not symbolic
        return out

    blocks = tile_count(size(roles.batch), size(roles.m), size(roles.n), smallest_tile)
    k_loops = [n for n, kind in enumerate(info.loop_kinds) if kind == "R"]
    if not k_loops or blocks * 2 > enough_blocks or size(roles.k) < SPLIT_K_FROM:
        return None
    outer = as_int(info.loops[k_loops[0]].extent)
    parts = 1
    while (blocks * parts < enough_blocks and outer % (parts * 2) == 0
           and size(roles.k) // (parts * 2) >= SPLIT_K_MIN):
        parts *= 2
    if parts == 1:
        return None
    loops = sch.get_loops(sch.get_block(info.name))
    part, _ = sch.split(loops[k_loops[0]], [parts, None])
    sch.reorder(part, *loops[:k_loops[0]])
    rf = sch.get(sch.rfactor(part, 0)).name_hint
    rf_info = next(i for i in block_infos(sch.mod["main"]) or [] if i.name == rf)
    rf_roles = gemm_roles(rf_info)
    if rf_roles is None:
        raise ScheduleError("split_k", f"the partial sums of {info.name} are not a GEMM")
    return rf_info, rf_roles


def prepare_gemm(sch: Schedule, info: BlockInfo, roles: GemmRoles,
                 stage_output: bool = False) -> dict[str, str]:
    """Fuse the block's roles into ``(b, m, n, k)`` and reindex its accesses (the output
    also when `stage_output`: its copy is where an epilogue can be inlined).

    Returns:
        The reindex copy blocks by role (``"a"``, ``"b"``, ``"c"``), for `finish_gemm`.

    Raises:
        ScheduleError: a primitive refused (callers run this on a copy of the schedule).

    Example:
        >>> staged = prepare_gemm(sch, info, roles)  # doctest: +SKIP
    """
    block = sch.get_block(info.name)
    groups = roles.groups()
    pieces = [p for g in groups for p in g]
    nonunit = [iv.var for iv in info.block.iter_vars if as_int(iv.dom.extent) != 1]
    if ([p.var for p in pieces] != nonunit or any(p.part != "whole" for p in pieces)
            or any(len(g) > 1 for g in (roles.m, roles.n, roles.k))):
        extents = {iv.var: as_int(iv.dom.extent) for iv in info.block.iter_vars}
        position = {iv.var: n for n, iv in enumerate(info.block.iter_vars)}

        def index_map(*vs: Var) -> tuple[PrimExpr, ...]:
            return tuple(_fuse([p.expr(vs[position[p.var]]) for p in g],
                               [p.extent(extents[p.var]) for p in g]) for g in groups)

        index_map.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(f"v{n}", inspect.Parameter.POSITIONAL_ONLY) for n in range(len(position))])
        sch.transform_block_layout(block, index_map)
    staged: dict[str, str] = {}
    blk = sch.get(block)
    for role, load in (("a", roles.a), ("b", roles.b)):
        if not _plain(blk.body.value, load.buffer):
            reads = [r.buffer for r in blk.reads]
            staged[role] = sch.get(sch.reindex(block, ("read", reads.index(load.buffer)))).name_hint
            blk = sch.get(block)
    if stage_output or not all(isinstance(i, Var) for i in blk.body.indices):
        staged["c"] = sch.get(sch.reindex(block, ("write", 0))).name_hint
    return staged


def _fuse(vs: list[PrimExpr], extents: list[int | None]) -> PrimExpr:
    """``v0 * (e1 * e2) + v1 * e2 + v2``."""
    out = vs[-1]
    stride = 1
    for v, e in zip(reversed(vs[:-1]), reversed(extents[1:])):
        stride *= e  # type: ignore[operator]  # fused only over constant extents
        out = v * stride + out
    return out


def _plain(value: PrimExpr, buffer) -> bool:
    """`buffer` is read unguarded at a point of plain iteration variables."""
    loads = [ld for ld in loads_of(value) if ld.buffer is buffer]
    padded: list[Select] = []
    post_order_visit(value, lambda n: padded.append(n) if isinstance(n, Select)
                     and getattr(_operand(n), "buffer", None) is buffer else None)
    return bool(loads) and not padded and all(isinstance(i, Var) for ld in loads for i in ld.indices)


def rows_fastest(sch: Schedule, staged: dict[str, str]) -> frozenset[str]:
    """The reindexed operands whose source is contiguous along the tile's rows (the
    pixels of an im2col tile: the source's last index moves with them).

    Example:
        >>> rows_fastest(sch, {"b": "X_reindex"})  # doctest: +SKIP
        frozenset({'X_reindex'})
    """
    found = set()
    for role in ("a", "b"):
        if role in staged:
            blk = sch.get(sch.get_block(staged[role]))
            row = blk.iter_vars[-2].var
            if any(ld.indices and row in used_vars(ld.indices[-1]) for ld in loads_of(blk.body.value)):
                found.add(blk.body.buffer.name)
    return frozenset(found)


def finish_gemm(sch: Schedule, staged: dict[str, str]) -> None:
    """Inline the reindex copies: operands into the shared tiles that read them, the
    output's into the write-back of the local accumulator.

    Example:
        >>> finish_gemm(sch, {"a": "X_reindex"})  # doctest: +SKIP
    """
    for role in ("a", "b"):
        if role in staged:
            sch.compute_inline(sch.get_block(staged[role]))
    if "c" in staged:
        sch.reverse_compute_inline(sch.get_block(staged["c"]))
