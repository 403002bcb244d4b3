"""GPU intrinsics: `__syncthreads`, warp shuffles and kernel launches as TIR `Op`s.

The lowered device code refers to the hardware thread indices through canonical
variables (`thread_var("threadIdx.x")`), bound by the launch nest of thread-bound loops
that `LowerThreadBindingGPU` puts at the top of each kernel.

Example:
    >>> from unity.tir import Evaluate
    >>> isinstance(syncthreads(), Evaluate)
    True
"""

from __future__ import annotations

import numpy as np

from unity.ir.op import Op
from unity.tir.expr import Call, ExprLike, PrimExpr, StringImm, const
from unity.tir.stmt import Evaluate

THREAD_TAGS = ("blockIdx.z", "blockIdx.y", "blockIdx.x", "threadIdx.z", "threadIdx.y", "threadIdx.x")
"""Thread axes in launch-nest order (outermost first)."""

syncthreads_op = Op("tir.cuda.syncthreads", numpy=lambda: np.int32(0), llvm=None, arity=0)
"""Block-wide barrier (`__syncthreads()`); the reference interpreter treats it as a no-op."""

shfl_down_op = Op("tir.cuda.shfl_down", numpy=None, llvm=None, arity=3)
"""`__shfl_down_sync(0xffffffff, value, offset, width)`: the value of lane `lane + offset`."""

shfl_idx_op = Op("tir.cuda.shfl_idx", numpy=None, llvm=None, arity=3)
"""`__shfl_sync(0xffffffff, value, src_lane, width)`: the value of lane `src_lane`."""

launch_op = Op("tir.cuda.launch", numpy=None, llvm=None)
"""Host side: `launch(name, gx, gy, gz, bx, by, bz, *args)` runs kernel `name`."""


def syncthreads() -> Evaluate:
    """A `__syncthreads()` statement.

    Example:
        >>> syncthreads().value.op is syncthreads_op
        True
    """
    return Evaluate(Call("int32", syncthreads_op, ()))


def is_syncthreads(stmt: object) -> bool:
    """True when `stmt` is a `__syncthreads()` statement.

    Example:
        >>> is_syncthreads(syncthreads())
        True
    """
    return (
        isinstance(stmt, Evaluate)
        and isinstance(stmt.value, Call)
        and stmt.value.op is syncthreads_op
    )


def shfl_down(value: PrimExpr, offset: ExprLike, width: ExprLike = 32) -> PrimExpr:
    """`__shfl_down_sync(full_mask, value, offset, width)`.

    Example:
        >>> from unity import tir
        >>> shfl_down(tir.Var("x", "float32"), 16).dtype
        'float32'
    """
    return Call(value.dtype, shfl_down_op, (value, const(offset), const(width)))


def shfl_idx(value: PrimExpr, lane: ExprLike, width: ExprLike = 32) -> PrimExpr:
    """`__shfl_sync(full_mask, value, lane, width)`.

    Example:
        >>> from unity import tir
        >>> shfl_idx(tir.Var("x", "float32"), 0).dtype
        'float32'
    """
    return Call(value.dtype, shfl_idx_op, (value, const(lane), const(width)))


def launch(name: str, grid: tuple[PrimExpr, ...], block: tuple[PrimExpr, ...],
           args: tuple[PrimExpr, ...]) -> Evaluate:
    """Host statement launching kernel `name` on a `grid` of `block`s (x, y, z order).

    Example:
        >>> s = launch("k", (const(1),) * 3, (const(32), const(1), const(1)), ())
        >>> s.value.args[0].value
        'k'
    """
    return Evaluate(Call("int32", launch_op, (StringImm(name), *grid, *block, *args)))
