"""Reductions for `te.compute`: `Reduce`, `comm_reducer`, and `sum` / `max` / `min` / `prod`.

A reducer is built from a combining function and an identity, as in TVM:
`te.comm_reducer(lambda x, y: x + y, lambda dtype: tir.const(0, dtype), name="sum")`.
Calling it on an expression and reduce axes gives a `Reduce`, which must be the whole
body of a `te.compute`.

Example:
    >>> from unity import te
    >>> A = te.placeholder((4, 8), name="A")
    >>> k = te.reduce_axis((0, 8), name="k")
    >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    >>> type(B.op.body[0]).__name__, B.op.reduce_axis[0] is k
    ('Reduce', True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from unity.ir.node import Node, node
from unity.tir import op as tir_op
from unity.tir.expr import ExprLike, IterVar, PrimExpr, Var, const
from unity.tir.expr import max_value_of, min_value_of


@node
class CommReducer(Node):
    """A commutative reducer: `result` combines `lhs` (the accumulator) with `rhs`.

    `identity` is the value the accumulator starts from.

    Example:
        >>> from unity import te
        >>> A, k = te.placeholder((8,), name="A"), te.reduce_axis((0, 8), name="k")
        >>> reducer = te.sum(A[k], axis=k).combiner
        >>> isinstance(reducer, CommReducer), reducer.name, reducer.identity[0].value
        (True, 'sum', 0.0)
    """

    lhs: tuple[Var, ...]
    rhs: tuple[Var, ...]
    result: tuple[PrimExpr, ...]
    identity: tuple[PrimExpr, ...]
    name: str = "reduce"


@node
class Reduce(PrimExpr):
    """`combiner` folded over `source` for every point of the reduce `axis` where `condition`.

    `init`, when given, replaces the combiner's identity as the starting value.

    Example:
        >>> from unity import te
        >>> A, k = te.placeholder((4, 8), name="A"), te.reduce_axis((0, 8), name="k")
        >>> r = te.sum(A[0, k], axis=k)
        >>> type(r).__name__, r.dtype, r.axis[0].var.name
        ('Reduce', 'float32', 'k')
    """

    combiner: CommReducer
    source: tuple[PrimExpr, ...]
    axis: tuple[IterVar, ...]
    condition: PrimExpr
    value_index: int = 0
    init: tuple[PrimExpr, ...] = ()

    @property
    def dtype(self) -> str:
        return self.source[self.value_index].dtype


def contains_reduce(expr: PrimExpr) -> bool:
    """True if a `Reduce` appears anywhere in `expr`.

    Example:
        >>> contains_reduce(const(1))
        False
    """
    from unity.tir.functor import post_order_visit

    found: list[bool] = []
    post_order_visit(expr, lambda n: found.append(True) if isinstance(n, Reduce) else None)
    return bool(found)


def _promote_pair(a: ExprLike, b: ExprLike) -> tuple[PrimExpr, PrimExpr]:
    sample = max_value_of(a, b)
    return sample.a, sample.b  # type: ignore[attr-defined]  # Max(a, b) holds the promoted pair


def _combiner(
    fcombine: Callable[..., Any],
    fidentity: Callable[..., Any],
    name: str,
    sources: tuple[PrimExpr, ...],
    multi: bool,
) -> CommReducer:
    """Trace `fcombine` / `fidentity` on fresh variables of the sources' dtypes."""
    dtypes = [s.dtype for s in sources]
    lhs = tuple(Var(f"x{k}" if multi else "x", t) for k, t in enumerate(dtypes))
    rhs = tuple(Var(f"y{k}" if multi else "y", t) for k, t in enumerate(dtypes))
    if multi:
        results, identities = fcombine(lhs, rhs), fidentity(*dtypes)
    else:
        results, identities = (fcombine(lhs[0], rhs[0]),), (fidentity(dtypes[0]),)
    if len(results) != len(sources) or len(identities) != len(sources):
        raise ValueError(
            f"te.{name}: a reducer of {len(sources)} values must combine into and start from "
            f"{len(sources)} values, got {len(results)} and {len(identities)}"
        )
    result = tuple(const(r).astype(t) for r, t in zip(results, dtypes))
    identity = tuple(const(i).astype(t) for i, t in zip(identities, dtypes))
    return CommReducer(lhs, rhs, result, identity, name)


def _as_tuple(init: Any, sources: tuple[PrimExpr, ...]) -> tuple[PrimExpr, ...]:
    values = tuple(init) if isinstance(init, (list, tuple)) else (init,)
    return tuple(const(v).astype(s.dtype) for v, s in zip(values, sources))


Reducer = Callable[..., PrimExpr]
"""What `comm_reducer` returns: `reducer(expr, axis, where=None, init=None)`."""


def comm_reducer(
    fcombine: Callable[[PrimExpr, PrimExpr], ExprLike],
    fidentity: Callable[[str], ExprLike],
    name: str = "reduce",
) -> Reducer:
    """Make a reducer from `fcombine(x, y)` and `fidentity(dtype)` (TVM's `te.comm_reducer`).

    As in TVM, `reducer(a, b)` with an expression (not an axis) as second argument is just
    `fcombine(a, b)`: `te.max(x, 0.0)` is an elementwise maximum.  A reducer over several
    values (argmax) takes and returns tuples: `fcombine((x0, x1), (y0, y1))`,
    `fidentity(dtype0, dtype1)`; calling it on a tuple gives one `Reduce` per value, to be
    returned together from one `te.compute`.

    Example:
        >>> from unity import te, tir
        >>> mysum = comm_reducer(lambda x, y: x + y, lambda t: tir.const(0, t), name="mysum")
        >>> A = te.placeholder((8,), name="A")
        >>> k = te.reduce_axis((0, 8), name="k")
        >>> mysum(A[k], axis=k).combiner.name
        'mysum'
    """

    def reducer(
        expr: ExprLike | Sequence[ExprLike],
        axis: IterVar | Sequence[IterVar],
        where: ExprLike | None = None,
        init: ExprLike | Sequence[ExprLike] | None = None,
    ) -> Any:
        if not isinstance(axis, (IterVar, list, tuple)):
            return const(fcombine(*_promote_pair(expr, axis)))  # TVM: te.max(a, b) is binary
        multi = isinstance(expr, (list, tuple))
        values = tuple(expr) if isinstance(expr, (list, tuple)) else (expr,)
        sources = tuple(const(e) for e in values)
        axes = (axis,) if isinstance(axis, IterVar) else tuple(axis)
        if not axes or not all(isinstance(a, IterVar) for a in axes):
            raise TypeError(f"te.{name}: axis must be a te.reduce_axis or a list of them")
        combiner = _combiner(fcombine, fidentity, name, sources, multi)
        condition = const(True) if where is None else const(where)
        if condition.dtype != "bool":
            raise TypeError(f"te.{name}: where= must be a bool condition, got {condition.dtype}")
        starts = () if init is None else _as_tuple(init, sources)
        reduces = tuple(
            Reduce(combiner, sources, axes, condition, k, starts) for k in range(len(sources))
        )
        return reduces if multi else reduces[0]

    reducer.__name__ = name
    reducer.__doc__ = f"Reduce with `{name}` over `axis` (see `te.comm_reducer`)."
    return reducer


sum = comm_reducer(lambda x, y: x + y, lambda t: const(0, t), name="sum")  # noqa: A001
"""`te.sum(expr, axis, where=None)`: the sum over the reduce axes."""

max = comm_reducer(max_value_of, tir_op.min_value, name="max")  # noqa: A001
"""`te.max(expr, axis, where=None)`: the maximum over the reduce axes (identity -inf)."""

min = comm_reducer(min_value_of, tir_op.max_value, name="min")  # noqa: A001
"""`te.min(expr, axis, where=None)`: the minimum over the reduce axes (identity +inf)."""

prod = comm_reducer(lambda x, y: x * y, lambda t: const(1, t), name="prod")
"""`te.prod(expr, axis, where=None)`: the product over the reduce axes."""
