"""The `R` namespace of relax script: `from unity.script import relax as R`.

`@R.function` parses the decorated function's source into a `relax.Function`; inside
an `@I.ir_module` class, relax functions sit beside `@T.prim_func`s and call them with
`R.call_tir(cls.add, (x, y), out_sinfo=...)`.  Struct info is written `R.Tensor((n, 4),
"float32")`, `R.Tuple(...)`, `R.Shape([n])`, `R.Prim("int64")`, `R.Object`; a string dim
`"n"` or a name declared `n = T.int64()` is a sympy shape symbol.  Every relax op is
`R.<name>` (`R.add`, `R.nn.conv2d`, ...) with its keyword attributes.

Constants: up to `INLINE_CONST_LIMIT` finite elements print as nested lists,
`R.const([[1.0, 2.0]], "float32")`; larger ones print their raw bytes in base64,
`R.const_b64((64, 64), "float32", "AACAPw...")`, so the text alone round-trips exactly.

Example:
    >>> from unity.script import relax as R
    >>> @R.function
    ... def main(x: R.Tensor(("n", 4), "float32")):
    ...     with R.dataflow():
    ...         y = R.exp(x)
    ...         z = R.add(y, x)
    ...         R.output(z)
    ...     return z
    >>> main.ret_struct_info.script()
    'R.Tensor((n, 4), dtype="float32")'
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import sympy

from unity.ir import dtype as dt
from unity.ir.module import GlobalVar
from unity.relax import expr as X
from unity.relax import op as _op
from unity.relax import struct_info as SI
from unity.relax.printer import INLINE_CONST_LIMIT
from unity.tir.expr import FloatImm, IntImm
from unity.script.parser.core import ScriptDecorator
from unity.script.parser.relax_function import parse_relax_function
from unity.script.parser.relax_specs import (
    DataflowSpec, FuncAttrSpec, MatchCastSpec, OpNamespace, OutputSpec, ScriptOp, StructInfoMaker,
    as_expr, as_struct_info, lookup_op,
)  # fmt: skip

function = ScriptDecorator("R.function", parse_relax_function)
"""Decorator: parse a Python function written in relax script into a `relax.Function`.

Options: `@R.function(pure=False)`, `@R.function(private=True)` (no "global_symbol")."""

_STR = str  # `str` is rebound below to `R.str`


# -- struct info -------------------------------------------------------------------------
def _tensor(
    shape: Sequence[Any] | str | None = None, dtype: str | None = None, ndim: int = -1
) -> SI.TensorStructInfo:
    if isinstance(shape, _STR) and dtype is None:  # R.Tensor("float32", ndim=2)
        shape, dtype = None, shape
    dims = None if shape is None else tuple(_dim(d) for d in _seq(shape, "R.Tensor shape"))
    return SI.TensorStructInfo(dims, dt.check(dtype) if dtype else SI.UNKNOWN_DTYPE, ndim)


def _tuple(*fields: Any) -> SI.TupleStructInfo:
    if len(fields) == 1 and isinstance(fields[0], list | tuple):  # R.Tuple([a, b])
        fields = tuple(fields[0])  # type: ignore[arg-type]  # a sequence
    return SI.TupleStructInfo(tuple(as_struct_info(f) for f in fields))


def _shape(values: Sequence[Any] | None = None, ndim: int = -1) -> SI.ShapeStructInfo:
    dims = None if values is None else tuple(_dim(d) for d in _seq(values, "R.Shape"))
    return SI.ShapeStructInfo(dims, ndim)


def _prim(dtype: str | None = None, value: Any = None) -> SI.PrimStructInfo:
    if isinstance(value, float):
        value = sympy.Float(value)
    return SI.PrimStructInfo(dt.check(dtype or "int64"), None if value is None else _dim(value))


def _callable(params: Any, ret: Any = None, purity: bool = True) -> SI.FuncStructInfo:
    if params is Ellipsis or params is None:
        param_infos = None
    elif isinstance(params, tuple | list):
        param_infos = tuple(as_struct_info(p) for p in params)  # type: ignore[union-attr]
    else:  # `(R.Tensor(...))` is one parameter, not a tuple
        param_infos = (as_struct_info(params),)
    ret_info = SI.ObjectStructInfo() if ret is None else as_struct_info(ret)
    return SI.FuncStructInfo(param_infos, ret_info, purity)


Tensor = StructInfoMaker("R.Tensor", _tensor)
"""`R.Tensor((n, 4), "float32")`, `R.Tensor(ndim=2, dtype="int8")`, `R.Tensor` (unknown)."""
Tuple = StructInfoMaker("R.Tuple", _tuple)
"""`R.Tuple(R.Tensor(...), R.Shape([n]))`."""
Shape = StructInfoMaker("R.Shape", _shape)
"""`R.Shape([n, 4])` or `R.Shape(ndim=2)`."""
Object = StructInfoMaker("R.Object", SI.ObjectStructInfo)
"""Any value."""
Prim = StructInfoMaker("R.Prim", _prim)
"""`R.Prim("int64")`, `R.Prim(value=n)`, `R.Prim("float32", value=1.5)`."""
Callable = StructInfoMaker("R.Callable", _callable)
"""`R.Callable((R.Tensor(...),), R.Tensor(...), purity=True)`."""


def _seq(value: Any, what: str) -> Sequence[Any]:
    if not isinstance(value, tuple | list):
        raise TypeError(f"{what} expects a tuple of dims, got {type(value).__name__}")
    return value  # type: ignore[return-value]  # a tuple or list


def _dim(value: Any) -> SI.Dim:
    if isinstance(value, X.PrimValue):
        return value.value
    return SI.as_dim(value)


# -- statements --------------------------------------------------------------------------
def dataflow() -> DataflowSpec:
    """`with R.dataflow():` opens a dataflow block (closed by `R.output(...)`).

    Example:
        >>> isinstance(dataflow(), DataflowSpec)
        True
    """
    return DataflowSpec()


def output(*values: Any) -> OutputSpec:
    """`R.output(gv, ...)`: the variables the dataflow block makes visible after it.

    Example:
        >>> output().values
        ()
    """
    return OutputSpec(values)


def match_cast(value: Any, struct_info: Any) -> MatchCastSpec:
    """`y = R.match_cast(x, R.Tensor(("m",), "float32"))`: a checked cast defining new symbols.

    Example:
        >>> match_cast(X.ShapeExpr((2,)), Shape([2])).struct_info.ndim
        1
    """
    return MatchCastSpec(as_expr(value), as_struct_info(struct_info))


def func_attr(attrs: Mapping[str, Any]) -> FuncAttrSpec:
    """`R.func_attr({"key": value})`: attributes of the function, first in its body.

    Example:
        >>> func_attr({"num_input": 1}).attrs
        {'num_input': 1}
    """
    return FuncAttrSpec(dict(attrs))


# -- leaf expressions --------------------------------------------------------------------
def const(value: Any, dtype: str | None = None) -> X.Constant:
    """A constant tensor from a (nested) list, a scalar or a numpy array.

    Example:
        >>> const([1.0, 2.0], "float32").data.tolist()
        [1.0, 2.0]
    """
    if isinstance(value, np.ndarray):
        return X.Constant(value if dtype is None else value.astype(dtype))
    return X.const(value, dtype)


def const_b64(shape: Sequence[int], dtype: str, data: str) -> X.Constant:
    """A constant from its raw little-endian bytes in base64 (how large constants print).

    Example:
        >>> const_b64((2,), "int32", "AQAAAAIAAAA=").data.tolist()
        [1, 2]
    """
    raw = base64.b64decode(data.encode("ascii"), validate=True)
    array = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<"))
    return X.Constant(array.astype(dtype).reshape(tuple(shape)))


def shape(values: Sequence[Any]) -> X.ShapeExpr:
    """A shape value: `R.shape([n, 4])`.

    Example:
        >>> shape([2, "n"]).values
        (2, n)
    """
    return X.ShapeExpr(tuple(_dim(v) for v in _seq(values, "R.shape")))


def prim_value(value: Any, dtype: str = "int64") -> X.PrimValue:
    """A scalar value: `R.prim_value(n)`, `R.prim_value(1.5, dtype="float32")`, or of a
    TIR constant, with its dtype (`R.prim_value(T.int32(2))`).

    Example:
        >>> prim_value(3).struct_info.dtype, prim_value(IntImm("int32", 2)).struct_info.dtype
        ('int64', 'int32')
    """
    if isinstance(value, IntImm | FloatImm):
        value, dtype = value.value, value.dtype
    return X.PrimValue(value, dt.check(dtype))


def _string_imm(value: Any) -> X.StringImm:
    if not isinstance(value, _STR):
        raise TypeError(f"R.str expects a string, got {type(value).__name__}")
    return X.StringImm(value)


def _dtype_imm(value: Any) -> X.DataTypeImm:
    return X.DataTypeImm(dt.check(value))


def ExternFunc(global_symbol: str) -> X.ExternFunc:
    """A packed function by name: `R.ExternFunc("my_kernel")`.

    Example:
        >>> ExternFunc("f").global_symbol
        'f'
    """
    return X.ExternFunc(global_symbol)


# -- calls out of relax ------------------------------------------------------------------
def call_tir(
    gvar: GlobalVar,
    args: Any,
    *rest: Any,
    out_sinfo: Any = None,
    tir_vars: Any = None,
) -> X.Call:
    """`R.call_tir(cls.func, (x, y), out_sinfo=R.Tensor(...), tir_vars=R.shape([n]))`.

    The printed form passes `tir_vars` third, positionally.

    Example:
        >>> call_tir(GlobalVar("f"), (), out_sinfo=Tensor((2,), "float32")).op.name
        'relax.call_tir'
    """
    if len(rest) > 1 or (rest and tir_vars is not None):
        raise TypeError("R.call_tir(gvar, args, tir_vars, out_sinfo=...): too many arguments")
    tir_vars = rest[0] if rest else tir_vars
    if out_sinfo is None:
        raise TypeError("R.call_tir needs out_sinfo=R.Tensor(...) (the struct info of its result)")
    if not isinstance(gvar, GlobalVar):
        raise TypeError(f"R.call_tir calls a function of the module (cls.name), got {gvar!r}")
    return _op.call_tir(gvar, as_expr(args), _sinfos(out_sinfo), tir_vars)


def call_dps_packed(func: Any, args: Any, out_sinfo: Any = None) -> X.Call:
    """`R.call_dps_packed("my_kernel", (x,), out_sinfo=R.Tensor(...))`.

    Example:
        >>> call_dps_packed("k", (), out_sinfo=Tensor((2,), "float32")).args[0].global_symbol
        'k'
    """
    if out_sinfo is None:
        raise TypeError("R.call_dps_packed needs out_sinfo=R.Tensor(...)")
    return _op.call_dps_packed(func, as_expr(args), _sinfos(out_sinfo))


def call_pure_packed(func: Any, *args: Any, sinfo_args: Any = ()) -> X.Call:
    """`R.call_pure_packed("shape_of", x, sinfo_args=R.Shape(ndim=2))`.

    Example:
        >>> call_pure_packed("f", sinfo_args=Object).sinfo_args[0].script()
        'R.Object'
    """
    sinfos = _sinfos(sinfo_args) if sinfo_args != () else ()
    return _op.call_pure_packed(func, *(as_expr(a) for a in args), sinfo_args=sinfos)


def _sinfos(value: Any) -> SI.StructInfo | tuple[SI.StructInfo, ...]:
    if isinstance(value, list | tuple):
        return tuple(as_struct_info(v) for v in value)  # type: ignore[union-attr]  # a sequence
    return as_struct_info(value)


nn = OpNamespace("relax.nn")
"""`R.nn.conv2d`, `R.nn.relu`, ...: the `relax.nn.*` ops."""


def __getattr__(name: str) -> ScriptOp | OpNamespace:
    """`R.add`, `R.sum`, ...: every registered `relax.<name>` op (looked up when used)."""
    if name.startswith("__"):
        raise AttributeError(name)
    return lookup_op("relax", name)


# `R.str` / `R.dtype` shadow builtins, so they are bound without a `def` of that name.
globals()["str"] = _string_imm
globals()["dtype"] = _dtype_imm

__all__ = [
    "INLINE_CONST_LIMIT", "Callable", "ExternFunc", "Object", "Prim", "Shape", "Tensor", "Tuple",
    "call_dps_packed", "call_pure_packed", "call_tir", "const", "const_b64", "dataflow",
    "func_attr", "function", "match_cast", "nn", "output", "prim_value", "shape",
]  # fmt: skip
