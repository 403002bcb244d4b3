"""Normalizations: `batch_norm` (inference, with moving statistics), `layer_norm`, `group_norm`.

Statistics use two passes (mean, then the mean of squared deviations) for accuracy.

Example:
    >>> from unity import te
    >>> x = te.placeholder((te.var("n"), 8), name="x")
    >>> g, b = te.placeholder((8,), name="g"), te.placeholder((8,), name="b")
    >>> layer_norm(x, g, b, axes=[-1]).op.name
    'T_layer_norm'
"""

from __future__ import annotations

from collections.abc import Sequence

from unity import te, tir
from unity.te import Tensor
from unity.tir.expr import PrimExpr, const
from unity.topi.utils import cast, const_int, normalize_axes, product


def batch_norm(
    x: Tensor, gamma: Tensor, beta: Tensor, moving_mean: Tensor, moving_var: Tensor,
    axis: int = 1, epsilon: float = 1e-5, center: bool = True, scale: bool = True,
) -> list[Tensor]:  # fmt: skip
    """Inference batch norm along channel `axis`; returns `[out, moving_mean, moving_var]`.

    `out = (x - mean[c]) / sqrt(var[c] + epsilon) * gamma[c] + beta[c]` (gamma with `scale`,
    beta with `center`); the statistics are passed through unchanged.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((2, 3, 4, 4), name="x")
        >>> p = [te.placeholder((3,), name=n) for n in "gbmv"]
        >>> len(batch_norm(x, *p))
        3
    """
    (ax,) = normalize_axes(x.ndim, axis)

    def body(*i: PrimExpr) -> PrimExpr:
        c = i[ax]
        eps = const(epsilon, x.dtype)
        out = (x[i] - moving_mean[c]) * tir.rsqrt(moving_var[c] + eps)
        out = out * gamma[c] if scale else out
        return out + beta[c] if center else out

    out = te.compute(x.shape, body, name="T_batch_norm")
    mean = te.compute(moving_mean.shape, lambda *i: moving_mean[i], name="T_batch_norm_mean")
    var = te.compute(moving_var.shape, lambda *i: moving_var[i], name="T_batch_norm_var")
    return [out, mean, var]


def _moments(x: Tensor, stat_shape: Sequence[PrimExpr], count: PrimExpr,
             source: object, name: str) -> tuple[Tensor, Tensor]:  # fmt: skip
    """Mean and variance: `source(i, reduce_vars)` gives the x index and reduce axes."""

    def mean_body(*i: PrimExpr) -> PrimExpr:
        src, axes = source(i)  # type: ignore[operator]  # an index builder
        return te.sum(x[src], axis=axes)

    total = te.compute(stat_shape, mean_body, name=f"{name}_sum")
    mean = te.compute(stat_shape, lambda *i: total[i] / cast(count, x.dtype), name=f"{name}_mean")

    def var_body(*i: PrimExpr) -> PrimExpr:
        src, axes = source(i)  # type: ignore[operator]  # an index builder
        d = x[src] - mean[i]
        return te.sum(d * d, axis=axes)

    sq = te.compute(stat_shape, var_body, name=f"{name}_sqsum")
    var = te.compute(stat_shape, lambda *i: sq[i] / cast(count, x.dtype), name=f"{name}_var")
    return mean, var


def layer_norm(
    x: Tensor, gamma: Tensor, beta: Tensor, axes: int | Sequence[int] = -1,
    epsilon: float = 1e-5, center: bool = True, scale: bool = True,
) -> Tensor:  # fmt: skip
    """Normalize over `axes`, then scale by `gamma` and shift by `beta` (shaped like those axes).

    Example:
        >>> from unity import te
        >>> x = te.placeholder((2, 3, 4), name="x")
        >>> g, b = te.placeholder((3, 4), name="g"), te.placeholder((3, 4), name="b")
        >>> layer_norm(x, g, b, axes=[1, 2]).shape[2].value
        4
    """
    order = [a % x.ndim for a in ((axes,) if isinstance(axes, int) else axes)]
    red = normalize_axes(x.ndim, order)
    stat_shape = [const(1, d.dtype) if k in red else d for k, d in enumerate(x.shape)]

    def source(i: tuple[PrimExpr, ...]) -> tuple[tuple[PrimExpr, ...], list[object]]:
        rv = {a: te.reduce_axis((0, x.shape[a]), name=f"k{a}") for a in red}
        return tuple(rv[k].var if k in red else v for k, v in enumerate(i)), list(rv.values())

    count = product([x.shape[a] for a in red])
    mean, var = _moments(x, stat_shape, count, source, "T_layer_norm")

    def body(*i: PrimExpr) -> PrimExpr:
        at = tuple(const(0, v.dtype) if k in red else v for k, v in enumerate(i))
        out = (x[i] - mean[at]) * tir.rsqrt(var[at] + const(epsilon, x.dtype))
        p = tuple(i[a] for a in order)
        out = out * gamma[p] if scale else out
        return out + beta[p] if center else out

    return te.compute(x.shape, body, name="T_layer_norm")


def group_norm(
    x: Tensor, gamma: Tensor, beta: Tensor, num_groups: int, channel_axis: int = 1,
    axes: Sequence[int] = (2, 3), epsilon: float = 1e-5, center: bool = True, scale: bool = True,
) -> Tensor:  # fmt: skip
    """Normalize each group of `channels / num_groups` channels over itself and `axes`.

    Raises:
        ValueError: the (constant) channel count does not divide into `num_groups`.

    Example:
        >>> from unity import te
        >>> x = te.placeholder((2, 4, 3, 3), name="x")
        >>> g, b = te.placeholder((4,), name="g"), te.placeholder((4,), name="b")
        >>> group_norm(x, g, b, num_groups=2).op.name
        'T_group_norm'
    """
    (ca,) = normalize_axes(x.ndim, channel_axis)
    red = normalize_axes(x.ndim, list(axes))
    channels = x.shape[ca]
    if const_int(channels) is not None and const_int(channels) % num_groups:  # type: ignore[operator]
        raise ValueError(
            f"group_norm: {const_int(channels)} channels do not divide into {num_groups} groups"
        )
    per = (
        const(const_int(channels) // num_groups, channels.dtype)
        if const_int(channels)
        else channels // num_groups
    )
    stat_shape = [const(num_groups, d.dtype) if k == ca else const(1, d.dtype) if k in red else d
                  for k, d in enumerate(x.shape)]  # fmt: skip

    def source(i: tuple[PrimExpr, ...]) -> tuple[tuple[PrimExpr, ...], list[object]]:
        rc = te.reduce_axis((0, per), name="rc")
        rv = {a: te.reduce_axis((0, x.shape[a]), name=f"k{a}") for a in red}
        src = tuple(v * per + rc.var if k == ca else rv[k].var if k in red else v
                    for k, v in enumerate(i))  # fmt: skip
        return src, [rc, *rv.values()]

    count = product([per, *(x.shape[a] for a in red)])
    mean, var = _moments(x, stat_shape, count, source, "T_group_norm")

    def body(*i: PrimExpr) -> PrimExpr:
        at = tuple(
            v // per if k == ca else const(0, v.dtype) if k in red else v for k, v in enumerate(i)
        )
        out = (x[i] - mean[at]) * tir.rsqrt(var[at] + const(epsilon, x.dtype))
        c = i[ca]
        out = out * gamma[c] if scale else out
        return out + beta[c] if center else out

    return te.compute(x.shape, body, name="T_group_norm")
