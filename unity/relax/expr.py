"""Relax expressions: variables, constants, calls, tuples, control flow and functions.

Every expression carries its struct info in `struct_info_` once normalized (the
`BlockBuilder` fills it on emit).  A `Var` gets its struct info when created.

Example:
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 4), "float32"))
    >>> x.struct_info.ndim
    2
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import sympy

from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import BaseFunc, GlobalVar
from unity.ir.node import Node, Span, binds, hint, node
from unity.ir.op import Op
from unity.relax.struct_info import (
    Dim, FuncStructInfo, ObjectStructInfo, PrimStructInfo, ShapeStructInfo, StructInfo,
    TensorStructInfo, TupleStructInfo, as_dim, as_shape,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Attrs:
    """Base of the typed attributes of an op family (a frozen dataclass per family).

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True, slots=True)
        ... class ScaleAttrs(Attrs):
        ...     factor: float = 1.0
        >>> ScaleAttrs(2.0).factor
        2.0
    """


@node
class Expr(Node):
    """Base of relax expressions; `struct_info_` is filled by normalization.

    Example:
        >>> isinstance(ShapeExpr((2, 3)), Expr), ShapeExpr((2, 3)).struct_info_ is not None
        (True, True)
    """

    struct_info_: StructInfo | None = field(default=None, kw_only=True)

    @property
    def struct_info(self) -> StructInfo:
        """The struct info; raises if the expression was never normalized.

        Example:
            >>> ShapeExpr((2, 3)).struct_info.ndim
            2
        """
        if self.struct_info_ is None:
            kind = type(self).__name__
            raise DiagnosticError(f"{kind} has no struct info: normalize it first", self)
        return self.struct_info_


@node
class LeafExpr(Expr):
    """Expressions that need no ANF normalization of their own (vars, constants...).

    Example:
        >>> isinstance(Var("x", ObjectStructInfo()), LeafExpr), isinstance(StringImm("s"), LeafExpr)
        (True, True)
    """


@node
class Var(LeafExpr):
    """A variable bound once (by a function parameter or a binding).

    Example:
        >>> Var("x", ObjectStructInfo()).name_hint
        'x'
    """

    name_hint: str = hint()
    structural_kind: ClassVar[str] = "var"

    def __init__(
        self,
        name_hint: str,
        struct_info_: StructInfo | None = None,
        *,
        span: Span | None = None,
        struct_info: StructInfo | None = None,
    ) -> None:
        object.__setattr__(self, "name_hint", name_hint)
        object.__setattr__(self, "struct_info_", struct_info_ if struct_info is None else struct_info)
        object.__setattr__(self, "span", span)


class DataflowVar(Var):
    """A variable local to a dataflow block (it may not escape the block).

    Example:
        >>> isinstance(DataflowVar("lv", ObjectStructInfo()), Var)
        True
    """

    __slots__ = ()  # no new fields: keeps `Var`'s constructor


def _constant_sinfo(data: np.ndarray) -> StructInfo:
    return TensorStructInfo(tuple(int(d) for d in data.shape), str(data.dtype))


@node
class Constant(LeafExpr):
    """A constant tensor holding numpy `data`.

    Example:
        >>> Constant(np.zeros((2, 3), "float32")).struct_info.shape
        (2, 3)
    """

    data: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", np.asarray(self.data))
        if self.struct_info_ is None:
            object.__setattr__(self, "struct_info_", _constant_sinfo(self.data))


def const(value: object, dtype: str | None = None) -> Constant:
    """Make a `Constant` from a Python value or numpy array.

    Example:
        >>> const([1.0, 2.0], "float32").data.dtype
        dtype('float32')
    """
    data = np.asarray(value, dtype=dtype)
    if dtype is None and data.dtype == np.float64:
        data = data.astype("float32")
    if dtype is None and data.dtype == np.int64 and not isinstance(value, np.ndarray):
        data = data.astype("int64")
    return Constant(data)


@node
class ShapeExpr(LeafExpr):
    """A shape value, each dim a sympy expression.

    Example:
        >>> ShapeExpr(("n", 4)).values[1]
        4
    """

    values: tuple[Dim, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", as_shape(self.values))
        if self.struct_info_ is None:
            object.__setattr__(self, "struct_info_", ShapeStructInfo(self.values))


@node
class PrimValue(LeafExpr):
    """A scalar value: a sympy integer expression, or a float, with its dtype.

    Example:
        >>> PrimValue(3).struct_info.dtype
        'int64'
    """

    value: sympy.Expr
    dtype: str = "int64"

    def __post_init__(self) -> None:
        value = self.value
        if isinstance(value, int | str) and not isinstance(value, bool):
            value = as_dim(value)
        elif isinstance(value, bool | float):
            value = sympy.sympify(value)
        object.__setattr__(self, "value", value)
        if self.struct_info_ is None:
            object.__setattr__(self, "struct_info_", PrimStructInfo(self.dtype, value))


@node
class StringImm(LeafExpr):
    """A string literal.

    Example:
        >>> StringImm("hi").value
        'hi'
    """

    value: str

    def __post_init__(self) -> None:
        if self.struct_info_ is None:
            object.__setattr__(self, "struct_info_", ObjectStructInfo())


@node
class DataTypeImm(LeafExpr):
    """A dtype literal (e.g. the target dtype of a cast passed as a value).

    Example:
        >>> DataTypeImm("float16").value
        'float16'
    """

    value: str

    def __post_init__(self) -> None:
        if self.struct_info_ is None:
            object.__setattr__(self, "struct_info_", ObjectStructInfo())


@node
class ExternFunc(LeafExpr):
    """A packed function looked up by name at run time.

    Example:
        >>> ExternFunc("my_kernel").global_symbol
        'my_kernel'
    """

    global_symbol: str

    def __post_init__(self) -> None:
        if self.struct_info_ is None:
            object.__setattr__(self, "struct_info_", FuncStructInfo(None, ObjectStructInfo()))


@node
class Tuple(Expr):
    """A tuple of values.

    Example:
        >>> len(Tuple((ShapeExpr((1,)), ShapeExpr((2,)))).fields)
        2
    """

    fields: tuple[Expr, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        if self.struct_info_ is None and all(f.struct_info_ is not None for f in self.fields):
            sinfo = TupleStructInfo(tuple(f.struct_info for f in self.fields))
            object.__setattr__(self, "struct_info_", sinfo)


@node
class TupleGetItem(Expr):
    """Field `index` of a tuple.

    Example:
        >>> TupleGetItem(Tuple((ShapeExpr((1,)),)), 0).index
        0
    """

    tuple_value: Expr
    index: int


@node
class Call(Expr):
    """A call of an `Op`, a `GlobalVar`, an `ExternFunc` or a function-valued expr.

    `attrs` are the op family's typed attributes; `sinfo_args` give the result
    struct info of calls that cannot infer it (e.g. `call_tir`'s output).

    Example:
        >>> from unity.relax import op
        >>> x = Var("x", TensorStructInfo((2,), "float32"))
        >>> op.exp(x).op is op.exp
        True
    """

    op: Op | Expr | GlobalVar
    args: tuple[Expr, ...]
    attrs: Attrs | None = None
    sinfo_args: tuple[StructInfo, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "sinfo_args", tuple(self.sinfo_args))


@node
class Binding(Node):
    """Base of bindings: `var` is defined here.

    Example:
        >>> b = VarBinding(Var("y", ObjectStructInfo()), StringImm("s"))
        >>> isinstance(b, Binding), b.var.name_hint
        (True, 'y')
    """

    var: Var = binds()


@node
class VarBinding(Binding):
    """``var = value``.

    Example:
        >>> b = VarBinding(Var("y", ObjectStructInfo()), StringImm("s"))
        >>> b.value.value
        's'
    """

    value: Expr


@node
class MatchCast(Binding):
    """``var = R.match_cast(value, struct_info)``: a checked cast that may bind symbols.

    Example:
        >>> sinfo = TensorStructInfo(("m",), "float32")
        >>> MatchCast(Var("y", sinfo), Var("x", ObjectStructInfo()), sinfo).struct_info.ndim
        1
    """

    value: Expr
    struct_info: StructInfo


@node
class BindingBlock(Node):
    """A sequence of bindings, possibly impure.

    Example:
        >>> BindingBlock(()).bindings
        ()
    """

    bindings: tuple[Binding, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "bindings", tuple(self.bindings))


@node
class DataflowBlock(BindingBlock):
    """A side-effect-free block; its `DataflowVar`s are local to it.

    Example:
        >>> isinstance(DataflowBlock(()), BindingBlock)
        True
    """


@node
class SeqExpr(Expr):
    """Blocks of bindings followed by a result expression.

    Example:
        >>> SeqExpr((), ShapeExpr((1,))).body.values
        (1,)
    """

    blocks: tuple[BindingBlock, ...]
    body: Expr

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", tuple(self.blocks))
        if self.struct_info_ is None and self.body.struct_info_ is not None:
            object.__setattr__(self, "struct_info_", self.body.struct_info_)


@node
class If(Expr):
    """``true_branch if cond else false_branch``; branches are `SeqExpr`s.

    Example:
        >>> c = Var("c", TensorStructInfo((), "bool"))
        >>> If(c, SeqExpr((), c), SeqExpr((), c)).cond is c
        True
    """

    cond: Expr
    true_branch: SeqExpr
    false_branch: SeqExpr


@node
class Function(BaseFunc):
    """A relax function (a `BaseFunc` beside `tir.PrimFunc` in an `IRModule`).

    Example:
        >>> x = Var("x", TensorStructInfo((2,), "float32"))
        >>> f = Function((x,), SeqExpr((), x), x.struct_info)
        >>> f.struct_info.ret is x.struct_info
        True
    """

    params: tuple[Var, ...] = binds()
    body: SeqExpr
    ret_struct_info: StructInfo = field(default_factory=ObjectStructInfo)
    is_pure: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", tuple(self.params))
        if not isinstance(self.body, SeqExpr):
            raise TypeError(f"Function body must be a SeqExpr, got {type(self.body).__name__}")

    @property
    def struct_info(self) -> FuncStructInfo:
        """The function's signature as `FuncStructInfo`."""
        params = tuple(p.struct_info for p in self.params)
        return FuncStructInfo(params, self.ret_struct_info, self.is_pure)

    @property
    def struct_info_(self) -> FuncStructInfo:
        """Same as `struct_info` (functions are always normalized)."""
        return self.struct_info
