"""Shape-valued tensors known at import time, with symbolic entries (a small folding lattice).

Exporters compute shapes at run time: ``Shape(x) -> Gather(0) -> Concat -> Reshape``.
When `x` has a symbolic dim, those tensors hold sympy expressions.  A `SymTensor`
keeps such an integer tensor as a numpy object array of sympy expressions, so the
`Reshape` at the end receives ``(batch, seq, 12, 64)`` instead of an unknown shape.
`fold_symbolic` evaluates the few ops exporters apply to shapes on these arrays.

Example:
    >>> import sympy
    >>> n = sympy.Symbol("n", integer=True, positive=True)
    >>> s = SymTensor(np.array([n, 4], dtype=object))
    >>> fold_symbolic("Mul", [s, np.array(2)], {})[0].values.tolist()
    [2*n, 8]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

MAX_SYMBOLIC_ELEMENTS = 64
"""Shape-valued tensors are tiny; bigger integer tensors are treated as data."""


@dataclass(frozen=True, eq=False)
class SymTensor:
    """An integer (or bool) tensor whose values are known sympy expressions.

    Example:
        >>> SymTensor(np.array([sympy.Symbol("n"), 3], dtype=object)).shape
        (2,)
    """

    values: np.ndarray
    """An object array of sympy expressions."""
    dtype: str = "int64"

    @property
    def shape(self) -> tuple[int, ...]:
        """The (static) shape of the tensor."""
        return tuple(self.values.shape)


def as_object_array(value: np.ndarray | SymTensor) -> np.ndarray:
    """The values of `value` as an object array of sympy numbers/expressions.

    Example:
        >>> as_object_array(np.array([2, 3])).tolist()
        [2, 3]
    """
    if isinstance(value, SymTensor):
        return value.values
    flat = [sympy.Integer(int(v)) if not isinstance(v, bool | np.bool_) else sympy.true if v else sympy.false
            for v in value.reshape(-1).tolist()]  # fmt: skip
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(value.shape)


def make_value(values: np.ndarray, dtype: str = "int64") -> np.ndarray | SymTensor:
    """Wrap an object array: a plain numpy array when every entry is a number.

    Example:
        >>> make_value(np.array([sympy.Integer(2)], dtype=object))
        array([2])
    """
    values = np.asarray(values, dtype=object)
    flat = values.reshape(-1)
    if all(_is_number(v) for v in flat):
        if dtype == "bool":
            return np.array([bool(v) for v in flat], dtype=bool).reshape(values.shape)
        return np.array([int(v) for v in flat], dtype=dtype).reshape(values.shape)
    return SymTensor(values, dtype)


def _is_number(v: object) -> bool:
    if isinstance(v, bool | int | np.integer | np.bool_):
        return True
    if v is sympy.true or v is sympy.false:
        return True
    return isinstance(v, sympy.Expr) and v.is_number


def _elementwise(fn: Callable[[Any, Any], Any]) -> Callable[..., np.ndarray]:
    def apply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.broadcast_arrays(a, b)
        out = np.empty(a.shape, dtype=object)
        for idx in np.ndindex(a.shape):
            out[idx] = fn(a[idx], b[idx])
        return out

    return apply


def _div(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    if a.is_number and b.is_number:
        q = abs(int(a)) // abs(int(b))  # ONNX integer Div truncates toward zero
        return sympy.Integer(q if (int(a) >= 0) == (int(b) > 0) else -q)
    return sympy.floor(a / b)  # shapes are positive: truncation is flooring


def _axis_list(inputs: Sequence[np.ndarray], attrs: dict[str, Any], ndim: int) -> list[int] | None:
    axes = attrs.get("axes")
    if axes is None and len(inputs) > 1 and inputs[1] is not None:
        axes = [int(a) for a in np.asarray(inputs[1], dtype=object).reshape(-1)]
    return None if axes is None else [int(a) % ndim for a in axes]


def _unsqueeze(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    x = inputs[0]
    axes = attrs.get("axes")
    if axes is None:
        axes = [int(a) for a in inputs[1].reshape(-1)]
    rank = x.ndim + len(axes)
    for a in sorted(int(a) % rank for a in axes):
        x = np.expand_dims(x, a)
    return x


def _squeeze(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    x = inputs[0]
    axes = _axis_list(inputs, attrs, x.ndim)
    return np.squeeze(x, axis=None if axes is None else tuple(axes))


def _slice(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    x = inputs[0]
    if "starts" in attrs:
        starts, ends, axes, steps = attrs["starts"], attrs["ends"], attrs.get("axes"), None
    else:
        starts, ends = (list(inputs[i].reshape(-1)) for i in (1, 2))
        axes = list(inputs[3].reshape(-1)) if len(inputs) > 3 and inputs[3] is not None else None
        steps = list(inputs[4].reshape(-1)) if len(inputs) > 4 and inputs[4] is not None else None
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * x.ndim
    for a, b, e, s in zip(axes, starts, ends, steps, strict=True):
        index[int(a) % x.ndim] = slice(int(b), int(e), int(s))
    return x[tuple(index)]


def _gather(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    x, idx = inputs
    axis = attrs.get("axis", 0) % x.ndim
    ints = np.array([int(i) for i in idx.reshape(-1)], dtype=np.int64).reshape(idx.shape)
    return np.take(x, np.where(ints < 0, ints + x.shape[axis], ints), axis=axis)


def _concat(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    return np.concatenate(list(inputs), axis=attrs.get("axis", 0))


def _reshape(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    shape = [int(v) for v in inputs[1].reshape(-1)]
    shape = [inputs[0].shape[i] if d == 0 and not attrs.get("allowzero") else d for i, d in enumerate(shape)]
    return inputs[0].reshape(shape)


def _reduce(fn: Callable[[list[Any]], Any]) -> Callable[..., np.ndarray]:
    def apply(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
        x = inputs[0]
        if x.ndim > 1 or (_axis_list(inputs, attrs, max(x.ndim, 1)) not in (None, [0])):
            raise _Unfoldable
        out = np.empty(() if not attrs.get("keepdims", 1) else (1,), dtype=object)
        out[...] = fn(list(x.reshape(-1)))
        return out

    return apply


class _Unfoldable(Exception):
    """The symbolic folder declines this node (it becomes a relax op instead)."""


def _binary(fn: Callable[[Any, Any], Any]) -> Callable[..., np.ndarray]:
    apply = _elementwise(fn)
    return lambda inputs, attrs: apply(inputs[0], inputs[1])


def _variadic(fn: Callable[[Any, Any], Any]) -> Callable[..., np.ndarray]:
    apply = _elementwise(fn)

    def run(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
        out = inputs[0]
        for other in inputs[1:]:
            out = apply(out, other)
        return out

    return run


def _equal(a: sympy.Expr, b: sympy.Expr) -> sympy.Basic:
    zero = sympy.expand(a - b).is_zero  # shape symbols are positive: ``n == -1`` is False
    if zero is None:
        raise _Unfoldable
    return sympy.true if zero else sympy.false


def _where(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    cond, a, b = np.broadcast_arrays(*inputs)
    out = np.empty(cond.shape, dtype=object)
    for idx in np.ndindex(cond.shape):
        out[idx] = a[idx] if bool(cond[idx]) else b[idx]
    return out


_FOLDERS: dict[str, Callable[[Sequence[np.ndarray], dict[str, Any]], np.ndarray]] = {
    "Identity": lambda inputs, attrs: inputs[0],
    "Cast": lambda inputs, attrs: inputs[0],
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Slice": _slice,
    "Gather": _gather,
    "Concat": _concat,
    "Reshape": _reshape,
    "Flatten": lambda inputs, attrs: inputs[0].reshape(-1),
    "Add": _binary(lambda a, b: a + b),
    "Sub": _binary(lambda a, b: a - b),
    "Mul": _binary(lambda a, b: sympy.expand(a * b)),
    "Div": _binary(_div),
    "Neg": lambda inputs, attrs: -inputs[0],
    "Max": _variadic(lambda a, b: sympy.Max(a, b)),
    "Min": _variadic(lambda a, b: sympy.Min(a, b)),
    "Equal": _binary(_equal),
    "Where": _where,
    "ReduceProd": _reduce(lambda v: sympy.expand(sympy.Mul(*v))),
    "ReduceSum": _reduce(lambda v: sympy.Add(*v)),
    "ReduceMax": _reduce(lambda v: sympy.Max(*v)),
    "ReduceMin": _reduce(lambda v: sympy.Min(*v)),
}

_BOOL_RESULTS = {"Equal"}


def can_fold_symbolic(op_type: str) -> bool:
    """Whether `fold_symbolic` knows `op_type`.

    Example:
        >>> can_fold_symbolic("Concat"), can_fold_symbolic("Conv")
        (True, False)
    """
    return op_type in _FOLDERS


def fold_symbolic(
    op_type: str, inputs: Sequence[np.ndarray | SymTensor | None], attrs: dict[str, Any]
) -> list[np.ndarray | SymTensor] | None:
    """Evaluate `op_type` on shape-valued inputs; None when it cannot be done at import time.

    Example:
        >>> fold_symbolic("Gather", [np.array([5, 7]), np.array(1)], {})
        [array(7)]
    """
    arrays = [None if v is None else as_object_array(v) for v in inputs]
    try:
        out = _FOLDERS[op_type](arrays, attrs)  # type: ignore[arg-type]  # Nones are optional slots
    except (_Unfoldable, TypeError, ValueError, IndexError):
        return None
    out = np.asarray(out, dtype=object)
    if out.size > MAX_SYMBOLIC_ELEMENTS:
        return None
    if op_type in _BOOL_RESULTS:
        dtype = "bool"
    elif op_type == "Cast":
        dtype = attrs["_to_dtype"]
    else:
        dtype = next((v.dtype if isinstance(v, SymTensor) else str(v.dtype) for v in inputs
                      if v is not None), "int64")  # fmt: skip
    if dtype.startswith("float"):
        return None
    return [make_value(out, dtype)]
