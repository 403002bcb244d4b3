"""`SplitHostDevice`: kernels outlined with symbolic launch sizes; the host launches them."""

import numpy as np
from gpu_workloads import two_kernels

from unity import te, tir
from unity.schedule import Schedule
from unity.tir.gpu_emulator import emulate
from unity.tir.transform.gpu import lower_cuda
from unity.tir.transform.gpu.intrinsics import launch_op
from unity.tir.transform.gpu.split_host_device import is_kernel


def _scale(n):
    a = te.placeholder((n,), name="a")
    b = te.compute((n,), lambda i: a[i] * 2.0, name="b")
    sch = Schedule(te.create_prim_func([a, b]))
    (i,) = sch.get_loops(sch.get_block("b"))
    bx, tx = sch.split(i, [None, 64])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return sch.mod


def test_symbolic_grid_and_kernel_parameters():
    n = tir.SizeVar("n", "int32")
    lowered = lower_cuda(_scale(n))
    kernel = lowered["main_kernel0"]
    assert is_kernel(kernel) and not is_kernel(lowered["main"])
    assert [p.name for p in kernel.params] == ["a", "b", "n"]
    call = lowered["main"].body.value
    assert call.op is launch_op and call.args[0].value == "main_kernel0"
    assert [getattr(a, "value", None) for a in call.args[2:7]] == [1, 1, 64, 1, 1]
    for size in (1000, 77, 64):
        a = np.arange(size, dtype="float32")
        b = np.zeros_like(a)
        emulate(lowered, a, b)
        np.testing.assert_array_equal(b, a * 2)


def test_one_kernel_per_thread_bound_region():
    sch = two_kernels(128)
    lowered = lower_cuda(sch.mod)
    assert sorted(gv.name_hint for gv in lowered) == ["main", "main_kernel0", "main_kernel1"]
    av, cv = np.arange(128, dtype="float32"), np.zeros(128, "float32")
    emulate(lowered, av, cv)  # b lives in host-allocated global memory between the kernels
    np.testing.assert_array_equal(cv, (av + 1) * 3)
