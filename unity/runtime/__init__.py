"""The runtime: devices, tensors, compiled modules, the thread pool (no compiler inside).

Example:
    >>> import numpy as np
    >>> from unity import runtime
    >>> runtime.tensor(np.zeros(2, "float32"), runtime.cpu()).shape
    (2,)
"""

from unity.runtime.device import Device, cpu, cuda
from unity.runtime.function import PackedFunc
from unity.runtime.module import Module, ProfileResult, load_module
from unity.runtime.tensor import Tensor, empty, tensor
from unity.runtime.thread_pool import get_num_threads, set_num_threads

__all__ = [
    "Device",
    "Module",
    "PackedFunc",
    "ProfileResult",
    "Tensor",
    "cpu",
    "cuda",
    "empty",
    "get_num_threads",
    "load_module",
    "set_num_threads",
    "tensor",
]
