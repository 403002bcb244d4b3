"""GPU lowering passes (one per file) and `lower_cuda`, the pipeline that runs them.

Example:
    >>> from unity.tir.transform.gpu import lower_cuda
    >>> mod = lower_cuda(sch.mod)  # doctest: +SKIP
"""

from unity.tir.transform.gpu.gpu_pipeline import gpu_lowering_passes, lower_cuda
from unity.tir.transform.gpu.insert_syncthreads import InsertSyncthreads
from unity.tir.transform.gpu.lower_cross_thread_reduction import LowerCrossThreadReduction
from unity.tir.transform.gpu.lower_storage_scopes import LowerStorageScopes
from unity.tir.transform.gpu.lower_thread_binding_gpu import LowerThreadBindingGPU
from unity.tir.transform.gpu.narrow_index_dtype import NarrowIndexDtype
from unity.tir.transform.gpu.split_host_device import SplitHostDevice

__all__ = [
    "InsertSyncthreads", "LowerCrossThreadReduction", "LowerStorageScopes", "LowerThreadBindingGPU",
    "NarrowIndexDtype", "SplitHostDevice",
    "gpu_lowering_passes", "lower_cuda",
]  # fmt: skip
