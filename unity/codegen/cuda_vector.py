"""Vector code for CUDA C: `float4` loads/stores where aligned, other lanes scalarized.

CUDA C has no arithmetic on `float4`, so a vector expression (from `VectorizeLoop`:
`Ramp`, `Broadcast`, vector loads) is split into one scalar expression per lane.  A
contiguous load or store of 4 float32 (or 2, or 4 int32) whose first index is provably
a multiple of the lane count becomes one 16-byte (8-byte) access through `float4`
(`float2`, `int4`); a plain copy of any dtype (8 float16 from global to shared memory)
moves its 16 (8, 4) bytes as one `uint4` (`uint2`, `unsigned int`); the other accesses
are per lane.

Example:
    >>> lanes = scalar_lanes(tir.Broadcast(tir.const(1.0), 4))  # doctest: +SKIP
    >>> len(lanes)                                               # doctest: +SKIP
    4
"""

from __future__ import annotations

from unity.ir import dtype as dt
from unity.tir import expr as E
from unity.tir.arith import Analyzer

WIDE_TYPES = {("float32", 4): "float4", ("float32", 2): "float2", ("int32", 4): "int4",
              ("int32", 2): "int2"}
"""CUDA vector type of a contiguous access, by element dtype and lane count."""

LANE_FIELDS = ("x", "y", "z", "w")
"""Member names of the lanes of CUDA vector types."""


def wide_type(dtype: str, index: E.PrimExpr) -> str | None:
    """The CUDA vector type for an access of `dtype` at `index`, or None (per lane).

    Example:
        >>> wide_type("float32x4", tir.Ramp(tir.const(8), tir.const(1), 4))  # doctest: +SKIP
        'float4'
    """
    lanes = dt.lanes(dtype)
    name = WIDE_TYPES.get((dt.element(dtype), lanes))
    return name if name is not None and _aligned_run(index, lanes) else None


def _aligned_run(index: E.PrimExpr, lanes: int) -> bool:
    """`index` is `lanes` consecutive elements from a provable multiple of `lanes`."""
    return (isinstance(index, E.Ramp) and isinstance(index.stride, E.IntImm) and index.stride.value == 1
            and Analyzer().can_prove(E.eq(E.floormod(index.base, lanes), 0)))


RAW_TYPES = {16: "uint4", 8: "uint2", 4: "unsigned int"}
"""The type moving a copied vector's bytes at once, by its size in bytes."""


def copy_type(index: E.PrimExpr, value: E.PrimExpr) -> str | None:
    """The type that moves vector `value` (a plain load) to `index` in one access (any
    element dtype: 8 float16 are one `uint4`), or None when either side is not a
    contiguous run aligned to its size.

    Example:
        >>> from unity import tir
        >>> A = tir.decl_buffer((64,), "float16", "A")
        >>> run = tir.Ramp(tir.Var("i") * 8, tir.const(1), 8)
        >>> copy_type(run, tir.BufferLoad(A, (run,)))
        'uint4'
    """
    if not isinstance(value, E.BufferLoad) or len(value.indices) != 1:
        return None
    n = dt.lanes(value.dtype)
    name = RAW_TYPES.get(n * dt.bits(dt.element(value.dtype)) // 8)
    if name is None or not (_aligned_run(index, n) and _aligned_run(value.indices[0], n)):
        return None
    return name


def lane(expr: E.PrimExpr, k: int, loads: dict[E.BufferLoad, E.Var] | None = None) -> E.PrimExpr:
    """The scalar expression of lane `k` of vector `expr`.

    `loads` maps vector loads already read into a vector temporary to a variable whose
    lane `k` is printed as `tmp.x` etc. by the caller (it names those variables).

    Example:
        >>> lane(tir.Ramp(tir.Var("i"), tir.const(1), 4), 2)  # doctest: +SKIP
        i + 2
    """
    if dt.lanes(expr.dtype) == 1:
        return expr
    if isinstance(expr, E.Broadcast):
        return expr.value
    if isinstance(expr, E.Ramp):
        return expr.base + expr.stride * k if k else expr.base
    if isinstance(expr, E.BufferLoad):
        if loads is not None and expr in loads:
            return E.Var(f"{loads[expr].name}.{LANE_FIELDS[k]}", dt.element(expr.dtype))
        return E.BufferLoad(expr.buffer, tuple(lane(i, k, loads) for i in expr.indices))
    if isinstance(expr, E.Cast):
        return E.Cast(dt.element(expr.dtype), lane(expr.value, k, loads))
    if isinstance(expr, E.Call):
        return E.Call(dt.element(expr.dtype), expr.op, tuple(lane(a, k, loads) for a in expr.args))
    if isinstance(expr, E.Select):
        return E.Select(lane(expr.condition, k, loads), lane(expr.true_value, k, loads),
                        lane(expr.false_value, k, loads))
    if isinstance(expr, E.Not):
        return E.Not(lane(expr.a, k, loads))
    if isinstance(expr, E.BinaryOp):
        return type(expr)(lane(expr.a, k, loads), lane(expr.b, k, loads))
    raise TypeError(f"CUDA codegen: cannot split a vector {type(expr).__name__} into lanes")


def wide_loads(expr: E.PrimExpr) -> list[E.BufferLoad]:
    """The vector loads in `expr` that can be one wide access (first-seen order).

    Example:
        >>> wide_loads(tir.const(1.0))
        []
    """
    from unity.tir.functor import post_order_visit

    found: list[E.BufferLoad] = []

    def visit(node: object) -> None:
        if (isinstance(node, E.BufferLoad) and dt.lanes(node.dtype) > 1 and len(node.indices) == 1
                and wide_type(node.dtype, node.indices[0]) and node not in found):
            found.append(node)

    post_order_visit(expr, visit)
    return found
