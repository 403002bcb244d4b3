"""`unity.compile(mod, target="cuda")`: every PrimFunc gets GPU schedules; nvcc accepts the C."""

from __future__ import annotations

import re

import numpy as np
import pytest

import unity
from unity.codegen.cuda_build import compile_ptx, nvcc_path
from unity.ir.transform import PassContext
from unity.relax.pipeline import get_pipeline
from unity.runtime.cuda.kernels import CudaKernels
from unity.tir.function import PrimFunc
from unity.tir.transform.gpu.split_host_device import is_kernel

from .cuda_models import cnn, mlp, resnet50

needs_nvcc = pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not installed")


@pytest.fixture(scope="module")
def compiled():
    return {
        "mlp": unity.compile(mlp(), target="cuda"),
        "cnn": unity.compile(cnn(), target="cuda"),
        "resnet50": unity.compile(resnet50(), target="cuda"),
    }


def _launched(kernels: CudaKernels) -> set[str]:
    return {k for plan in kernels.plans.values() for k in plan["kernels"]}


def test_cuda_pipeline_uses_gpu_schedules_not_cpu_ones():
    names = [type(p).__name__ for p in get_pipeline("default", 2, "cuda").passes]
    assert "DefaultGPUSchedules" in names and "DefaultSchedules" not in names
    cpu = [type(p).__name__ for p in get_pipeline("default", 2).passes]
    assert "DefaultSchedules" in cpu and "DefaultGPUSchedules" not in cpu
    # host code may only launch kernels: GPU schedules run even without fusion
    assert "DefaultGPUSchedules" in [type(p).__name__ for p in get_pipeline("default", 0, "cuda").passes]


@pytest.mark.parametrize("name", ["mlp", "cnn", "resnet50"])
def test_every_relax_kernel_becomes_host_launches(compiled, name):
    ex = compiled[name]
    assert isinstance(ex.kernels, CudaKernels) and ex.function_names == ["main"]
    called = {ins[1] for ins in ex.program["functions"]["main"]["code"] if ins[0] == "kernel"}
    assert called and called <= set(ex.kernels.plans)
    lowered = ex.kernels.lowered
    device_kernels = {gv.name_hint for gv, f in lowered.items() if isinstance(f, PrimFunc) and is_kernel(f)}
    assert _launched(ex.kernels) == device_kernels
    for kname in device_kernels:
        assert re.search(rf"__global__ void\b.*\b{kname}\(", ex.kernels.get_source("cuda"))


def test_resnet50_has_one_host_function_per_fused_group(compiled):
    ex = compiled["resnet50"]
    assert len(ex.kernels.plans) >= 20  # convs, pools, dense, softmax, fused epilogues
    assert len(_launched(ex.kernels)) >= len(ex.kernels.plans)


@needs_nvcc
@pytest.mark.parametrize("name", ["mlp", "cnn", "resnet50"])
def test_every_generated_kernel_compiles_with_nvcc_ptx(compiled, name):
    kernels = compiled[name].kernels
    ptx = compile_ptx(kernels.source, kernels.arch)
    entries = set(re.findall(r"\.entry\s+(\w+)\s*\(", ptx))
    assert _launched(kernels) <= entries


def test_opt_level_0_and_no_pipeline_also_compile_for_cuda():
    with PassContext(opt_level=0):
        ex0 = unity.compile(mlp(), target="cuda")
    assert len(ex0.kernels.plans) >= 3  # matmul, add, relu, ... unfused
    from unity.relax.transform import LegalizeOps

    legal = LegalizeOps()(mlp())
    from unity.ir.transform import Sequential
    from unity.relax.transform import CallTIRRewrite, ToNonDataflow

    lowered = Sequential([ToNonDataflow(), CallTIRRewrite()])(legal)
    ex = unity.compile(lowered, target="cuda", pipeline=None)  # scheduled in unity.compile
    assert _launched(ex.kernels)


def test_a_user_scheduled_primfunc_keeps_its_schedule():
    from unity import relax, te
    from unity.schedule.schedule import Schedule

    A = te.placeholder((64,), name="A")
    B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
    sch = Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    bx, tx = sch.split(i, [None, 16])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((64,), "float32"))
    with bb.function("main", [x]):
        gv = bb.add_func(sch.mod["main"], "double")
        out = bb.emit(relax.op.call_tir(gv, (x,), relax.TensorStructInfo((64,), "float32")))
        bb.emit_func_output(out)
    ex = unity.compile(bb.get(), target="cuda")
    (launch,) = [s for s in _walk(ex.kernels.plans["double"]["body"]) if s[0] == "launch"]
    assert launch[2] == [4, 1, 1] and launch[3] == [16, 1, 1]  # the user's 4 x 16, not 256


def _walk(stmt):
    yield stmt
    if stmt[0] == "seq":
        for s in stmt[1]:
            yield from _walk(s)
    elif stmt[0] in ("for", "let", "assert", "alloc"):
        yield from _walk(stmt[-1])


def test_cuda_executable_refuses_the_cpu_vm(compiled):
    with pytest.raises(ValueError, match="compiled for cuda; run it on unity.cuda"):
        unity.relax.VirtualMachine(compiled["mlp"], unity.cpu())


def test_cpu_executable_refuses_the_cuda_vm():
    ex = unity.compile(mlp(), target="llvm")
    with pytest.raises(ValueError, match="needs an executable compiled for cuda"):
        from unity.runtime.cuda.device_api import use_driver
        from unity.runtime.cuda.emulated import EmulatedDriver

        with use_driver(EmulatedDriver()):
            unity.relax.VirtualMachine(ex, unity.cuda())
    assert np.isfinite(unity.relax.VirtualMachine(ex, unity.cpu())["main"](np.ones((2, 16), "float32")).numpy()).all()



@pytest.mark.slow
def test_resnet50_gpu_schedules_built_for_llvm_match_the_cpu_schedules():
    """Every GPU-scheduled kernel of a real model computes the right values: built for
    llvm, thread-bound loops run as serial loops (the emulator checks the parallel
    semantics on small shapes; it is too slow for a whole model)."""
    from unity.ir.printer import script

    from .cuda_models import resnet50_input

    mod, x = resnet50(), resnet50_input()
    scheduled = get_pipeline("default", 2, "cuda")(mod)
    kernels = [f for f in scheduled.functions.values() if isinstance(f, PrimFunc)]
    assert len(kernels) >= 20
    assert all("threadIdx.x" in script(f) for f in kernels)
    got = unity.relax.VirtualMachine(unity.compile(scheduled, target="llvm", pipeline=None),
                                     unity.cpu())["main"](x).numpy()
    want = unity.relax.VirtualMachine(unity.compile(mod, target="llvm"), unity.cpu())["main"](x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
