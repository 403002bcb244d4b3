"""`unity.tune`: measure schedules of every distinct workload and keep the best in a database.

For each task (`extract_tasks`): the unscheduled function is run once for the reference
outputs, the default schedule is measured first (the baseline), then each space's own
default and its neighbours (one knob one step away), then rounds of candidates
(random knob settings, and mutations of the fastest so far), ranked by the cost model
once it has a few measurements, the best-ranked ones (plus a few random ones, to keep
exploring) measured by the worker pool.  The fastest few are measured again next to
the default, and the database's `best` trusts those repeated medians only.  Every
result, faulty or not, becomes a database line at once; a re-run with the same
`work_dir` counts those lines against `trials` and never measures a candidate twice.

Example:
    >>> db_path = unity.tune(mod, "llvm", trials=16, work_dir="tune_logs")  # doctest: +SKIP
    >>> ex = unity.compile(mod, "llvm", tuning_db=db_path)  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import random
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from unity.ir.module import IRModule
from unity.schedule.default.analysis import RuleContext
from unity.tir.function import PrimFunc
from unity.tune.cost_model import CostModel, features
from unity.tune.database import BASELINE, RECHECK, Database, Record
from unity.tune.measure import MeasureResult, WorkerPool, make_args
from unity.tune.progress import Progress
from unity.tune.space import Candidate, Space, spaces_for
from unity.tune.workload import Task, extract_tasks

__all__ = ["DATABASE_FILE", "split_budget", "tune"]

DATABASE_FILE = "database.json"
"""The name of the database file inside `work_dir`."""

SpacesFn = Callable[[PrimFunc], "list[Space]"]
_Proposal = tuple[Candidate, PrimFunc, str]


def tune(
    mod: IRModule | PrimFunc,
    target: Any = "llvm",
    trials: int = 64,
    work_dir: str | Path = "tune_logs",
    num_workers: int = 2,
    timeout_s: float = 10.0,
    *,
    seed: int = 0,
    progress: bool = True,
    extra_spaces: SpacesFn | None = None,
    shape_hints: Mapping[str, int] | None = None,
) -> str:
    """Tune every distinct PrimFunc of `mod` for `target`; return the database's path.

    Args:
        mod: PrimFuncs, or a relax module (tuned after legalization and fusion).
        target: An `llvm` target.
        trials: Measurements in all (split over the tasks by `split_budget`), counting
            those a previous run in `work_dir` already recorded.
        work_dir: Folder of the database (``database.json``), created if missing.
        num_workers: Worker processes that build and check candidates.
        timeout_s: Limit per candidate for its build-and-check phase and its run.
        seed: Seeds the search (and the random inputs).
        progress: Draw the progress bar on stderr.
        extra_spaces: More spaces for a function, beside `spaces_for` (experiments).
        shape_hints: Sizes of the inputs that measure functions with symbolic shapes, by
            the dimension's name (``{"batch": 1, "seq": 128}``); the kernels measured
            and kept are the symbolic ones the model runs.  A function with a symbolic
            dimension not named here is skipped.

    Returns:
        The database path, for ``unity.compile(..., tuning_db=path)``.

    Example:
        >>> path = tune(matmul_func, trials=8, work_dir=tmp_path)  # doctest: +SKIP
    """
    from unity.target import Target

    if trials < 0:
        raise ValueError(f"unity.tune: trials must be >= 0, got {trials}")
    target_obj = Target(target)
    if target_obj.kind != "llvm":
        raise ValueError(f"unity.tune: only llvm (CPU) targets can be tuned, got {target_obj}")
    ctx = RuleContext.for_target(target_obj)
    tasks = extract_tasks(mod)
    db = Database(Path(work_dir) / DATABASE_FILE)
    if not tasks:
        return str(db.path)
    task_spaces = [
        spaces_for(t.func, ctx) + (extra_spaces(t.func) if extra_spaces else []) for t in tasks
    ]
    budgets = split_budget(trials, [sum(s.size for s in spaces) for spaces in task_spaces])
    bar = Progress(sum(budgets), stream=sys.stderr if progress else None)
    with WorkerPool(num_workers, timeout_s, str(target_obj)) as pool:
        pool.shape_hints = dict(shape_hints or {})
        for task, spaces, budget in zip(tasks, task_spaces, budgets):
            tuner = _TaskTuner(task, spaces, db, pool, bar, str(target_obj), random.Random(seed))
            tuner.run(budget)
    return str(db.path)


def split_budget(trials: int, sizes: list[int]) -> list[int]:
    """Trials per task: a task gets no more than its spaces hold, and a task with a
    small space (the default rules' few knobs only) gets at most `_SMALL_SHARE`; what they
    leave goes evenly to the others.

    Example:
        >>> split_budget(30, [20, 500, 500])
        [4, 13, 13]
    """
    caps = [min(size, _SMALL_SHARE) if size <= _SMALL_SPACE else size for size in sizes]
    budgets = [0] * len(sizes)
    left, open_ = trials, list(range(len(sizes)))
    while left > 0 and open_:
        share = max(1, left // len(open_))
        for n in list(open_):
            give = min(share, caps[n] - budgets[n], left)
            budgets[n] += give
            left -= give
            if budgets[n] >= caps[n]:
                open_.remove(n)
            if left == 0:
                break
    return budgets


_RECHECK_TOP = 3
"""Fastest candidates measured again at the end of a task, beside the default."""

_RECHECK_ROUNDS = 3
"""Rounds of re-measurement."""

_SMALL_SPACE = 64
"""Spaces of at most this many settings are the default rules' knobs, nothing more."""

_SMALL_SHARE = 4
"""Trials a task with only a small space gets (the default is the first of them)."""


class _TaskTuner:
    """The search over one task's spaces."""

    def __init__(
        self,
        task: Task,
        spaces: list[Space],
        db: Database,
        pool: WorkerPool,
        bar: Progress,
        target: str,
        rng: random.Random,
    ) -> None:
        self.task, self.db, self.pool, self.bar = task, db, pool, bar
        self.target, self.rng = target, rng
        self.spaces = {s.name: s for s in spaces}
        self.model = CostModel()
        self.rows: list[dict[str, float]] = []
        self.latencies: list[float] = []
        self.batch = max(2, 2 * len(pool.workers))
        self.offset = bar.done

    def trials_done(self) -> int:
        return sum(
            1 for r in self.db.of(self.task.key) if r.status != "invalid" and not r.extra.get(RECHECK)
        )

    def run(self, budget: int) -> None:
        for rec in self.db.of(self.task.key):
            if rec.status == "ok" and rec.space in self.spaces:
                self._learn(rec, self._apply(Candidate(rec.space, rec.knobs))[0])
        self._show()
        if self.trials_done() >= budget:
            return
        try:
            make_args(self.task.func, 0, self.pool.shape_hints)
        except (TypeError, ValueError) as exc:
            print(f"[tune] {self.task.name}: {exc}; task skipped", file=sys.stderr)
            return
        reference = self.pool.reference(self.task.func)
        if isinstance(reference, MeasureResult):
            print(
                f"[tune] {self.task.name}: the unscheduled function fails ({reference.status}: "
                f"{reference.error}); task skipped",
                file=sys.stderr,
            )
            return
        first = self._around_defaults()[: max(0, budget - self.trials_done())]
        while self.trials_done() < budget:
            batch = self._propose(min(self.batch, budget - self.trials_done()), first)
            first = []
            if not batch:
                break  # the spaces are exhausted
            results = self.pool.measure([func for _, func, _ in batch], reference)
            for (cand, func, trace), result in zip(batch, results):
                self._record(cand, func, trace, result)
            self.model.fit(self.rows, self.latencies)
            self._show()
        self._recheck(reference)
        self._show(final=True)

    def _recheck(self, reference: list[Any]) -> None:
        """Measure the fastest few and the default again, in interleaved rounds.

        One measurement on a shared machine can be off by half (another job held the
        cores for a moment); a winner must stay ahead when measured next to the default
        (whose records also carry ``extra["baseline"]``: `Database.best` keeps it unless
        a candidate beats it by a margin).  Done once per task (its records carry
        ``extra["recheck"]``)."""
        records = self.db.of(self.task.key)
        if any(r.extra.get(RECHECK) for r in records):
            return
        fastest: dict[str, Record] = {}
        for r in sorted((r for r in records if r.status == "ok"), key=lambda r: r.latency_s):
            fastest.setdefault(r.candidate_id, r)
        picked = [Candidate(r.space, r.knobs) for r in list(fastest.values())[:_RECHECK_TOP]]
        rules = self.spaces.get("rules")
        default = Candidate("rules", rules.default) if rules is not None else None
        if default is not None and all(c.id != default.id for c in picked):
            picked.append(default)
        applied = [(c, *self._apply(c)) for c in picked]
        marks = [
            {RECHECK: True} | ({BASELINE: True} if default and c.id == default.id else {})
            for c in picked
        ]
        for _ in range(_RECHECK_ROUNDS):
            results = self.pool.measure([func for _, func, _ in applied], reference)
            for (cand, func, trace), result, mark in zip(applied, results, marks):
                rec = self._record_of(cand, result.status, result.latency_s, result.error, trace)
                self.db.add(dataclasses.replace(rec, extra=mark))  # not a trial

    # -- proposing -------------------------------------------------------------------------
    def _around_defaults(self) -> list[Candidate]:
        """The default rules first, then each space's default setting and its neighbours
        (one knob moved one step): what the rules chose is usually close to the best, and
        random draws from spaces of hundreds of settings rarely land near it."""
        rules = self.spaces.get("rules")
        out = [Candidate("rules", rules.default)] if rules and rules.default is not None else []
        for space in self.spaces.values():
            if space.name == "rules" or space.default is None:
                continue
            base = Candidate(space.name, space.default)
            out += [base, *space.neighbors(base)]
        return out

    def _propose(self, n: int, first: list[Candidate]) -> list[_Proposal]:
        seen = self.db.measured(self.task.key)
        found: dict[str, _Proposal] = {}
        for cand in first:
            if cand.id not in seen:
                self._try(cand, seen, found)
        total = sum(s.size for s in self.spaces.values())
        for _ in range(50 * max(n, 8)):
            if len(found) >= max(4 * n, 32) or len(seen) + len(found) >= total:
                break
            cand = self._draw()
            if cand.id not in seen and cand.id not in found:
                self._try(cand, seen, found)
        chosen = [c for c in first if c.id in found]
        rest = [v for k, v in found.items() if all(k != c.id for c in chosen)]
        return [found[c.id] for c in chosen] + self._rank(rest, n - len(chosen))

    def _draw(self) -> Candidate:
        ok = sorted(
            (r for r in self.db.of(self.task.key) if r.status == "ok" and r.space in self.spaces),
            key=lambda r: r.latency_s,
        )
        if ok and self.rng.random() < 0.6:
            rec = self.rng.choice(ok[:5])
            return self.spaces[rec.space].mutate(Candidate(rec.space, rec.knobs), self.rng)
        space = self.rng.choices(
            list(self.spaces.values()), weights=[s.size for s in self.spaces.values()]
        )[0]
        return space.sample(self.rng)

    def _try(self, cand: Candidate, seen: set[str], found: dict[str, _Proposal]) -> None:
        try:
            found[cand.id] = (cand, *self._apply(cand))
        except Exception as exc:  # noqa: BLE001  # a refused knob is recorded, never fatal
            msg = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
            self.db.add(self._record_of(cand, "invalid", error=msg))
            seen.add(cand.id)

    def _rank(self, items: list[_Proposal], n: int) -> list[_Proposal]:
        if n <= 0 or not items:
            return []
        self.rng.shuffle(items)
        if not self.model.trained:
            return items[:n]
        scores = self.model.predict([features(f, c.space, c.knobs) for c, f, _ in items])
        order = sorted(range(len(items)), key=lambda k: scores[k])
        explore = n // 4
        best = [items[k] for k in order[: n - explore]]
        others = [items[k] for k in order[n - explore :]]
        return best + self.rng.sample(others, min(explore, len(others)))

    # -- recording -------------------------------------------------------------------------
    def _apply(self, cand: Candidate) -> tuple[PrimFunc, str]:
        func, trace = self.spaces[cand.space].apply(self.task.func, cand.knobs)
        return func.with_attr("tir.is_scheduled", True), trace

    def _record(self, cand: Candidate, func: PrimFunc, trace: str, result: MeasureResult) -> None:
        rec = self._record_of(cand, result.status, result.latency_s, result.error, trace)
        self.db.add(rec)
        if rec.status == "ok":
            self._learn(rec, func)

    def _record_of(
        self,
        cand: Candidate,
        status: str,
        latency: float | None = None,
        error: str = "",
        trace: str = "",
    ) -> Record:
        return Record(
            self.task.key,
            self.task.name,
            self.target,
            cand.space,
            cand.knobs,
            status,
            latency,
            error,
            trace,
        )

    def _learn(self, rec: Record, func: PrimFunc) -> None:
        self.rows.append(features(func, rec.space, rec.knobs))
        self.latencies.append(rec.latency_s)

    def _show(self, final: bool = False) -> None:
        best = self.db.best(self.task.key)
        default = self.spaces.get("rules")
        base = next(
            (
                r
                for r in self.db.of(self.task.key)
                if r.status == "ok"
                and default is not None
                and r.space == "rules"
                and r.knobs == default.default
            ),
            None,
        )
        self.bar.update(
            self.task.name,
            self.offset + self.trials_done(),
            best and best.latency_s,
            base and base.latency_s,
            final,
        )
