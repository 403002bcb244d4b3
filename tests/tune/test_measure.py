"""The worker pool: crashes, wrong results and hangs are results, not failures of the pool."""

import numpy as np
import pytest

from tests.tune.helpers import faulty_func, matmul
from unity.ir.structural import structural_equal
from unity.tune.measure import WorkerPool, dumps_ir, loads_ir, make_args


def test_ir_round_trips_through_pickle_with_registered_ops():
    from unity import te

    A = te.placeholder((8,), name="A")
    func = te.create_prim_func([A, te.compute((8,), lambda i: te.exp(A[i]), name="B")])
    assert structural_equal(loads_ir(dumps_ir(func)), func)


def test_make_args_is_deterministic():
    a, b = make_args(matmul(8), 3), make_args(matmul(8), 3)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert [x.shape for x in a] == [(8, 8)] * 3


@pytest.mark.slow  # the same faults, through `tune`, run in tests/tune/test_tune.py
def test_faulty_candidates_are_recorded_and_the_pool_goes_on():
    func = matmul(16)
    with WorkerPool(num_workers=2, timeout_s=8) as pool:
        ref = pool.reference(func)
        a, b, _ = make_args(func, pool.seed)
        np.testing.assert_allclose(ref[2], a @ b, rtol=1e-5, atol=1e-5)
        modes = ["ok", "wrong", "crash", "hang", "ok"]
        results = pool.measure([faulty_func(func, m) for m in modes], ref)
    assert [r.status for r in results] == ["ok", "wrong", "crash", "timeout", "ok"]
    assert results[0].latency_s > 0 and results[4].latency_s > 0
    assert "differ from the reference" in results[1].error
    assert "SIGSEGV" in results[2].error or "worker died" in results[2].error
    assert "no result within 8 s" in results[3].error
