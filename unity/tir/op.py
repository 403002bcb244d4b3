"""TIR intrinsics: math functions as `Op`s, and builders for calls to them.

Each op carries `"numpy"` (the reference implementation, used by the interpreter
and constant folding) and `"llvm"` (the LLVM intrinsic name, or None when the
CPU backend lowers it some other way).

Example:
    >>> from unity import tir
    >>> x = tir.Var("x", "float32")
    >>> tir.exp(x).op is exp_op
    True
"""

from __future__ import annotations

import math

import numpy as np

from unity.ir import dtype as dt
from unity.ir.op import Op
from unity.tir.expr import Call, ExprLike, PrimExpr, const


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.asarray(x).dtype])(x)


def _unary(name: str, numpy_fn: object, llvm: str | None) -> Op:
    return Op(f"tir.{name}", numpy=numpy_fn, llvm=llvm, arity=1, pure=True)


exp_op = _unary("exp", np.exp, "llvm.exp")
exp2_op = _unary("exp2", np.exp2, "llvm.exp2")
log_op = _unary("log", np.log, "llvm.log")
log2_op = _unary("log2", np.log2, "llvm.log2")
log10_op = _unary("log10", np.log10, "llvm.log10")
sqrt_op = _unary("sqrt", np.sqrt, "llvm.sqrt")
rsqrt_op = _unary("rsqrt", lambda x: 1 / np.sqrt(x), None)
tanh_op = _unary("tanh", np.tanh, None)
sigmoid_op = _unary("sigmoid", lambda x: 1 / (1 + np.exp(-x)), None)
erf_op = _unary("erf", _erf, None)
fabs_op = _unary("fabs", np.abs, "llvm.fabs")
floor_op = _unary("floor", np.floor, "llvm.floor")
ceil_op = _unary("ceil", np.ceil, "llvm.ceil")
round_op = _unary("round", np.rint, "llvm.rint")
trunc_op = _unary("trunc", np.trunc, "llvm.trunc")
sin_op = _unary("sin", np.sin, "llvm.sin")
cos_op = _unary("cos", np.cos, "llvm.cos")
tan_op = _unary("tan", np.tan, None)
atan_op = _unary("atan", np.arctan, None)
asin_op = _unary("asin", np.arcsin, None)
acos_op = _unary("acos", np.arccos, None)
sinh_op = _unary("sinh", np.sinh, None)
cosh_op = _unary("cosh", np.cosh, None)
isnan_op = Op("tir.isnan", numpy=np.isnan, llvm=None, arity=1, pure=True, returns="bool")
isinf_op = Op("tir.isinf", numpy=np.isinf, llvm=None, arity=1, pure=True, returns="bool")
pow_op = Op("tir.pow", numpy=np.power, llvm="llvm.pow", arity=2, pure=True)
atan2_op = Op("tir.atan2", numpy=np.arctan2, llvm=None, arity=2, pure=True)
fmod_op = Op("tir.fmod", numpy=np.fmod, llvm=None, arity=2, pure=True)
prefetch_op = Op("tir.prefetch", numpy=None, llvm=None, arity=1, writes=())
"""``prefetch(buf[i..])``, evaluated for its effect: a hint to bring the cache line holding
that element into the cache (`InjectPrefetch` makes them).  The element may lie past the
buffer; the interpreter and the CUDA backend skip it."""

_REINTERPRET = {"int32": "float32", "float32": "int32", "int64": "float64", "float64": "int64"}
"""The dtype `reinterpret` gives each dtype it takes: the same bits, read as the other kind."""


def _reinterpret_numpy(x: np.ndarray) -> np.ndarray:
    arr = np.asarray(x)
    return arr.view(np.dtype(_REINTERPRET[arr.dtype.name]))


reinterpret_op = Op("tir.reinterpret", numpy=_reinterpret_numpy, llvm="bitcast", arity=1, pure=True)
"""The `llvm` spelling is the `bitcast` instruction, not an intrinsic."""


def reinterpret(x: PrimExpr) -> PrimExpr:
    """The bits of `x` read as the other kind of the same width (int32 <-> float32,
    int64 <-> float64), lane by lane; `2 ** n` is ``reinterpret((n + 127) << 23)``.

    Raises:
        TypeError: `x` is of another dtype.

    Example:
        >>> from unity import tir
        >>> reinterpret(tir.const(0x3F800000, "int32")).dtype
        'float32'
    """
    element = dt.element(x.dtype)
    if element not in _REINTERPRET:
        raise TypeError(f"reinterpret takes int32, float32, int64 or float64, not {x.dtype}")
    return Call(dt.with_lanes(_REINTERPRET[element], dt.lanes(x.dtype)), reinterpret_op, (x,))


def _ldexp_numpy(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return np.ldexp(x, np.asarray(n)).astype(x.dtype)


ldexp_op = Op("tir.ldexp", numpy=_ldexp_numpy, llvm="llvm.ldexp", arity=2, pure=True)
"""``ldexp(x, n)`` is ``x * 2**n`` for float32 `x` and int32 `n`, rounded once (as C's
`ldexpf`).  The CPU backend emits AVX-512's `vscalefps` where the target has it, else two
exponent-field products: exact there for ``-252 <= n <= 254`` (the range `exp` needs)."""


def ldexp(x: PrimExpr, n: PrimExpr) -> PrimExpr:
    """``x * 2**n`` (see `ldexp_op`), lane by lane: `x` float32, `n` int32 of its lanes.

    Raises:
        TypeError: `x` is not float32 or `n` not int32 of the same lanes.

    Example:
        >>> from unity import tir
        >>> ldexp(tir.Var("x", "float32"), tir.Var("n", "int32")).dtype
        'float32'
    """
    x, n = const(x), const(n)
    if dt.element(x.dtype) != "float32" or n.dtype != dt.with_lanes("int32", dt.lanes(x.dtype)):
        raise TypeError(f"ldexp takes float32 x and int32 n of x's lanes, got {x.dtype} and {n.dtype}")
    return Call(x.dtype, ldexp_op, (x, n))


def _index_check_numpy(index: object, extent: object) -> object:
    bad = (np.asarray(index) < 0) | (np.asarray(index) >= np.asarray(extent))
    if np.any(bad):
        value = np.asarray(index)[bad].reshape(-1)[0] if np.ndim(index) else index
        raise IndexError(f"index {value} is out of range [0, {extent})")
    return index


index_check_op = Op("tir.index_check", numpy=_index_check_numpy, llvm=None, arity=2, pure=False)
"""``index_check(i, n)`` is `i`, which must lie in ``[0, n)``: an index read from data
(ONNX Gather's).  `LowerIndexChecks` turns it into an `AssertStmt` before the statement
using it (the kernel fails with a message naming the buffer) and clamps it."""


def index_check(index: PrimExpr, extent: ExprLike) -> PrimExpr:
    """`index`, checked at run time to lie in ``[0, extent)`` (see `index_check_op`).

    Example:
        >>> from unity import tir
        >>> index_check(tir.Var("i", "int64"), 5).op is index_check_op
        True
    """
    bound = const(extent)
    bound = bound if bound.dtype == index.dtype else bound.astype(index.dtype)
    return Call(index.dtype, index_check_op, (index, bound))


UNARY_MATH = {
    op.name.removeprefix("tir."): op
    for op in (
        exp_op, exp2_op, log_op, log2_op, log10_op, sqrt_op, rsqrt_op, tanh_op, sigmoid_op,
        erf_op, fabs_op, floor_op, ceil_op, round_op, trunc_op, sin_op, cos_op, tan_op,
        atan_op, asin_op, acos_op, sinh_op, cosh_op, isnan_op, isinf_op,
    )
}  # fmt: skip
"""Unary intrinsics by short name (`"exp"` -> `exp_op`)."""


def call_intrin(op: Op, *args: ExprLike) -> PrimExpr:
    """Build a call of intrinsic `op`; float args keep their dtype, ints become float32.

    Example:
        >>> call_intrin(pow_op, 2.0, 3.0).dtype
        'float32'
    """
    exprs = [const(a) for a in args]
    if len(exprs) != op.attrs.get("arity", len(exprs)):
        raise TypeError(f"{op.name} takes {op.attrs['arity']} arguments, got {len(exprs)}")
    if not dt.is_float(exprs[0].dtype):
        exprs = [e.astype("float32") for e in exprs]
    exprs = [exprs[0]] + [e.astype(exprs[0].dtype) for e in exprs[1:]]
    out = op.attrs.get("returns") or exprs[0].dtype
    if out == "bool":
        out = dt.with_lanes("bool", dt.lanes(exprs[0].dtype))
    return Call(out, op, tuple(exprs))


def _builder(op: Op):  # noqa: ANN202
    def build(*args: ExprLike) -> PrimExpr:
        return call_intrin(op, *args)

    short = op.name.removeprefix("tir.")
    build.__name__ = short
    args = ", ".join(["tir.Var('x', 'float32')"] * op.attrs["arity"])
    build.__doc__ = (
        f"Call `{op.name}`.\n\nExample:\n    >>> from unity import tir\n"
        f"    >>> tir.{short}({args}).op.name\n    '{op.name}'\n"
    )
    return build


exp, exp2, log, log2, log10 = (_builder(o) for o in (exp_op, exp2_op, log_op, log2_op, log10_op))
sqrt, rsqrt, tanh, sigmoid, erf = (_builder(o) for o in (sqrt_op, rsqrt_op, tanh_op, sigmoid_op, erf_op))
fabs, floor, ceil, round, trunc = (_builder(o) for o in (fabs_op, floor_op, ceil_op, round_op, trunc_op))  # noqa: A001
sin, cos, tan, atan, asin, acos = (_builder(o) for o in (sin_op, cos_op, tan_op, atan_op, asin_op, acos_op))
sinh, cosh, isnan, isinf = (_builder(o) for o in (sinh_op, cosh_op, isnan_op, isinf_op))
power, atan2, fmod = (_builder(o) for o in (pow_op, atan2_op, fmod_op))


def abs(x: ExprLike) -> PrimExpr:  # noqa: A001 - TVM's name
    """Absolute value: `fabs` for floats, `select(x < 0, -x, x)` for integers.

    Example:
        >>> from unity import tir
        >>> abs(tir.Var("i")).dtype
        'int32'
    """
    from unity.tir.expr import select

    e = const(x)
    return call_intrin(fabs_op, e) if dt.is_float(e.dtype) else select(e < 0, -e, e)


def max_value(dtype: str) -> PrimExpr:
    """The largest value of `dtype` (inf for floats): the identity of `max` reductions.

    Example:
        >>> max_value("int8").value
        127
    """
    if dt.is_float(dtype):
        return const(float("inf"), dtype)
    if dt.is_bool(dtype):
        return const(True, dtype)
    return const(int(np.iinfo(dt.numpy_name(dtype)).max), dtype)


def min_value(dtype: str) -> PrimExpr:
    """The smallest value of `dtype` (-inf for floats): the identity of `max` reductions.

    Example:
        >>> min_value("float32").value
        -inf
    """
    if dt.is_float(dtype):
        return const(float("-inf"), dtype)
    if dt.is_bool(dtype):
        return const(False, dtype)
    return const(int(np.iinfo(dt.numpy_name(dtype)).min), dtype)
