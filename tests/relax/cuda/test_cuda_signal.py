"""The signal ops (`dft`, `stft`, `mel_weight_matrix`) compile for CUDA and match the CPU build."""

from __future__ import annotations

import re

import numpy as np
import pytest

import unity
from unity import relax
from unity.codegen.cuda_build import compile_ptx, nvcc_path
from unity.relax.op import signal as S
from unity.runtime.cuda.device_api import use_driver
from unity.runtime.cuda.emulated import EmulatedDriver


def _signal_module() -> unity.IRModule:
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 12, 2), "float32"))
    s = relax.Var("s", relax.TensorStructInfo((2, 64, 1), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((16,), "float32"))
    # constants: the CUDA VM uploads a 0-d input with shape (1,) (np.ascontiguousarray)
    scalars = ((16000, "int64"), (20, "float32"), (8000, "float32"))
    rate, low, high = (relax.const(np.array(v, t)) for v, t in scalars)
    with bb.function("main", [x, s, w]):
        with bb.dataflow():
            spectrum = bb.emit(S.dft(x, axis=1, length=16, inverse=True))
            frames = bb.emit(S.stft(s, w, frame_step=4, frame_length=16))
            mel = bb.emit(S.mel_weight_matrix(rate, low, high, 8, 32))
            out = bb.emit_output(relax.Tuple((spectrum, frames, mel)))
        bb.emit_func_output(out)
    return bb.get()


@pytest.fixture(scope="module")
def compiled():
    mod = _signal_module()
    return unity.compile(mod, target="cuda"), unity.compile(mod, target="llvm")


@pytest.mark.skipif(nvcc_path() is None, reason="nvcc is not installed")
def test_signal_kernels_compile_with_nvcc(compiled):
    kernels = compiled[0].kernels
    entries = set(re.findall(r"\.entry\s+(\w+)\s*\(", compile_ptx(kernels.source, kernels.arch)))
    assert {"dft_kernel0", "stft_kernel0", "mel_weight_matrix_kernel0"} <= entries


def test_signal_kernels_on_the_emulated_gpu_match_the_cpu(compiled):
    gpu, cpu = compiled
    rng = np.random.default_rng(0)
    x, s = rng.standard_normal((3, 12, 2)), rng.standard_normal((2, 64, 1))
    args = [x.astype("float32"), s.astype("float32"), np.hanning(16).astype("float32")]
    want = [t.numpy() for t in relax.VirtualMachine(cpu, unity.cpu())["main"](*args)]
    with use_driver(EmulatedDriver()):
        outs = relax.VirtualMachine(gpu, unity.cuda())["main"](*args)
        got = [t.numpy() for t in outs]
    assert [g.shape for g in got] == [(3, 16, 2), (2, 13, 9, 2), (17, 8)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
