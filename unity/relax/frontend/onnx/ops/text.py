"""TfIdfVectorizer over integer token ids, as comparisons, sums and a matmul of relax ops.

An n-gram of the pool (tokens ``t_0 .. t_{n-1}``) occurs at position ``p`` with skip
distance ``d`` when ``x[p + i * d] == t_i`` for every ``i``; unigrams count at ``d = 1``
only, longer n-grams at every ``d`` up to ``max_skip_count + 1``.  For each n-gram size
and distance the converter compares the row, shifted by ``i * d`` (past its end: a
token the pool does not hold), with every n-gram's ``i``-th token at once, and sums the
matches over the positions; a one-hot matmul adds each n-gram's count into its output
column (``ngram_indexes``), then the mode weighs the counts (TF, IDF, TFIDF).

Example:
    >>> sorted(CONVERTERS)
    ['TfIdfVectorizer']
"""

from __future__ import annotations

import numpy as np

from unity.relax import op as R
from unity.relax.expr import Expr
from unity.relax.frontend.onnx.context import Context, NodeView, Value
from unity.relax.frontend.onnx.ops.common import Converter


def pool_ngrams(counts: list[int], pool: list[int], indexes: list[int], low: int,
                high: int) -> dict[int, list[tuple[tuple[int, ...], int]]]:  # fmt: skip
    """The pool's n-grams of `low` to `high` tokens, by size: (tokens, output column).

    ``counts[k]`` is where the (k + 1)-grams start in `pool`; n-grams are numbered in pool
    order (those of a size outside the range too) and n-gram ``j`` goes to column
    ``indexes[j]``.

    Example:
        >>> pool_ngrams([0, 2], [5, 6, 5, 6], [0, 1, 2], 1, 2)
        {1: [((5,), 0), ((6,), 1)], 2: [((5, 6), 2)]}
    """
    grams: dict[int, list[tuple[tuple[int, ...], int]]] = {}
    number = 0
    for k, start in enumerate(counts):
        size = k + 1
        end = counts[k + 1] if k + 1 < len(counts) else len(pool)
        for first in range(start, end - size + 1, size):
            if low <= size <= high:
                grams.setdefault(size, []).append((tuple(pool[first:first + size]),
                                                   indexes[number]))  # fmt: skip
            number += 1
    return grams


def _tfidf(ctx: Context, node: NodeView) -> Value:
    if node.attr("pool_strings"):
        raise ctx.fail("has a pool of strings: string tensors are not supported")
    x = ctx.expr(node.input(0))
    dtype, rank = ctx.dtype(x), len(ctx.shape(x))
    if dtype not in ("int32", "int64") or rank not in (1, 2):
        raise ctx.fail(f"expects int32 or int64 token ids of rank 1 or 2, got {dtype} of rank "
                       f"{rank}")
    mode = node.attr("mode")
    if mode not in ("TF", "IDF", "TFIDF"):
        raise ctx.fail(f"has no mode {mode!r} (TF, IDF or TFIDF)")
    low, high = int(node.attr("min_gram_length")), int(node.attr("max_gram_length"))
    skips = int(node.attr("max_skip_count", 0))
    pool = [int(v) for v in node.attr("pool_int64s", [])]
    indexes = [int(v) for v in node.attr("ngram_indexes", [])]
    grams = pool_ngrams([int(v) for v in node.attr("ngram_counts", [])], pool, indexes, low, high)
    columns = max(indexes) + 1 if indexes else 0
    if not columns:
        raise ctx.fail("has no ngram_indexes (no output column)")
    rows = ctx.emit(R.astype(x, "int64"))
    if rank == 1:
        rows = ctx.emit(R.expand_dims(rows, [0]))
    missing = min(pool, default=0) - 1  # a token no n-gram holds
    reach = max((n - 1) * (skips + 1) for n in grams) if grams else 0  # the farthest shift
    padded = ctx.emit(R.nn.pad(rows, [0, 0, 0, reach], float(missing))) if reach else rows
    shifts: dict[int, Expr] = {}

    def shifted(by: int) -> Expr:  # row[p + by] for every p, `missing` past the row's end
        if by not in shifts:
            part = padded
            if reach:
                end = by - reach if by < reach else 2**62
                part = ctx.emit(R.strided_slice(padded, [1], [by], [end]))
            shifts[by] = ctx.emit(R.expand_dims(part, [2]))
        return shifts[by]

    freq: Expr | None = None
    for size, found in sorted(grams.items()):
        tokens = np.array([t for t, _ in found], "int64")  # (grams, size)
        onehot = np.zeros((len(found), columns), "float32")
        onehot[np.arange(len(found)), [c for _, c in found]] = 1.0
        for distance in range(1, (skips + 2) if size > 1 else 2):
            match: Expr | None = None
            for i in range(size):
                same = ctx.emit(R.equal(shifted(i * distance), ctx.expr(tokens[:, i].copy())))
                match = same if match is None else ctx.emit(R.logical_and(match, same))
            assert match is not None
            count = ctx.emit(R.sum(ctx.emit(R.astype(match, "float32")), [1]))  # (rows, grams)
            part = ctx.emit(R.matmul(count, ctx.expr(onehot)))
            freq = part if freq is None else ctx.emit(R.add(freq, part))
    if freq is None:  # no n-gram in the length range: all zero
        freq = ctx.emit(R.zeros((ctx.shape(rows)[0], columns), "float32"))
    weights = np.array(node.attr("weights", []) or [1.0] * columns, "float32")
    if mode == "IDF":
        hit = ctx.emit(R.greater(freq, ctx.expr(np.array(0.0, "float32"))))
        freq = ctx.emit(R.where(hit, ctx.expr(weights), ctx.expr(np.array(0.0, "float32"))))
    elif mode == "TFIDF":
        freq = ctx.emit(R.multiply(freq, ctx.expr(weights)))
    return ctx.emit(R.squeeze(freq, [0])) if rank == 1 else freq


CONVERTERS: dict[str, Converter] = {"TfIdfVectorizer": _tfidf}
