"""Einsum as broadcast-multiply-and-sum: align every operand to one axis order, reduce.

`parse_einsum` spells each term as a list of labels, `...` expanded to one label per
broadcast dim (right-aligned across operands, as numpy). `lower_einsum` first takes the
diagonal of a label repeated within a term (`ii->i`: multiply by an identity mask, sum one
of the two axes), then transposes, expands, multiplies and sums.

Example:
    >>> parse_einsum("...ii->...i", [3])
    ([['…0', 'i', 'i']], ['…0', 'i'])
    >>> _axis_order([["i", "j"], ["j", "k"]], ["i", "k"])
    ['i', 'k', 'j']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from unity.relax import op as R
from unity.relax.expr import Constant, Expr
from unity.relax.frontend.onnx.context import Context, Value
from unity.relax.frontend.onnx.ops.common import cast

_ELLIPSIS = "…"
"""Prefix of the labels `...` expands to (no letter, so no clash with the equation's)."""


def _split_term(term: str) -> tuple[str, str | None]:
    """The letters before and after `...` (None: no ellipsis)."""
    if term.count("...") > 1 or term.replace("...", "").count("."):
        raise ValueError(f"term {term!r} has a '.' outside one '...'")
    if not all(c.isalpha() for c in term.replace("...", "")):
        raise ValueError(f"term {term!r} has a character that is not a letter")
    head, dots, tail = term.partition("...")
    return (head, tail) if dots else (term, None)


def parse_einsum(equation: str, ranks: Sequence[int]) -> tuple[list[list[str]], list[str]]:
    """Each operand's labels and the output's, `...` expanded for operands of `ranks`.

    Without `->`, the output is the broadcast dims, then the letters used once, sorted.

    Raises:
        ValueError: a malformed equation, or one that does not fit the operand ranks.

    Example:
        >>> parse_einsum("...ij,...jk", [3, 2])
        ([['…0', 'i', 'j'], ['j', 'k']], ['…0', 'i', 'k'])
    """
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"equation {equation!r} has {len(terms)} terms for {len(ranks)} inputs")
    parts = [_split_term(t) for t in terms]
    extra = [rank - len(head) - len(tail or "") for (head, tail), rank in zip(parts, ranks, strict=True)]
    for (head, tail), n, term, rank in zip(parts, extra, terms, ranks, strict=True):
        if n < 0 or (tail is None and n != 0):
            raise ValueError(f"term {term!r} does not fit an input of rank {rank}")
    width = max([n for n, (_, tail) in zip(extra, parts, strict=True) if tail is not None], default=0)
    dots = [f"{_ELLIPSIS}{k}" for k in range(width)]
    labels = [
        [*head, *(dots[width - n :] if tail is not None else []), *(tail or "")]
        for (head, tail), n in zip(parts, extra, strict=True)
    ]
    if not arrow:
        letters = [c for term in labels for c in term if not c.startswith(_ELLIPSIS)]
        return labels, dots + sorted(c for c in set(letters) if letters.count(c) == 1)
    out_head, out_tail = _split_term(rhs)
    if out_tail is None and width:
        raise ValueError(f"output {rhs!r} drops the {width} broadcast dims of '...' (numpy too)")
    out = [*out_head, *(dots if out_tail is not None else []), *(out_tail or "")]
    known = {c for term in labels for c in term}
    if len(set(out)) != len(out) or not set(out) <= known:
        raise ValueError(f"output {rhs!r} repeats a letter or names one no input has")
    return labels, out


def _axis_order(terms: Sequence[Sequence[str]], rhs: Sequence[str]) -> list[str]:
    order = list(rhs)
    for term in terms:
        order.extend(c for c in term if c not in order)
    return order


def _diagonal(ctx: Context, x: Expr, term: list[str]) -> tuple[Expr, list[str]]:
    """`x` with each label repeated in `term` kept once (the diagonal of those axes)."""
    while len(set(term)) != len(term):
        first = next(i for i, c in enumerate(term) if term.index(c) != i)
        second, first = first, term.index(term[first])
        shape = ctx.shape(x)
        n, m = shape[first], shape[second]
        if not (n.is_number and m.is_number):
            raise ctx.fail(f"needs static sizes for the diagonal of {term[first]!r}, got {n} and {m}")
        if n != m:
            raise ctx.fail(f"takes the diagonal of {term[first]!r} over axes of sizes {n} and {m}")
        mask: Expr = Constant(np.eye(int(n), dtype="float32"))
        mask = cast(ctx, mask, ctx.dtype(x))
        others = [k for k in range(len(term)) if k not in (first, second)]
        mask = ctx.emit(R.expand_dims(mask, others)) if others else mask
        x = ctx.emit(R.sum(ctx.emit(R.multiply(x, mask)), [second]))
        term = term[:second] + term[second + 1 :]
    return x, term


def lower_einsum(ctx: Context, terms: Sequence[Sequence[str]], rhs: Sequence[str],
                 operands: Sequence[Expr]) -> Value:  # fmt: skip
    """Emit `einsum` of `operands`, each term a list of labels (see `parse_einsum`).

    Example:
        >>> lower_einsum(ctx, [["i", "j"], ["j", "k"]], ["i", "k"], [a, b])  # doctest: +SKIP
    """
    reduced_terms: list[list[str]] = []
    inputs: list[Expr] = []
    for term, x in zip(terms, operands, strict=True):
        x, labels = _diagonal(ctx, x, list(term))
        reduced_terms.append(labels)
        inputs.append(x)
    order = _axis_order(reduced_terms, rhs)
    aligned: list[Expr] = []
    for term, x in zip(reduced_terms, inputs, strict=True):
        present = sorted(term, key=order.index)
        if present != term:
            x = ctx.emit(R.permute_dims(x, [term.index(c) for c in present]))
        missing = [i for i, c in enumerate(order) if c not in term]
        if missing:
            x = ctx.emit(R.expand_dims(x, missing))
        aligned.append(x)
    out = aligned[0]
    for other in aligned[1:]:
        out = ctx.emit(R.multiply(out, other))
    reduced = list(range(len(rhs), len(order)))
    return ctx.emit(R.sum(out, reduced)) if reduced else out
