"""`unity.build` in worker processes: jobs split by estimated cost, forked workers, the
same results (and errors) as a build in this process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import unity
from unity import te
from unity.codegen import build_jobs
from unity.codegen.build_jobs import map_jobs, split_jobs
from unity.ir.instrument import PassInstrument
from unity.ir.module import IRModule
from unity.ir.transform import PassContext

BUILD = sys.modules["unity.codegen.build"]  # the module (`unity.codegen.build` is the function)

needs_fork = pytest.mark.skipif(not build_jobs._can_fork(), reason="no fork here (not Linux, or threads)")


class _Seen(PassInstrument):
    """Records the names of the passes it sees."""

    def __init__(self, every: bool) -> None:
        self.needs_every_pass = every
        self.names: list[str] = []

    def run_after_pass(self, mod: object, info: object) -> None:
        self.names.append(getattr(info, "name", ""))


def _scale_funcs(count: int) -> IRModule:
    """`count` PrimFuncs `f{k}`: B = A * (k + 1) over 32 x 32."""
    def scale(k: int) -> object:
        a = te.placeholder((32, 32), name="A")
        b = te.compute((32, 32), lambda i, j: a[i, j] * (k + 1.0), name="B")
        return te.create_prim_func([a, b])

    return IRModule({f"f{k}": scale(k) for k in range(count)})


def test_short_builds_are_one_job():
    assert split_jobs([0.01] * 10) == [list(range(10))]
    assert split_jobs([]) == [[]]


@needs_fork
def test_long_builds_split_into_consecutive_jobs_of_about_equal_cost():
    costs = [1.0, 0.1, 0.1, 2.0, 0.5, 0.5, 0.5, 0.5, 1.0, 0.2, 0.3, 0.3]
    with PassContext(config={"build.jobs": 2}):
        jobs = split_jobs(costs)
    assert [i for job in jobs for i in job] == list(range(len(costs)))
    assert all(job for job in jobs)
    assert 2 < len(jobs) <= 2 * build_jobs.JOBS_PER_WORKER
    share = sum(costs) / (2 * build_jobs.JOBS_PER_WORKER)
    # a job holds one item, or items whose costs stay within a share and a half
    assert all(len(job) == 1 or sum(costs[i] for i in job) <= 1.5 * share for job in jobs)


def test_one_job_when_told_or_watched():
    costs = [1.0] * 8
    with PassContext(config={"build.jobs": 1}):
        assert split_jobs(costs) == [list(range(8))]
    with PassContext(config={"build.jobs": 2}, instruments=[_Seen(every=True)]):
        assert split_jobs(costs) == [list(range(8))]
    with pytest.raises(ValueError, match="build.jobs must be >= 0"):
        with PassContext(config={"build.jobs": -1}):
            split_jobs(costs)


@needs_fork
def test_map_jobs_runs_in_other_processes_and_keeps_order():
    parent = os.getpid()
    with PassContext(config={"build.jobs": 2}):
        got = map_jobs(6, lambda i: (i * i, os.getpid()))
    assert [value for value, _ in got] == [0, 1, 4, 9, 16, 25]
    assert parent not in {pid for _, pid in got}
    with PassContext(config={"build.jobs": 1}):
        assert {pid for _, pid in map_jobs(3, lambda i: (i, os.getpid()))} == {parent}


@needs_fork
def test_a_failing_job_raises_here_as_without_workers():
    def work(i: int) -> int:
        if i == 2:
            raise ValueError(f"job {i} is bad")
        return i

    with PassContext(config={"build.jobs": 2}):
        with pytest.raises(ValueError, match="job 2 is bad"):
            map_jobs(4, work)


@needs_fork
def test_a_dying_worker_is_redone_here():
    parent = os.getpid()

    def work(i: int) -> int:
        if os.getpid() != parent:
            os._exit(3)  # the worker dies without a word
        return i + 1

    with PassContext(config={"build.jobs": 2}):
        with pytest.warns(RuntimeWarning, match="worker process failed"):
            assert map_jobs(3, work) == [1, 2, 3]


@pytest.fixture
def parallel_build(monkeypatch: pytest.MonkeyPatch):
    """Every build is estimated long, so that it splits into jobs in 2 workers."""
    monkeypatch.setattr(BUILD, "SECONDS_PER_NODE", 1.0)
    with PassContext(config={"build.jobs": 2}):
        yield


@needs_fork
def test_a_build_in_workers_runs_exports_and_shows_every_function(parallel_build, tmp_path):
    mod = _scale_funcs(6)
    lib = unity.build(mod)
    a = np.random.default_rng(0).standard_normal((32, 32)).astype("float32")
    for k in range(6):
        b = np.zeros_like(a)
        lib[f"f{k}"](a, b)
        np.testing.assert_allclose(b, a * (k + 1), rtol=1e-6)
    source = lib.get_source("ll")
    assert all(f"@f{k}(" in source for k in range(6))
    assert source.count("@__unity_num_threads = ") == 1  # defined once, beside the kernels
    path = str(tmp_path / "six.so")
    lib.export_library(path)
    loaded = unity.runtime.load_module(path)
    b = np.zeros_like(a)
    loaded["f5"](a, b)
    np.testing.assert_allclose(b, a * 6, rtol=1e-6)
    assert loaded.function_names == [f"f{k}" for k in range(6)]


@needs_fork
def test_instruments_that_follow_the_pipeline_do_not_stop_workers(monkeypatch):
    monkeypatch.setattr(BUILD, "SECONDS_PER_NODE", 1.0)
    follow, every = _Seen(every=False), _Seen(every=True)
    with PassContext(config={"build.jobs": 2}, instruments=[follow]):
        unity.build(_scale_funcs(4))
    assert "Simplify" not in follow.names  # the lowering ran in the workers
    with PassContext(config={"build.jobs": 2}, instruments=[every]):
        unity.build(_scale_funcs(4))
    assert "Simplify" in every.names


@needs_fork
def test_functions_sharing_a_symbol_in_different_jobs_are_an_error(parallel_build):
    mod = _scale_funcs(4)
    funcs = {gv.name_hint: f for gv, f in mod.items()}
    funcs["f3"] = funcs["f3"].with_attr("global_symbol", "f0")
    with pytest.raises(ValueError, match="'f0' and 'f3' both have the symbol 'f0'"):
        unity.build(IRModule(funcs))


def test_the_config_key_is_known_right_after_import_unity():
    code = (
        "import unity\n"
        "from unity.transform import PassContext\n"
        "print(PassContext(config={'build.jobs': 1}).get_config('build.jobs'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"


@needs_fork
def test_ctrl_c_ends_the_build_and_its_workers_at_once():
    code = (
        "import time\n"
        "from unity.codegen.build_jobs import map_jobs\n"
        "from unity.ir.transform import PassContext\n"
        "print('start', flush=True)\n"
        "with PassContext(config={'build.jobs': 2}):\n"
        "    map_jobs(8, lambda i: time.sleep(60))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "start"
        time.sleep(1.0)  # the workers are in their first jobs
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        started = time.monotonic()
        _, err = proc.communicate(timeout=30)
        assert time.monotonic() - started < 10  # not the 60 s jobs
        assert "KeyboardInterrupt" in err
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


@needs_fork
def test_daemon_threads_allow_workers_other_threads_do_not():
    import threading

    done = threading.Event()
    for daemon, allowed in ((True, True), (False, False)):
        thread = threading.Thread(target=done.wait, daemon=daemon)
        thread.start()
        try:
            assert build_jobs._can_fork() is allowed
        finally:
            done.set()
            thread.join()
            done.clear()
