"""Host functions: operators whose output shape depends on input values, run with numpy.

A compiled kernel writes into a buffer of a shape known before it runs; `NonZero`,
`Compress`, `Unique` and `NonMaxSuppression` cannot (and `TopK` over a long axis sorts
here: the kernel's counting sort is quadratic), nor a node whose shape-giving input
is run-time data (`onnx_node`: ``Range(0, ReduceMax(lengths))``, run by onnx's reference
implementation).  The graph calls them by name
(``R.call_pure_packed("unity.host.nonzero", x, ...)``, the VM instruction
``["host", dst, name, [reg, ...]]``); the VM runs them on
host arrays (a CUDA VM copies the inputs to the host and the result back) and the
`match_cast` after each call gives the new shape its symbols.  Attributes come as
trailing 0-d arrays.

Example:
    >>> import numpy as np
    >>> host_function("unity.host.nonzero")(np.array([[0, 3], [4, 0]])).tolist()
    [[0, 1], [1, 0]]
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

HOST_FUNCTIONS: dict[str, Callable[..., Any]] = {}
"""Host function by name (``unity.host.<op>``)."""


def register(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a host function as ``unity.host.<name>``.

    Example:
        >>> "unity.host.unique" in HOST_FUNCTIONS
        True
    """

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        HOST_FUNCTIONS[f"unity.host.{name}"] = fn
        return fn

    return wrap


def host_function(name: str) -> Callable[..., Any]:
    """The host function `name`, or a clear error.

    Example:
        >>> host_function("unity.host.nope")
        Traceback (most recent call last):
        ...
        ValueError: vm: unknown host function 'unity.host.nope' (known: unity.host.append_rows, ...)
    """
    fn = HOST_FUNCTIONS.get(name)
    if fn is None:
        raise ValueError(f"vm: unknown host function {name!r} (known: {', '.join(sorted(HOST_FUNCTIONS))})")
    return fn


def _c(array: Any) -> np.ndarray:
    return np.asarray(array, order="C")


@register("nonzero")
def nonzero(x: np.ndarray) -> np.ndarray:
    """ONNX NonZero: the indices of the non-zero elements, one row per dimension.

    Example:
        >>> nonzero(np.array([0, 5, 0, 7])).tolist()
        [[1, 3]]
    """
    x = np.asarray(x)
    if x.ndim == 0:
        return np.zeros((0, int(bool(x))), np.int64)
    return _c(np.array(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1))


@register("tensor_to_shape")
def tensor_to_shape(x: np.ndarray) -> tuple[int, ...]:
    """The values of a 1-D integer tensor as a shape (the lengths a Resize's `sizes`
    computes at run time); a negative one is refused.

    Example:
        >>> tensor_to_shape(np.array([2, 7]))
        (2, 7)
    """
    values = tuple(int(v) for v in np.asarray(x).reshape(-1))
    if any(v < 0 for v in values):
        raise ValueError(f"a shape computed at run time has a negative length: {list(values)}")
    return values


@register("stack_append")
def stack_append(stack: np.ndarray, step: np.ndarray) -> np.ndarray:
    """`stack` with `step` appended on a new first axis (a Loop's scan output, step by
    step, into spare room as `append_rows` does; an empty `stack` takes the first step's
    shape).

    Example:
        >>> stack_append(np.zeros((0, 0)), np.array([1.0, 2.0])).tolist()
        [[1.0, 2.0]]
    """
    step = np.asarray(step)
    if stack.shape[0] == 0:
        stack = np.empty((0, *step.shape), stack.dtype)
    if stack.shape[1:] != step.shape:
        raise ValueError(f"a Loop's scan output changes shape: step {stack.shape[0]} gives "
                         f"{list(step.shape)}, the steps before gave {list(stack.shape[1:])}")
    return append_rows(stack, step[None])


@register("append_rows")
def append_rows(rows: np.ndarray, new: np.ndarray) -> np.ndarray:
    """`rows` and then `new` along the first axis (a loop's ``out = cat([out, x])``),
    written into spare room after `rows` when it has some: each fresh buffer holds twice
    the rows, so a loop appending a row per step copies each row about twice, not once
    per later step.  The room is used once: a second append to the same `rows` copies.

    Example:
        >>> a = append_rows(np.zeros((0, 2)), np.ones((1, 2)))
        >>> append_rows(a, np.full((1, 2), 2.0)).tolist()
        [[1.0, 1.0], [2.0, 2.0]]
    """
    new = np.asarray(new, rows.dtype)
    if rows.shape[1:] != new.shape[1:]:
        raise ValueError(f"a loop appends rows of shape {list(new.shape[1:])} to rows of shape "
                         f"{list(rows.shape[1:])}")  # fmt: skip
    n, k = rows.shape[0], new.shape[0]
    room = _ROOM.get(rows.ctypes.data)
    base = room[0]() if room is not None else None
    if base is not None and rows.base is base and room[1] == n and base.shape[0] >= n + k:
        base[n:n + k] = new
        _ROOM[rows.ctypes.data] = (room[0], n + k)
        return base[:n + k]
    base = np.empty((max(2 * (n + k), 4), *rows.shape[1:]), rows.dtype)
    base[:n], base[n:n + k] = rows, new
    start = base.ctypes.data
    _ROOM[start] = (weakref.ref(base), n + k)
    weakref.finalize(base, _ROOM.pop, start, None)
    return base[:n + k]


_ROOM: dict[int, tuple[Any, int]] = {}
"""The buffers `append_rows` made, by address: a weak reference and the rows in use."""


@register("compress")
def compress(x: np.ndarray, condition: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """ONNX Compress: the slices of `x` along `axis` (NaN: of `x` flattened) where
    `condition` holds.

    Example:
        >>> compress(np.arange(6).reshape(2, 3), np.array([True, False, True]), np.array(1.0)).tolist()
        [[0, 2], [3, 5]]
    """
    cond = np.asarray(condition, bool).reshape(-1)
    return _c(np.compress(cond, x, axis=_axis(axis)))


@register("onnx_node")
def onnx_node(*args: np.ndarray) -> np.ndarray | tuple[np.ndarray, ...]:
    """One ONNX node whose shape-giving inputs are run-time data: `args` are its run-time
    inputs, then the node as a serialized one-node model (uint8; constant inputs are its
    initializers), run by onnx's reference implementation.

    Example:
        >>> from onnx import TensorProto, ValueInfoProto, helper
        >>> node = helper.make_node("Range", ["a", "b", "c"], ["y"])
        >>> ins = [helper.make_tensor_value_info(n, TensorProto.INT64, []) for n in "abc"]
        >>> g = helper.make_graph([node], "g", ins, [ValueInfoProto(name="y")])
        >>> m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        >>> blob = np.frombuffer(m.SerializeToString(), np.uint8)
        >>> onnx_node(np.array(1), np.array(7), np.array(2), blob).tolist()
        [1, 3, 5]
    """
    *inputs, blob = args
    evaluator, names = _evaluator(bytes(np.asarray(blob, np.uint8)))
    results = [_c(r) for r in evaluator.run(None, dict(zip(names, inputs, strict=True)))]
    return results[0] if len(results) == 1 else tuple(results)


@functools.lru_cache(maxsize=64)
def _evaluator(blob: bytes) -> tuple[Any, list[str]]:
    import onnx
    from onnx.reference import ReferenceEvaluator

    model = onnx.load_from_string(blob)
    return ReferenceEvaluator(model), [i.name for i in model.graph.input]


def _axis(axis: np.ndarray) -> int | None:
    a = float(axis)
    return None if math.isnan(a) else int(a)


@register("unique")
def unique(x: np.ndarray, axis: np.ndarray, sort: np.ndarray) -> tuple[np.ndarray, ...]:
    """ONNX Unique: the unique values (or slices along `axis`; NaN: flattened), the first
    index of each, the inverse indices and the counts; in first-occurrence order unless
    `sort`.

    Example:
        >>> [a.tolist() for a in unique(np.array([2, 1, 1, 3, 4, 3]), np.array(np.nan), np.array(0))]
        [[2, 1, 3, 4], [0, 1, 3, 4], [0, 1, 1, 2, 3, 2], [1, 2, 2, 1]]
    """
    ax = _axis(axis)
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True, axis=ax)  # fmt: skip
    inverse = inverse.reshape(-1)
    if not bool(sort):  # first-occurrence order
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        values = np.take(values, order, axis=0 if ax is None else ax)
        first, counts, inverse = first[order], counts[order], rank[inverse]
    return _c(values), *(_c(a.astype(np.int64)) for a in (first, inverse, counts))


@register("topk")
def topk(x: np.ndarray, k: np.ndarray, axis: np.ndarray, largest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ONNX TopK over a long axis: the `k` largest (or smallest) values along `axis`,
    sorted, equal values in index order, and their indices.  One row partitions first
    (the k-th value bounds the candidates), several sort whole.

    Example:
        >>> [a.tolist() for a in topk(np.array([3, 1, 3, 2]), np.array([2]), np.array(0), np.array(1))]
        [[3, 3], [0, 2]]
    """
    x = np.asarray(x)
    count, ax = int(np.asarray(k).reshape(-1)[0]), int(axis)
    keys = np.moveaxis(_sort_keys(x, bool(largest)), ax, -1)
    n = keys.shape[-1]
    rows = keys.reshape(-1, n) if n else np.zeros((0, 0), keys.dtype)  # an empty axis: k = 0
    if rows.shape[0] == 1 and 0 < count and 8 * count < n and not np.isnan(rows).any():
        row = rows[0]
        bound = np.partition(row, count - 1)[count - 1]
        near = np.flatnonzero(row <= bound)  # in index order: the stable sort keeps it for ties
        order = near[np.argsort(row[near], kind="stable")][:count].reshape(1, count)
    else:
        order = np.argsort(rows, axis=-1, kind="stable")[:, :count]
    order = np.moveaxis(order.reshape(*keys.shape[:-1], count), -1, ax).astype(np.int64)
    return _c(np.take_along_axis(x, order, ax)), _c(order)


def _sort_keys(x: np.ndarray, largest: bool) -> np.ndarray:
    """Keys whose ascending stable order is TopK's order (negated for the largest; integers
    widened first so that negating the smallest one cannot wrap)."""
    if not largest:
        return x
    if x.dtype.kind in "biu":
        return -x.astype(np.float64 if x.dtype == np.uint64 else np.int64)
    return -x


@register("nonmax_suppression")
def nonmax_suppression(boxes: np.ndarray, scores: np.ndarray, max_per_class: np.ndarray,
                       iou_threshold: np.ndarray, score_threshold: np.ndarray,
                       center_point_box: np.ndarray) -> np.ndarray:  # fmt: skip
    """ONNX NonMaxSuppression: ``[batch, class, box]`` rows, per batch and class the
    boxes by descending score, each dropping the later ones that overlap it by more than
    `iou_threshold` (at most `max_per_class`; only scores above `score_threshold`).

    Example:
        >>> b = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3]]], "float32")
        >>> s = np.array([[[0.9, 0.8, 0.7]]], "float32")
        >>> nonmax_suppression(b, s, np.array(3), np.array(0.5), np.array(-np.inf), np.array(0)).tolist()
        [[0, 0, 0], [0, 0, 2]]
    """
    limit, iou_max, floor = (np.asarray(a).item() for a in (max_per_class, iou_threshold, score_threshold))
    corners = _corners(np.asarray(boxes, np.float64), bool(np.asarray(center_point_box).item()))
    rows: list[tuple[int, int, int]] = []
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[b, c]
            order = np.argsort(-s, kind="stable")
            order = order[s[order] > floor]
            rows += [(b, c, int(order[r])) for r in _greedy(corners[b][order], int(limit), iou_max)]
    return np.array(rows, np.int64).reshape(-1, 3)


def _greedy(corners: np.ndarray, limit: int, iou_max: float) -> list[int]:
    """Positions kept by greedy suppression of `corners` (best first): each kept box
    drops the later ones it overlaps by more than `iou_max`.

    Only boxes whose left edge lies within one box width of a box's span can touch it,
    so each box looks at that slice of the boxes sorted by left edge (detection heads
    offset each class's boxes apart: a slice holds one class's boxes).  The overlaps of
    all those pairs are computed at once, and a plain loop over the boxes in score order
    follows the few pairs that suppress (Faster R-CNN keeps 10k of 13.5k boxes: one
    numpy pass per kept box took 0.14 s).  Pairs past `_PAIRS` (or a coordinate that is
    not finite: every pair a candidate) take that pass per kept box instead.
    """
    by_left = np.argsort(corners[:, 1], kind="stable")
    at = np.empty_like(by_left)
    at[by_left] = np.arange(len(by_left))  # each box's place in left-edge order
    y1, x1, y2, x2 = np.ascontiguousarray(corners[by_left].T)
    area = (y2 - y1) * (x2 - x1)
    width = float(np.max(x2 - x1)) if len(x1) else 0.0
    if not np.isfinite(corners).all():
        return _greedy_loop(at, (y1, x1, y2, x2, area), np.zeros(len(x1), np.int64),
                            np.full(len(x1), len(x1)), limit, iou_max)  # fmt: skip
    los = np.searchsorted(x1, x1 - width, "right")  # the slice of boxes that can touch each box
    his = np.searchsorted(x1, x2, "left")
    if int((his - los).sum()) > _PAIRS:
        return _greedy_loop(at, (y1, x1, y2, x2, area), los, his, limit, iou_max)
    first, later = _suppressing_pairs(by_left, (y1, x1, y2, x2, area), los, his, iou_max)
    order = np.argsort(first, kind="stable")
    starts = np.searchsorted(first[order], np.arange(len(x1) + 1)).tolist()
    targets = later[order].tolist()
    alive = bytearray(b"\x01") * len(x1)  # in score order
    kept: list[int] = []
    for r in range(len(x1)):
        if len(kept) >= limit:
            break
        if alive[r]:
            kept.append(r)
            for t in targets[starts[r]:starts[r + 1]]:
                alive[t] = 0
    return kept


_PAIRS = 8_000_000
"""Candidate pairs `_greedy` computes at once (a few arrays of this many floats)."""


def _suppressing_pairs(by_left: np.ndarray, sides: tuple[np.ndarray, ...], los: np.ndarray,
                       his: np.ndarray, iou_max: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The pairs (earlier, later) in score order whose overlap passes `iou_max`, as score
    ranks; `sides` are y1, x1, y2, x2 and area in left-edge order."""
    y1, x1, y2, x2, area = sides
    counts = his - los
    q = np.repeat(np.arange(len(x1)), counts)  # a box and each candidate in its slice
    p = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts - los, counts)
    rank_q, rank_p = by_left[q], by_left[p]  # score ranks (corners arrive best first)
    keep = rank_q < rank_p
    q, p, rank_q, rank_p = q[keep], p[keep], rank_q[keep], rank_p[keep]
    h = np.maximum(0.0, np.minimum(y2[q], y2[p]) - np.maximum(y1[q], y1[p]))
    w = np.maximum(0.0, np.minimum(x2[q], x2[p]) - np.maximum(x1[q], x1[p]))
    inter = h * w
    union = area[q] + area[p] - inter
    iou = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    hit = iou > iou_max  # a NaN overlap suppresses nothing (onnxruntime's test)
    return rank_q[hit], rank_p[hit]


def _greedy_loop(at: np.ndarray, sides: tuple[np.ndarray, ...], los: np.ndarray, his: np.ndarray,
                 limit: int, iou_max: float) -> list[int]:  # fmt: skip
    """`_greedy` one kept box at a time, each against its slice (`at`: each score rank's
    place in left-edge order)."""
    y1, x1, y2, x2, area = sides
    alive = np.ones(len(x1), bool)  # in left-edge order
    kept: list[int] = []
    for r in range(len(x1)):  # best first
        if len(kept) >= limit:
            break
        q = at[r]
        if not alive[q]:
            continue
        kept.append(r)
        lo, hi = los[q], his[q]
        h = np.maximum(0.0, np.minimum(y2[q], y2[lo:hi]) - np.maximum(y1[q], y1[lo:hi]))
        w = np.maximum(0.0, np.minimum(x2[q], x2[lo:hi]) - np.maximum(x1[q], x1[lo:hi]))
        inter = h * w
        union = area[q] + area[lo:hi] - inter
        iou = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
        alive[lo:hi][iou > iou_max] = False  # a NaN overlap suppresses nothing (onnxruntime's test)
    return kept


def _corners(boxes: np.ndarray, center: bool) -> np.ndarray:
    """(y1, x1, y2, x2) with y1 <= y2 and x1 <= x2 (ONNX allows flipped corners)."""
    if center:
        xc, yc, w, h = (boxes[..., k] for k in range(4))
        return np.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], axis=-1)
    y1, x1, y2, x2 = (boxes[..., k] for k in range(4))
    return np.stack([np.minimum(y1, y2), np.minimum(x1, x2), np.maximum(y1, y2), np.maximum(x1, x2)], axis=-1)
