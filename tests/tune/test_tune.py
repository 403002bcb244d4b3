"""`unity.tune` end to end on tiny workloads: database, faulty candidates, resume, compile."""

import json
from pathlib import Path

import numpy as np
import pytest

import unity
import unity.tune.tuner as tune_module
from tests.tune.helpers import faulty_space, matmul
from unity import relax
from unity.ir.module import IRModule
from unity.relax import op
from unity.relax.pipeline import get_pipeline
from unity.tir.function import PrimFunc
from unity.tune import ApplyTuningDatabase, Database, extract_tasks, with_tuning_db, workload_key


@pytest.fixture(scope="module")
def tuned_matmul(tmp_path_factory):
    work_dir = tmp_path_factory.mktemp("tune")
    path = unity.tune(matmul(32), "llvm", trials=6, work_dir=work_dir, num_workers=2, timeout_s=20)
    return path


def test_tuner_measures_the_default_first_and_keeps_the_fastest(tuned_matmul):
    db = Database(tuned_matmul)
    key = workload_key(matmul(32))
    trials = [r for r in db.of(key) if not r.extra.get("recheck")]
    measured = [r for r in trials if r.status != "invalid"]
    assert len(measured) == 6
    default = measured[0]
    assert (default.space, default.status) == ("rules", "ok")
    best = db.best(key)  # the re-measured candidates compete by their medians
    runs = sorted(r.latency_s for r in db.of(key) if r.candidate_id == default.candidate_id)
    assert best.latency_s <= runs[(len(runs) - 1) // 2]
    assert all(r.status == "ok" for r in measured), [r.error for r in measured]
    assert len({r.candidate_id for r in trials}) == len(trials)
    # the three fastest and the default, measured again in three interleaved rounds
    rechecks = [r for r in db.of(key) if r.extra.get("recheck")]
    fastest = sorted(measured, key=lambda r: r.latency_s)[:3]
    again = {r.candidate_id for r in fastest} | {default.candidate_id}
    assert {r.candidate_id for r in rechecks} == again and len(rechecks) == 3 * len(again)
    assert {r.candidate_id for r in rechecks if r.extra.get("baseline")} == {default.candidate_id}


def test_database_round_trips_into_the_same_schedule(tuned_matmul):
    lines = [json.loads(line) for line in Path(tuned_matmul).read_text().splitlines()]
    assert Database(tuned_matmul).records == Database(tuned_matmul).records
    assert {"workload", "space", "knobs", "status", "latency_s", "trace"} <= set(lines[0])
    mod = ApplyTuningDatabase(tuned_matmul)(IRModule({"main": matmul(32)}))
    best = Database(tuned_matmul).best(workload_key(matmul(32)))
    assert mod["main"].attrs["tir.tuned"] == best.candidate_id
    rng = np.random.default_rng(0)
    a, b = (
        rng.standard_normal((32, 32), dtype=np.float32),
        rng.standard_normal((32, 32), dtype=np.float32),
    )
    c = np.zeros((32, 32), np.float32)
    unity.build(mod, "llvm")["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_apply_leaves_unknown_workloads_alone(tuned_matmul):
    mod = IRModule({"main": matmul(16)})
    assert ApplyTuningDatabase(tuned_matmul)(mod) is mod


def test_planted_faulty_candidates_are_recorded_and_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(tune_module, "spaces_for", lambda func, ctx: [])
    path = unity.tune(matmul(16), trials=4, work_dir=tmp_path, num_workers=2, timeout_s=8,
                      extra_spaces=lambda func: [faulty_space()], progress=False)  # fmt: skip
    status = {r.knobs["mode"]: r.status for r in Database(path).records}
    assert status == {"ok": "ok", "wrong": "wrong", "crash": "crash", "hang": "timeout"}
    assert Database(path).best(workload_key(matmul(16))).knobs == {"mode": "ok"}


def test_resume_after_an_interruption_skips_what_was_measured(tmp_path, monkeypatch):
    calls = []
    original = tune_module.WorkerPool.measure

    def interrupted(self, funcs, reference):
        calls.append(len(funcs))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(self, funcs, reference)

    monkeypatch.setattr(tune_module.WorkerPool, "measure", interrupted)
    with pytest.raises(KeyboardInterrupt):
        unity.tune(matmul(16), trials=5, work_dir=tmp_path, num_workers=1, progress=False)
    first = [r for r in Database(tmp_path / "database.json").records if r.status != "invalid"]
    assert len(first) == calls[0] == 2
    monkeypatch.setattr(tune_module.WorkerPool, "measure", original)
    unity.tune(matmul(16), trials=5, work_dir=tmp_path, num_workers=1, progress=False)
    records = [r for r in Database(tmp_path / "database.json").records if not r.extra.get("recheck")]
    measured = [r for r in records if r.status != "invalid"]
    assert len(measured) == 5 and measured[:2] == first
    assert len({r.candidate_id for r in records}) == len(records)


def mlp(w1, b1, w2, b2):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((8, 16), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(op.nn.relu(op.nn.linear(x, relax.const(w1), relax.const(b1))))
            out = bb.emit_output(op.nn.linear(h, relax.const(w2), relax.const(b2)))
        bb.emit_func_output(out)
    return bb.get()


def test_relax_module_is_tuned_per_fused_function_and_compiled_with_the_database(tmp_path):
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
    path = unity.tune(mod, trials=4, work_dir=tmp_path, num_workers=1, progress=False)
    tasks = extract_tasks(mod)
    assert len(tasks) == 2 and {r.workload for r in Database(path).records} == {
        t.key for t in tasks
    }
    lowered = with_tuning_db(get_pipeline("default"), path)(mod)
    tuned = [f for _, f in lowered.items() if isinstance(f, PrimFunc) and "tir.tuned" in f.attrs]
    assert len(tuned) == 2
    vm = relax.VirtualMachine(unity.compile(mod, "llvm", tuning_db=path), unity.cpu())
    x = rng.standard_normal((8, 16), dtype=np.float32)
    ref = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(vm["main"](x).numpy(), ref, rtol=1e-4, atol=1e-4)


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(ValueError, match=r"only llvm \(CPU\) targets can be tuned"):
        unity.tune(matmul(8), "cuda", trials=1, work_dir=tmp_path)
    with pytest.raises(ValueError, match=r"trials must be >= 0"):
        unity.tune(matmul(8), trials=-1, work_dir=tmp_path)
    with pytest.raises(TypeError, match=r"expected an IRModule or a PrimFunc, got int"):
        unity.tune(3, trials=1, work_dir=tmp_path)


def test_symbolic_shapes_are_skipped_with_a_message(tmp_path, capsys):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 4), "float32"))
    with bb.function("main", [x]):
        bb.emit_func_output(bb.emit(op.add(x, x)))
    path = unity.tune(bb.get(), trials=2, work_dir=tmp_path, num_workers=1, progress=False)
    assert Database(path).records == []
    assert "symbolic shape (give its dimensions a size with `shape_hints`); task skipped" in capsys.readouterr().err


def _seq_matmul() -> PrimFunc:
    from unity import te, tir, topi

    seq = tir.SizeVar("seq", "int64")
    x, w = te.placeholder((seq, 32), name="x"), te.placeholder((32, 48), name="w")
    return te.create_prim_func([x, w, topi.matmul(x, w)])


def test_symbolic_shapes_are_measured_at_the_hinted_sizes(tmp_path):
    """Without a hint the task is skipped; with ``shape_hints`` it is measured at that
    size, and the schedule it keeps stays symbolic: right at other lengths too."""
    func = _seq_matmul()
    unity.tune(func, trials=3, work_dir=tmp_path / "none", num_workers=1, progress=False)
    assert not Database(tmp_path / "none" / "database.json").records
    path = unity.tune(func, trials=3, work_dir=tmp_path / "hinted", num_workers=1,
                      progress=False, shape_hints={"seq": 24})  # fmt: skip
    records = Database(path).of(workload_key(func))
    assert [r.status for r in records if not r.extra.get("recheck")] == ["ok"] * 3
    tuned = ApplyTuningDatabase(path)(IRModule({"main": func}))["main"]
    assert tuned.attrs["tir.tuned"] == Database(path).best(workload_key(func)).candidate_id
    lib = unity.build(tuned)
    rng = np.random.default_rng(0)
    for seq in (5, 30):
        a, b = rng.standard_normal((seq, 32), dtype="float32"), rng.standard_normal((32, 48), dtype="float32")
        out = np.zeros((seq, 48), "float32")
        lib["main"](a, b, out)
        np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)
