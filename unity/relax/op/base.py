"""What every relax op family shares: the callable `RelaxOp`, and inference helpers.

An op is an `Op` whose attributes hold its rules (`infer`, and later `legalize`,
`fold`).  Calling the op builds the `Call`: `op.add(x, y)` returns
``Call(op.add, (x, y))``, so passes test ``call.op is op.add``.

Example:
    >>> from unity.relax import op
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 4), "float32"))
    >>> op.exp(x).op.name
    'relax.exp'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sympy

from unity.ir.diagnostics import DiagnosticError
from unity.ir.op import Op
from unity.relax.expr import Call, Expr, ShapeExpr, Tuple
from unity.relax.struct_info import (
    UNKNOWN_DTYPE, Dim, ShapeStructInfo, StructInfo, TensorStructInfo, TupleStructInfo,
    format_shape, prove_equal, prove_not_equal, simplify_dim,
)  # fmt: skip

InferFn = Callable[[Call], StructInfo]
"""`infer(call) -> StructInfo`; the call's arguments already carry struct info."""


class RelaxOp(Op):
    """A relax operator: an `Op` that builds its `Call` when called.

    Example:
        >>> from unity.relax import Var, TensorStructInfo, op
        >>> x = Var("x", TensorStructInfo((2,), "float32"))
        >>> isinstance(op.exp, RelaxOp), op.exp(x).op is op.exp
        (True, True)
    """

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Call:
        return self.attrs["make"](self, *args, **kwargs)


def register_op(name: str, infer: InferFn, **attrs: Any) -> Callable[[Callable[..., Call]], RelaxOp]:
    """Decorate the builder of op `relax.<name>`; the result is the op itself.

    The builder receives the op first. `legalize` and `fold` slots start empty.
    ``broadcasts=True`` marks an elementwise op whose tensor arguments broadcast together
    (numpy's rules; the ONNX frontend unifies their unrelated symbolic dims).

    Example:
        >>> @register_op("example.identity", infer=lambda call: call.args[0].struct_info)
        ... def identity(op, x):
        ...     return Call(op, (x,))
        >>> identity.name
        'relax.example.identity'
    """

    def wrap(make: Callable[..., Call]) -> RelaxOp:
        attrs.setdefault("legalize", None)
        attrs.setdefault("fold", None)
        attrs.setdefault("pure", True)
        op = RelaxOp(f"relax.{name}", make=make, infer=infer, **attrs)
        op.set_attr("doc", make.__doc__)
        return op

    return wrap


def op_name(call: Call) -> str:
    """The short name of the called op, for messages (`relax.nn.conv2d` -> `nn.conv2d`).

    Example:
        >>> op_name(call)  # doctest: +SKIP
        'matmul'
    """
    name = getattr(call.op, "name", "call")
    return name.removeprefix("relax.")


def fail(call: Call, message: str) -> DiagnosticError:
    """A `DiagnosticError` about `call` whose message starts with the op name.

    Example:
        >>> raise fail(call, "expects 2-D input")  # doctest: +SKIP
    """
    return DiagnosticError(f"{op_name(call)} {message}", call)


def tensor_arg(call: Call, index: int, what: str = "") -> TensorStructInfo:
    """The `TensorStructInfo` of argument `index`, or a clear error when it is not a tensor.

    Example:
        >>> tensor_arg(call, 0).ndim  # doctest: +SKIP
        2
    """
    sinfo = call.args[index].struct_info
    if not isinstance(sinfo, TensorStructInfo):
        label = what or f"argument {index}"
        raise fail(call, f"expects a tensor as {label}, got {type(sinfo).__name__}")
    return sinfo


def shape_arg(call: Call, index: int) -> tuple[Dim, ...] | None:
    """The dims of a shape argument (a `ShapeExpr` or a value of known `ShapeStructInfo`).

    Example:
        >>> shape_arg(call, 1)  # doctest: +SKIP
        (n, 4)
    """
    sinfo = call.args[index].struct_info
    if not isinstance(sinfo, ShapeStructInfo):
        raise fail(call, f"expects a shape as argument {index}, got {type(sinfo).__name__}")
    return sinfo.values


def as_shape_expr(shape: Sequence[object] | Expr) -> Expr:
    """Wrap a Python sequence of dims as a `ShapeExpr` (expressions pass through).

    Example:
        >>> as_shape_expr((2, "n")).values
        (2, n)
    """
    return shape if isinstance(shape, Expr) else ShapeExpr(tuple(shape))


def as_tuple_expr(values: Sequence[Expr] | Expr) -> Expr:
    """Wrap a Python sequence of exprs as a relax `Tuple` (expressions pass through).

    Example:
        >>> as_tuple_expr([]).fields
        ()
    """
    return values if isinstance(values, Expr) else Tuple(tuple(values))


def unify_dtype(call: Call, dtypes: Sequence[str]) -> str:
    """The common dtype of the arguments (unknown dtypes adopt the others); error if they differ.

    Example:
        >>> unify_dtype(call, ["float32", "void"])  # doctest: +SKIP
        'float32'
    """
    known = {d for d in dtypes if d != UNKNOWN_DTYPE}
    if len(known) > 1:
        raise fail(call, f"expects matching dtypes, got {' vs '.join(dtypes)}")
    return known.pop() if known else UNKNOWN_DTYPE


def normalize_axis(call: Call, axis: int, ndim: int) -> int:
    """Map a possibly negative `axis` into ``[0, ndim)``; error when out of range.

    Example:
        >>> normalize_axis(call, -1, 3)  # doctest: +SKIP
        2
    """
    if ndim < 0:
        return axis
    if not -ndim <= axis < ndim:
        raise fail(call, f"axis {axis} is out of range for a tensor of rank {ndim}")
    return axis % ndim


def broadcast_shapes(call: Call, shapes: Sequence[tuple[Dim, ...]]) -> tuple[Dim, ...] | None:
    """Numpy broadcasting over sympy dims; None when a pair cannot be decided.

    Example:
        >>> broadcast_shapes(call, [(n, 1), (4,)])  # doctest: +SKIP
        (n, 4)
    """
    rank = max(len(s) for s in shapes)
    out: list[Dim] = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        dim = _broadcast_dim(call, dims, shapes)
        if dim is None:
            return None
        out.append(dim)
    return tuple(out)


def _broadcast_dim(call: Call, dims: list[Dim], shapes: Sequence[tuple[Dim, ...]]) -> Dim | None:
    result: Dim = sympy.Integer(1)
    for d in dims:
        if d == 1 or prove_equal(d, result):
            continue
        if result == 1:
            result = d
            continue
        if prove_not_equal(d, result) or (d.is_number and result.is_number):
            listed = " and ".join(format_shape(s) for s in shapes)
            raise fail(call, f"cannot broadcast shapes {listed}: dims {result} and {d} differ")
        return None
    return result


def infer_elementwise(call: Call, out_dtype: str | None = None) -> TensorStructInfo:
    """Broadcast the tensor arguments of `call`; the result dtype is theirs or `out_dtype`.

    Example:
        >>> infer_elementwise(call).shape  # doctest: +SKIP
        (n, 4)
    """
    infos = [tensor_arg(call, i) for i in range(len(call.args))]
    dtype = unify_dtype(call, [s.dtype for s in infos])
    dtype = out_dtype or dtype
    if any(s.shape is None for s in infos):
        ndim = -1 if any(s.ndim < 0 for s in infos) else max(s.ndim for s in infos)
        return TensorStructInfo(None, dtype, ndim)
    shape = broadcast_shapes(call, [s.shape for s in infos])  # type: ignore[misc]  # checked
    if shape is None:
        return TensorStructInfo(None, dtype, max(s.ndim for s in infos))
    return TensorStructInfo(shape, dtype)


def with_shape(sinfo: TensorStructInfo, shape: Sequence[Dim] | None, ndim: int = -1) -> TensorStructInfo:
    """`sinfo`'s dtype with a new shape (or an unknown shape of rank `ndim`).

    Example:
        >>> with_shape(TensorStructInfo((2,), "int8"), (3, 4)).dtype
        'int8'
    """
    if shape is None:
        return TensorStructInfo(None, sinfo.dtype, ndim)
    return TensorStructInfo(tuple(_simplify(sympy.sympify(d)) for d in shape), sinfo.dtype)


def _simplify(dim: Dim) -> Dim:
    if dim.is_number or dim.is_Symbol:
        return dim
    return simplify_dim(dim) if dim.has(sympy.floor, sympy.ceiling, sympy.Min, sympy.Max) else sympy.expand(dim)


def product(dims: Sequence[Dim]) -> Dim:
    """The product of `dims` (1 for none), expanded.

    Example:
        >>> product([sympy.Integer(2), sympy.Integer(3)])
        6
    """
    out: Dim = sympy.Integer(1)
    for d in dims:
        out = out * d
    return sympy.expand(out)


def tuple_of(infos: Sequence[StructInfo]) -> TupleStructInfo:
    """A `TupleStructInfo` of `infos`.

    Example:
        >>> len(tuple_of([]).fields)
        0
    """
    return TupleStructInfo(tuple(infos))
