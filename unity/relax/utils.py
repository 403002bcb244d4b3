"""Conversions between relax (sympy) and tir shapes, and struct-info comparisons.

`tir_to_sympy` / `sympy_to_tir` wrap `unity.tir.arith.to_sympy` / `from_sympy`,
mapping tir vars to relax shape symbols (positive integers) by name.

Example:
    >>> import sympy
    >>> from unity import tir
    >>> n = tir.Var("n", "int64")
    >>> tir_to_sympy(n * 2 + 1)
    2*n + 1
"""

from __future__ import annotations

import sympy

from unity import tir
from unity.relax.struct_info import (
    FuncStructInfo, ObjectStructInfo, PrimStructInfo, ShapeStructInfo, StructInfo,
    TensorStructInfo, TupleStructInfo, prove_equal, shapes_equal, sym,
)  # fmt: skip

def tir_to_sympy(expr: object, var_map: dict[tir.Var, sympy.Symbol] | None = None) -> sympy.Expr:
    """Convert a tir integer expression to sympy; vars become relax shape symbols.

    `var_map` is filled with (and reused for) the symbol of each tir var.

    Example:
        >>> tir_to_sympy(tir.const(3))
        3
    """
    from unity.tir.arith import to_sympy  # lazily: relax IR does not need tir.arith to load

    var_map = {} if var_map is None else var_map

    def add_var(n: object) -> None:
        if isinstance(n, tir.Var) and n not in var_map:
            var_map[n] = sym(n.name)

    tir.post_order_visit(expr, add_var)  # type: ignore[arg-type]  # a PrimExpr
    return to_sympy(expr, var_map)  # type: ignore[arg-type, return-value]  # integer expr


def sympy_to_tir(expr: sympy.Expr, var_map: dict[sympy.Symbol, tir.Var]) -> tir.PrimExpr:
    """Convert a sympy shape expression to tir int64, reusing (or adding) vars in `var_map`.

    Example:
        >>> vars = {}
        >>> sympy_to_tir(sym("n") + 1, vars).dtype
        'int64'
    """
    from unity.tir.arith import from_sympy  # lazily: relax IR does not need tir.arith to load

    expr = sympy.sympify(expr)
    for s in sorted(expr.free_symbols, key=str):
        if s not in var_map:
            var_map[s] = tir.Var(str(s), "int64")  # type: ignore[index]  # sympy symbol
    return from_sympy(expr, var_map, "int64")  # type: ignore[arg-type]  # symbol -> Var


def struct_info_equal(a: StructInfo, b: StructInfo) -> bool:
    """True when `a` and `b` describe the same values (shapes compared with sympy).

    Example:
        >>> struct_info_equal(TensorStructInfo(("n",), "float32"),
        ...                   TensorStructInfo(("n",), "float32"))
        True
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, TensorStructInfo):
        assert isinstance(b, TensorStructInfo)
        same_shape = (a.shape is None and b.shape is None) or shapes_equal(a.shape, b.shape)
        return a.dtype == b.dtype and a.ndim == b.ndim and same_shape
    if isinstance(a, ShapeStructInfo):
        assert isinstance(b, ShapeStructInfo)
        same = (a.values is None and b.values is None) or shapes_equal(a.values, b.values)
        return a.ndim == b.ndim and same
    if isinstance(a, PrimStructInfo):
        assert isinstance(b, PrimStructInfo)
        if a.dtype != b.dtype or (a.value is None) != (b.value is None):
            return False
        return a.value is None or prove_equal(a.value, b.value)  # type: ignore[arg-type]
    if isinstance(a, TupleStructInfo):
        assert isinstance(b, TupleStructInfo)
        return len(a.fields) == len(b.fields) and all(
            struct_info_equal(x, y) for x, y in zip(a.fields, b.fields, strict=True)
        )
    if isinstance(a, FuncStructInfo):
        assert isinstance(b, FuncStructInfo)
        if (a.params is None) != (b.params is None) or not struct_info_equal(a.ret, b.ret):
            return False
        return a.params is None or (
            len(a.params) == len(b.params)  # type: ignore[arg-type]
            and all(struct_info_equal(x, y) for x, y in zip(a.params, b.params, strict=True))  # type: ignore[arg-type]
        )
    return isinstance(a, ObjectStructInfo)


def free_symbols(sinfo: StructInfo) -> set[sympy.Symbol]:
    """The shape symbols used by `sinfo`.

    Example:
        >>> sorted(map(str, free_symbols(TensorStructInfo(("n", "m"), "float32"))))
        ['m', 'n']
    """
    out: set[sympy.Symbol] = set()
    if isinstance(sinfo, TensorStructInfo) and sinfo.shape is not None:
        dims = sinfo.shape
    elif isinstance(sinfo, ShapeStructInfo) and sinfo.values is not None:
        dims = sinfo.values
    elif isinstance(sinfo, PrimStructInfo) and sinfo.value is not None:
        dims = (sinfo.value,)
    elif isinstance(sinfo, TupleStructInfo):
        for f in sinfo.fields:
            out |= free_symbols(f)
        return out
    else:
        return out
    for d in dims:
        out |= d.free_symbols  # type: ignore[operator]  # sympy symbols
    return out
