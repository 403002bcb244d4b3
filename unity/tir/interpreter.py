"""`interpret`: the reference interpreter, running any `PrimFunc` on numpy arrays.

It is the ground truth for schedule and lowering tests: the function is compiled once
into Python source (nested `for` loops over numpy scalars of the exact dtypes, see
`interpreter_compile`), cached, and called with the arrays.  Outputs are written in place
(destination passing).  Parallel, vectorized, unrolled and thread-bound loops run
serially, which is their meaning.

Semantics: values are numpy scalars of their exact dtype, so float32 math rounds in
float32, float16 in float16, and int8/int32 data wraps on overflow; `Cast` follows C
(float -> int truncates toward zero, int -> narrower int wraps); `Div`/`Mod` on integers
truncate, `FloorDiv`/`FloorMod` floor.  Loop counters and int32/int64 constants are Python
ints for speed, so pure index arithmetic does not wrap (a `Cast` still does).  Block
`init` runs when every reduction iteration variable is at its minimum.  A negative flat
index or one past the end of the memory raises `InterpretError` (numpy would wrap).

Example:
    >>> import numpy as np
    >>> from unity import tir
    >>> A = tir.decl_buffer((4,), "float32", "A")
    >>> B = tir.decl_buffer((4,), "float32", "B")
    >>> i = tir.Var("i")
    >>> f = tir.PrimFunc((A, B), tir.For(i, tir.const(0), tir.const(4), tir.ForKind.PARALLEL,
    ...                                  tir.BufferStore(B, A[i] + 1.0, (i,))))
    >>> b = np.zeros(4, "float32")
    >>> tir.interpret(f, np.arange(4, dtype="float32"), b)
    >>> b
    array([1., 2., 3., 4.], dtype=float32)
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from unity.ir import dtype as dt
from unity.ir.module import IRModule
from unity.tir import expr as E
from unity.tir.buffer import Buffer
from unity.tir.function import PrimFunc
from unity.tir.interpreter_compile import Compiled, InterpretError, _Compiler, compile_source
from unity.tir.stmt import Evaluate

_CACHE: OrderedDict[int, tuple[PrimFunc, Compiled]] = OrderedDict()
_CACHE_SIZE = 512


def interpret(func: PrimFunc | IRModule, *args: Any, func_name: str = "main") -> None:
    """Run `func` (or `func_name` of a module) on numpy arrays, writing outputs in place.

    Args:
        func: the function, or a module holding it.
        *args: one numpy array per buffer parameter (dtype and shape must match; symbolic
            dims are bound from the shapes) and a Python number per scalar parameter.
        func_name: the function to run when `func` is an `IRModule`.

    Raises:
        InterpretError: an argument does not match its parameter, an `AssertStmt` failed,
            or the IR holds something the interpreter cannot run.

    Example:
        >>> import numpy as np
        >>> from unity import te, tir
        >>> A = te.placeholder((3,), "int8", name="A")
        >>> B = te.compute((3,), lambda i: A[i] + A[i], name="B")
        >>> b = np.zeros(3, "int8")
        >>> tir.interpret(te.create_prim_func([A, B]), np.array([1, 64, 100], "int8"), b)
        >>> b.tolist()
        [2, -128, -56]
    """
    if isinstance(func, IRModule):
        func = func[func_name]  # type: ignore[assignment]  # a module maps names to functions
    if not isinstance(func, PrimFunc):
        raise InterpretError(f"interpret: expected a tir.PrimFunc, got {type(func).__name__}")
    compiled = _compiled(func)
    if len(args) != len(func.params):
        raise InterpretError(
            f"interpret: the function takes {len(func.params)} arguments, got {len(args)}"
        )
    env, copies = _bind(func, args)
    with np.errstate(all="ignore"):
        try:
            compiled.kernel(*(env[v] for v in compiled.arg_vars))
        except IndexError as err:
            raise InterpretError(f"interpret: out-of-bounds access ({err})") from None
        except NameError as err:  # a variable no statement or parameter defines
            raise InterpretError(
                f"interpret: variable {err.name} is used but not defined"
            ) from None
    for original, copy in copies:
        original[...] = copy.reshape(original.shape)


def interpret_source(func: PrimFunc) -> str:
    """The Python source `interpret` runs for `func` (for debugging).

    Example:
        >>> from unity import tir
        >>> interpret_source(tir.PrimFunc((), tir.Evaluate(tir.const(0)))).splitlines()[1]
        'def _kernel():'
    """
    return _compiled(func).source


def _compiled(func: PrimFunc) -> Compiled:
    hit = _CACHE.get(id(func))
    if hit is not None and hit[0] is func:
        _CACHE.move_to_end(id(func))
        return hit[1]
    compiled = compile_source(func)
    _CACHE[id(func)] = (func, compiled)
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return compiled


def _bind(func: PrimFunc, args: tuple[Any, ...]) -> tuple[dict[E.Var, Any], list[Any]]:
    """Values of the kernel's variables, and (array, contiguous copy) pairs to write back."""
    env: dict[E.Var, Any] = {}
    copies: list[Any] = []
    checks: list[tuple[Buffer, str, E.PrimExpr, int]] = []
    for k, (param, arg) in enumerate(zip(func.params, args)):
        if isinstance(param, Buffer):
            env.setdefault(param.data, _bind_buffer(param, arg, k, env, checks, copies))
        else:
            env[param] = _scalar(param, arg, k)
    for buf, what, expected, got in checks:
        want = _evaluate(expected, env)
        if want != got:
            raise InterpretError(
                f"interpret: buffer {buf.name} {what} must be {want}, but the array has {got}"
            )
    return env, copies


def _bind_buffer(
    buf: Buffer, arr: Any, k: int, env: dict[E.Var, Any], checks: list[Any], copies: list[Any]
) -> np.ndarray:
    if not isinstance(arr, np.ndarray):
        arr = _as_array(arr, buf, k)
    want = np.dtype(dt.numpy_name(buf.dtype))
    if arr.dtype != want:
        raise InterpretError(
            f"interpret: argument {k} ({buf.name}) must be {buf.dtype}, got {arr.dtype}"
        )
    if arr.ndim != len(buf.shape):
        raise InterpretError(
            f"interpret: argument {k} ({buf.name}) must have {len(buf.shape)} dims, "
            f"got shape {arr.shape}"
        )
    for dim, (decl, size) in enumerate(zip(buf.shape, arr.shape)):
        _bind_dim(buf, f"dim {dim}", decl, int(size), env, checks)
    contiguous = arr
    if not arr.flags.c_contiguous:
        contiguous = np.asarray(arr, order="C")
        copies.append((arr, contiguous))
    compact = [int(np.prod(arr.shape[d + 1:])) for d in range(arr.ndim)]
    for dim, (decl, stride) in enumerate(zip(buf.strides, compact)):
        _bind_dim(buf, f"stride {dim}", decl, stride, env, checks)
    if isinstance(buf.elem_offset, E.Var):
        env.setdefault(buf.elem_offset, 0)
    return contiguous.reshape(-1)


def _bind_dim(
    buf: Buffer, what: str, decl: E.PrimExpr, size: int, env: dict[E.Var, Any], checks: list[Any]
) -> None:
    if isinstance(decl, E.Var) and decl not in env:
        env[decl] = size
    else:
        checks.append((buf, what, decl, size))


def _as_array(value: Any, buf: Buffer, k: int) -> np.ndarray:
    numpy = getattr(value, "numpy", None)
    if callable(numpy):
        raise InterpretError(
            f"interpret: argument {k} ({buf.name}) is a {type(value).__name__}; pass a numpy "
            "array (outputs are written in place, so a converted copy would be lost)"
        )
    raise InterpretError(f"interpret: argument {k} ({buf.name}) must be a numpy array, "
                         f"got {type(value).__name__}")


def _scalar(var: E.Var, value: Any, k: int) -> Any:
    if isinstance(value, np.ndarray) and value.ndim > 0:
        raise InterpretError(f"interpret: argument {k} ({var.name}) is a scalar, got an array")
    if dt.is_bool(var.dtype):
        return bool(value)
    if dt.is_float(var.dtype):
        return np.dtype(dt.numpy_name(var.dtype)).type(value)
    if var.dtype in ("int32", "int64"):
        return int(value)
    if dt.is_integer(var.dtype):
        return np.dtype(var.dtype).type(int(value))
    return value


def _evaluate(expr: E.PrimExpr, env: dict[E.Var, Any]) -> Any:
    """Evaluate a shape expression over already-bound variables."""
    if isinstance(expr, E.IntImm):
        return expr.value
    free = _free_vars(expr)
    missing = [v.name for v in free if v not in env]
    if missing:
        raise InterpretError(f"interpret: shape variable(s) {', '.join(missing)} are not bound")
    compiler = _Compiler(PrimFunc((), Evaluate(E.const(0))))
    code = compiler.expr(expr)
    ns = dict(compiler.ns)
    for v in free:
        ns[compiler.name(v)] = env[v]
    return int(eval(code, ns))  # noqa: S307 - our own generated expression


def _free_vars(expr: E.PrimExpr) -> list[E.Var]:
    from unity.tir.functor import post_order_visit

    seen: dict[E.Var, None] = {}
    post_order_visit(expr, lambda n: seen.setdefault(n, None) if isinstance(n, E.Var) else None)
    return list(seen)
