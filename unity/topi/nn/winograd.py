"""Winograd convolution F(m x m, r x r) on channel-blocked activations ("NCHW{b}c").

An `r x r` stride-1 convolution computes each `m x m` output tile from an `a x a` input
tile ``d`` (``a = m + r - 1``) with ``A^T [(G g G^T) * (B^T d B)] A`` (Lavin & Gray, "Fast
Algorithms for Convolutional Neural Networks", 2015; the matrices from `winograd_matrices`):
the products of the `a^2` transformed points, summed over the input channels, are `a^2`
independent matrix products of `[tiles, C] x [C, O]`.  F(4x4, 3x3) does 36 multiplies per
tile and channel pair where the direct convolution does 144; F(2x2, 3x3) 16 against 36;
F(2x2, 5x5) 36 against 100.

The three stages, each a TE compute with two steps (a row pass then a column pass, so
each step sums at most `a` terms):

- `winograd_data_transform`: ``V[e*a + n, g, p, c] = (B^T d_p B)[e, n]`` for tile `p` of
  channel `c` of group `g` (the zero padding applied first; tiles beyond the image repeat
  the last);
- `winograd_batch_matmul`: ``M[k, g, j, p, o] = sum_c V[k, g, p, c] * U[k, g, j, c, o]``,
  with ``U = winograd_weight_transform(w)`` (``G g G^T``, computed with numpy from a
  constant weight, in panels `j` of `t` output channels `o`);
- `winograd_output_transform`: ``Y[n, o // b, y, x, o % b] = (A^T M_p A)[y % m, x % m]``.

The blocks of the transforms carry the annotation ``unity.winograd`` (``"data_rows"``,
``"data"``, ``"output_rows"``, ``"output"``) that the default schedule rule
(`unity.schedule.default.winograd`) claims; the matmul is claimed by the matmul rule.

Example:
    >>> import numpy as np
    >>> from unity import te
    >>> x = te.placeholder((1, 2, 8, 8, 8), name="x")
    >>> v = winograd_data_transform(x, 4, 1, 4)
    >>> [d.value for d in v.shape]
    [36, 1, 4, 16]
    >>> winograd_weight_transform(np.ones((16, 16, 3, 3), "float32"), 4).shape
    (36, 1, 1, 16, 16)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from unity import te
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const, eq, min_value_of, select
from unity.topi.nn.layout import padding4
from unity.topi.nn.pad import pad
from unity.topi.utils import const_int

__all__ = [
    "WINOGRAD", "winograd_batch_matmul", "winograd_data_transform", "winograd_matrices",
    "winograd_output_transform", "winograd_tiles", "winograd_weight_transform",
]  # fmt: skip

WINOGRAD = "unity.winograd"
"""Block annotation naming a Winograd transform stage."""

_POINTS = (0, 1, -1, 2, -2)
"""The finite interpolation points, in the order taken (infinity is the last point)."""


def winograd_matrices(m: int, r: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`(A^T, G, B^T)` of F(m, r) as float64 arrays: ``y = A^T [(G g) * (B^T d)]`` is the
    correlation ``y[i] = sum_k d[i + k] g[k]`` of `a = m + r - 1` inputs (at most 6: the
    points 0, 1, -1, 2, -2 and infinity).

    Toom-Cook: with ``E_k`` the `a x k` matrix evaluating a polynomial of `k` coefficients at
    the points (its row for infinity picks the leading coefficient) and ``V = E_a``, a linear
    convolution is ``V^-1 [(E_r g) * (E_m u)]``; the correlation is its transpose, so
    ``A^T = E_m^T``, ``G = E_r`` and ``B^T = V^-T`` (exact, in rationals).  Each point's row
    of `B^T` is then scaled to small integers (the data transform runs in float32 at run
    time) and its row of `G` by the inverse (the weight transform runs once, in float64).

    Example:
        >>> at, g, bt = winograd_matrices(2)
        >>> at.shape, g.shape, bt.shape
        ((2, 4), (4, 3), (4, 4))
        >>> d, k = np.arange(4.0), np.array([1.0, 2.0, 3.0])
        >>> (at @ ((g @ k) * (bt @ d))).tolist()
        [8.0, 14.0]
    """
    import sympy  # exact rationals, at compile time only

    alpha = m + r - 1
    if m < 1 or r < 1 or alpha > len(_POINTS) + 1:
        most = len(_POINTS) + 1
        raise ValueError(f"winograd: F({m}, {r}) needs {alpha} points, at most {most} supported")
    points = _POINTS[: alpha - 1]

    def evaluation(k: int) -> sympy.Matrix:
        rows = [[sympy.Integer(p) ** i for i in range(k)] for p in points]
        return sympy.Matrix([*rows, [int(i == k - 1) for i in range(k)]])

    bt, g = evaluation(alpha).inv().T, evaluation(r)
    for j in range(alpha):
        scale = sympy.ilcm(1, *(x.q for x in bt.row(j)))
        bt[j, :], g[j, :] = bt.row(j) * scale, g.row(j) / scale
    at = evaluation(m).T
    arrays = (np.array(x.tolist(), dtype="float64") for x in (at, g, bt))
    return tuple(arrays)  # type: ignore[return-value]


def winograd_tiles(h: Any, w: Any, m: int, n: Any = 1) -> tuple[Any, Any, Any]:
    """`(tile rows, tile columns, tiles)` of an `n`-image `h x w` output in `m x m` tiles
    (ints, or expressions of symbolic sizes: TIR or sympy).

    Example:
        >>> winograd_tiles(14, 14, 4)
        (4, 4, 16)
    """
    th, tw = (h + (m - 1)) // m, (w + (m - 1)) // m
    return th, tw, n * th * tw


def winograd_weight_transform(
    weight: np.ndarray, m: int, panel: int | None = None, groups: int = 1
) -> np.ndarray:
    """``U[e*a + n, o // og, o % og // t, c, o % t] = (G g G^T)[e, n]`` of an OIHW `r x r`
    `weight` in `groups` (``og = O / groups`` output channels each): the transformed weights
    of each point and group in panels of `panel` (`t`, default a group's) output channels,
    each panel one contiguous stream for the matmul (same dtype as `weight`).

    Example:
        >>> winograd_weight_transform(np.zeros((32, 4, 3, 3), "float32"), 2, 16).shape
        (16, 1, 2, 4, 16)
        >>> winograd_weight_transform(np.zeros((32, 4, 3, 3), "float32"), 2, 8, groups=2).shape
        (16, 2, 2, 4, 8)
    """
    o, c, kh, kw = weight.shape
    if kh != kw:
        raise ValueError(f"winograd: the kernel is {kh}x{kw}, not square")
    _, g, _ = winograd_matrices(m, kh)
    t = panel or o // groups
    if o % groups or (o // groups) % t:
        raise ValueError(
            f"winograd: {o} output channels in {groups} groups are not whole panels of {t}"
        )
    u = g @ weight.astype("float64") @ g.T  # [o, c, e, n], two batched matmuls
    u = u.reshape(groups, o // groups // t, t, c, len(g) ** 2).transpose(4, 0, 1, 3, 2)
    return np.ascontiguousarray(u.astype(weight.dtype))


def _pick(index: PrimExpr, values: Sequence[PrimExpr]) -> PrimExpr:
    """``values[index]`` as a chain of selects (folded once `index` is a constant)."""
    out = values[-1]
    for k in range(len(values) - 2, -1, -1):
        out = select(eq(index, k), values[k], out)
    return out


def _combine(row: Sequence[float], terms: Sequence[PrimExpr]) -> PrimExpr:
    """``sum_i row[i] * terms[i]`` with the zero coefficients left out and +-1 not multiplied."""
    out: PrimExpr | None = None
    for coef, term in zip(row, terms):
        if coef == 0:
            continue
        value = term if abs(coef) == 1 else term * const(float(abs(coef)), term.dtype)
        if out is None:
            out = value if coef > 0 else value * const(-1.0, term.dtype)
        else:
            out = out + value if coef > 0 else out - value
    assert out is not None
    return out


def winograd_data_transform(
    data: Tensor, m: int, padding: int | Sequence[int], tiles: int | None = None, r: int = 3,
    groups: int = 1,
) -> Tensor:  # fmt: skip
    """``V[e*a + n, g, p, c]``: the transformed input tiles of an NCHW{b}c `data` for an
    `r x r` stride-1 conv with `padding`, channel `c` of group `g` (of `groups`, each whole
    blocks); `tiles` rows per image (at least the image's tiles; the extra rows repeat its
    last tile, so that a matmul's register tile divides the rows, over a symbolic batch
    too), image `i`'s from row ``i * tiles``.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((1, 2, 14, 14, 8), name="x")
        >>> [d.value for d in winograd_data_transform(x, 2, 1, 52).shape]
        [16, 1, 52, 16]
    """
    _, _, bt = winograd_matrices(m, r)
    alpha = m + r - 1
    cb, b = const_int(data.shape[1]), const_int(data.shape[4])
    h, w = (const_int(d) if const_int(d) is not None else d for d in data.shape[2:4])  # symbolic: exprs
    n = const_int(data.shape[0])
    images = data.shape[0] if n is None else n  # a symbolic batch: symbolic tile rows
    top, left, bottom, right = padding4(padding)
    oh, ow = h + top + bottom - (r - 1), w + left + right - (r - 1)
    th, tw, _ = winograd_tiles(oh, ow, m)
    count = th * tw  # an image's tiles
    per_image = count if tiles is None else tiles
    if isinstance(per_image, int) and isinstance(count, int) and per_image < count:
        raise ValueError(f"winograd: {per_image} tile rows for {count} tiles")
    rows = images * per_image
    spare = not (isinstance(per_image, int) and isinstance(count, int) and per_image == count)
    per_group = cb * b // groups
    if per_group % b or groups * per_group != cb * b:
        raise ValueError(f"winograd: {cb * b} channels in {groups} groups are not whole blocks")
    extra_h, extra_w = th * m + r - 1 - (h + top), tw * m + r - 1 - (w + left)
    padded = pad(data, [0, 0, top, left, 0], [0, 0, extra_h, extra_w, 0], name="T_pad_data")

    def rows_body(p: PrimExpr, c: PrimExpr, e: PrimExpr, j: PrimExpr, lane: PrimExpr) -> PrimExpr:
        last = const(count - 1, p.dtype) if isinstance(count, int) else (count - 1).astype(p.dtype)
        image, t = p // per_image, p % per_image
        t = min_value_of(t, last) if spare else t  # spare rows repeat the image's last tile
        y, x = t // tw * m, t % tw * m
        d = [padded[image, c, y + i, x + j, lane] for i in range(alpha)]
        return _pick(e, [_combine(bt[k], d) for k in range(alpha)])

    first = te.compute(
        (rows, cb, alpha, alpha, b), rows_body, name="T_winograd_rows",
        attrs={WINOGRAD: "data_rows"},
    )  # fmt: skip

    def body(k: PrimExpr, g: PrimExpr, p: PrimExpr, c: PrimExpr) -> PrimExpr:
        e, nn = k // alpha, k % alpha
        ch = g * per_group + c
        t = [first[p, ch // b, e, j, ch % b] for j in range(alpha)]
        return _pick(nn, [_combine(bt[i], t) for i in range(alpha)])

    return te.compute(
        (alpha * alpha, groups, rows, per_group), body, name="T_winograd_data",
        attrs={WINOGRAD: "data"},
    )  # fmt: skip


def winograd_batch_matmul(v: Tensor, u: Tensor, out_dtype: str | None = None) -> Tensor:
    """``M[k, g, j, p, o] = sum_c V[k, g, p, c] * U[k, g, j, c, o]``: the transformed tiles
    times the transformed weights (panel `j` of `t` output channels of group `g`), one
    matrix product per point `k` and group.

    Example:
        >>> from unity import te
        >>> v = te.placeholder((16, 1, 52, 32), name="v")
        >>> u = te.placeholder((16, 1, 4, 32, 16), name="u")
        >>> [d.value for d in winograd_batch_matmul(v, u).shape]
        [16, 1, 4, 52, 16]
    """
    points, groups, rows, channels = v.shape
    dtype = out_dtype or v.dtype
    c = te.reduce_axis((0, channels), name="c")

    def body(k: PrimExpr, g: PrimExpr, j: PrimExpr, p: PrimExpr, o: PrimExpr) -> PrimExpr:
        return te.sum(v[k, g, p, c.var].astype(dtype) * u[k, g, j, c.var, o].astype(dtype), axis=c)

    shape = (points, groups, u.shape[2], rows, u.shape[4])
    return te.compute(shape, body, name="T_winograd_matmul")


def winograd_output_transform(
    mm: Tensor, m: int, out_hw: tuple[int, int], block: int, images: int = 1, r: int = 3,
    tiles: int | None = None,
) -> Tensor:  # fmt: skip
    """``Y[n, o // b, y, x, o % b]``: the `out_hw` output of the products `mm` (``M[k, o //
    og, o % og // t, p, o % t]``, ``og`` output channels per group) in NCHW{block}c, image
    `n`'s tiles from row ``n * tiles`` (`tiles` rows per image, as the data transform's;
    default: the image's tiles).

    Example:
        >>> from unity import te
        >>> mm = te.placeholder((36, 1, 2, 16, 16), name="mm")
        >>> [d.value for d in winograd_output_transform(mm, 4, (14, 14), 8).shape]
        [1, 4, 14, 14, 8]
    """
    at, _, _ = winograd_matrices(m, r)
    alpha = m + r - 1
    oh, ow = out_hw
    th, tw, _ = winograd_tiles(oh, ow, m, images)
    groups, panels, panel = (const_int(mm.shape[i]) for i in (1, 2, 4))
    per_group = panels * panel
    o = groups * per_group

    def rows_body(p: PrimExpr, ob: PrimExpr, a: PrimExpr, xi: PrimExpr, lane: PrimExpr) -> PrimExpr:
        ch = ob * block + lane
        g, og = (ch // per_group, ch % per_group) if groups > 1 else (0, ch)
        t = [mm[a * alpha + j, g, og // panel, p, og % panel] for j in range(alpha)]
        return _pick(xi, [_combine(at[k], t) for k in range(m)])

    first = te.compute(
        (mm.shape[3], o // block, alpha, m, block), rows_body, name="T_winograd_out_rows",
        attrs={WINOGRAD: "output_rows"},
    )  # fmt: skip

    per_image = th * tw if tiles is None else tiles

    def body(n: PrimExpr, ob: PrimExpr, y: PrimExpr, x: PrimExpr, lane: PrimExpr) -> PrimExpr:
        p = n * per_image + y // m * tw + x // m
        t = [first[p, ob, a, x % m, lane] for a in range(alpha)]
        return _pick(y % m, [_combine(at[k], t) for k in range(m)])

    return te.compute(
        (images, o // block, oh, ow, block), body, name="T_winograd_output",
        attrs={WINOGRAD: "output"},
    )
