"""`nn.batch_norm`, `nn.layer_norm` and `nn.group_norm`.

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 8), "float32"))
    >>> g = Var("g", TensorStructInfo((8,), "float32"))
    >>> layer_norm(x, g, g, axes=-1).attrs.axes
    (-1,)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import (
    RelaxOp, fail, normalize_axis, register_op, tensor_arg, tuple_of, unify_dtype,
)  # fmt: skip
from unity.relax.struct_info import Dim, StructInfo, format_shape, prove_not_equal


def _check_param(call: Call, index: int, what: str, expected: Sequence[Dim] | None) -> None:
    sinfo = tensor_arg(call, index, what)
    if expected is None or sinfo.shape is None:
        return
    bad = len(sinfo.shape) != len(expected) or any(
        prove_not_equal(a, b) for a, b in zip(sinfo.shape, expected, strict=False)
    )
    if bad:
        want = format_shape(tuple(expected))
        raise fail(call, f"expects {what} of shape {want}, got {format_shape(sinfo.shape)}")


@dataclass(frozen=True, slots=True)
class BatchNormAttrs(Attrs):
    """Channel axis, epsilon, whether to apply beta/gamma, and the running-stat momentum.

    Example:
        >>> from unity import relax
        >>> img = relax.Var("img", relax.TensorStructInfo((1, 4, 8, 8), "float32"))
        >>> c = relax.Var("c", relax.TensorStructInfo((4,), "float32"))
        >>> attrs = batch_norm(img, c, c, c, c, epsilon=1e-3).attrs
        >>> attrs.axis, attrs.epsilon
        (1, 0.001)
    """

    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True
    momentum: float = 0.1


def _infer_batch_norm(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "data")
    attrs = call.attrs
    assert isinstance(attrs, BatchNormAttrs)
    unify_dtype(call, [tensor_arg(call, i).dtype for i in range(5)])
    channels = None
    if x.shape is not None:
        channels = (x.shape[normalize_axis(call, attrs.axis, x.ndim)],)
    for i, what in enumerate(("gamma", "beta", "moving_mean", "moving_var"), start=1):
        _check_param(call, i, what, channels)
    stat = tensor_arg(call, 3)
    return tuple_of([x, stat, stat])


@register_op("nn.batch_norm", infer=_infer_batch_norm)
def batch_norm(
    op: RelaxOp, data: Expr, gamma: Expr, beta: Expr, moving_mean: Expr, moving_var: Expr,
    axis: int = 1, epsilon: float = 1e-5, center: bool = True, scale: bool = True,
    momentum: float = 0.1,
) -> Call:  # fmt: skip
    """Normalize with the moving statistics; returns ``(out, new_mean, new_var)``.

    Example:
        >>> batch_norm(x, g, b, m, v).attrs.axis  # doctest: +SKIP
        1
    """
    attrs = BatchNormAttrs(axis, epsilon, center, scale, momentum)
    return Call(op, (data, gamma, beta, moving_mean, moving_var), attrs)


@dataclass(frozen=True, slots=True)
class LayerNormAttrs(Attrs):
    """Axes normalized over, epsilon, and whether to apply beta/gamma.

    Example:
        >>> from unity import relax
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> g = relax.Var("g", relax.TensorStructInfo((3,), "float32"))
        >>> layer_norm(x, g, g, axes=[-1]).attrs
        LayerNormAttrs(axes=(-1,), epsilon=1e-05, center=True, scale=True)
    """

    axes: tuple[int, ...]
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True


def _infer_layer_norm(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "data")
    attrs = call.attrs
    assert isinstance(attrs, LayerNormAttrs)
    unify_dtype(call, [x.dtype, tensor_arg(call, 1).dtype, tensor_arg(call, 2).dtype])
    if x.shape is None:
        return x
    axes = [normalize_axis(call, a, x.ndim) for a in attrs.axes]
    expected = [x.shape[a] for a in axes]
    _check_param(call, 1, "gamma", expected)
    _check_param(call, 2, "beta", expected)
    return x


@register_op("nn.layer_norm", infer=_infer_layer_norm)
def layer_norm(
    op: RelaxOp, data: Expr, gamma: Expr, beta: Expr, axes: int | Sequence[int] = -1,
    epsilon: float = 1e-5, center: bool = True, scale: bool = True,
) -> Call:  # fmt: skip
    """Normalize over `axes`, then scale by `gamma` and shift by `beta`.

    Example:
        >>> layer_norm(x, g, b, axes=[-1]).attrs.epsilon  # doctest: +SKIP
        1e-05
    """
    axes_t = (axes,) if isinstance(axes, int) else tuple(axes)
    return Call(op, (data, gamma, beta), LayerNormAttrs(axes_t, epsilon, center, scale))


@dataclass(frozen=True, slots=True)
class GroupNormAttrs(Attrs):
    """Number of channel groups, the channel axis, the normalized axes, epsilon.

    Example:
        >>> from unity import relax
        >>> img = relax.Var("img", relax.TensorStructInfo((1, 4, 8, 8), "float32"))
        >>> g = relax.Var("g", relax.TensorStructInfo((4,), "float32"))
        >>> attrs = group_norm(img, g, g, num_groups=2).attrs
        >>> attrs.num_groups, attrs.axes
        (2, (2, 3))
    """

    num_groups: int
    channel_axis: int = 1
    axes: tuple[int, ...] = (2, 3)
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True


def _infer_group_norm(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "data")
    attrs = call.attrs
    assert isinstance(attrs, GroupNormAttrs)
    unify_dtype(call, [x.dtype, tensor_arg(call, 1).dtype, tensor_arg(call, 2).dtype])
    if x.shape is None:
        return x
    channels = x.shape[normalize_axis(call, attrs.channel_axis, x.ndim)]
    if channels.is_number and int(channels) % attrs.num_groups:
        raise fail(call, f"expects channels ({channels}) divisible by num_groups={attrs.num_groups}")
    _check_param(call, 1, "gamma", [channels])
    _check_param(call, 2, "beta", [channels])
    return x


@register_op("nn.group_norm", infer=_infer_group_norm)
def group_norm(
    op: RelaxOp, data: Expr, gamma: Expr, beta: Expr, num_groups: int, channel_axis: int = 1,
    axes: Sequence[int] = (2, 3), epsilon: float = 1e-5, center: bool = True, scale: bool = True,
) -> Call:  # fmt: skip
    """Normalize each group of channels over itself and `axes`, then scale and shift.

    Example:
        >>> group_norm(x, g, b, num_groups=2).attrs.num_groups  # doctest: +SKIP
        2
    """
    attrs = GroupNormAttrs(num_groups, channel_axis, tuple(axes), epsilon, center, scale)
    return Call(op, (data, gamma, beta), attrs)


__all__ = ["batch_norm", "group_norm", "layer_norm"]
