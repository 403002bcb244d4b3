"""Detect affine / quasi-affine index maps over loop iterators (`detect_iter_map`).

Given block bindings such as `v0 = i0*32 + i1`, `v1 = f // 16` with known loop ranges,
`detect_iter_map` writes each index as a sum of *splits* of the input iterators,

    ((source // lower_factor) % extent) * scale,   plus a base free of the iterators,

and checks that the splits of one iterator do not overlap (each loop value maps to one
index digit), that each index is one fused iterator (mixed radix: a split's scale is the
previous split's scale times its extent), and optionally that every digit of every
iterator is used (a bijection).  It covers what split/fuse/reorder produce; anything else
is reported in `errors`, never guessed.

Example:
    >>> from unity import tir
    >>> i0, i1 = tir.Var("i0"), tir.Var("i1")
    >>> doms = {i0: tir.Range.from_min_extent(0, 4), i1: tir.Range.from_min_extent(0, 32)}
    >>> res = detect_iter_map([i0 * 32 + i1], doms)
    >>> res.is_affine, [(s.source.name, s.extent, s.scale) for s in res.indices[0].splits]
    (True, [('i0', 4, 32), ('i1', 32, 1)])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from unity.tir import expr as E
from unity.tir.arith.analyzer import Analyzer
from unity.tir.arith.linear import Linear, make_int


@dataclass(frozen=True, slots=True)
class IterSplit:
    """`((source // lower_factor) % extent) * scale`.

    Example:
        >>> IterSplit(E.Var("i"), 4, 8, 2).to_expr().script()
        'i // 4 % 8 * 2'
    """

    source: E.Var
    lower_factor: int
    extent: int
    scale: int

    def to_expr(self) -> E.PrimExpr:
        """The split as an expression (without the trivial `// 1` and `% full`).

        Example:
            >>> i = E.Var("i")
            >>> IterSplit(i, 1, 16, 1).to_expr().script(), IterSplit(i, 4, 4, 1).to_expr().script()
            ('i % 16', 'i // 4 % 4')
        """
        e: E.PrimExpr = self.source
        if self.lower_factor != 1:
            e = e // self.lower_factor
        return e % self.extent if self.scale == 1 else (e % self.extent) * self.scale


@dataclass(frozen=True, slots=True)
class IterSum:
    """One index: `sum(splits) + base`, splits ordered by decreasing scale.

    Example:
        >>> i = E.Var("i")
        >>> s = IterSum((IterSplit(i, 4, 4, 4), IterSplit(i, 1, 4, 1)), E.const(0))
        >>> s.extent, s.is_fused()
        (16, True)
    """

    splits: tuple[IterSplit, ...]
    base: E.PrimExpr

    @property
    def extent(self) -> int:
        """Number of distinct values the splits part takes when it is one fused iterator."""
        total = 1
        for s in self.splits:
            total *= s.extent
        return total

    def is_fused(self) -> bool:
        """True when the splits form one mixed-radix iterator (dense, no gaps).

        Example:
            >>> i, j = E.Var("i"), E.Var("j")
            >>> splits = (IterSplit(i, 1, 4, 8), IterSplit(j, 1, 4, 1))  # scales 8 and 1: a gap
            >>> IterSum(splits, E.const(0)).is_fused()
            False
        """
        ordered = sorted(self.splits, key=lambda s: s.scale)
        return all(b.scale == a.scale * a.extent for a, b in pairwise(ordered))


@dataclass(frozen=True, slots=True)
class IterMapResult:
    """The decomposed indices, and why the map is not affine (empty when it is).

    Example:
        >>> i = E.Var("i")
        >>> result = detect_iter_map([i // 4, i % 4], {i: E.Range.from_min_extent(0, 16)})
        >>> result.is_affine, len(result.indices)
        (True, 2)
    """

    indices: tuple[IterSum, ...]
    errors: tuple[str, ...]

    @property
    def is_affine(self) -> bool:
        """True when every index decomposed and every check passed."""
        return not self.errors


def detect_iter_map(
    indices: Sequence[E.PrimExpr],
    input_iters: Mapping[E.Var, E.Range],
    check_level: str = "surjective",
    analyzer: Analyzer | None = None,
) -> IterMapResult:
    """Decompose `indices` into splits of `input_iters` and check the map.

    Args:
        indices: the index expressions (block bindings, buffer indices).
        input_iters: each loop variable's range; minimums must be 0, extents constant.
        check_level: "surjective" (no overlap, each index fused) or "bijective" (also
            every iterator digit used).
        analyzer: an analyzer to simplify with (a fresh one by default).

    Returns:
        An `IterMapResult`; `errors` names the first problem of each kind found.

    Example:
        >>> from unity import tir
        >>> f = tir.Var("f")
        >>> res = detect_iter_map([f // 16, f % 16], {f: tir.Range.from_min_extent(0, 64)},
        ...                       check_level="bijective")
        >>> res.is_affine
        True
    """
    if check_level not in ("surjective", "bijective"):
        raise ValueError(f"check_level must be 'surjective' or 'bijective', got {check_level!r}")
    ana = analyzer if analyzer is not None else Analyzer()
    errors: list[str] = []
    extents: dict[E.Var, int] = {}
    for var, rng in input_iters.items():
        ext, lo = ana.simplify(rng.extent), ana.simplify(rng.min)
        if type(ext) is not E.IntImm or type(lo) is not E.IntImm or lo.value != 0:
            errors.append(
                f"iterator {var.name} must range over [0, constant); got min {lo.script()}, extent {ext.script()}"
            )
            continue
        extents[var] = ext.value
        ana.bind(var, E.Range(lo, ext))
    if errors:
        return IterMapResult((), tuple(errors))
    sums = tuple(_decompose(ana, idx, n, extents, errors) for n, idx in enumerate(indices))
    for n, s in enumerate(sums):
        if not s.is_fused():
            errors.append(
                f"index {n} is not one fused iterator (scales {[x.scale for x in s.splits]})"
            )
    _check_splits(sums, extents, check_level == "bijective", errors)
    return IterMapResult(sums, tuple(errors))


def _decompose(
    ana: Analyzer, index: E.PrimExpr, n: int, extents: dict[E.Var, int], errors: list[str]
) -> IterSum:
    simplified = ana.simplify(index)
    lin = ana._simplifier.linear(simplified)
    base = Linear(lin.dtype, {}, lin.const)
    splits: list[IterSplit] = []
    for key, (atom, coeff) in lin.terms.items():
        if not _depends(atom, extents):
            base.terms[key] = (atom, coeff)
            continue
        split = _split_of(atom, coeff, extents)
        if split is None:
            errors.append(f"index {n} is not quasi-affine in the iterators: term {atom.script()}")
            continue
        splits.append(split)
    splits.sort(key=lambda s: -s.scale)
    return IterSum(tuple(splits), base.to_expr() if base.terms else make_int(lin.dtype, lin.const))


def _split_of(atom: E.PrimExpr, scale: int, extents: dict[E.Var, int]) -> IterSplit | None:
    """Read `v`, `v // c`, `v % c`, `v // c1 % c2` or `v % c1 // c2` as a split of `v`."""
    if isinstance(atom, E.Var) and atom in extents:
        return IterSplit(atom, 1, extents[atom], scale)
    inner, c = _const_operand(atom)
    if c is None or c <= 0:
        return None
    if isinstance(inner, E.Var) and inner in extents:
        full = extents[inner]
        if type(atom) is E.FloorDiv:
            return IterSplit(inner, c, -(-full // c), scale)
        return IterSplit(inner, 1, min(c, full), scale)
    below = _split_of(inner, 1, extents)
    if below is None:
        return None
    if (
        type(atom) is E.FloorMod
        and below.lower_factor > 1
        and below.extent == extents[below.source] // below.lower_factor
    ):
        return IterSplit(below.source, below.lower_factor, c, scale)  # v // c1 % c2
    if type(atom) is E.FloorDiv and below.lower_factor == 1 and below.extent % c == 0:
        return IterSplit(below.source, c, below.extent // c, scale)  # v % c1 // c2
    return None


def _const_operand(atom: E.PrimExpr) -> tuple[E.PrimExpr, int | None]:
    if type(atom) in (E.FloorDiv, E.FloorMod) and type(atom.b) is E.IntImm:  # type: ignore[attr-defined]
        return atom.a, atom.b.value  # type: ignore[attr-defined]
    return atom, None


def _check_splits(
    sums: tuple[IterSum, ...], extents: dict[E.Var, int], bijective: bool, errors: list[str]
) -> None:
    by_source: dict[E.Var, list[IterSplit]] = {v: [] for v in extents}
    for s in sums:
        for split in s.splits:
            by_source[split.source].append(split)
    for var, splits in by_source.items():
        splits.sort(key=lambda s: s.lower_factor)
        for a, b in pairwise(splits):
            if b.lower_factor < a.lower_factor * a.extent:
                errors.append(f"iterator {var.name} is used twice (overlapping splits)")
                break
        if not bijective:
            continue
        expected = 1  # the next lower factor a dense cover needs
        for s in splits:
            expected = s.lower_factor * s.extent if s.lower_factor == expected else -1
        if expected < extents[var]:
            errors.append(f"iterator {var.name} is not fully used by the indices (not bijective)")


def _depends(expr: E.PrimExpr, extents: dict[E.Var, int]) -> bool:
    from unity.tir.functor import post_order_visit

    found: list[bool] = []
    post_order_visit(expr, lambda n: found.append(True) if n in extents else None)
    return bool(found)
