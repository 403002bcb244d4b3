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

from unity.ir.node import Node, node
from unity.tir import op as tir_op
from unity.tir.expr import ExprLike, IterVar, PrimExpr, Var, const
from unity.tir.expr import max_value_of, min_value_of


@node
class CommReducer(Node):
    """A commutative reducer: `result` combines `lhs` (the accumulator) with `rhs`.

    `identity` is the value the accumulator starts from.
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


Reducer = Callable[..., PrimExpr]
"""What `comm_reducer` returns: `reducer(expr, axis, where=None, init=None)`."""


def comm_reducer(
    fcombine: Callable[[PrimExpr, PrimExpr], ExprLike],
    fidentity: Callable[[str], ExprLike],
    name: str = "reduce",
) -> Reducer:
    """Make a reducer from `fcombine(x, y)` and `fidentity(dtype)` (TVM's `te.comm_reducer`).

    As in TVM, `reducer(a, b)` with an expression (not an axis) as second argument is just
    `fcombine(a, b)`: `te.max(x, 0.0)` is an elementwise maximum.

    Example:
        >>> from unity import te, tir
        >>> mysum = comm_reducer(lambda x, y: x + y, lambda t: tir.const(0, t), name="mysum")
        >>> A = te.placeholder((8,), name="A")
        >>> k = te.reduce_axis((0, 8), name="k")
        >>> mysum(A[k], axis=k).combiner.name
        'mysum'
    """

    def reducer(
        expr: ExprLike,
        axis: IterVar | Sequence[IterVar],
        where: ExprLike | None = None,
        init: ExprLike | None = None,
    ) -> PrimExpr:
        if not isinstance(axis, (IterVar, list, tuple)):
            return const(fcombine(*_promote_pair(expr, axis)))  # TVM: te.max(a, b) is binary
        source = const(expr)
        axes = (axis,) if isinstance(axis, IterVar) else tuple(axis)
        if not axes or not all(isinstance(a, IterVar) for a in axes):
            raise TypeError(f"te.{name}: axis must be a te.reduce_axis or a list of them")
        x, y = Var("x", source.dtype), Var("y", source.dtype)
        result = const(fcombine(x, y)).astype(source.dtype)
        identity = const(fidentity(source.dtype)).astype(source.dtype)
        combiner = CommReducer((x,), (y,), (result,), (identity,), name)
        condition = const(True) if where is None else const(where)
        if condition.dtype != "bool":
            raise TypeError(f"te.{name}: where= must be a bool condition, got {condition.dtype}")
        start = () if init is None else (const(init).astype(source.dtype),)
        return Reduce(combiner, (source,), axes, condition, 0, start)

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
