"""`host_plans`: the host functions of a `lower_cuda` module as plain JSON launch plans.

The VM on a CUDA device runs host code without the compiler (and an exported model
holds no TIR), so each host function becomes a JSON tree that
`unity.runtime.cuda.host_plan` interprets::

    {"params": [{"kind": "buffer", "data": 0, "dtype": "float32", "shape": [[ "v", 1], 64]},
                {"kind": "scalar", "var": 2, "dtype": "int32"}],
     "body": STMT, "kernels": {"main_kernel0": [["ptr", "float32"], "int32"]}}

    STMT: ["seq", [STMT...]] | ["for", v, min, extent, STMT] | ["let", v, EXPR, STMT]
        | ["assert", EXPR, message, STMT] | ["if", EXPR, STMT, STMT]
        | ["alloc", v, dtype, [EXPR...], STMT]
        | ["launch", kernel, [gx, gy, gz], [bx, by, bz], [EXPR...]] | ["nop"]
    EXPR: int | ["f", float] | ["v", id] | [op, EXPR, EXPR] | ["not", EXPR]
        | ["sel", EXPR, EXPR, EXPR] | ["cast", dtype, EXPR]

with op in ``+ - * / % // fmod min max == != < <= > >= and or`` (``/`` and ``%``
truncate, ``//`` and ``fmod`` floor).

Example:
    >>> plans = host_plans(lower_cuda(mod))        # doctest: +SKIP
    >>> plans["main"]["body"][0]                    # doctest: +SKIP
    'launch'
"""

from __future__ import annotations

from typing import Any

from unity.ir.module import IRModule
from unity.ir.printer import script
from unity.tir import expr as E
from unity.tir import stmt as S
from unity.tir.buffer import Buffer
from unity.tir.function import PrimFunc
from unity.tir.transform.gpu.intrinsics import launch_op
from unity.tir.transform.gpu.split_host_device import is_kernel

_BINARY: dict[type, str] = {
    E.Add: "+", E.Sub: "-", E.Mul: "*", E.Div: "/", E.Mod: "%", E.FloorDiv: "//",
    E.FloorMod: "fmod", E.Min: "min", E.Max: "max", E.EQ: "==", E.NE: "!=", E.LT: "<",
    E.LE: "<=", E.GT: ">", E.GE: ">=", E.And: "and", E.Or: "or",
}  # fmt: skip


def host_plans(mod: IRModule) -> dict[str, dict[str, Any]]:
    """The launch plan of every host function of a lowered CUDA module, by name.

    Example:
        >>> host_plans(IRModule())
        {}
    """
    return {
        gv.name_hint: _Planner(mod).plan(func)
        for gv, func in mod.items()
        if isinstance(func, PrimFunc) and not is_kernel(func)
    }


class _Planner:
    def __init__(self, mod: IRModule) -> None:
        self.mod = mod
        self.ids: dict[E.Var, int] = {}
        self.kernels: dict[str, list[Any]] = {}

    def var(self, v: E.Var) -> int:
        return self.ids.setdefault(v, len(self.ids))

    def plan(self, func: PrimFunc) -> dict[str, Any]:
        params = []
        for p in func.params:
            if isinstance(p, Buffer):
                params.append({"kind": "buffer", "data": self.var(p.data), "dtype": p.dtype,
                               "shape": [self.expr(d) for d in p.shape], "name": p.name})
            else:
                params.append({"kind": "scalar", "var": self.var(p), "dtype": p.dtype,
                               "name": p.name})
        return {"params": params, "body": self.stmt(func.body), "kernels": self.kernels}

    def stmt(self, s: S.Stmt) -> list[Any]:
        if isinstance(s, S.SeqStmt):
            return ["seq", [self.stmt(x) for x in s.seq]]
        if isinstance(s, S.For):
            return ["for", self.var(s.loop_var), self.expr(s.min), self.expr(s.extent),
                    self.stmt(s.body)]
        if isinstance(s, S.LetStmt):
            return ["let", self.var(s.var), self.expr(s.value), self.stmt(s.body)]
        if isinstance(s, S.IfThenElse):
            other = self.stmt(s.else_case) if s.else_case is not None else ["nop"]
            return ["if", self.expr(s.condition), self.stmt(s.then_case), other]
        if isinstance(s, S.AssertStmt):
            message = s.message.value if isinstance(s.message, E.StringImm) else str(s.message)
            return ["assert", self.expr(s.condition), message, self.stmt(s.body)]
        if isinstance(s, S.Allocate):
            return ["alloc", self.var(s.buffer.data), s.buffer.dtype,
                    [self.expr(d) for d in s.buffer.shape], self.stmt(s.body)]
        if isinstance(s, S.Evaluate) and isinstance(s.value, E.Call) and s.value.op is launch_op:
            return self.launch(s.value)
        if isinstance(s, S.Evaluate) and isinstance(s.value, E.IntImm):
            return ["nop"]
        raise ValueError(
            f"host_plans: host code may only launch kernels; found `{script(s).splitlines()[0]}` "
            "outside any thread-bound loop (bind its loops to blockIdx/threadIdx)"
        )

    def launch(self, call: E.Call) -> list[Any]:
        name = call.args[0].value  # type: ignore[attr-defined]  # a StringImm
        kernel = self.mod[name]
        assert isinstance(kernel, PrimFunc)
        self.kernels[name] = [
            ["ptr", p.dtype] if isinstance(p, Buffer) else p.dtype for p in kernel.params
        ]
        return ["launch", name, [self.expr(a) for a in call.args[1:4]],
                [self.expr(a) for a in call.args[4:7]], [self.expr(a) for a in call.args[7:]]]

    def expr(self, e: E.PrimExpr) -> Any:
        if isinstance(e, E.IntImm):
            return int(e.value)
        if isinstance(e, E.FloatImm):
            return ["f", float(e.value)]
        if isinstance(e, E.Var):
            return ["v", self.var(e)]
        op = _BINARY.get(type(e))
        if op is not None:
            return [op, self.expr(e.a), self.expr(e.b)]  # type: ignore[attr-defined]
        if isinstance(e, E.Not):
            return ["not", self.expr(e.a)]
        if isinstance(e, E.Select):
            return ["sel", self.expr(e.condition), self.expr(e.true_value),
                    self.expr(e.false_value)]
        if isinstance(e, E.Cast):
            return ["cast", e.dtype, self.expr(e.value)]
        raise ValueError(f"host_plans: cannot run `{script(e)}` in host code")
