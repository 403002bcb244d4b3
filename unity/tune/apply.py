"""`ApplyTuningDatabase`: give each PrimFunc found in a tuning database its best schedule.

Before::

    @T.prim_func
    def matmul(A: T.Buffer((64, 64), "float32"), B: ..., C: ...):
        for i, j, k in T.grid(64, 64, 64):
            with T.block("C"): ...

After ``ApplyTuningDatabase("tune_logs/database.json")`` (the database's best record
for this workload is the ``matmul`` space with ``ti=4, tj=16, ...``)::

    @T.prim_func
    def matmul(A: T.Buffer((64, 64), "float32"), B: ..., C: ...):
        T.func_attr({"tir.is_scheduled": True, "tir.tuned": "matmul:{...}", ...})
        for i_0 in T.parallel(16):
            ...

Functions already marked ``tir.is_scheduled``, and workloads the database does not
know, are left for the default schedules.  `with_tuning_db` puts the pass into a
pipeline just before `DefaultSchedules` (``unity.compile(..., tuning_db=path)``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, Pass, PassContext, Sequential
from unity.schedule.default.analysis import RuleContext
from unity.tir.function import PrimFunc
from unity.tune.database import Database
from unity.tune.space import spaces_for
from unity.tune.workload import workload_key

__all__ = ["ApplyTuningDatabase", "with_tuning_db"]


@dataclass(frozen=True)
class ApplyTuningDatabase(ModulePass):
    """Replace every unscheduled PrimFunc that the database knows by its tuned schedule.

    Attributes:
        path: The database file (``database.json``) or the `work_dir` holding it.
        target: The `llvm` target compiled for (None: the host CPU).

    Example:
        >>> ApplyTuningDatabase("tune_logs")(IRModule()).functions  # doctest: +SKIP
        {}
    """

    path: str | Path
    target: Any = None

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Schedule the module's PrimFuncs that have a record (returns `mod` if none has)."""
        db = Database(_db_file(self.path))
        rule_ctx = RuleContext.for_target(self.target)
        out = None
        for gv, func in list(mod.items()):
            if not isinstance(func, PrimFunc) or func.attrs.get("tir.is_scheduled"):
                continue
            tuned = _tuned(func, db, rule_ctx)
            if tuned is not None:
                out = out or mod.copy()
                out.update_func(gv, tuned)
        return out or mod


def _db_file(path: str | Path) -> Path:
    from unity.tune.tuner import DATABASE_FILE

    path = Path(path)
    if path.is_dir():
        path = path / DATABASE_FILE
    if not path.exists():
        raise FileNotFoundError(f"ApplyTuningDatabase: no tuning database at {path}")
    return path


def _tuned(func: PrimFunc, db: Database, ctx: RuleContext) -> PrimFunc | None:
    key = workload_key(func)
    best = db.best(key, "llvm")
    if best is None:
        return None
    spaces = {s.name: s for s in spaces_for(func, ctx)}
    space = spaces.get(best.space)
    if space is None:
        warnings.warn(
            f"tuning database: workload {key} ({best.task}) was tuned with the unknown "
            f"space {best.space!r}; using the default schedule",
            stacklevel=2,
        )
        return None
    scheduled, _ = space.apply(func, best.knobs)
    return scheduled.with_attr("tir.is_scheduled", True).with_attr("tir.tuned", best.candidate_id)


def with_tuning_db(pipeline: Pass, path: str | Path, target: Any = None) -> Pass:
    """`pipeline` with `ApplyTuningDatabase(path)` just before its `DefaultSchedules`.

    A pipeline with no `DefaultSchedules` gets the pass at the end; a pass that is not a
    `Sequential` runs first, then the database.

    Example:
        >>> from unity.relax.pipeline import get_pipeline
        >>> names = [type(p).__name__ for p in with_tuning_db(get_pipeline(), "logs").passes]
        >>> names[names.index("ApplyTuningDatabase") + 1]
        'DefaultSchedules'
    """
    tuning = ApplyTuningDatabase(path, target)
    if not isinstance(pipeline, Sequential):
        return Sequential([pipeline, tuning], name="tuned")
    passes = list(pipeline.passes)
    at = next((n for n, p in enumerate(passes) if _is_default_schedules(p)), len(passes))
    passes.insert(at, tuning)
    return Sequential(passes, pipeline.opt_level_, pipeline.name, pipeline.required_)


def _is_default_schedules(p: Pass) -> bool:
    # by name: the pass has moved between packages before, and tuning must not break
    return type(p).__name__ == "DefaultSchedules"
