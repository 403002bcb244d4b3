"""`ScheduleError`: a schedule primitive refused, naming the failed condition and the IR.

Example:
    >>> from unity.schedule.error import ScheduleError
    >>> err = ScheduleError("split", "the factors do not multiply to the loop extent")
    >>> str(err).splitlines()[0]
    'ScheduleError in split: the factors do not multiply to the loop extent'
"""

from __future__ import annotations

from unity.ir.diagnostics import DiagnosticError


class ScheduleError(DiagnosticError):
    """A primitive's precondition failed; the schedule is left unchanged.

    `str(err)` names the primitive and the condition, then prints the function with the
    offending block or loop underlined (plain message when no printer is registered).

    Example:
        >>> err = ScheduleError("split", "factors [3, 3] do not cover extent 8")
        >>> str(err).splitlines()[0]
        'ScheduleError in split: factors [3, 3] do not cover extent 8'
    """

    def __init__(
        self, primitive: str, condition: str, func: object | None = None, node: object | None = None
    ) -> None:
        super().__init__(f"ScheduleError in {primitive}: {condition}", node)
        self.primitive = primitive
        self.condition = condition
        self.module = func
