"""Check a written struct-info annotation against the inferred one (`lv: R.Tensor(...) = ...`).

An annotation may be less precise than inference (`R.Tensor(ndim=2)` for a `(n, 4)`
tensor) or more precise where inference knows less (`R.Tensor((n,))` for an unknown
shape); it is an error only when the two provably disagree: another kind of value,
another rank, another dtype, or a dim that differs by a constant.

Example:
    >>> from unity.relax.struct_info import TensorStructInfo as TS
    >>> conflict(TS((2, 3), "float32"), TS((2, 4), "float32"))
    'dim 1 is 3 vs 4'
    >>> conflict(TS(None, "float32", 2), TS(("n", 4), "float32")) is None
    True
"""

from __future__ import annotations

import ast

from unity.relax.struct_info import (
    UNKNOWN_DTYPE, Dim, ObjectStructInfo, PrimStructInfo, ShapeStructInfo, StructInfo,
    TensorStructInfo, TupleStructInfo, prove_not_equal,
)  # fmt: skip
from unity.script.parser.evaluator import Evaluator


def check_annotation(
    parser: Evaluator, node: ast.AST | None, declared: StructInfo, inferred: StructInfo, what: str
) -> None:
    """Raise a `ParseError` at `node` when `declared` provably contradicts `inferred`.

    Example:
        >>> check_annotation(parser, node, declared, inferred, "lv")  # doctest: +SKIP
    """
    problem = conflict(declared, inferred)
    if problem is not None:
        raise parser.error(
            node,
            f"the annotation of {what} is {declared.script()} but its value is "
            f"{inferred.script()} ({problem})",
        )


def conflict(declared: StructInfo, inferred: StructInfo) -> str | None:
    """Why `declared` cannot describe a value of `inferred` struct info, or None.

    Example:
        >>> conflict(ObjectStructInfo(), TensorStructInfo((2,), "int8")) is None
        True
    """
    if isinstance(declared, ObjectStructInfo) or isinstance(inferred, ObjectStructInfo):
        return None
    if type(declared) is not type(inferred):
        return f"{_kind(declared)} vs {_kind(inferred)}"
    if isinstance(declared, TensorStructInfo):
        assert isinstance(inferred, TensorStructInfo)
        if (
            UNKNOWN_DTYPE not in (declared.dtype, inferred.dtype)
            and declared.dtype != inferred.dtype
        ):
            return f"dtype {declared.dtype} vs {inferred.dtype}"
        return _dims_conflict(declared.ndim, inferred.ndim, declared.shape, inferred.shape)
    if isinstance(declared, ShapeStructInfo):
        assert isinstance(inferred, ShapeStructInfo)
        return _dims_conflict(declared.ndim, inferred.ndim, declared.values, inferred.values)
    if isinstance(declared, PrimStructInfo):
        assert isinstance(inferred, PrimStructInfo)
        return (
            None
            if declared.dtype == inferred.dtype
            else f"dtype {declared.dtype} vs {inferred.dtype}"
        )
    if isinstance(declared, TupleStructInfo):
        assert isinstance(inferred, TupleStructInfo)
        if len(declared.fields) != len(inferred.fields):
            return f"{len(declared.fields)} vs {len(inferred.fields)} fields"
        for i, (a, b) in enumerate(zip(declared.fields, inferred.fields, strict=True)):
            inner = conflict(a, b)
            if inner is not None:
                return f"field {i}: {inner}"
    return None


def _dims_conflict(
    ndim_a: int, ndim_b: int, a: tuple[Dim, ...] | None, b: tuple[Dim, ...] | None
) -> str | None:
    if -1 not in (ndim_a, ndim_b) and ndim_a != ndim_b:
        return f"rank {ndim_a} vs {ndim_b}"
    if a is None or b is None:
        return None
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if prove_not_equal(x, y):
            return f"dim {i} is {x} vs {y}"
    return None


def _kind(sinfo: StructInfo) -> str:
    return type(sinfo).__name__.removesuffix("StructInfo").lower() or "value"
