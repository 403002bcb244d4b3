"""Run a host launch plan (`unity.codegen.cuda_host_plan`) on a CUDA device.

Variables are ids; buffer data ids hold `DevicePtr`s, shape ids hold ints.  Launch
arguments are turned into what the driver's launch takes: pointers through
`DevicePtr.kernel_arg`, scalars as numpy scalars of the kernel parameter's dtype.

Example:
    >>> run_plan(plan, env, kernels, launch)  # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from unity.runtime.tensor import numpy_dtype


def _trunc_div(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b > 0) else -q
    return a / b


def _trunc_mod(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return a - b * _trunc_div(a, b)
    return math.fmod(a, b)


_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": _trunc_div, "%": _trunc_mod, "//": lambda a, b: a // b, "fmod": lambda a, b: a % b,
    "min": min, "max": max, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "and": lambda a, b: bool(a) and bool(b),
    "or": lambda a, b: bool(a) or bool(b),
}  # fmt: skip


def evaluate(e: Any, env: dict[int, Any]) -> Any:
    """The value of plan expression `e` over `env`.

    Example:
        >>> evaluate(["+", ["v", 0], 3], {0: 4})
        7
    """
    if type(e) is int:
        return e
    head = e[0]
    if head == "v":
        return env[e[1]]
    if head == "f":
        return e[1]
    if head == "not":
        return not evaluate(e[1], env)
    if head == "sel":
        return evaluate(e[2], env) if evaluate(e[1], env) else evaluate(e[3], env)
    if head == "cast":
        value = evaluate(e[2], env)
        return numpy_dtype(e[1]).type(value).item() if e[1] != "bool" else bool(value)
    return _OPS[head](evaluate(e[1], env), evaluate(e[2], env))


Launch = Callable[[str, tuple[int, int, int], tuple[int, int, int], list[Any]], None]


class PlanRunner:
    """Walks a plan body: loops, lets, asserts, device allocations, launches.

    Args:
        plan: One host function's plan.
        alloc: ``alloc(nbytes) -> DevicePtr`` for host-level global buffers.
        launch: ``launch(kernel, grid, block, args)`` with args already typed.
        where: Names the function in error messages.

    Example:
        >>> PlanRunner(plan, alloc, launch, "fused_dense").run(env)  # doctest: +SKIP
    """

    def __init__(self, plan: dict[str, Any], alloc: Callable[[int], Any], launch: Launch,
                 where: str) -> None:
        self.plan, self.alloc, self.launch_fn, self.where = plan, alloc, launch, where

    def run(self, env: dict[int, Any]) -> None:
        """Run the body with the parameters bound in `env`.

        Example:
            >>> seen = []
            >>> plan = {"body": ["launch", "k", [["v", 0], 1, 1], [32, 1, 1], [["v", 0]]],
            ...         "kernels": {"k": ["int32"]}}
            >>> PlanRunner(plan, None, lambda *a: seen.append(a), "main").run({0: 2})
            >>> seen
            [('k', (2, 1, 1), (32, 1, 1), [np.int32(2)])]
        """
        self.stmt(self.plan["body"], env)

    def stmt(self, s: list[Any], env: dict[int, Any]) -> None:
        """Run one plan statement (`["seq", ...]`, `["for", ...]`, `["launch", ...]`, ...).

        Example:
            >>> runner = PlanRunner({"kernels": {}}, None, print, "main")
            >>> env = {}
            >>> runner.stmt(["let", 0, ["*", 4, 8], ["nop"]], env)
            >>> env
            {0: 32}
            >>> runner.stmt(["if", ["<=", ["v", 0], 16], ["let", 1, 1, ["nop"]], ["let", 1, 2, ["nop"]]], env)
            >>> env[1]
            2
        """
        head = s[0]
        if head == "seq":
            for x in s[1]:
                self.stmt(x, env)
        elif head == "for":
            lo = evaluate(s[2], env)
            for i in range(lo, lo + evaluate(s[3], env)):
                env[s[1]] = i
                self.stmt(s[4], env)
        elif head == "let":
            env[s[1]] = evaluate(s[2], env)
            self.stmt(s[3], env)
        elif head == "if":
            self.stmt(s[2] if evaluate(s[1], env) else s[3], env)
        elif head == "assert":
            if not evaluate(s[1], env):
                raise RuntimeError(f"{self.where}: {s[2]}")
            self.stmt(s[3], env)
        elif head == "alloc":
            count = math.prod(int(evaluate(d, env)) for d in s[3])
            env[s[1]] = self.alloc(count * numpy_dtype(s[2]).itemsize)
            self.stmt(s[4], env)
        elif head == "launch":
            self.launch(s, env)
        elif head != "nop":
            raise ValueError(f"{self.where}: malformed host plan statement {head!r}")

    def launch(self, s: list[Any], env: dict[int, Any]) -> None:
        """Evaluate a launch's sizes and arguments; call `launch` unless the grid is empty.

        Example:
            >>> plan = {"kernels": {"k": ["float32"]}}
            >>> runner = PlanRunner(plan, None, lambda *a: print(a), "main")
            >>> runner.launch(["launch", "k", [1, 1, 1], [64, 1, 1], [["f", 0.5]]], {})
            ('k', (1, 1, 1), (64, 1, 1), [np.float32(0.5)])
            >>> runner.launch(["launch", "k", [0, 1, 1], [64, 1, 1], [["f", 0.5]]], {})  # empty grid
        """
        _, name, grid, block, args = s
        kinds = self.plan["kernels"][name]
        values = []
        for kind, a in zip(kinds, args, strict=True):
            value = evaluate(a, env)
            if isinstance(kind, list):  # ["ptr", dtype]
                values.append(value.kernel_arg(kind[1]))
            elif kind == "bool":
                values.append(np.bool_(value))
            else:
                values.append(numpy_dtype(kind).type(value))
        g = tuple(int(evaluate(x, env)) for x in grid)
        b = tuple(int(evaluate(x, env)) for x in block)
        if min(g) <= 0 or min(b) <= 0:
            return  # an empty grid (a zero-sized dim): nothing to run
        self.launch_fn(name, g, b, values)  # type: ignore[arg-type]
