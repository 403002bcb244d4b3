"""The runnable `Example:` sections of the relax-on-CUDA modules pass."""

import doctest
import importlib

import numpy as np
import pytest

from unity.ir.module import IRModule
from unity.runtime.device import Device

MODULES = [
    "unity.runtime.device",
    "unity.runtime.cuda.device_api",
    "unity.runtime.cuda.emulated",
    "unity.runtime.cuda.tensor",
    "unity.runtime.cuda.host_plan",
    "unity.runtime.cuda.kernels",
    "unity.runtime.cuda.vm",
    "unity.codegen.cuda_host_plan",
    "unity.relax.transform.default_gpu_schedules",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    globs = {"np": np, "IRModule": IRModule, "Device": Device}
    result = doctest.testmod(module, extraglobs=globs, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
