"""The scheduled GPU kernels (tensor-core ones before tensorization for the interpreter and llvm): emulated GPU code, interpreter and llvm build all match numpy."""

import pytest
from gpu_workloads import ALL

import unity
from unity.tir.gpu_emulator import emulate
from unity.tir.interpreter import interpret
from unity.tir.transform.gpu import lower_cuda

NAMES = sorted(ALL)


@pytest.mark.parametrize("name", NAMES)
def test_emulated_kernel_matches_numpy(name):
    work = ALL[name]()
    args = work.fresh_args()
    emulate(lower_cuda(work.sch.mod), *args)
    work.check(args)


@pytest.mark.parametrize("name", NAMES)
def test_scheduled_tir_matches_numpy_in_the_interpreter(name):
    work = ALL[name]()
    args = work.fresh_args()
    interpret((work.plain or work.sch).mod["main"], *args)  # thread-bound loops run as serial loops
    work.check(args)


@pytest.mark.parametrize("name", NAMES)
def test_scheduled_tir_matches_numpy_in_an_llvm_build(name):
    work = ALL[name]()
    args = work.fresh_args()
    unity.build((work.plain or work.sch).mod, "llvm")["main"](*args)
    work.check(args)
