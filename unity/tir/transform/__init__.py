"""TIR lowering passes (one per file), and `lower`, the pipeline that runs them in order.

Example:
    >>> from unity.tir import transform
    >>> mod = transform.FlattenBuffer()(mod)  # doctest: +SKIP
"""

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
from unity.tir.transform.pipeline import lower, lowering_passes
from unity.tir.transform.simplify import Simplify
from unity.tir.transform.unroll_loop import UnrollLoop
from unity.tir.transform.vectorize_loop import VectorizeLoop

__all__ = [
    "CompactBufferAllocation", "ConvertBlocksToLoops", "FlattenBuffer", "HoistGuards",
    "HoistPadChecks", "HoistReductionInit", "HoistShapeArithmetic", "InjectPrefetch",
    "LowerIndexChecks", "LowerInitBlock", "LowerIntrinsics", "LowerThreadBindingCPU",
    "Simplify", "UnrollLoop", "VectorizeLoop", "lower", "lowering_passes",
]  # fmt: skip
