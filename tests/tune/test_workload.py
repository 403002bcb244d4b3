"""Workload keys: structural, attribute-blind, and the same in every process."""

import subprocess
import sys

from tests.tune.helpers import matmul
from unity.tune.workload import extract_tasks, workload_key

_KEY_IN_CHILD = "from tests.tune.helpers import matmul; from unity.tune import workload_key; print(workload_key(matmul(16)))"


def test_key_is_structural_and_ignores_attributes():
    a, b = matmul(16), matmul(16)
    assert a is not b and workload_key(a) == workload_key(b)
    assert workload_key(a) == workload_key(a.with_attr("tir.is_scheduled", True))
    assert workload_key(matmul(16)) != workload_key(matmul(32))


def test_key_is_the_same_in_another_process():
    out = subprocess.run(
        [sys.executable, "-c", _KEY_IN_CHILD], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == workload_key(matmul(16))


def test_extract_tasks_deduplicates_equal_functions():
    from unity.ir.module import IRModule

    mod = IRModule({"mm_a": matmul(16), "mm_b": matmul(16), "mm_c": matmul(8)})
    tasks = extract_tasks(mod)
    assert sorted(t.name for t in tasks) == ["mm_a", "mm_c"]
