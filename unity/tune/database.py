"""The tuning database: a JSON-lines file of measured candidates, keyed by workload.

One line per measured candidate, appended (and flushed) as soon as it is measured, so
an interrupted run loses nothing and a re-run skips what is already there.  A half
written last line (the process killed mid-write) is ignored.  The file is shared
between models: a workload is found by its key (`workload_key`), not by the model or
function it came from.

A line::

    {"workload": "2bf0f9cb5a63dc6e", "task": "main", "target": "llvm",
     "space": "matmul", "knobs": {"ti": 4, ...}, "status": "ok",
     "latency_s": 4.9e-06, "error": "", "trace": "b0 = sch.get_block(...)..."}

`status` is ``ok``, ``wrong``, ``error``, ``crash``, ``timeout`` or ``invalid`` (the
schedule primitives refused the knobs); only ``ok`` lines carry a latency.

Example:
    >>> db = Database("/tmp/tune/database.json")  # doctest: +SKIP
    >>> db.best("2bf0f9cb5a63dc6e").knobs  # doctest: +SKIP
    {'kb': None, 'order': 'ij', ...}
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["BASELINE", "MARGIN", "RECHECK", "Database", "Record"]

RECHECK = "recheck"
"""`Record.extra` key of a re-measurement (not a trial: it does not count against `trials`)."""

BASELINE = "baseline"
"""`Record.extra` key marking the re-measurements of the default schedule."""

MARGIN = 0.05
"""How much faster than the default (by medians) a rechecked candidate must be to win.
On a shared machine the medians of a few runs still move by several percent, and a
kernel's gain alone shrinks inside a model (its weights cold, its input just written by
another core): on Zen 3, 400 trials without a margin made ResNet-50 slower than its
default schedules by up to 6%, with candidates 1-16% ahead alone."""


@dataclass(frozen=True)
class Record:
    """One measured candidate (one line of the file).

    Example:
        >>> r = Record("key", "main", "llvm", "matmul", {"tile": 8}, "ok", 1e-3)
        >>> r.candidate_id
        'matmul:{"tile": 8}'
    """

    workload: str
    task: str
    target: str
    space: str
    knobs: dict[str, Any]
    status: str
    latency_s: float | None = None
    error: str = ""
    trace: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def candidate_id(self) -> str:
        """The same text as `Candidate.id`: space name and sorted knobs."""
        return self.space + ":" + json.dumps(self.knobs, sort_keys=True)


class Database:
    """Records of one JSON-lines file, loaded at construction and appended to by `add`.

    Example:
        >>> db = Database(tmp_path / "db.json")  # doctest: +SKIP
        >>> db.add(Record("k", "main", "llvm", "rules", {}, "ok", 1e-3))  # doctest: +SKIP
        >>> db.best("k").latency_s  # doctest: +SKIP
        0.001
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.records: list[Record] = []
        if self.path.exists():
            self.records = _load(self.path)

    def add(self, record: Record) -> None:
        """Append `record` to the file (flushed) and to `records`.

        Example:
            >>> import tempfile
            >>> db = Database(Path(tempfile.mkdtemp()) / "db.json")
            >>> db.add(Record("key", "main", "llvm", "matmul", {"tile": 8}, "ok", 1e-3))
            >>> len(Database(db.path).records)  # the record is on disk
            1
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(asdict(record), sort_keys=True)
        with self.path.open("a", encoding="utf-8") as f:
            if f.tell() and not _ends_with_newline(self.path):
                f.write("\n")  # after a torn last line, start a fresh one
            f.write(line + "\n")
            f.flush()
        self.records.append(record)

    def of(self, workload: str) -> list[Record]:
        """The records of one workload, in the order they were measured.

        Example:
            >>> import tempfile
            >>> db = Database(Path(tempfile.mkdtemp()) / "db.json")
            >>> db.add(Record("a", "main", "llvm", "matmul", {}, "ok", 1e-3))
            >>> db.add(Record("b", "main", "llvm", "matmul", {}, "ok", 2e-3))
            >>> [r.latency_s for r in db.of("b")]
            [0.002]
        """
        return [r for r in self.records if r.workload == workload]

    def measured(self, workload: str) -> set[str]:
        """Candidate ids already recorded for `workload` (whatever their status).

        Example:
            >>> import tempfile
            >>> db = Database(Path(tempfile.mkdtemp()) / "db.json")
            >>> db.add(Record("a", "main", "llvm", "matmul", {"tile": 8}, "error", error="bad split"))
            >>> db.measured("a")
            {'matmul:{"tile": 8}'}
        """
        return {r.candidate_id for r in self.of(workload)}

    def best(self, workload: str, target_kind: str | None = None) -> Record | None:
        """The fastest candidate of `workload` (for targets of `target_kind`), or None.

        Where the tuner measured some candidates again (records marked ``extra["recheck"]``,
        the few fastest next to the default, in interleaved rounds), only those compete,
        each by the median of all its measurements: one lucky measurement on a shared
        machine does not win, and the default (marked ``extra["baseline"]``) loses only
        to a candidate `MARGIN` faster.  Otherwise the fastest ``ok`` record.  The record
        returned is the candidate's median one.

        Example:
            >>> db.best(key, "llvm").space  # doctest: +SKIP
            'matmul'
        """
        ok = [
            r for r in self.of(workload)
            if r.status == "ok" and (target_kind is None or r.target.split()[0] == target_kind)
        ]  # fmt: skip
        if not ok:
            return None
        rechecked = {r.candidate_id for r in ok if r.extra.get(RECHECK)}
        if not rechecked:
            return min(ok, key=lambda r: r.latency_s)
        runs: dict[str, list[Record]] = {}
        for r in ok:
            if r.candidate_id in rechecked:
                runs.setdefault(r.candidate_id, []).append(r)
        medians = {cid: _median_record(rs) for cid, rs in runs.items()}
        fastest = min(medians.values(), key=lambda r: r.latency_s)
        baseline = next((r.candidate_id for r in ok if r.extra.get(BASELINE)), None)
        default = medians.get(baseline) if baseline is not None else None
        if default is not None and fastest.latency_s > default.latency_s * (1 - MARGIN):
            return default
        return fastest


def _median_record(records: list[Record]) -> Record:
    """The record of median latency (the lower middle one of an even count)."""
    ordered = sorted(records, key=lambda r: r.latency_s)
    return ordered[(len(ordered) - 1) // 2]


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(-1, 2)
        return f.read(1) == b"\n"


def _load(path: Path) -> list[Record]:
    records = []
    names = set(Record.__dataclass_fields__)
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn line from an interrupted write
        if not isinstance(data, dict) or not {"workload", "space", "knobs", "status"} <= set(data):
            raise ValueError(
                f"{path}:{n + 1}: not a tuning record (needs workload, space, knobs, status)"
            )
        data.setdefault("task", "")
        data.setdefault("target", "llvm")
        records.append(Record(**{k: v for k, v in data.items() if k in names}))
    return records
