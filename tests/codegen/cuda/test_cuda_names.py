"""CUDA C names: tensors named like C++ keywords or called functions get other names."""

import pytest

import unity
from unity import te
from unity.codegen.cuda_build import compile_ptx, nvcc_path
from unity.schedule import Schedule


def _kernel_with_names(*names: str) -> object:
    a = te.placeholder((256,), name=names[0])
    b = te.compute((256,), lambda i: te.exp(a[i]), name=names[1])
    sch = Schedule(te.create_prim_func([a, b]))
    (i,) = sch.get_loops(sch.get_block(names[1]))
    bx, tx = sch.split(i, [None, 128])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return sch.mod


@pytest.mark.parametrize("names", [("new", "class"), ("expf", "max"), ("this", "half")])
def test_keyword_and_function_names_are_renamed(names):
    src = unity.build(_kernel_with_names(*names), "cuda").get_source("cuda")
    params = src.split("main_kernel0(")[1].split(")")[0]
    assert params == f"float* __restrict__ {names[0]}_1, float* __restrict__ {names[1]}_1"
    assert "expf(" in src
    if nvcc_path() is not None:
        assert ".entry main_kernel0" in compile_ptx(src, "sm_90")
