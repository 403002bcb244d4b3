"""`lower_cuda`: the TIR lowering pipeline for the GPU, from scheduled blocks to host + kernels.

Example:
    >>> from unity.tir.transform.gpu import lower_cuda
    >>> mod = lower_cuda(sch.mod)      # doctest: +SKIP
    >>> [gv.name_hint for gv in mod]   # doctest: +SKIP
    ['main', 'main_kernel0']

The GPU lowered form (what `unity.codegen.cuda` and `unity.tir.gpu_emulator` read):

1. Host functions keep their name and parameters; their body holds only serial loops,
   lets, asserts, global `Allocate`s (the host allocates them) and kernel launches
   `T.cuda.launch(name, grid_x, grid_y, grid_z, block_x, block_y, block_z, *args)`
   whose sizes are expressions over the host's variables (symbolic shapes included).
2. Kernels are PrimFuncs with ``calling_conv = "cuda_kernel"``: flat 1-D buffer
   parameters (one per memory, sharing the host buffer's `data` var) then scalars.
   The body starts with the launch nest, `THREAD_BINDING` loops over `blockIdx.z/y/x`
   then `threadIdx.z/y/x` of the launch extents; no other thread-bound loop remains,
   and under the nest the code is SIMT (run by every thread), not a sequential loop.
3. `shared` / `local` buffers are `Allocate`s inside the kernel, constant-sized per
   block / per thread; barriers are `T.cuda.syncthreads()`; cross-thread reductions are
   warp shuffles (`T.cuda.shfl_down`) plus shared memory.
4. Vectorized loops are `Ramp` / `Broadcast` vector code (float4 accesses in codegen).

The steps, read top to bottom (the CPU pipeline is `unity.tir.transform.pipeline`):
"""

from __future__ import annotations

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, Sequential
from unity.tir.function import PrimFunc
from unity.tir.transform.convert_blocks_to_loops import ConvertBlocksToLoops
from unity.tir.transform.flatten_buffer import FlattenBuffer
from unity.tir.transform.gpu.insert_syncthreads import InsertSyncthreads
from unity.tir.transform.gpu.lower_cross_thread_reduction import LowerCrossThreadReduction
from unity.tir.transform.gpu.lower_storage_scopes import LowerStorageScopes
from unity.tir.transform.gpu.lower_thread_binding_gpu import LowerThreadBindingGPU
from unity.tir.transform.gpu.lower_wmma import LowerWmma
from unity.tir.transform.gpu.narrow_index_dtype import NarrowIndexDtype
from unity.tir.transform.gpu.split_host_device import SplitHostDevice
from unity.tir.transform.hoist_reduction_init import HoistReductionInit
from unity.tir.transform.lower_index_checks import LowerIndexChecks
from unity.tir.transform.lower_init_block import LowerInitBlock
from unity.tir.transform.simplify import Simplify
from unity.tir.transform.unroll_loop import UnrollLoop
from unity.tir.transform.vectorize_loop import VectorizeLoop


def gpu_lowering_passes() -> list[ModulePass]:
    """The passes of `lower_cuda`, in order.

    Example:
        >>> [type(p).__name__ for p in gpu_lowering_passes()][:2]
        ['LowerCrossThreadReduction', 'LowerInitBlock']
    """
    return [
        LowerCrossThreadReduction(),  # thread-bound reductions -> partials + shuffle tree
        LowerInitBlock(),         # block init -> if (reduce vars at their min)
        ConvertBlocksToLoops(),   # iter vars substituted, predicates -> if, allocs -> Allocate
        LowerIndexChecks(check=False),  # data-dependent indices clamped (kernels cannot fail)
        HoistReductionInit(),     # `if k == 0: init` moved in front of the k loop
        LowerThreadBindingGPU(),  # thread-bound regions -> launch nests of canonical indices
        LowerStorageScopes(),     # shared/local buffers into their kernel, per block/thread size
        LowerWmma(),              # tensor-core tiles -> fragment indices, row strides
        FlattenBuffer(),          # N-d accesses -> 1-D
        UnrollLoop(),             # small unrolled loops copied out
        Simplify(),               # index arithmetic simplified with thread extents known
        VectorizeLoop(),          # vectorized loops -> Ramp/Broadcast (codegen: float4 access)
        InsertSyncthreads(),      # barriers between cross-thread shared writes and reads
        SplitHostDevice(),        # each launch nest -> a kernel PrimFunc + a host launch
        NarrowIndexDtype(),       # a kernel's int64 index arithmetic -> int32 where it fits
    ]  # fmt: skip


def lower_cuda(mod_or_func: IRModule | PrimFunc) -> IRModule:
    """Lower every `PrimFunc` for CUDA: host functions that launch device kernels.

    Args:
        mod_or_func: a scheduled module, or one `PrimFunc` (named "main").

    Returns:
        A module with the host functions (same names, bodies made of kernel launches) and
        one kernel `PrimFunc` per thread-bound region (`calling_conv="cuda_kernel"`).

    Example:
        >>> lowered = lower_cuda(sch.mod)  # doctest: +SKIP
    """
    if isinstance(mod_or_func, PrimFunc):
        mod = IRModule({"main": mod_or_func})
    elif isinstance(mod_or_func, IRModule):
        mod = mod_or_func
    else:
        raise TypeError(f"lower_cuda takes an IRModule or a PrimFunc, not a {type(mod_or_func).__name__}")
    return Sequential(gpu_lowering_passes(), name="tir.lower_cuda")(mod)
