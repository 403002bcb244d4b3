"""Shape and layout ONNX ops: Shape, Reshape, Squeeze/Unsqueeze, Slice, Expand, Tile, Pad...

Symbolic shapes stay symbolic: `Shape` of a tensor with dim ``seq`` gives a
`SymTensor`, and `Reshape`/`Expand`/`ConstantOfShape`/`Range` accept one.

Example:
    >>> "Reshape" in CONVERTERS and "ConstantOfShape" in CONVERTERS
    True
"""

from __future__ import annotations

import re

import numpy as np
import sympy

from unity.relax import op as R
from unity.relax.expr import Expr, ShapeExpr, TupleGetItem
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter, axes_input
from unity.relax.frontend.onnx.symbolic import make_value
from unity.relax.op.base import product
from unity.relax.struct_info import Dim, TensorStructInfo, prove_equal, sym

INT64_MAX = 2**63 - 1


def _shape(ctx: Context, node: NodeView) -> Value:
    dims = ctx.shape(node.input(0))
    start, end = node.attr("start", 0), node.attr("end", len(dims))
    picked = np.empty(len(dims[start:end]), dtype=object)
    picked[:] = list(dims[start:end])
    return make_value(picked)


def _size(ctx: Context, node: NodeView) -> Value:
    out = np.empty((), dtype=object)
    out[()] = product(ctx.shape(node.input(0)))
    return make_value(out)


def _reshape(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    target = ctx.dims(node.input(1), "shape")
    if not node.attr("allowzero", 0):
        shape = ctx.shape(x)
        target = [shape[i] if d == 0 else d for i, d in enumerate(target)]
    return ctx.emit(R.reshape(x, target))


def _flatten(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    shape = ctx.shape(x)
    axis = node.attr("axis", 1)
    axis = axis + len(shape) if axis < 0 else axis
    return ctx.emit(R.reshape(x, (product(shape[:axis]), product(shape[axis:]))))


def _squeeze(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    axes = axes_input(ctx, node, 1)
    return ctx.emit(R.squeeze(x, axes))


def _unsqueeze(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    axes = axes_input(ctx, node, 1)
    if axes is None:
        raise ctx.fail("needs axes")
    rank = ctx.ndim(x) + len(axes)
    return ctx.emit(R.expand_dims(x, sorted(ctx.normalize_axes(axes, rank))))


def _transpose(ctx: Context, node: NodeView) -> Value:
    perm = node.attr("perm")
    return ctx.emit(R.permute_dims(ctx.expr(node.input(0)), None if perm is None else list(perm)))


_CONCAT_GROUP = 8
"""Parts joined per step when a Concat of many parts has lengths known only at run time."""


def _concat(ctx: Context, node: NodeView) -> Value:
    given = [v for v in node.inputs if v is not None]
    parts = [ctx.expr(v) for v in given]
    axis = node.attr("axis", 0)
    if len(parts) > 2 * _CONCAT_GROUP:
        parts = _grouped(ctx, parts, axis)
    out = ctx.emit(R.concat(parts, axis))
    if ctx.ndim(out) == 1 and "int" in ctx.dtype(out):  # lengths: keep the entries known now
        entries: list[Dim | None] = []
        for v in given:
            count = ctx.shape(v)[0]
            if not count.is_number:
                return out
            known = ctx.dims(v, "input") if ctx.is_known(v) else ctx.entries.get(ctx.expr(v))
            entries += list(known) if known is not None else [None] * int(count)
        ctx.entries[out] = entries
    return out


def _grouped(ctx: Context, parts: list[Expr], axis: int) -> list[Expr]:
    """Many parts of run-time lengths (SSDlite joins 90 classes' detections) joined in
    groups first, each group's length a fresh symbol: a part's offset in one concat is
    the sum of the lengths before it, and 90 such sums make an expression quadratic in
    the parts that compiling walks again and again."""
    axis = ctx.normalize_axes([axis], ctx.ndim(parts[0]))[0]
    if all(ctx.shape(p)[axis].is_number for p in parts):
        return parts
    base = ctx.symbol_base("concat")
    out = []
    for g in range(0, len(parts), _CONCAT_GROUP):
        group = ctx.emit(R.concat(parts[g:g + _CONCAT_GROUP], axis))
        sinfo = ctx.sinfo(group)
        length = sinfo.shape[axis]
        if not isinstance(length, sympy.Symbol | sympy.Integer):
            dims = list(sinfo.shape)
            dims[axis] = ctx.lengths.setdefault(length, sym(f"{base}_group{g // _CONCAT_GROUP}"))
            group = ctx.bb.match_cast(group, TensorStructInfo(tuple(dims), sinfo.dtype))
        out.append(group)
    return out


def _split_sizes(ctx: Context, node: NodeView, dim: Dim) -> list[int] | None:
    split = node.attr("split") if node.opset < 13 else None
    if split is None and node.input(1) is not None:
        split = ctx.ints(node.input(1), "split")
    if split is not None:
        return [int(s) for s in split]
    parts = node.attr("num_outputs", node.num_outputs)
    if not dim.is_number:
        return None
    chunk = -(-int(dim) // parts)
    return [min(chunk, int(dim) - i * chunk) for i in range(parts)]


def _split(ctx: Context, node: NodeView) -> list[Value]:
    x = ctx.expr(node.input(0))
    axis = ctx.normalize_axes([node.attr("axis", 0)], ctx.ndim(x))[0]
    sizes = _split_sizes(ctx, node, ctx.shape(x)[axis])
    return split_parts(ctx, x, sizes if sizes is not None else node.attr("num_outputs", node.num_outputs), axis)


def split_parts(ctx: Context, x: Expr, sizes: list[int] | int, axis: int) -> list[Value]:
    """`x` split on `axis` into parts of `sizes` (or into that many equal parts).

    Example:
        >>> split_parts(ctx, x, [2, 3], 0)  # doctest: +SKIP
    """
    parts = sizes if isinstance(sizes, int) else list(np.cumsum(sizes[:-1]).tolist())
    tup = ctx.emit(R.split(x, parts, axis))
    count = sizes if isinstance(sizes, int) else len(sizes)
    return [ctx.emit(TupleGetItem(tup, i)) for i in range(count)]


def _slice_bound(ctx: Context, value: Dim, dim: Dim, is_end: bool) -> int | Dim:
    if value.is_number:
        return int(value)
    if prove_equal(value, dim):
        return INT64_MAX if is_end else 0
    if not value.is_nonnegative:
        raise ctx.fail(f"slices with the symbolic bound {value}, which may be negative "
                       f"(counted from the end of the axis {dim})")  # fmt: skip
    return value


def _slice(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    shape = ctx.shape(x)
    if node.opset < 10:
        starts, ends = node.attr("starts"), node.attr("ends")
        axes, steps = node.attr("axes"), None
        starts, ends = [sympy.Integer(s) for s in starts], [sympy.Integer(e) for e in ends]
    else:
        starts, ends = ctx.dims(node.input(1), "starts"), ctx.dims(node.input(2), "ends")
        axes = None if node.input(3) is None else ctx.ints(node.input(3), "axes")
        steps = None if node.input(4) is None else ctx.ints(node.input(4), "steps")
    axes = ctx.normalize_axes(list(range(len(starts))) if axes is None else list(axes), len(shape))
    steps = [1] * len(starts) if steps is None else list(steps)
    begin = [_slice_bound(ctx, s, shape[a], False) for s, a in zip(starts, axes, strict=True)]
    end = [_slice_bound(ctx, e, shape[a], True) for e, a in zip(ends, axes, strict=True)]
    end = [e if isinstance(e, sympy.Expr) else min(e, INT64_MAX) if e >= 0 else max(e, -INT64_MAX)
           for e in end]  # fmt: skip
    for b, e, step in zip(begin, end, steps, strict=True):
        if step < 0 and (isinstance(b, sympy.Expr) or isinstance(e, sympy.Expr)):
            raise ctx.fail(f"slices backwards (step {step}) from the symbolic bound {b}:{e}")
    out = ctx.emit(R.strided_slice(x, axes, begin, end, steps))
    return _assume_bounds_in_axis(ctx, out, [b for b in begin + end if isinstance(b, sympy.Expr)])


def _assume_bounds_in_axis(ctx: Context, out: Expr, bounds: list[Dim]) -> Expr:
    """A slice ``[0:seq]`` of an axis of 128 is ``min(seq, 128)`` long.  Exported models
    mean ``seq`` (position ids of a text shorter than the table): the result is cast to
    that shape, checked when the model runs."""
    shape = ctx.shape(out)
    clamped = {m: next(a for a in m.args if a in bounds)
               for d in shape for m in d.atoms(sympy.Min) if set(m.args) & set(bounds)}  # fmt: skip
    if not clamped:
        return out
    meant = tuple(d.xreplace(clamped) for d in shape)
    name = re.sub(r"\W", "_", ctx.node.name.strip("/") if ctx.node else "slice") + "_bounds"
    return ctx.bb.match_cast(out, TensorStructInfo(meant, ctx.dtype(out)), name_hint=name)


def _expand(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    target = ctx.dims(node.input(1), "shape")
    shape = list(ctx.shape(x))
    rank = max(len(shape), len(target))
    shape = [sympy.Integer(1)] * (rank - len(shape)) + shape
    target = [sympy.Integer(1)] * (rank - len(target)) + target
    out = [s if t == 1 else t for s, t in zip(shape, target, strict=True)]
    return ctx.emit(R.broadcast_to(x, out))


def _tile(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    repeats = ctx.dims(node.input(1), "repeats")  # symbolic too: DETR tiles by the batch
    shape = ctx.shape(x)
    if len(repeats) != len(shape):
        raise ctx.fail(f"expects {len(shape)} repeats for a rank-{len(shape)} input, got {len(repeats)}")
    spread = ctx.emit(R.expand_dims(x, [2 * i for i in range(len(shape))]))
    pairs = [d for r, s in zip(repeats, shape, strict=True) for d in (r, s)]
    wide = ctx.emit(R.broadcast_to(spread, pairs))
    return ctx.emit(R.reshape(wide, [r * s for r, s in zip(repeats, shape, strict=True)]))


def _pad(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    ndim = ctx.ndim(x)
    mode = node.attr("mode", "constant")
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise ctx.fail(f"mode {mode!r} is not supported (constant, edge, reflect, wrap)")
    if node.opset < 11:
        pads, value = list(node.attr("pads", node.attr("paddings", []))), float(node.attr("value", 0.0))
        axes = list(range(ndim))
    else:
        pads = ctx.ints(node.input(1), "pads")
        fill = node.input(2)
        value = 0.0 if fill is None or not ctx.is_known(fill) else float(ctx.const(fill, "constant_value").reshape(-1)[0])
        axes = list(range(ndim)) if node.input(3) is None else ctx.ints(node.input(3), "axes")
    axes = ctx.normalize_axes(axes, ndim)
    if len(pads) != 2 * len(axes):
        raise ctx.fail(f"expects {2 * len(axes)} pads, got {len(pads)}")
    width = [0] * (2 * ndim)
    for i, a in enumerate(axes):
        width[2 * a], width[2 * a + 1] = pads[i], pads[i + len(axes)]
    out = x
    if mode == "wrap":
        out = _wrap(ctx, x, width)
    elif any(w > 0 for w in width):
        out = ctx.emit(R.nn.pad(x, [max(w, 0) for w in width], value, mode))
        if node.opset >= 11 and node.input(2) is not None and not ctx.is_known(node.input(2)):
            out = _fill_padding(ctx, x, out, [max(w, 0) for w in width], ctx.expr(node.input(2)))
    crop = [a for a in range(ndim) if width[2 * a] < 0 or width[2 * a + 1] < 0]
    if crop:
        begin = [-min(width[2 * a], 0) for a in crop]
        end = [min(width[2 * a + 1], 0) or INT64_MAX for a in crop]
        out = ctx.emit(R.strided_slice(out, crop, begin, end))
    return out


def _wrap(ctx: Context, x: Expr, width: list[int]) -> Expr:
    """Pad each axis with its own far end: ``out[i] = x[(i - before) % size]`` (negative
    widths are left to the crop that follows)."""
    out = x
    for axis, size in enumerate(ctx.shape(x)):
        before, after = max(width[2 * axis], 0), max(width[2 * axis + 1], 0)
        if before == after == 0:
            continue
        if not size.is_number or int(size) == 0:
            raise ctx.fail(f"mode 'wrap' needs a static, non-empty axis {axis}, got {size}")
        rows = np.arange(-before, int(size) + after) % int(size)
        out = ctx.emit(R.take(out, ctx.expr(rows.astype("int64")), axis))
    return out


def _fill_padding(ctx: Context, x: Expr, padded: Expr, width: list[int], fill: Expr) -> Expr:
    """Replace the padding of `padded` with the run-time scalar `fill`."""
    inside = ctx.emit(R.nn.pad(ctx.emit(R.ones(ctx.shape(x), "bool")), width, 0.0))
    return ctx.emit(R.where(inside, padded, ctx.emit(R.reshape(fill, ()))))


def _fill_value(ctx: Context, node: NodeView) -> np.ndarray:
    value = node.attr("value")
    return np.zeros((), "float32") if value is None else np.asarray(value).reshape(())


def _constant_of_shape(ctx: Context, node: NodeView) -> Value:
    dims = ctx.dims(node.input(0), "shape")
    fill = _fill_value(ctx, node)
    if all(d.is_number for d in dims):
        return np.full([int(d) for d in dims], fill, dtype=fill.dtype)
    return ctx.emit(R.full(ShapeExpr(tuple(dims)), ctx.expr(fill), str(fill.dtype)))


def _constant(ctx: Context, node: NodeView) -> Value:
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in node.attrs:
            value = node.attrs[key]
            dtype = "float32" if "float" in key else "int64" if "int" in key else None
            return np.asarray(value, dtype=dtype)
    raise ctx.fail(f"has no supported value attribute (got {sorted(node.attrs)})")


def _range(ctx: Context, node: NodeView) -> Value:
    start, limit, delta = (node.input(i) for i in range(3))
    dtype = ctx.dtype(start)
    first, step = (_range_end(ctx, v, dtype, what) for v, what in ((start, "start"), (delta, "delta")))
    end = ctx.dims(limit, "limit")[0]
    count = sympy.Max(sympy.ceiling((end - first) / step), 0)
    count = sympy.simplify(count)
    ones = ctx.emit(R.ones(ShapeExpr((count,)), dtype))
    positions = ctx.emit(R.subtract(ctx.emit(R.cumsum(ones, 0)), ctx.scalar(1, dtype)))
    scaled = ctx.emit(R.multiply(positions, _range_scalar(ctx, delta, step, dtype)))
    return ctx.emit(R.add(scaled, _range_scalar(ctx, start, first, dtype)))


def _range_end(ctx: Context, value: Value, dtype: str, what: str) -> Dim | float:
    """A Range bound as a sympy dim (integers; floats cast from shape values, as Funnel's
    ``arange(-2 * seq, 2 * seq)``) or a float."""
    if dtype.startswith("int") or not isinstance(value, np.ndarray | np.generic):
        return ctx.dims(value, what)[0]
    return ctx.const(value, what).item()


def _range_scalar(ctx: Context, value: Value, number: Dim | float, dtype: str) -> Expr:
    """`number` as a 0-d tensor of `dtype`: a constant when it is one, else `value`."""
    if isinstance(number, float) or sympy.sympify(number).is_number:
        return ctx.scalar(float(number) if "float" in dtype else int(number), dtype)
    expr = ctx.expr(value)
    return ctx.emit(R.reshape(expr, ())) if ctx.ndim(expr) else expr


def _depth_to_space(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    n, c, h, w = ctx.shape(x)
    b = int(node.attr("blocksize"))
    if node.attr("mode", "DCR") == "DCR":
        split, perm = (n, b, b, c / (b * b), h, w), (0, 3, 4, 1, 5, 2)
    else:
        split, perm = (n, c / (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3)
    y = ctx.emit(R.permute_dims(ctx.emit(R.reshape(x, split)), perm))
    return ctx.emit(R.reshape(y, (n, c / (b * b), h * b, w * b)))


def _space_to_depth(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    n, c, h, w = ctx.shape(x)
    b = int(node.attr("blocksize"))
    y = ctx.emit(R.reshape(x, (n, c, h / b, b, w / b, b)))
    perm = (0, 1, 3, 5, 2, 4) if node.attr("mode", "DCR") == "CRD" else (0, 3, 5, 1, 2, 4)
    y = ctx.emit(R.permute_dims(y, perm))
    return ctx.emit(R.reshape(y, (n, c * b * b, h / b, w / b)))


def _trilu(ctx: Context, node: NodeView) -> Value:
    x = ctx.expr(node.input(0))
    k = 0 if node.input(1) is None else ctx.ints(node.input(1), "k")[0]
    return ctx.emit((R.triu if node.attr("upper", 1) else R.tril)(x, k))


def _eye_like(ctx: Context, node: NodeView) -> Value:
    from unity.relax.frontend.onnx.importer import elem_dtype

    rows, cols = ctx.shape(node.input(0))
    if not (rows.is_number and cols.is_number):
        raise ctx.fail(f"needs a static input shape, got ({rows}, {cols})")
    to = node.attr("dtype")
    dtype = ctx.dtype(node.input(0)) if to is None else elem_dtype(to, f'EyeLike node "{node.name}"')
    return np.eye(int(rows), int(cols), k=node.attr("k", 0), dtype=dtype)


CONVERTERS: dict[str, Converter] = {
    "Shape": _shape, "Size": _size, "Reshape": _reshape, "Flatten": _flatten,
    "Squeeze": _squeeze, "Unsqueeze": _unsqueeze, "Transpose": _transpose, "Concat": _concat,
    "Split": _split, "Slice": _slice, "Expand": _expand, "Tile": _tile, "Pad": _pad,
    "ConstantOfShape": _constant_of_shape, "Constant": _constant, "Range": _range,
    "DepthToSpace": _depth_to_space, "SpaceToDepth": _space_to_depth, "Trilu": _trilu,
    "EyeLike": _eye_like,
}  # fmt: skip
