"""The `T` namespace of TIR script: `from unity.script import tir as T`.

`@T.prim_func` parses the decorated function's source into a `tir.PrimFunc`; the
other names are what scripts call (`T.Buffer`, `T.serial`, `T.block`, `T.axis.remap`,
`T.reads`, `T.exp`, `T.float32(1)`, ...).  Dtype names double as literal builders
(`T.int64(3)`) and scalar annotations (`n: T.int32`).

Example:
    >>> from unity.script import tir as T
    >>> @T.prim_func
    ... def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    ...     for i in T.serial(8):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(8, i)
    ...             B[vi] = A[vi] + T.float32(1)
    >>> add_one.params[0].shape[0].value
    8
"""

from __future__ import annotations

from typing import Any

from unity import tir
from unity.ir import dtype as dt
from unity.ir.op import Op
from unity.script.parser.core import ScriptDecorator
from unity.script.parser.tir_function import parse_prim_func
from unity.script.parser.tir_specs import (
    AssertSpec,
    AxisSpec,
    BlockSpec,
    BufferSpec,
    Directive,
    GridSpec,
    InitSpec,
    LetSpec,
    LoopSpec,
    RemapSpec,
    VarSpec,
)
from unity.tir import expr as E

prim_func = ScriptDecorator("T.prim_func", parse_prim_func)
"""Decorator: parse a Python function written in TIR script into a `tir.PrimFunc`."""


class DType:
    """A dtype in script: `T.float32(1)` is a literal, `n: T.int32` a scalar parameter.

    Example:
        >>> T_int64 = DType("int64")
        >>> T_int64(3).dtype
        'int64'
    """

    def __init__(self, name: str) -> None:
        self.name = dt.check(name)

    def __call__(self, value: Any = None) -> E.PrimExpr | VarSpec:
        if value is None:  # `n = T.int32()` declares a variable
            return VarSpec(self.name)
        if (
            isinstance(value, str)
            and dt.is_float(self.name)
            and value.lstrip("+-") in ("inf", "nan")
        ):
            return tir.const(float(value), self.name)
        if isinstance(value, str):  # a symbolic shape variable (`T.int64("n")`)
            return E.Var(value, self.name)
        return (
            tir.const(value, self.name)
            if not isinstance(value, E.PrimExpr)
            else value.astype(self.name)
        )

    def __repr__(self) -> str:
        return f"T.{self.name}"


def __getattr__(name: str) -> Any:
    """Any dtype (`T.float32x4`) and any intrinsic of `tir.op` (`T.exp`) by name."""
    try:
        return DType(name)
    except ValueError:
        pass
    op = Op.registry.get(f"tir.{name}")
    if op is not None:
        return lambda *args: tir.call_intrin(op, *args)
    raise AttributeError(f"T has no attribute {name!r}")


int8, int16, int32, int64 = DType("int8"), DType("int16"), DType("int32"), DType("int64")
uint8, uint16, uint32, uint64 = DType("uint8"), DType("uint16"), DType("uint32"), DType("uint64")
float16, bfloat16, float32, float64 = (
    DType("float16"),
    DType("bfloat16"),
    DType("float32"),
    DType("float64"),
)
bool = DType("bool")
handle = DType("handle")


# -- buffers ------------------------------------------------------------------------------
def Buffer(
    shape: Any,
    dtype: str = "float32",
    data: Any = None,
    strides: Any = (),
    elem_offset: Any = None,
    scope: str = "global",
) -> BufferSpec:
    """A buffer parameter (`A: T.Buffer((128,), "float32")`) or an alias (`data=A.data`).

    Example:
        >>> Buffer((4, "n"), "int8").dtype
        'int8'
    """
    return BufferSpec("buffer", shape, dtype, data, strides, elem_offset, scope)


def alloc_buffer(
    shape: Any,
    dtype: str = "float32",
    scope: str = "global",
    strides: Any = (),
    elem_offset: Any = None,
) -> BufferSpec:
    """A block's intermediate buffer: `C = T.alloc_buffer((16,), "float32")`.

    Example:
        >>> alloc_buffer((4,), scope="shared").scope
        'shared'
    """
    return BufferSpec("alloc", shape, dtype, None, strides, elem_offset, scope)


def match_buffer(
    source: Any,
    shape: Any,
    dtype: str = "float32",
    strides: Any = (),
    elem_offset: Any = None,
    scope: str = "global",
) -> BufferSpec:
    """A view of a region inside a block: `S = T.match_buffer(A[vi, 0:4], (4,), "float32")`.

    Example:
        >>> match_buffer(None, (4,)).kind
        'match'
    """
    return BufferSpec("match", shape, dtype, None, strides, elem_offset, scope, source)


def allocate_buffer(
    shape: Any,
    dtype: str = "float32",
    scope: str = "global",
    strides: Any = (),
    elem_offset: Any = None,
) -> BufferSpec:
    """An `Allocate`: `with T.allocate_buffer((64,), "float32", scope="local") as B:`.

    Example:
        >>> allocate_buffer((64,)).kind
        'allocate'
    """
    return BufferSpec("allocate", shape, dtype, None, strides, elem_offset, scope)


allocate = allocate_buffer


# -- loops and blocks ---------------------------------------------------------------------
def _loop(kind: str):
    def build(*args: Any, annotations: dict[str, Any] | None = None) -> LoopSpec:
        return LoopSpec(kind, args, None, annotations)

    build.__name__ = kind
    build.__doc__ = (
        f"A `{kind}` loop: `T.{kind}(extent)` or `T.{kind}(start, stop)`.\n\n"
        f"Example:\n    >>> {kind}(8).kind\n    '{kind}'\n"
    )
    return build


serial, parallel, vectorized, unroll = (
    _loop(k) for k in ("serial", "parallel", "vectorized", "unroll")
)


def thread_binding(*args: Any, thread: str, annotations: dict[str, Any] | None = None) -> LoopSpec:
    """A loop bound to a GPU thread axis: `T.thread_binding(32, thread="threadIdx.x")`.

    Example:
        >>> thread_binding(32, thread="threadIdx.x").thread
        'threadIdx.x'
    """
    return LoopSpec("thread_binding", args, thread, annotations)


def grid(*extents: Any) -> GridSpec:
    """Nested serial loops: `for i, j in T.grid(4, 8):`.

    Example:
        >>> grid(4, 8).extents
        (4, 8)
    """
    return GridSpec(extents)


def block(name: str = "") -> BlockSpec:
    """`with T.block("C"):` opens a block.

    Example:
        >>> block("C").name
        'C'
    """
    return BlockSpec(name)


class _Axis:
    """`T.axis.spatial / reduce / opaque / remap`."""

    @staticmethod
    def spatial(dom: Any, value: Any, dtype: str | None = None) -> AxisSpec:
        """A spatial block variable over `dom` (extent or `(start, stop)`) bound to `value`."""
        return AxisSpec("spatial", dom, value, dtype)

    @staticmethod
    def reduce(dom: Any, value: Any, dtype: str | None = None) -> AxisSpec:
        """A reduction block variable."""
        return AxisSpec("reduce", dom, value, dtype)

    @staticmethod
    def opaque(dom: Any, value: Any, dtype: str | None = None) -> AxisSpec:
        """An opaque block variable."""
        return AxisSpec("opaque", dom, value, dtype)

    @staticmethod
    def remap(kinds: str, values: Any) -> RemapSpec:
        """Block variables over the loops `values` with kinds `"S"`, `"R"`, `"O"`."""
        return RemapSpec(kinds, values)

    S, R = spatial, reduce


axis = _Axis()


def reads(*regions: Any) -> Directive:
    """The regions a block reads: `T.reads(A[vi, 0:16], B[vi])`.

    Example:
        >>> reads().kind
        'reads'
    """
    return Directive("reads", regions)


def writes(*regions: Any) -> Directive:
    """The regions a block writes: `T.writes(C[vi, vj])`.

    Example:
        >>> writes().kind
        'writes'
    """
    return Directive("writes", regions)


def where(predicate: Any) -> Directive:
    """The block runs only where `predicate` holds: `T.where(i * 4 + j < 10)`.

    Example:
        >>> where(tir.Var("i") < 10).kind
        'where'
    """
    return Directive("where", predicate)


def block_attr(attrs: dict[str, Any]) -> Directive:
    """Block annotations: `T.block_attr({"meta_schedule.unroll": 16})`.

    Example:
        >>> block_attr({"meta_schedule.unroll": 16}).payload
        {'meta_schedule.unroll': 16}
    """
    return Directive("block_attr", attrs)


def func_attr(attrs: dict[str, Any]) -> Directive:
    """Function attributes: `T.func_attr({"tir.noalias": True})`.

    Example:
        >>> func_attr({"tir.noalias": True}).kind
        'func_attr'
    """
    return Directive("func_attr", attrs)


def init() -> InitSpec:
    """`with T.init():` holds a reduction block's initialization.

    Example:
        >>> type(init()).__name__
        'InitSpec'
    """
    return InitSpec()


def LetStmt(value: Any, dtype: str | None = None) -> LetSpec:
    """`with T.LetStmt(value) as x:` binds `x` over the body.

    Example:
        >>> LetStmt(4, "int64")
        LetSpec(value=4, dtype='int64')
    """
    return LetSpec(value, dtype)


def Assert(condition: Any, message: str) -> AssertSpec:
    """`with T.Assert(cond, "msg"):` checks `cond` before the body.

    Example:
        >>> Assert(tir.Var("n") > 0, "n must be positive").message
        'n must be positive'
    """
    return AssertSpec(condition, message)


# -- expressions --------------------------------------------------------------------------
def evaluate(value: Any) -> tir.Evaluate:
    """A statement that evaluates `value`: `T.evaluate(T.exp(x))`.

    Example:
        >>> print(evaluate(0).script())
        T.evaluate(0)
    """
    return tir.Evaluate(tir.const(value))


def Cast(dtype: str, value: Any) -> E.PrimExpr:
    """`T.Cast("float32", i)`: always a `Cast` node (even to the same dtype).

    Example:
        >>> c = Cast("int32", tir.Var("i"))
        >>> type(c).__name__, c.dtype
        ('Cast', 'int32')
    """
    return E.Cast(dt.check(dtype), tir.const(value))


def Ramp(base: Any, stride: Any, lanes: int) -> E.Ramp:
    """The vector `base, base + stride, ...` of `lanes` lanes.

    Example:
        >>> Ramp(0, 1, 4).dtype
        'int32x4'
    """
    b, s = E._promote(base, stride)
    return E.Ramp(b, s, lanes)


def Broadcast(value: Any, lanes: int) -> E.Broadcast:
    """`lanes` copies of `value`.

    Example:
        >>> Broadcast(1.0, 8).dtype
        'float32x8'
    """
    return E.Broadcast(tir.const(value), lanes)


def Let(var: Any, value: Any, body: Any) -> E.Let:
    """`T.Let(x, value, body)`: the parser binds the name `x` (a fresh variable) in `body`.

    Example:
        >>> x = tir.Var("x")
        >>> Let(x, 1, x + 1).dtype
        'int32'
    """
    return E.Let(var, tir.const(value), tir.const(body))


def SizeVar(name: str, dtype: str = "int32") -> E.SizeVar:
    """A non-negative symbolic variable (shape annotations: `T.SizeVar("n", "int32")`).

    Example:
        >>> n = SizeVar("n", "int64")
        >>> type(n).__name__, n.dtype
        ('SizeVar', 'int64')
    """
    return E.SizeVar(name, dtype)


def Range(start: Any, stop: Any) -> E.Range:
    """The half-open range `[start, stop)`.

    Example:
        >>> r = Range(2, tir.Var("n"))
        >>> r.min.value, r.extent.script()
        (2, 'n - 2')
    """
    lo, hi = E._promote(start, stop)
    return E.Range(lo, hi - lo)


def call_intrin(dtype: str, op_name: str, *args: Any) -> E.Call:
    """A call of any registered op: `T.call_intrin("float32", "tir.exp", x)`.

    Example:
        >>> call_intrin("float32", "tir.exp", 1.0).op.name
        'tir.exp'
    """
    exprs = tuple(E.StringImm(a) if isinstance(a, str) else tir.const(a) for a in args)
    return E.Call(dt.check(dtype), Op.get(op_name), exprs)


if_then_else = Select = tir.select
ldexp, reinterpret = tir.ldexp, tir.reinterpret  # int operands kept (not made float32)
min, max = tir.min, tir.max
truncdiv, truncmod, floordiv, floormod = tir.truncdiv, tir.truncmod, tir.floordiv, tir.floormod
abs, exp, exp2, log, log2, log10 = tir.abs, tir.exp, tir.exp2, tir.log, tir.log2, tir.log10
sqrt, rsqrt, tanh, sigmoid, erf = tir.sqrt, tir.rsqrt, tir.tanh, tir.sigmoid, tir.erf
fabs, floor, ceil, round, trunc = tir.fabs, tir.floor, tir.ceil, tir.round, tir.trunc
sin, cos, tan, atan, asin, acos, sinh, cosh = (
    tir.sin,
    tir.cos,
    tir.tan,
    tir.atan,
    tir.asin,
    tir.acos,
    tir.sinh,
    tir.cosh,
)
isnan, isinf, pow, atan2, fmod = tir.isnan, tir.isinf, tir.pow, tir.atan2, tir.fmod
