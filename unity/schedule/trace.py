"""`Trace`: the primitives applied to a schedule, printable as Python and replayable.

Example:
    >>> from unity.schedule.trace import Trace
    >>> Trace().show()
    ''
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from unity.schedule.state import BlockRV, LoopRV

if TYPE_CHECKING:
    from unity.schedule.schedule import Schedule


@dataclass(frozen=True)
class Instruction:
    """One primitive call: its name, keyword arguments and the handles it returned.

    Example:
        >>> inst = Instruction("get_block", {"name": "C", "func_name": "main"})
        >>> inst.kind, inst.args["name"], inst.outputs
        ('get_block', 'C', None)
    """

    kind: str
    args: dict[str, Any]
    outputs: Any = None


@dataclass
class Trace:
    """The list of instructions a schedule has applied, in order.

    Example:
        >>> trace = Trace()
        >>> trace.append(Instruction("get_block", {"name": "C"}))
        >>> [inst.kind for inst in trace.insts]
        ['get_block']
    """

    insts: list[Instruction] = field(default_factory=list)

    def append(self, inst: Instruction) -> None:
        """Record one instruction.

        Example:
            >>> trace = Trace()
            >>> trace.append(Instruction("parallel", {}))
            >>> len(trace.insts)
            1
        """
        self.insts.append(inst)

    def copy(self) -> Trace:
        """A copy that can grow independently.

        Example:
            >>> trace = Trace([Instruction("parallel", {})])
            >>> other = trace.copy()
            >>> other.append(Instruction("vectorize", {}))
            >>> len(trace.insts), len(other.insts)
            (1, 2)
        """
        return Trace(list(self.insts))

    def show(self) -> str:
        """The trace as Python statements that rebuild the schedule from `sch`.

        Example:
            >>> print(sch.trace.show())  # doctest: +SKIP
            b0 = sch.get_block(name="C", func_name="main")
            l1, l2, l3 = sch.get_loops(block=b0)
        """
        names: dict[object, str] = {}
        lines = []
        for inst in self.insts:
            call = (
                f"sch.{inst.kind}({', '.join(_fmt_arg(k, v, names) for k, v in inst.args.items())})"
            )
            targets = _name_outputs(inst.outputs, names)
            lines.append(f"{targets} = {call}" if targets else call)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.show()

    def apply_to_schedule(self, sch: Schedule) -> None:
        """Replay every instruction on `sch` (a schedule of the original module).

        Example:
            >>> sch.trace.apply_to_schedule(Schedule(original))  # doctest: +SKIP
        """
        rvs: dict[object, object] = {}
        for inst in self.insts:
            args = {k: _map(v, rvs) for k, v in inst.args.items()}
            star = args.pop("*", [])
            result = getattr(sch, inst.kind)(*star, **args)
            _bind(inst.outputs, result, rvs)


def _is_rv(v: object) -> bool:
    return isinstance(v, BlockRV | LoopRV)


def _fmt_arg(key: str, v: object, names: dict[object, str]) -> str:
    if key == "*":
        return ", ".join(_fmt(x, names) for x in v)  # type: ignore[attr-defined]
    return f"{key}={_fmt(v, names)}"


def _fmt(v: object, names: dict[object, str]) -> str:
    if _is_rv(v):
        return names.get(v, repr(v))
    if isinstance(v, list | tuple):
        inner = ", ".join(_fmt(x, names) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {_fmt(x, names)}" for k, x in v.items()) + "}"
    if callable(v):
        return _fmt_lambda(v)
    return repr(v)


def _name_outputs(outputs: object, names: dict[object, str]) -> str:
    if outputs is None:
        return ""
    items = list(outputs) if isinstance(outputs, list | tuple) else [outputs]
    for rv in items:
        names[rv] = f"{'b' if isinstance(rv, BlockRV) else 'l'}{len(names)}"
    text = ", ".join(names[rv] for rv in items)
    if isinstance(outputs, list | tuple) and len(items) == 1:
        text += ","
    return text if items else "_"


def _map(v: object, rvs: dict[object, object]) -> object:
    if _is_rv(v):
        return rvs[v]
    if isinstance(v, list):
        return [_map(x, rvs) for x in v]
    if isinstance(v, tuple):
        return tuple(_map(x, rvs) for x in v)
    return v


def _bind(old: object, new: object, rvs: dict[object, object]) -> None:
    if old is None:
        return
    if isinstance(old, list | tuple):
        for a, b in zip(old, new):  # type: ignore[call-overload]
            rvs[a] = b
    else:
        rvs[old] = new


def _fmt_lambda(fn: Any) -> str:
    """Print an index map as a lambda by applying it to variables named like its parameters."""
    import inspect

    from unity.tir.expr import Var, const

    names = list(inspect.signature(fn).parameters)
    out = fn(*(Var(n) for n in names))
    items = out if isinstance(out, list | tuple) else (out,)
    body = ", ".join(const(e).script() for e in items)
    return f"lambda {', '.join(names)}: ({body}{',' if len(items) == 1 else ''})"
