"""Search spaces: named knobs with their choices, and how a knob setting becomes a schedule.

Each workload class gets the spaces that fit it (`spaces_for`):

- every PrimFunc: ``rules``, the default rules with other `RuleContext` knobs (vector
  width, the work below which a nest stays serial);
- a PrimFunc with one matmul block of constant extents: ``matmul``, the tiled template
  of `unity.tune.templates` (tile sizes that divide the extents, K blocking, packing,
  loop order, parallel, unroll);
- a PrimFunc with one conv2d block of constant channels and width: ``conv``, the
  default rule with its variant (channels, columns, or a pointwise conv's flattened
  pixels in the vector), register tile (`to` x `tx`) and parallel loop (rows or channel
  blocks) set by knobs;
- a PrimFunc with one conv2d block on channel-blocked data: ``conv_blocked``, the
  blocked rule with its register tile, the flattening of a pointwise conv's rows, the
  reduction chunks of a row tile and its parallel loop set by knobs;
- otherwise, a PrimFunc with one reduction block of constant extents (conv2d, pooling,
  a reduction with an epilogue): ``tiled``, the multi-level tiling of
  `unity.tune.tiling` (a tile size per spatial loop, unroll, which loop is parallel).

A candidate is a space name plus a knob setting (a JSON-able dict); `Candidate.id` is
its canonical text, which the database uses to skip what was measured already.

Example:
    >>> import random
    >>> space = spaces_for(func)[0]  # doctest: +SKIP
    >>> cand = space.sample(random.Random(0))  # doctest: +SKIP
    >>> scheduled, trace = space.apply(func, cand.knobs)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from unity.schedule.default.analysis import RuleContext
from unity.schedule.default.apply import schedule_primfunc
from unity.schedule.default.conv2d import LONG_ROW, ConvTiling
from unity.schedule.default.conv2d_blocked import BlockedTiling
from unity.schedule.default.conv2d_tiles import channel_tiles, vector_pieces
from unity.schedule.error import ScheduleError
from unity.tir.function import PrimFunc
from unity.tune.templates import (
    conv_blocked_tiling,
    conv_tiling,
    matmul_extents,
    schedule_matmul_tiled,
    schedule_with_rules,
)
from unity.tune.tiling import reduction_extents, schedule_tiled

__all__ = ["Candidate", "Space", "spaces_for"]

Knobs = dict[str, Any]
Apply = Callable[[PrimFunc, Knobs], "tuple[PrimFunc, str]"]


@dataclass(frozen=True)
class Candidate:
    """One point of a space: the space's name and a knob setting.

    Example:
        >>> Candidate("matmul", {"vec": True, "tile": 8}).id
        'matmul:{"tile": 8, "vec": true}'
    """

    space: str
    knobs: Knobs

    @property
    def id(self) -> str:
        """Canonical text of the candidate (space name and sorted knobs)."""
        return self.space + ":" + json.dumps(self.knobs, sort_keys=True)


@dataclass(frozen=True)
class Space:
    """Named knobs, each with its tuple of choices, and the template they drive.

    Attributes:
        name: The space's name (stored with every candidate in the database).
        choices: Per knob, the values it may take (JSON-able).
        apply: ``apply(func, knobs) -> (scheduled PrimFunc, trace text)``; raises
            `ScheduleError` when a setting does not fit the function.
        default: The knob setting that reproduces the default schedule, if any.

    Example:
        >>> space = Space("toy", {"tile": (4, 8, 16), "vec": (True, False)}, lambda f, knobs: (f, ""))
        >>> space.size, space.sample(random.Random(0)).space
        (6, 'toy')
    """

    name: str
    choices: dict[str, tuple[Any, ...]]
    apply: Apply
    default: Knobs | None = None

    @property
    def size(self) -> int:
        """Number of knob settings."""
        total = 1
        for values in self.choices.values():
            total *= len(values)
        return total

    def sample(self, rng: random.Random) -> Candidate:
        """A setting with every knob drawn uniformly.

        Example:
            >>> space.sample(random.Random(0)).knobs  # doctest: +SKIP
            {'lanes': 8, 'parallel_min_work': 0}
        """
        return Candidate(self.name, {k: rng.choice(v) for k, v in self.choices.items()})

    def neighbors(self, cand: Candidate) -> list[Candidate]:
        """`cand` with one knob moved to an adjacent choice (the one before or after its
        value in that knob's tuple), for each knob: the first places a search looks
        around the default.

        Example:
            >>> space = Space("toy", {"tile": (4, 8, 16), "vec": (True, False)}, lambda f, k: (f, ""))
            >>> [c.knobs for c in space.neighbors(Candidate("toy", {"tile": 8, "vec": True}))]
            [{'tile': 4, 'vec': True}, {'tile': 16, 'vec': True}, {'tile': 8, 'vec': False}]
        """
        out = []
        for key, values in self.choices.items():
            if cand.knobs.get(key) not in values:
                continue
            at = values.index(cand.knobs[key])
            for other in (at - 1, at + 1):
                if 0 <= other < len(values):
                    out.append(Candidate(self.name, {**cand.knobs, key: values[other]}))
        return out

    def mutate(self, cand: Candidate, rng: random.Random) -> Candidate:
        """`cand` with one knob (that has another choice) set to another value.

        Example:
            >>> space.mutate(cand, random.Random(0))  # doctest: +SKIP
        """
        free = [k for k, v in self.choices.items() if len(v) > 1]
        if not free:
            return cand
        key = rng.choice(free)
        value = rng.choice([v for v in self.choices[key] if v != cand.knobs.get(key)])
        return Candidate(self.name, {**cand.knobs, key: value})


def spaces_for(func: PrimFunc, ctx: RuleContext | None = None) -> list[Space]:
    """The spaces that fit `func`, the default-rules space first.

    Example:
        >>> [s.name for s in spaces_for(matmul_func)]  # doctest: +SKIP
        ['rules', 'matmul']
    """
    ctx = ctx or RuleContext.for_target(None)
    spaces = [_rules_space(ctx)]
    extents = matmul_extents(func)
    if extents is not None:
        spaces.append(_matmul_space(ctx, *extents))
        return spaces
    conv = conv_tiling(func, ctx.lanes)
    if conv is not None:
        spaces.append(_conv_space(ctx, conv))
    blocked = conv_blocked_tiling(func, ctx)
    if blocked is not None:
        spaces.append(_conv_blocked_space(ctx, blocked))
    spatial = reduction_extents(func)
    if spatial is not None:
        spaces.append(_tiled_space(ctx, spatial))
    return spaces


def _rules_space(ctx: RuleContext) -> Space:
    lanes = tuple(sorted({4, 8, 16, ctx.lanes, 2 * ctx.lanes}))
    work = (0, 4096, ctx.parallel_min_work, 1 << 40)
    copy = (0, ctx.parallel_min_work, ctx.parallel_min_copy, 1 << 40)

    def apply(func: PrimFunc, knobs: Knobs) -> tuple[PrimFunc, str]:
        scheduled = schedule_with_rules(
            func, knobs["lanes"], knobs["parallel_min_work"], ctx.num_cores,
            knobs.get("parallel_min_copy", ctx.parallel_min_copy),
        )  # fmt: skip
        return scheduled, f"schedule_with_rules(func, **{knobs})"

    default = {"lanes": ctx.lanes, "parallel_min_work": ctx.parallel_min_work,
               "parallel_min_copy": ctx.parallel_min_copy}  # fmt: skip
    choices = {
        "lanes": lanes,
        "parallel_min_work": tuple(sorted(set(work))),
        "parallel_min_copy": tuple(sorted(set(copy))),
    }
    return Space("rules", choices, apply, default)


def _matmul_space(ctx: RuleContext, m: int | None, n: int, k: int, b_2d: bool) -> Space:
    lanes = ctx.lanes
    ti = tuple(t for t in (1, 2, 3, 4, 6, 8, 12, 16) if m is None or m % t == 0) or (1,)
    tj = tuple(
        t for t in sorted({lanes // 2, lanes, 2 * lanes, 3 * lanes, 4 * lanes}) if t and n % t == 0
    )
    kb = (None, *(b for b in (16, 32, 64, 128, 256, 512) if k % b == 0 and b < k))
    choices = {
        "ti": ti,
        "tj": tj or (1,),
        "kb": kb,
        "pack": (False, True) if b_2d else (False,),
        "order": ("ij", "ji"),
        "parallel": (True, False),
        "unroll": (True, False),
    }

    def apply(func: PrimFunc, knobs: Knobs) -> tuple[PrimFunc, str]:
        sch = schedule_matmul_tiled(func, knobs, ctx.num_cores)
        return sch.mod["main"], sch.trace.show()

    return Space("matmul", choices, apply)


def _conv_space(ctx: RuleContext, conv: ConvTiling) -> Space:
    """The default conv2d rule with its variant, register tile and parallel loop set by
    knobs: channels in the vector (`to` a multiple of 8, `tx` up to 16 columns), columns
    in the vector (`to` channels unrolled, `tx` up to a whole row), or a pointwise conv's
    pixels in the vector (`tx` divides ``H*W``)."""
    lanes = ctx.lanes
    channel_tos = set(channel_tiles(conv.per_group, lanes)) if conv.per_group else set()
    column_tos = {t for t in (1, 2, 3, 4, 6, 8, 12, 16) if conv.out_channels % t == 0}
    width = conv.width or LONG_ROW  # a symbolic width: tiles of a long row
    column_txs = {t for t in (8, 16, 32, 48, 64) if t < width} | {min(width, 4 * lanes)}
    pixels = conv.pixels or 0
    pixel_txs = {t for t in range(lanes // 2, 8 * lanes + 1) if pixels % t == 0 and t <= pixels}
    variants = ("channels",) * bool(channel_tos) + ("columns",) + ("pixels",) * bool(pixels)
    choices = {
        "variant": variants,
        "to": tuple(sorted(channel_tos | column_tos)),
        "tx": tuple(sorted(set(range(1, min(width, 16) + 1)) | column_txs | pixel_txs)),
        "parallel": ("auto", "rows", "channels"),
    }

    def apply(func: PrimFunc, knobs: Knobs) -> tuple[PrimFunc, str]:
        to, tx = knobs["to"], knobs["tx"]
        if knobs["variant"] == "channels":
            if to not in channel_tos or tx > 16:
                raise ScheduleError("conv template", f"no channel tile {to}x{tx}")
            registers = vector_pieces(to, lanes) * tx
        elif knobs["variant"] == "pixels":
            if to not in column_tos or tx not in pixel_txs:
                raise ScheduleError("conv template", f"no pixel tile {to}x{tx}")
            registers = to * vector_pieces(tx, lanes)
        else:
            if to not in column_tos:
                raise ScheduleError("conv template", f"no column tile {to}x{tx}")
            registers = to * vector_pieces(tx, lanes)
        if registers > ctx.vector_registers - 2:  # accumulators spill out of the registers
            raise ScheduleError("conv template", f"a {to}x{tx} tile spills")
        tuned = (
            ("conv.variant", knobs["variant"]),
            ("conv.tile", (to, tx)),
            ("conv.parallel", knobs["parallel"]),
        )
        return schedule_primfunc(func, replace(ctx, knobs=tuned)), f"schedule_primfunc(func, knobs={knobs})"

    default = {"variant": conv.variant, "to": conv.tile[0], "tx": conv.tile[1], "parallel": "auto"}
    return Space("conv", choices, apply, default)


def _conv_blocked_space(ctx: RuleContext, conv: BlockedTiling) -> Space:
    """The blocked conv2d rule with its register tile (`to` output channels in 1-5 vectors
    x `tx` pixels), tiles along a row or across the flattened pixels, the unrolled
    kernel-column loop, the parallel loop, and the reduction chunks of a row tile
    (`rc_block`) set by knobs; depthwise convs vary `tx`."""
    vectors = [1]
    if not conv.depthwise:
        vectors = [v for v in (1, 2, 3, 4, 5) if conv.per_group % v == 0]
    dense = not conv.depthwise and conv.pixels is not None
    choices = {
        "to": tuple(v * conv.block for v in vectors),
        "tx": tuple(range(1, min(conv.width or 16 if not dense else 16, 16) + 1)),
        "flatten": (True, False) if dense else (False,),
        "unroll_window": (False, True) if conv.window else (False,),
        "parallel": ("auto", "rows", "channels"),
        "rc_block": _reduction_chunks(conv),
    }

    def apply(func: PrimFunc, knobs: Knobs) -> tuple[PrimFunc, str]:
        to, tx = knobs["to"], knobs["tx"]
        if to // conv.block * tx > ctx.vector_registers - 3:  # accumulators spill
            raise ScheduleError("conv_blocked template", f"a {to}x{tx} tile spills")
        tuned = (
            ("conv.tile", (to, tx)),
            ("conv.flatten", knobs["flatten"]),
            ("conv.unroll_window", knobs["unroll_window"]),
            ("conv.parallel", knobs["parallel"]),
            ("conv.rc_block", knobs.get("rc_block", conv.rc_block)),
        )
        return schedule_primfunc(func, replace(ctx, knobs=tuned)), f"schedule_primfunc(func, knobs={knobs})"

    default = {"to": conv.tile[0], "tx": conv.tile[1], "flatten": conv.flatten,
               "unroll_window": conv.unroll_window, "parallel": "auto",
               "rc_block": conv.rc_block or 0}  # fmt: skip
    return Space("conv_blocked", choices, apply, default)


def _reduction_chunks(conv: BlockedTiling) -> tuple[int, ...]:
    """Input channel blocks per reduction chunk of a row tile (0: the whole reduction in
    each tile): divisors of the blocks up to 8, for dense convs that may take row tiles."""
    if conv.depthwise or conv.in_blocks is None:
        return (0,)
    return (0, *(c for c in (1, 2, 4, 8) if c < conv.in_blocks and conv.in_blocks % c == 0))


def _tiled_space(ctx: RuleContext, extents: list[int]) -> Space:
    choices: dict[str, tuple[Any, ...]] = {}
    for n, e in enumerate(extents):
        last = n == len(extents) - 1
        sizes = (4, 8, 16, 32, 64) if last else (2, 4, 8)
        whole = (e,) if e <= (64 if last else 8) else ()
        choices[f"t{n}"] = tuple(sorted({1, *(d for d in sizes if e % d == 0), *whole}))
    choices["unroll"] = (True, False)
    choices["parallel"] = (-1, 0, 1)

    def apply(func: PrimFunc, knobs: Knobs) -> tuple[PrimFunc, str]:
        sch = schedule_tiled(func, knobs, ctx.num_cores)
        return sch.mod["main"], sch.trace.show()

    return Space("tiled", choices, apply)
