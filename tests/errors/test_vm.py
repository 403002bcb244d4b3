"""Wrong inputs to a compiled relax function: a ValueError naming the parameter and the dim."""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import relax


@pytest.fixture(scope="module")
def main():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("batch", "seq", 4), "float32"))
    w = relax.Var("w", relax.TensorStructInfo(("seq", 4), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            y = bb.emit(relax.op.add(x, w))
            out = bb.emit_output(relax.op.sum(y, axis=[1]))
        bb.emit_func_output(out)
    ex = unity.compile(bb.get(), target="llvm")
    return ex, relax.VirtualMachine(ex, unity.cpu())


X = np.zeros((2, 3, 4), "float32")
W = np.zeros((3, 4), "float32")


@pytest.mark.parametrize(
    "args, phrases",
    [
        ((np.zeros((2, 3), "float32"), W), ["parameter 0 'x'", "expected rank 3", "got rank 2"]),
        ((X.astype("float64"), W), ["parameter 0 'x'", "expected dtype float32, got float64"]),
        ((np.zeros((2, 3, 5), "float32"), W), ["parameter 0 'x'", "dim 2 must be 4"]),
        ((X, np.zeros((5, 4), "float32")),
         ["parameter 1 'w'", "dim 0 must be seq = 3", "from parameter 0 'x' dim 1"]),
        ((X,), ["main: expected 2 inputs (x, w), got 1"]),
        ((X, W, W), ["main: expected 2 inputs (x, w), got 3"]),
        ((None, W), ["parameter 0 'x'", "got NoneType"]),
        (([[[0.0] * 4] * 3] * 2, W), ["parameter 0 'x'", "got list"]),
    ],
)
def test_bad_inputs(main, args, phrases):
    _, vm = main
    with pytest.raises(ValueError) as info:
        vm["main"](*args)
    for phrase in phrases:
        assert phrase in str(info.value)


def test_non_contiguous_input_gives_the_right_answer(main):
    _, vm = main
    rng = np.random.default_rng(0)
    x, w = rng.random((2, 3, 8), "float32")[:, :, ::2], rng.random((3, 4), "float32")
    np.testing.assert_allclose(vm["main"](x, w).numpy(), (x + w).sum(1), rtol=1e-5)


def test_unknown_function_and_bad_device(main):
    ex, vm = main
    with pytest.raises(KeyError, match=r"VirtualMachine: no function 'nope'; it has \['main'\]"):
        vm["nope"]
    with pytest.raises(TypeError, match="VirtualMachine: device must be a Device .* got str 'gpu9'"):
        relax.VirtualMachine(ex, "gpu9")


def test_compile_bad_input():
    with pytest.raises(TypeError, match="unity.compile: expected an IRModule or a relax Function"):
        unity.compile(42, target="llvm")


def test_exported_library_keeps_the_checks(main, tmp_path):
    ex, _ = main
    path = str(tmp_path / "model.so")
    ex.export_library(path)
    vm = relax.VirtualMachine(unity.runtime.load_module(path), unity.cpu())
    with pytest.raises(ValueError, match=r"parameter 1 'w'.*dim 0 must be seq = 3"):
        vm["main"](X, np.zeros((5, 4), "float32"))
