"""`ApplyTuningDatabase` and ``unity.compile(..., tuning_db=...)`` on hand-written records."""

import numpy as np
import pytest

import unity
from tests.tune.test_tune import mlp
from unity import relax
from unity.ir.transform import Sequential
from unity.relax.pipeline import get_pipeline
from unity.tir.function import PrimFunc
from unity.tune import ApplyTuningDatabase, Database, Record, extract_tasks, with_tuning_db

KNOBS = {
    "ti": 4,
    "tj": 16,
    "kb": None,
    "pack": True,
    "order": "ij",
    "parallel": False,
    "unroll": True,
}


@pytest.fixture
def model_and_db(tmp_path):
    rng = np.random.default_rng(0)
    w1, b1 = (
        rng.standard_normal((32, 16), dtype=np.float32),
        rng.standard_normal(32, dtype=np.float32),
    )
    w2, b2 = (
        rng.standard_normal((16, 32), dtype=np.float32),
        rng.standard_normal(16, dtype=np.float32),
    )
    mod = mlp(w1, b1, w2, b2)
    db = Database(tmp_path / "database.json")
    for task in extract_tasks(mod):
        db.add(Record(task.key, task.name, "llvm", "matmul", KNOBS, "ok", 1e-6))
        db.add(Record(task.key, task.name, "llvm", "matmul", {**KNOBS, "ti": 2}, "ok", 2e-6))
    x = rng.standard_normal((8, 16), dtype=np.float32)
    return mod, db.path, x, np.maximum(x @ w1.T + b1, 0) @ w2.T + b2


def test_compile_uses_the_best_record_of_each_fused_function(model_and_db):
    mod, path, x, ref = model_and_db
    lowered = with_tuning_db(get_pipeline("default"), path)(mod)
    tuned = [
        f.attrs["tir.tuned"]
        for _, f in lowered.items()
        if isinstance(f, PrimFunc) and "tir.tuned" in f.attrs
    ]
    assert len(tuned) == 2 and all('"ti": 4' in t for t in tuned)
    vm = relax.VirtualMachine(unity.compile(mod, "llvm", tuning_db=path), unity.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), ref, rtol=1e-4, atol=1e-4)


def test_the_work_dir_names_the_database_too(model_and_db):
    mod, path, x, ref = model_and_db
    vm = relax.VirtualMachine(unity.compile(mod, "llvm", tuning_db=str(path.parent)), unity.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), ref, rtol=1e-4, atol=1e-4)


def test_pass_goes_just_before_the_default_schedules():
    names = [type(p).__name__ for p in with_tuning_db(get_pipeline("default"), "db").passes]
    assert names.count("ApplyTuningDatabase") == 1
    assert names[names.index("ApplyTuningDatabase") + 1] == "DefaultSchedules"
    assert isinstance(with_tuning_db(Sequential([]), "db"), Sequential)


def test_a_missing_database_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no tuning database at .*nothing\.json"):
        ApplyTuningDatabase(tmp_path / "nothing.json")(unity.IRModule())
