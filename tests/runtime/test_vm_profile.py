"""`VirtualMachine.profile`: per-kernel-call times, shares and shapes; results unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import unity
from unity import relax
from unity.relax import op
from unity.runtime.vm_profile import ProfileReport, ProfileRow


@pytest.fixture(scope="module")
def vm():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 64), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(op.nn.softmax(x, axis=-1))
            out = bb.emit_output(op.sum(op.exp(y), axis=[0]))
        bb.emit_func_output(out)
    return relax.VirtualMachine(unity.compile(bb.get(), target="llvm"), unity.cpu())


def test_profile_rows_cover_every_kernel_call(vm):
    x = np.random.default_rng(0).random((8, 64), dtype=np.float32)
    report = vm.profile(x, repeat=2)
    assert isinstance(report, ProfileReport) and report.rows
    assert all(r.calls >= 1 and r.seconds >= 0 for r in report.rows)
    assert [r.seconds for r in report.rows] == sorted((r.seconds for r in report.rows), reverse=True)
    assert report.kernel_seconds <= report.total_seconds
    assert abs(sum(r.share for r in report.rows) - report.kernel_seconds / report.total_seconds) < 1e-9
    assert any("-> (64,)" in r.shapes for r in report.rows)  # the output of the sum
    text = report.table(top=1)
    assert "total (per run)" in text and "outside kernels" in text
    # TVM's spelling: the function name first
    assert vm.profile("main", x).rows
    ref = np.exp(np.exp(x) / np.exp(x).sum(-1, keepdims=True)).sum(0)
    np.testing.assert_allclose(vm["main"](x).numpy(), ref, rtol=1e-5)


def test_profile_bad_input_names_the_problem(vm):
    with pytest.raises(ValueError, match="takes 1 inputs"):
        vm.profile()
    with pytest.raises(KeyError, match="no function 'nope'"):
        vm.profile(np.zeros((2, 64), "float32"), func_name="nope")


def test_by_kernel_sums_call_sites():
    rows = (ProfileRow("a", "", 1, 2.0, 0.5), ProfileRow("b", "", 1, 1.0, 0.25),
            ProfileRow("a", "", 2, 0.5, 0.125))  # fmt: skip
    assert ProfileReport(rows, 4.0).by_kernel() == [("a", 3, 2.5), ("b", 1, 1.0)]
