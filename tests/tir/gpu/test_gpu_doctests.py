"""The runnable `Example:` sections of the GPU modules pass."""

import doctest
import importlib

import pytest

from unity import tir
from unity.ir.module import IRModule
from unity.tir.expr import const

MODULES = [
    "unity.tir.transform.gpu.intrinsics",
    "unity.tir.transform.gpu.lower_thread_binding_gpu",
    "unity.tir.transform.gpu.lower_storage_scopes",
    "unity.tir.transform.gpu.insert_syncthreads",
    "unity.tir.transform.gpu.lower_cross_thread_reduction",
    "unity.tir.transform.gpu.split_host_device",
    "unity.tir.transform.gpu.gpu_pipeline",
    "unity.tir.gpu_emulator",
    "unity.codegen.cuda",
    "unity.codegen.cuda_vector",
    "unity.codegen.cuda_build",
    "unity.runtime.cuda.driver",
    "unity.runtime.cuda.driver_cuda_python",
    "unity.schedule.default_gpu.apply",
    "unity.schedule.default_gpu.rules",
    "unity.schedule.default_gpu.matmul",
    "unity.schedule.default_gpu.tensor_core",
    "unity.schedule.default_gpu.wmma_intrin",
    "unity.tir.transform.gpu.wmma",
    "unity.tir.transform.gpu.lower_wmma",
    "unity.tir.transform.gpu.narrow_index_dtype",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    globs = {"tir": tir, "IRModule": IRModule, "const": const}
    result = doctest.testmod(module, extraglobs=globs, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
