"""`nn.max_pool2d`, `nn.avg_pool2d` and `nn.adaptive_avg_pool2d` (NCHW, NHWC, or channel-blocked
"NCHW16c": 5-D (N, C/16, H, W, 16), pooled over axes 2 and 3).

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 3, 32, 32), "float32"))
    >>> max_pool2d(x, 2, 2).attrs.pool_size
    (2, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import RelaxOp, fail, register_op, tensor_arg
from unity.relax.op.nn.layout import conv_out_dim, padding4, pair
from unity.relax.struct_info import StructInfo, TensorStructInfo, format_shape, prove_not_equal
from unity.topi.nn.layout import blocked_layout, layout_ndim, spatial_axes


@dataclass(frozen=True, slots=True)
class Pool2DAttrs(Attrs):
    """Window, strides, padding (top, left, bottom, right), dilation, rounding and layout.

    Example:
        >>> from unity import relax
        >>> img = relax.Var("img", relax.TensorStructInfo((1, 4, 8, 8), "float32"))
        >>> attrs = max_pool2d(img, pool_size=(2, 2), strides=(2, 2)).attrs
        >>> attrs.pool_size, attrs.padding, attrs.layout
        ((2, 2), (0, 0, 0, 0), 'NCHW')
    """

    pool_size: tuple[int, int]
    strides: tuple[int, int]
    padding: tuple[int, int, int, int] = (0, 0, 0, 0)
    dilation: tuple[int, int] = (1, 1)
    ceil_mode: bool = False
    count_include_pad: bool = False
    layout: str = "NCHW"


def _spatial(call: Call, x: TensorStructInfo, layout: str) -> tuple[int, int]:
    try:
        axes, rank = spatial_axes(layout), layout_ndim(layout)
    except ValueError as err:
        raise fail(call, str(err)) from None
    if x.ndim not in (-1, rank):
        raise fail(call, f"expects a {rank}-D input, got rank {x.ndim}")
    blocked = blocked_layout(layout)
    if blocked is not None and x.shape is not None and prove_not_equal(x.shape[4], blocked[1]):
        wanted = f"(N, C/{blocked[1]}, H, W, {blocked[1]})"
        raise fail(call, f'expects {wanted} for layout "{layout}", got {format_shape(x.shape)}')
    return axes


def _infer_pool(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, Pool2DAttrs)
    ah, aw = _spatial(call, x, attrs.layout)
    if x.shape is None:
        return TensorStructInfo(None, x.dtype, layout_ndim(attrs.layout))
    (kh, kw), (sh, sw), (dh, dw) = attrs.pool_size, attrs.strides, attrs.dilation
    pt, pl, pb, pr = attrs.padding
    dims = list(x.shape)
    dims[ah] = conv_out_dim(dims[ah], kh, pt, pb, sh, dh, attrs.ceil_mode)
    dims[aw] = conv_out_dim(dims[aw], kw, pl, pr, sw, dw, attrs.ceil_mode)
    if any(d.is_number and d < 1 for d in dims):
        raise fail(call, "gives an empty output: the window exceeds the padded input")
    return TensorStructInfo(tuple(dims), x.dtype)


def _pool(name: str) -> RelaxOp:
    def make(
        op: RelaxOp, x: Expr, pool_size: int | Sequence[int], strides: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
        ceil_mode: bool = False, count_include_pad: bool = False, layout: str = "NCHW",
    ) -> Call:  # fmt: skip
        size = pair(pool_size, "pool_size")
        stride = size if strides is None else pair(strides, "strides")
        attrs = Pool2DAttrs(size, stride, padding4(padding), pair(dilation, "dilation"),
                            ceil_mode, count_include_pad, layout)  # fmt: skip
        return Call(op, (x,), attrs)

    make.__doc__ = f"2-D {name.split('_')[0]} pooling over windows of `pool_size`."
    return register_op(f"nn.{name}", infer=_infer_pool)(make)


max_pool2d = _pool("max_pool2d")
avg_pool2d = _pool("avg_pool2d")


@dataclass(frozen=True, slots=True)
class AdaptivePool2DAttrs(Attrs):
    """Output (height, width) (None: keep the input's) and layout.

    Example:
        >>> from unity import relax
        >>> img = relax.Var("img", relax.TensorStructInfo((1, 4, 8, 8), "float32"))
        >>> adaptive_avg_pool2d(img, output_size=(1, 1)).attrs
        AdaptivePool2DAttrs(output_size=(1, 1), layout='NCHW')
    """

    output_size: tuple[int, int] | None = None
    layout: str = "NCHW"


def _infer_adaptive(call: Call) -> StructInfo:
    x = tensor_arg(call, 0, "input")
    attrs = call.attrs
    assert isinstance(attrs, AdaptivePool2DAttrs)
    ah, aw = _spatial(call, x, attrs.layout)
    if x.shape is None or attrs.output_size is None:
        return x
    dims = list(x.shape)
    dims[ah], dims[aw] = attrs.output_size  # type: ignore[assignment]  # ints become dims
    return TensorStructInfo(tuple(dims), x.dtype)


@register_op("nn.adaptive_avg_pool2d", infer=_infer_adaptive)
def adaptive_avg_pool2d(
    op: RelaxOp, x: Expr, output_size: int | Sequence[int] | None = None, layout: str = "NCHW"
) -> Call:
    """Average pooling to a fixed output size (global pooling with `output_size=1`).

    Example:
        >>> adaptive_avg_pool2d(x, 1).attrs.output_size  # doctest: +SKIP
        (1, 1)
    """
    size = None if output_size is None else pair(output_size, "output_size")
    return Call(op, (x,), AdaptivePool2DAttrs(size, layout))
