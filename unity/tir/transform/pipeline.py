"""`lower`: the TIR lowering pipeline, from TensorIR blocks to the lowered form codegen reads.

Example:
    >>> from unity import tir
    >>> lowered = tir.lower(func)  # doctest: +SKIP
    >>> lowered["main"].show()     # doctest: +SKIP

The steps, read top to bottom (see `/work/briefs/lowered_form.md` for the contract):
"""

from __future__ import annotations

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, Sequential
from unity.tir.function import PrimFunc
from unity.tir.transform.compact_buffer_allocation import CompactBufferAllocation
from unity.tir.transform.convert_blocks_to_loops import ConvertBlocksToLoops
from unity.tir.transform.flatten_buffer import FlattenBuffer
from unity.tir.transform.hoist_guards import HoistGuards
from unity.tir.transform.hoist_pad_checks import HoistPadChecks
from unity.tir.transform.hoist_reduction_init import HoistReductionInit
from unity.tir.transform.hoist_shape_arithmetic import HoistShapeArithmetic
from unity.tir.transform.inject_prefetch import InjectPrefetch
from unity.tir.transform.lower_index_checks import LowerIndexChecks
from unity.tir.transform.lower_init_block import LowerInitBlock
from unity.tir.transform.lower_intrinsics import LowerIntrinsics
from unity.tir.transform.lower_thread_binding_cpu import LowerThreadBindingCPU
from unity.tir.transform.simplify import Simplify
from unity.tir.transform.unroll_loop import UnrollLoop
from unity.tir.transform.vectorize_loop import VectorizeLoop


def lowering_passes() -> list[ModulePass]:
    """The passes of `lower`, in order.

    Example:
        >>> [type(p).__name__ for p in lowering_passes()][:2]
        ['LowerInitBlock', 'ConvertBlocksToLoops']
    """
    return [
        LowerInitBlock(),         # block init -> if (reduce vars at their min)
        ConvertBlocksToLoops(),   # iter vars substituted, predicates -> if, allocs -> Allocate
        InjectPrefetch(),         # `software_prefetch` loop annotations -> tir.prefetch calls
        LowerIndexChecks(),       # data-dependent indices asserted in range (hoisted), clamped
        HoistReductionInit(),     # `if k == 0: init` moved in front of the k loop
        CompactBufferAllocation(),  # intermediate buffers shrunk to the region used
        HoistGuards(),            # a tile's bound guards tested once: a guard-free version
        HoistPadChecks(),         # a tile's zero padding tested once: a check-free version
        FlattenBuffer(),          # N-d accesses -> 1-D with strides and offset folded
        LowerThreadBindingCPU(),  # thread bindings -> serial, one level of parallel loops
        HoistShapeArithmetic(),   # divisions of shape variables computed once, at the top
        UnrollLoop(),             # small unrolled loops copied out
        Simplify(),               # index arithmetic simplified with loop bounds known
        VectorizeLoop(),          # vectorized loops -> Ramp/Broadcast vector code
        LowerIntrinsics(),        # tanh, erf, sigmoid... -> exp and arithmetic
        Simplify(),               # fold what vectorizing and lowering left behind
    ]  # fmt: skip


def lower(mod_or_func: IRModule | PrimFunc) -> IRModule:
    """Lower every `PrimFunc` of a module (or one function, as "main") to the lowered form.

    Args:
        mod_or_func: a module, or a single `PrimFunc` (named "main" in the result).

    Returns:
        A module whose PrimFuncs hold no blocks, only 1-D buffer accesses, vector code for
        vectorized loops and only LLVM-supported intrinsics.

    Example:
        >>> lowered = lower(te.create_prim_func([A, B, C]))  # doctest: +SKIP
    """
    if isinstance(mod_or_func, PrimFunc):
        mod = IRModule({"main": mod_or_func})
    elif isinstance(mod_or_func, IRModule):
        mod = mod_or_func
    else:
        kind = type(mod_or_func).__name__
        raise TypeError(f"lower takes an IRModule or a PrimFunc, not a {kind}")
    return Sequential(lowering_passes(), name="tir.lower")(mod)
