"""`nn.conv2d` and `nn.conv2d_transpose` (NCHW/NHWC data, groups, dilation, padding); conv2d
also takes channel-blocked data ("NCHW16c": (N, C/16, H, W, 16)) with an OIHW kernel, and
writes NCHW data straight into a blocked result (``out_layout="NCHW16c"``).

Example:
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 3, 32, 32), "float32"))
    >>> w = Var("w", TensorStructInfo((16, 3, 3, 3), "float32"))
    >>> conv2d(x, w, padding=1).attrs.padding
    (1, 1, 1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from unity.relax.expr import Attrs, Call, Expr
from unity.relax.op.base import RelaxOp, fail, register_op, tensor_arg, unify_dtype
from unity.relax.op.nn.layout import axis_of, conv_out_dim, padding4, pair
from unity.relax.struct_info import StructInfo, TensorStructInfo, format_shape, prove_not_equal
from unity.topi.nn.layout import blocked_layout


@dataclass(frozen=True, slots=True)
class Conv2DAttrs(Attrs):
    """Strides, padding (top, left, bottom, right), dilation, groups and layouts.

    `out_layout` None means the result is in `data_layout` (as in TVM); conv2d also takes a
    blocked "NCHW{b}c" with NCHW data, an OIHW kernel and groups=1 (conv2d_transpose none).

    Example:
        >>> from unity import relax
        >>> img = relax.Var("img", relax.TensorStructInfo((1, 4, 8, 8), "float32"))
        >>> w = relax.Var("w", relax.TensorStructInfo((8, 4, 3, 3), "float32"))
        >>> attrs = conv2d(img, w, padding=(1, 1)).attrs
        >>> attrs.padding, attrs.strides, attrs.data_layout
        ((1, 1, 1, 1), (1, 1), 'NCHW')
    """

    strides: tuple[int, int] = (1, 1)
    padding: tuple[int, int, int, int] = (0, 0, 0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1
    data_layout: str = "NCHW"
    kernel_layout: str = "OIHW"
    out_layout: str | None = None
    out_dtype: str | None = None
    output_padding: tuple[int, int] = (0, 0)


def _dims(call: Call, sinfo: TensorStructInfo, layout: str, letters: str, what: str) -> list[sympy.Expr]:
    if blocked_layout(layout) is not None:
        raise fail(call, f"does not take the blocked layout \"{layout}\"")
    if sinfo.ndim != 4:
        raise fail(call, f"expects a 4-D {what}, got rank {sinfo.ndim}")
    assert sinfo.shape is not None
    try:
        return [sinfo.shape[axis_of(layout, c)] for c in letters]
    except ValueError as err:
        raise fail(call, str(err)) from None


def _blocked_dims(call: Call, x: TensorStructInfo, attrs: Conv2DAttrs,
                  block: int) -> list[sympy.Expr]:  # fmt: skip
    """(N, C, H, W) of data in the blocked `attrs.data_layout`, after checking its shape."""
    layout, kernel = attrs.data_layout, attrs.kernel_layout
    if kernel != "OIHW":
        raise fail(call, f'takes kernel_layout "OIHW" with data_layout "{layout}", got "{kernel}"')
    wanted = f"(N, C/{block}, H, W, {block})"
    if x.ndim != 5:
        raise fail(call, f'expects 5-D data {wanted} for data_layout "{layout}", got rank {x.ndim}')
    assert x.shape is not None
    n, blocks, h, w, lanes = x.shape
    if prove_not_equal(lanes, block) or not blocks.is_number:
        shape = format_shape(x.shape)
        raise fail(call, f'expects data {wanted} for data_layout "{layout}", got {shape}')
    return [n, blocks * block, h, w]


def _check_blocks(call: Call, c: sympy.Expr, o: sympy.Expr, groups: int, block: int) -> None:
    """The output channels, and each group's channels, must be whole blocks (or depthwise)."""
    if not o.is_number or int(o) % block:
        raise fail(call, f"expects output channels ({o}) divisible by the block {block}")
    if groups == 1 or int(c) == int(o) == groups:
        return
    ci, co = int(c) // groups, int(o) // groups
    if ci % block or co % block:
        msg = f"with groups={groups} expects C/groups ({ci}) and O/groups ({co}) divisible by"
        raise fail(call, f"{msg} the block {block}, or a depthwise conv (groups = C = O)")


def _out_block(call: Call, attrs: Conv2DAttrs) -> int | None:
    """The block of a blocked `out_layout` written from NCHW data, after checking the
    layouts and groups; None when the result is in `data_layout`."""
    out, data, kernel = attrs.out_layout, attrs.data_layout, attrs.kernel_layout
    if out is None or out == data:
        return None
    blocked = blocked_layout(out)
    if blocked is None:
        msg = f'takes out_layout None, the data_layout "{data}" or a blocked "NCHW{{b}}c"'
        raise fail(call, f'{msg}, got "{out}"')
    if data != "NCHW":
        raise fail(call, f'writes out_layout "{out}" only from data_layout "NCHW", got "{data}"')
    if kernel != "OIHW":
        msg = f'writes out_layout "{out}" only with kernel_layout "OIHW"'
        raise fail(call, f'{msg}, got "{kernel}"')
    if attrs.groups != 1:
        raise fail(call, f'writes out_layout "{out}" only with groups=1, got groups={attrs.groups}')
    return blocked[1]


def _check_divides(call: Call, dim: sympy.Expr, groups: int, what: str) -> None:
    if dim.is_number and int(dim) % groups:
        raise fail(call, f"expects {what} ({dim}) divisible by groups={groups}")


def _conv_common(call: Call) -> tuple[TensorStructInfo, TensorStructInfo, Conv2DAttrs, str]:
    x, w = tensor_arg(call, 0, "data"), tensor_arg(call, 1, "weight")
    attrs = call.attrs
    assert isinstance(attrs, Conv2DAttrs)
    dtype = attrs.out_dtype or unify_dtype(call, [x.dtype, w.dtype])
    return x, w, attrs, dtype


def _result(attrs: Conv2DAttrs, n: sympy.Expr, c: sympy.Expr, h: sympy.Expr, w: sympy.Expr,
            dtype: str) -> TensorStructInfo:  # fmt: skip
    layout = attrs.out_layout or attrs.data_layout
    blocked = blocked_layout(layout)
    if blocked is not None:
        return TensorStructInfo((n, c / blocked[1], h, w, blocked[1]), dtype)
    by_letter = {"N": n, "C": c, "H": h, "W": w}
    return TensorStructInfo(tuple(by_letter[ch] for ch in layout), dtype)


def _infer_conv2d(call: Call) -> StructInfo:
    x, w, attrs, dtype = _conv_common(call)
    blocked, out_block = blocked_layout(attrs.data_layout), _out_block(call, attrs)
    if x.shape is None or w.shape is None:
        return TensorStructInfo(None, dtype, 4 if blocked is None and out_block is None else 5)
    if blocked is None:
        n, c, h, wd = _dims(call, x, attrs.data_layout, "NCHW", "data")
    else:
        n, c, h, wd = _blocked_dims(call, x, attrs, blocked[1])
    o, i, kh, kw = _dims(call, w, attrs.kernel_layout, "OIHW", "weight")
    if prove_not_equal(c, i * attrs.groups):
        msg = f"expects data channels {c} = weight in-channels {i} * groups {attrs.groups}"
        raise fail(call, f"{msg} (data {format_shape(x.shape)}, weight {format_shape(w.shape)})")
    _check_divides(call, o, attrs.groups, "output channels")
    if blocked is not None:
        _check_blocks(call, c, o, attrs.groups, blocked[1])
    if out_block is not None:
        _check_blocks(call, c, o, 1, out_block)
    (sh, sw), (dh, dw), (pt, pl, pb, pr) = attrs.strides, attrs.dilation, attrs.padding
    oh = conv_out_dim(h, kh, pt, pb, sh, dh)
    ow = conv_out_dim(wd, kw, pl, pr, sw, dw)
    for dim, name in ((oh, "height"), (ow, "width")):
        if dim.is_number and dim < 1:
            raise fail(call, f"gives an empty output {name} ({dim}): the kernel exceeds the input")
    return _result(attrs, n, o, oh, ow, dtype)


def _make_attrs(strides: int | Sequence[int], padding: int | Sequence[int],
                dilation: int | Sequence[int], groups: int, data_layout: str,
                kernel_layout: str, out_dtype: str | None, output_padding: int | Sequence[int] = 0,
                out_layout: str | None = None) -> Conv2DAttrs:  # fmt: skip
    return Conv2DAttrs(
        strides=pair(strides, "strides"), padding=padding4(padding),
        dilation=pair(dilation, "dilation"), groups=groups, data_layout=data_layout,
        kernel_layout=kernel_layout, out_layout=out_layout, out_dtype=out_dtype,
        output_padding=pair(output_padding, "output_padding"),
    )  # fmt: skip


@register_op("nn.conv2d", infer=_infer_conv2d)
def conv2d(
    op: RelaxOp, data: Expr, weight: Expr, strides: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1, groups: int = 1,
    data_layout: str = "NCHW", kernel_layout: str = "OIHW", out_dtype: str | None = None,
    out_layout: str | None = None,
) -> Call:  # fmt: skip
    """2-D convolution; `kernel_layout` "OIHW" or "HWIO" etc. (weight in-channels = C / groups).

    A channel-blocked `data_layout` ("NCHW16c") takes 5-D data (N, C/16, H, W, 16) and an
    OIHW kernel, and gives (N, O/16, OH, OW, 16); O, and with groups C/groups and O/groups
    (unless depthwise), must be multiples of the block.  `out_layout` (None: `data_layout`)
    may be blocked for NCHW data with an OIHW kernel and groups=1: the NCHW data (any number
    of channels, an image's 3) gives (N, O/16, OH, OW, 16) directly, O a multiple of 16.

    Example:
        >>> conv2d(x, w, strides=2).attrs.strides  # doctest: +SKIP
        (2, 2)
        >>> conv2d(img, w, out_layout="NCHW16c").struct_info.shape  # doctest: +SKIP
        (1, 2, 30, 30, 16)
    """
    attrs = _make_attrs(strides, padding, dilation, groups, data_layout, kernel_layout, out_dtype,
                        out_layout=out_layout)  # fmt: skip
    return Call(op, (data, weight), attrs)


def _infer_conv2d_transpose(call: Call) -> StructInfo:
    x, w, attrs, dtype = _conv_common(call)
    if attrs.out_layout is not None:
        msg = "takes no out_layout (its result is in data_layout)"
        raise fail(call, f'{msg}, got "{attrs.out_layout}"')
    if x.shape is None or w.shape is None:
        return TensorStructInfo(None, dtype, 4)
    n, c, h, wd = _dims(call, x, attrs.data_layout, "NCHW", "data")
    i, o, kh, kw = _dims(call, w, attrs.kernel_layout, "IOHW", "weight")
    if prove_not_equal(c, i):
        raise fail(call, f"expects data channels {c} = weight in-channels {i}")
    _check_divides(call, c, attrs.groups, "input channels")
    (sh, sw), (dh, dw), (pt, pl, pb, pr) = attrs.strides, attrs.dilation, attrs.padding
    oph, opw = attrs.output_padding
    oh = (h - 1) * sh - pt - pb + dh * (kh - 1) + oph + 1
    ow = (wd - 1) * sw - pl - pr + dw * (kw - 1) + opw + 1
    return _result(attrs, n, o * attrs.groups, sympy.expand(oh), sympy.expand(ow), dtype)


@register_op("nn.conv2d_transpose", infer=_infer_conv2d_transpose)
def conv2d_transpose(
    op: RelaxOp, data: Expr, weight: Expr, strides: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0, output_padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1, groups: int = 1, data_layout: str = "NCHW",
    kernel_layout: str = "IOHW", out_dtype: str | None = None,
) -> Call:  # fmt: skip
    """Transposed 2-D convolution (the gradient of conv2d); weight is (C, O / groups, KH, KW).

    Example:
        >>> conv2d_transpose(x, w, strides=2).attrs.strides  # doctest: +SKIP
        (2, 2)
    """
    attrs = _make_attrs(strides, padding, dilation, groups, data_layout, kernel_layout,
                        out_dtype, output_padding)  # fmt: skip
    return Call(op, (data, weight), attrs)
