"""`Target` parsing: the host CPU with its features, options, dicts, cuda."""

from __future__ import annotations

import llvmlite.binding as llvm
import pytest

from unity.target import Target


def test_llvm_is_the_host_cpu_with_its_features():
    t = Target("llvm")
    assert t.kind == "llvm" and t.mcpu == llvm.get_host_cpu_name()
    assert t.features == llvm.get_host_cpu_features().flatten() + ",-sse4a"  # see _NO_SSE4A
    assert t.num_cores >= 1 and t.opt_level == 3
    assert not t.has_feature("sse4a")
    assert Target("llvm -mattr=+sse4a").has_feature("sse4a")  # unless asked for


def test_llvm_for_another_architecture_gets_no_x86_feature():
    t = Target("llvm -mtriple=aarch64-linux-gnu -mcpu=generic")
    assert t.features == ""


def test_llvm_options_and_dict_spelling():
    t = Target("llvm -mcpu=skylake-avx512 -num-cores=4 -mattr=+avx512f")
    assert (t.mcpu, t.num_cores, t.features) == ("skylake-avx512", 4, "-sse4a,+avx512f")
    assert t.has_feature("avx512f") and not t.has_feature("avx2")
    assert (
        Target({"kind": "llvm", "mcpu": "skylake-avx512", "num_cores": 4, "mattr": "+avx512f"}) == t
    )
    assert str(t) == "llvm -mcpu=skylake-avx512 -num-cores=4 -mattr=+avx512f"
    assert Target(t) == t


def test_cuda_arch():
    assert Target("cuda -arch=sm_90").arch == "sm_90"
    assert Target("cuda").arch is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("opencl", "unknown kind 'opencl'"),
        ("llvm -foo=1", "unknown option -foo"),
        ("llvm -num-cores=many", "-num-cores=many is not a int"),
        ("llvm mcpu", "expected -key=value"),
    ],
)
def test_bad_targets_are_clear_errors(spec: str, message: str):
    with pytest.raises(ValueError, match=message):
        Target(spec)
