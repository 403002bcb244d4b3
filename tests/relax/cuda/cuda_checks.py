"""Checks shared by the per-op CUDA tests: run an executable in the GPU emulator, and
make sure nvcc compiles every kernel its host code launches."""

from __future__ import annotations

import re

import numpy as np

import unity
from unity import relax
from unity.codegen.cuda_build import compile_ptx
from unity.runtime.cuda.device_api import use_driver
from unity.runtime.cuda.emulated import EmulatedDriver


def run_emulated(ex: object, *inputs: np.ndarray) -> np.ndarray:
    """`main(*inputs)` of a cuda executable, run in the GPU emulator, as numpy."""
    with use_driver(EmulatedDriver()):
        return relax.VirtualMachine(ex, unity.cuda())["main"](*inputs).numpy()


def assert_launched_kernels_compile(kernels: object) -> None:
    """nvcc compiles the source, and every kernel the host plans launch is an entry."""
    entries = set(re.findall(r"\.entry\s+(\w+)\s*\(", compile_ptx(kernels.source, kernels.arch)))
    launched = {k for plan in kernels.plans.values() for k in plan["kernels"]}
    assert launched and launched <= entries
