"""Tuning: measure schedules per workload, keep the best in a database, reuse it when compiling.

`tune(mod, target, trials=N, work_dir=...)` returns the path of a JSON-lines database;
``unity.compile(mod, target, tuning_db=path)`` runs `ApplyTuningDatabase(path)` before the
default schedules, so every tuned workload gets its best measured schedule.

Example:
    >>> path = unity.tune(mod, "llvm", trials=16, work_dir="tune_logs")  # doctest: +SKIP
"""

import sys
import types
from typing import Any

from unity.tune.apply import ApplyTuningDatabase, with_tuning_db
from unity.tune.database import Database, Record
from unity.tune.space import Candidate, Space, spaces_for
from unity.tune.tuner import tune
from unity.tune.workload import Task, extract_tasks, workload_key

__all__ = [
    "ApplyTuningDatabase", "Candidate", "Database", "Record", "Space", "Task", "extract_tasks",
    "spaces_for", "tune", "with_tuning_db", "workload_key",
]  # fmt: skip


class _CallableModule(types.ModuleType):
    """Lets ``unity.tune(mod, ...)`` call `tune` while `unity.tune.apply` stays a module."""

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        return tune(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
