"""The runtime metadata of a compiled `PrimFunc`: parameters, shapes, dtypes, asserts.

The format is plain JSON, documented in `unity.runtime.function`; it is embedded in
every compiled module so that a loaded library needs no compiler.

Example:
    >>> from unity import tir
    >>> n = tir.SizeVar("n")
    >>> A = tir.decl_buffer((n, 4), "float32", "A")
    >>> f = tir.PrimFunc((A,), tir.Evaluate(tir.const(0)))
    >>> function_metadata("f", f, f.shape_vars(), [])["params"][0]["shape"]
    ['n', 4]
"""

from __future__ import annotations

from typing import Any

from unity.tir import expr as E
from unity.tir.buffer import Buffer
from unity.tir.expr import PrimExpr, Var
from unity.tir.function import PrimFunc

_DIM_OPS = {
    E.Add: "+",
    E.Sub: "-",
    E.Mul: "*",
    E.FloorDiv: "//",
    E.FloorMod: "%",
    E.Min: "min",
    E.Max: "max",
}


def function_metadata(
    name: str, func: PrimFunc, shape_vars: tuple[Var, ...], asserts: list[str]
) -> dict[str, Any]:
    """The JSON the runtime checks arguments with (format: `unity.runtime.function`).

    Example:
        >>> from unity import tir
        >>> n = tir.SizeVar("n")
        >>> A = tir.decl_buffer((n, 4), "float32", "A")
        >>> func = tir.PrimFunc((A,), tir.Evaluate(tir.const(0)))
        >>> meta = function_metadata("f", func, func.shape_vars(), [])
        >>> meta["params"][0]["shape"], meta["shape_vars"]
        (['n', 4], ['n'])
    """
    keys: dict[Var, str] = {}
    for var in shape_vars:
        key, n = var.name, 0
        while key in keys.values():
            n += 1
            key = f"{var.name}_{n}"
        keys[var] = key

    def dim(expr: PrimExpr) -> Any:
        if isinstance(expr, E.IntImm):
            return int(expr.value)
        if isinstance(expr, Var) and expr in keys:
            return keys[expr]
        if isinstance(expr, E.Cast) and "int" in expr.dtype:  # sizes: a cast keeps the value
            return dim(expr.value)
        op = _DIM_OPS.get(type(expr))
        if op is None:
            raise ValueError(
                f"@{name}: parameter shape {expr!r} is not an int, a variable or + - * // % min max"
            )
        return [op, dim(expr.a), dim(expr.b)]  # type: ignore[attr-defined]  # a BinaryOp

    written = _written_data(func)
    params: list[dict[str, Any]] = []
    for p in func.params:
        if isinstance(p, Buffer):
            strides = [dim(s) for s in p.strides] if p.strides else None
            params.append(
                {
                    "name": p.name,
                    "kind": "buffer",
                    "dtype": p.dtype,
                    "shape": [dim(d) for d in p.shape],
                    "strides": strides,
                    "written": p.data in written,
                }
            )
        else:
            scalar = {"name": p.name, "kind": "scalar", "dtype": p.dtype}
            if p in keys:  # also a shape variable: its value binds the shapes' expressions
                scalar["shape_var"] = keys[p]
            params.append(scalar)
    return {
        "name": name,
        "symbol": name,
        "params": params,
        "asserts": list(asserts),
        "shape_vars": [keys[v] for v in shape_vars],
        "shape_var_names": {k: v.name for v, k in keys.items()},
    }


def _written_data(func: PrimFunc) -> set[Var]:
    """The data pointers of every buffer `func` stores into (a parameter's output array)."""
    from unity.tir.functor import post_order_visit
    from unity.tir.stmt import BufferStore

    found: set[Var] = set()

    def visit(node: object) -> None:
        if isinstance(node, BufferStore):
            found.add(node.buffer.data)

    post_order_visit(func.body, visit)
    return found
