"""`CodeGenCUDA`: TIR kernels (from `lower_cuda`) to CUDA C source.

A statement visitor prints each kernel; expressions print through a table of C
operators and an op -> C template table for the math intrinsics (per dtype: `expf` for
float32, `hexp` for float16 with `cuda_fp16.h`).  Kernels are `extern "C"` so the
launch layer finds them by name.

Example:
    >>> from unity.tir.transform.gpu import lower_cuda
    >>> src = CodeGenCUDA().add_module(lower_cuda(func)).finish()   # doctest: +SKIP
    >>> "__global__" in src                                          # doctest: +SKIP
    True
"""

from __future__ import annotations

import math
import re

from unity.codegen.cuda_vector import copy_type, lane, wide_loads, wide_type
from unity.ir import dtype as dt
from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import IRModule
from unity.ir.node import dispatch_table
from unity.tir import expr as E
from unity.tir import op as tir_op
from unity.tir import stmt as S
from unity.tir.buffer import Buffer
from unity.tir.function import PrimFunc
from unity.tir.functor import post_order_visit
from unity.tir.transform.gpu.intrinsics import shfl_down_op, shfl_idx_op, syncthreads_op
from unity.tir.transform.gpu.lower_thread_binding_gpu import launch_nest
from unity.tir.transform.gpu.split_host_device import is_kernel
from unity.tir.transform.gpu.wmma import (
    FRAGMENT_SCOPES, TILE, is_wmma, wmma_fill_op, wmma_load_op, wmma_mma_op,
)  # fmt: skip

C_TYPES = {
    "float16": "half", "bfloat16": "__nv_bfloat16", "float32": "float", "float64": "double", "bool": "bool",
    "int8": "signed char", "int16": "short", "int32": "int", "int64": "long long",
    "uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int",
    "uint64": "unsigned long long",
}  # fmt: skip
"""C type of each scalar dtype."""

MATH_TEMPLATES: dict[object, dict[str, str]] = {
    tir_op.exp_op: {"float32": "expf({0})", "float64": "exp({0})", "float16": "hexp({0})"},
    tir_op.exp2_op: {"float32": "exp2f({0})", "float64": "exp2({0})", "float16": "hexp2({0})"},
    tir_op.log_op: {"float32": "logf({0})", "float64": "log({0})", "float16": "hlog({0})"},
    tir_op.log2_op: {"float32": "log2f({0})", "float64": "log2({0})", "float16": "hlog2({0})"},
    tir_op.log10_op: {"float32": "log10f({0})", "float64": "log10({0})"},
    tir_op.sqrt_op: {"float32": "sqrtf({0})", "float64": "sqrt({0})", "float16": "hsqrt({0})"},
    tir_op.rsqrt_op: {"float32": "rsqrtf({0})", "float64": "rsqrt({0})", "float16": "hrsqrt({0})"},
    tir_op.tanh_op: {"float32": "tanhf({0})", "float64": "tanh({0})"},
    tir_op.sigmoid_op: {"float32": "(1.0f / (1.0f + expf(-({0}))))",
                        "float64": "(1.0 / (1.0 + exp(-({0}))))"},
    tir_op.erf_op: {"float32": "erff({0})", "float64": "erf({0})"},
    tir_op.reinterpret_op: {"int32": "__int_as_float({0})", "float32": "__float_as_int({0})",
                            "int64": "__longlong_as_double({0})",
                            "float64": "__double_as_longlong({0})"},
    tir_op.fabs_op: {"float32": "fabsf({0})", "float64": "fabs({0})", "float16": "__habs({0})"},
    tir_op.floor_op: {"float32": "floorf({0})", "float64": "floor({0})", "float16": "hfloor({0})"},
    tir_op.ceil_op: {"float32": "ceilf({0})", "float64": "ceil({0})", "float16": "hceil({0})"},
    tir_op.round_op: {"float32": "rintf({0})", "float64": "rint({0})", "float16": "hrint({0})"},
    tir_op.trunc_op: {"float32": "truncf({0})", "float64": "trunc({0})", "float16": "htrunc({0})"},
    tir_op.sin_op: {"float32": "sinf({0})", "float64": "sin({0})", "float16": "hsin({0})"},
    tir_op.cos_op: {"float32": "cosf({0})", "float64": "cos({0})", "float16": "hcos({0})"},
    tir_op.tan_op: {"float32": "tanf({0})", "float64": "tan({0})"},
    tir_op.atan_op: {"float32": "atanf({0})", "float64": "atan({0})"},
    tir_op.asin_op: {"float32": "asinf({0})", "float64": "asin({0})"},
    tir_op.acos_op: {"float32": "acosf({0})", "float64": "acos({0})"},
    tir_op.sinh_op: {"float32": "sinhf({0})", "float64": "sinh({0})"},
    tir_op.cosh_op: {"float32": "coshf({0})", "float64": "cosh({0})"},
    tir_op.isnan_op: {"float32": "isnan({0})", "float64": "isnan({0})", "float16": "__hisnan({0})"},
    tir_op.isinf_op: {"float32": "isinf({0})", "float64": "isinf({0})", "float16": "__hisinf({0})"},
    tir_op.pow_op: {"float32": "powf({0}, {1})", "float64": "pow({0}, {1})"},
    tir_op.atan2_op: {"float32": "atan2f({0}, {1})", "float64": "atan2({0}, {1})"},
    tir_op.ldexp_op: {"float32": "ldexpf({0}, {1})"},
    tir_op.fmod_op: {"float32": "fmodf({0}, {1})", "float64": "fmod({0}, {1})"},
    shfl_down_op: {"*": "__shfl_down_sync(0xffffffffu, {0}, {1}, {2})"},
    shfl_idx_op: {"*": "__shfl_sync(0xffffffffu, {0}, {1}, {2})"},
    syncthreads_op: {"*": "__syncthreads()"},
}  # fmt: skip
"""C spelling of each intrinsic, by the dtype of its first argument (`*`: any)."""

_CPP_KEYWORDS = """
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t char32_t
    class compl concept const const_cast constexpr continue decltype default delete do double
    dynamic_cast else enum explicit export extern false float for friend goto if inline int long
    mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast requires return short signed sizeof static static_assert static_cast
    struct switch template this thread_local throw true try typedef typeid typename union unsigned
    using virtual void volatile wchar_t while xor xor_eq
"""
_CALLED = " ".join(t for table in MATH_TEMPLATES.values() for t in table.values())
_RESERVED = (
    frozenset(_CPP_KEYWORDS.split())
    | frozenset(re.findall(r"[A-Za-z_]\w*(?=\()", _CALLED))
    | {"half", "min", "max", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "nvcuda"}
    | {"unity_floordiv", "unity_floormod"}
)
"""Names a kernel's variables must not take: C++ keywords and the functions generated code calls
(an ONNX input named `new` or `exp` would otherwise break or shadow them)."""

_BINARY = {
    E.Add: "+", E.Sub: "-", E.Mul: "*", E.Div: "/", E.Mod: "%", E.EQ: "==", E.NE: "!=",
    E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">=", E.And: "&&", E.Or: "||",
}  # fmt: skip
"""C operator of each binary node (integer `Div`/`Mod` truncate, as in C)."""

_NARROW = {"float16": ("__float2half", "__half2float"), "bfloat16": ("__float2bfloat16", "__bfloat162float")}
"""The 16-bit float types: (from float, to float) conversions.  bfloat16 math without a
native spelling, as float16's, is computed in float and rounded back."""

_PRELUDE = """#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math_constants.h>

__device__ __forceinline__ int unity_floordiv(int a, int b) {
  int q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ long long unity_floordiv(long long a, long long b) {
  long long q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ int unity_floormod(int a, int b) { return a - unity_floordiv(a, b) * b; }
__device__ __forceinline__ long long unity_floormod(long long a, long long b) {
  return a - unity_floordiv(a, b) * b;
}
__device__ __forceinline__ float unity_floormod(float a, float b) {
  float r = fmodf(a, b);
  return r == 0.0f ? copysignf(0.0f, b) : ((r < 0.0f) != (b < 0.0f) ? r + b : r);
}
__device__ __forceinline__ double unity_floormod(double a, double b) {
  double r = fmod(a, b);
  return r == 0.0 ? copysign(0.0, b) : ((r < 0.0) != (b < 0.0) ? r + b : r);
}
"""


_WMMA_PRELUDE = "#include <mma.h>\n"
"""Included when a kernel uses the tensor cores (`nvcuda::wmma`, sm_70 and later)."""


def c_type(dtype: str) -> str:
    """The C type of a scalar dtype.

    Example:
        >>> c_type("float16")
        'half'
    """
    if dt.lanes(dtype) > 1:
        raise ValueError(f"CUDA codegen: vector dtype {dtype} is not supported")
    got = C_TYPES.get(dtype)
    if got is None:
        raise ValueError(f"CUDA codegen: no C type for dtype {dtype}")
    return got


class CodeGenCUDA:
    """Print the kernels of lowered modules as one CUDA C translation unit.

    Example:
        >>> from unity import te
        >>> from unity.schedule.default_gpu import apply_default_gpu_schedules
        >>> A = te.placeholder((1024,), name="A")
        >>> B = te.compute((1024,), lambda i: A[i] * 2.0, name="B")
        >>> mod = apply_default_gpu_schedules(IRModule({"main": te.create_prim_func([A, B])}))
        >>> from unity.tir.transform.gpu import lower_cuda
        >>> cg = CodeGenCUDA().add_module(lower_cuda(mod))
        >>> cg.kernels, "__global__" in cg.finish()
        (['main_kernel0'], True)
    """

    def __init__(self) -> None:
        self.parts: list[str] = [_PRELUDE]
        self.kernels: list[str] = []

    def add_module(self, mod: IRModule) -> CodeGenCUDA:
        """Add every kernel (`calling_conv="cuda_kernel"`) of `mod`; returns self.

        Example:
            >>> CodeGenCUDA().add_module(IRModule({})).kernels
            []
        """
        for gv, func in mod.items():
            if is_kernel(func):
                assert isinstance(func, PrimFunc)
                self.add_kernel(func.attrs.get("global_symbol", gv.name_hint), func)
        return self

    def add_kernel(self, name: str, func: PrimFunc) -> None:
        """Print one kernel.

        Example:
            >>> cg.add_kernel("main_kernel0", kernel)  # doctest: +SKIP
        """
        printer = _KernelPrinter(func)
        self.parts.append(printer.print(name))
        self.kernels.append(name)
        if printer.uses_wmma and _WMMA_PRELUDE not in self.parts:
            self.parts.insert(1, _WMMA_PRELUDE)

    def finish(self) -> str:
        """The whole source.

        Example:
            >>> CodeGenCUDA().finish().startswith("#include")
            True
        """
        return "\n".join(self.parts)


class _KernelPrinter:
    def __init__(self, func: PrimFunc) -> None:
        self.func = func
        self.lines: list[str] = []
        self.indent = 1
        self.names: dict[E.Var, str] = {}
        self.used: set[str] = set(_RESERVED)
        self.nonneg_vars: set[E.Var] = set()
        found: list[E.Call] = []
        post_order_visit(func.body, lambda n: found.append(n) if is_wmma(n) else None)
        self.uses_wmma = bool(found)
        self.align = 32 if found else 16  # wmma loads and stores want 256-bit aligned tiles

    # -- names --------------------------------------------------------------------------------
    def name(self, var: E.Var) -> str:
        got = self.names.get(var)
        if got is None:
            base = "".join(c if c.isalnum() else "_" for c in var.name) or "v"
            base = base if base[0].isalpha() else f"v_{base}"
            got, k = base, 0
            while got in self.used:
                k += 1
                got = f"{base}_{k}"
            self.used.add(got)
            self.names[var] = got
        return got

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.indent + line)

    # -- kernel -------------------------------------------------------------------------------
    def print(self, symbol: str) -> str:
        loops, body = launch_nest(self.func.body)
        params = []
        for p in self.func.params:
            if isinstance(p, Buffer):
                params.append(f"{c_type(p.dtype)}* __restrict__ {self.name(p.data)}")
            else:
                params.append(f"{c_type(p.dtype)} {self.name(p)}")
        threads = 1
        for loop in loops:
            self.nonneg_vars.add(loop.loop_var)
            tag = loop.thread_binding or ""
            self.emit(f"const int {self.name(loop.loop_var)} = (int){tag};")
            if tag.startswith("threadIdx") and isinstance(loop.extent, E.IntImm):
                threads *= loop.extent.value
        self.stmt(body)
        head = f'extern "C" __global__ void __launch_bounds__({threads}) {symbol}({", ".join(params)}) {{'
        return "\n".join([head, *self.lines, "}", ""])

    # -- statements ---------------------------------------------------------------------------
    def stmt(self, node: S.Stmt) -> None:
        hook = dispatch_table(type(self), type(node), prefix="s_")
        if hook is None:
            raise DiagnosticError(f"CUDA codegen: cannot print a {type(node).__name__} statement", node)
        hook(self, node)

    def block(self, node: S.Stmt) -> None:
        self.indent += 1
        self.stmt(node)
        self.indent -= 1

    def s_seq_stmt_(self, node: S.SeqStmt) -> None:
        for s in node.seq:
            self.stmt(s)

    def s_buffer_store_(self, node: S.BufferStore) -> None:
        if dt.lanes(node.value.dtype) > 1 or any(dt.lanes(i.dtype) > 1 for i in node.indices):
            self.vector_store(node)
            return
        self.emit(f"{self.access(node.buffer, node.indices)} = {self.expr(node.value)};")

    def vector_store(self, node: S.BufferStore) -> None:
        """A vector store: wide loads into temporaries, lanes computed, then one wide store."""
        if len(node.indices) != 1:
            raise DiagnosticError(f"CUDA codegen: buffer {node.buffer.name} is not flattened", node)
        raw = copy_type(node.indices[0], node.value)
        if raw is not None:  # a plain copy: its bytes at once
            src = node.value.indices[0].base  # type: ignore[attr-defined]  # a Ramp
            self.emit(f"*reinterpret_cast<{raw}*>(&{self.name(node.buffer.data)}"
                      f"[{self.expr(node.indices[0].base)}]) = *reinterpret_cast<const {raw}*>("  # type: ignore[attr-defined]
                      f"&{self.name(node.value.buffer.data)}[{self.expr(src)}]);")  # type: ignore[attr-defined]
            return
        n = dt.lanes(node.value.dtype)
        loads: dict[E.BufferLoad, E.Var] = {}
        for load in wide_loads(node.value):
            wide = wide_type(load.dtype, load.indices[0])
            tmp = E.Var(f"v{len(self.used)}", "handle")
            name = self.name(tmp)
            loads[load] = E.Var(name, "handle")
            base = self.expr(load.indices[0].base)  # type: ignore[attr-defined]  # a Ramp
            self.emit(f"const {wide} {name} = *reinterpret_cast<const {wide}*>("
                      f"&{self.name(load.buffer.data)}[{base}]);")
        values = [self.expr(lane(node.value, k, loads)) for k in range(n)]
        index = node.indices[0]
        wide = wide_type(node.value.dtype, index)
        data = self.name(node.buffer.data)
        if wide is not None:
            base = self.expr(index.base)  # type: ignore[attr-defined]  # a Ramp
            self.emit(f"*reinterpret_cast<{wide}*>(&{data}[{base}]) = make_{wide}({', '.join(values)});")
            return
        for k, value in enumerate(values):
            self.emit(f"{data}[{self.expr(lane(index, k))}] = {value};")

    def s_for_(self, node: S.For) -> None:
        var = self.name(node.loop_var)
        if self.nonneg(node.min):
            self.nonneg_vars.add(node.loop_var)
        t = c_type(node.loop_var.dtype)
        lo, ext = self.expr(node.min), self.expr(node.extent)
        end = ext if lo == "0" else f"{lo} + {ext}"
        if node.kind is S.ForKind.UNROLLED:
            self.emit("#pragma unroll")
        self.emit(f"for ({t} {var} = {lo}; {var} < {end}; ++{var}) {{")
        self.block(node.body)
        self.emit("}")

    def s_while_(self, node: S.While) -> None:
        self.emit(f"while ({self.expr(node.condition)}) {{")
        self.block(node.body)
        self.emit("}")

    def s_if_then_else_(self, node: S.IfThenElse) -> None:
        self.emit(f"if ({self.expr(node.condition)}) {{")
        self.block(node.then_case)
        if node.else_case is not None:
            self.emit("} else {")
            self.block(node.else_case)
        self.emit("}")

    def s_let_stmt_(self, node: S.LetStmt) -> None:
        self.emit(f"const {c_type(node.var.dtype)} {self.name(node.var)} = {self.expr(node.value)};")
        self.stmt(node.body)

    def s_allocate_(self, node: S.Allocate) -> None:
        buf = node.buffer
        size = 1
        for d in buf.shape:
            if not isinstance(d, E.IntImm):
                raise DiagnosticError(f"CUDA codegen: buffer {buf.name} needs a constant size", node)
            size *= d.value
        if buf.scope in FRAGMENT_SCOPES:
            self.emit(f"{fragment_type(buf)} {self.name(buf.data)}[{size // (TILE * TILE)}];")
        else:
            prefix = "__shared__ " if buf.scope.startswith("shared") else ""
            self.emit(f"{prefix}__align__({self.align}) {c_type(buf.dtype)} {self.name(buf.data)}[{size}];")
        self.stmt(node.body)

    def s_assert_stmt_(self, node: S.AssertStmt) -> None:
        self.stmt(node.body)  # checked on the host before the launch

    def s_evaluate_(self, node: S.Evaluate) -> None:
        if isinstance(node.value, (E.IntImm, E.FloatImm)):
            return
        if isinstance(node.value, E.Call) and node.value.op is tir_op.prefetch_op:
            return  # a CPU cache hint
        self.emit(f"{self.expr(node.value)};")

    # -- expressions --------------------------------------------------------------------------
    def access(self, buf: Buffer, indices: tuple[E.PrimExpr, ...]) -> str:
        if len(indices) != 1:
            raise DiagnosticError(f"CUDA codegen: buffer {buf.name} is not flattened", buf)
        return f"{self.name(buf.data)}[{self.expr(indices[0])}]"

    def expr(self, node: E.PrimExpr) -> str:
        if dt.lanes(node.dtype) > 1:
            raise DiagnosticError(f"CUDA codegen: vector expression of dtype {node.dtype} "
                                  "outside a vector store", node)
        hook = dispatch_table(type(self), type(node), prefix="e_")
        if hook is None:
            raise DiagnosticError(f"CUDA codegen: cannot print a {type(node).__name__}", node)
        return hook(self, node)

    def e_var_(self, node: E.Var) -> str:
        if "." in node.name and node not in self.names:  # a lane of a vector temporary
            return node.name
        return self.name(node)

    def e_int_imm_(self, node: E.IntImm) -> str:
        if node.dtype == "bool":
            return "true" if node.value else "false"
        if node.dtype == "int64":
            return f"{node.value}LL"
        if node.dtype == "int32":
            return str(node.value) if node.value >= 0 else f"({node.value})"
        return f"(({c_type(node.dtype)}){node.value})"

    def e_float_imm_(self, node: E.FloatImm) -> str:
        v = node.value
        if math.isnan(v):
            text = "CUDART_NAN_F"
        elif math.isinf(v):
            text = "CUDART_INF_F" if v > 0 else "(-CUDART_INF_F)"
        else:
            text = repr(v) if node.dtype == "float64" else f"{float(v)!r}f"
        if node.dtype in _NARROW:
            return f"{_NARROW[node.dtype][0]}({text})"
        if node.dtype == "float64" and math.isinf(v):
            return "CUDART_INF" if v > 0 else "(-CUDART_INF)"
        return text if not text.startswith("-") else f"({text})"

    def e_cast_(self, node: E.Cast) -> str:
        src = node.value.dtype
        value = self.expr(node.value)
        if src in _NARROW and node.dtype != src:
            value = f"{_NARROW[src][1]}({value})"  # through float
            src = "float32"
        if node.dtype in _NARROW and node.dtype != src:
            return f"{_NARROW[node.dtype][0]}((float)({value}))"
        return f"(({c_type(node.dtype)})({value}))"

    def e_binary_op_(self, node: E.BinaryOp) -> str:
        op = _BINARY.get(type(node))
        if op is None:
            raise DiagnosticError(f"CUDA codegen: no C operator for {type(node).__name__}", node)
        return f"({self.expr(node.a)} {op} {self.expr(node.b)})"

    def e_floor_div_(self, node: E.FloorDiv) -> str:
        if dt.is_float(node.dtype):
            return f"floor({self.expr(node.a)} / {self.expr(node.b)})"
        if self.nonneg(node.a) and _positive(node.b):  # C's truncation is the floor here
            return f"({self.expr(node.a)} / {self.expr(node.b)})"
        return f"unity_floordiv({self.expr(node.a)}, {self.expr(node.b)})"

    def e_floor_mod_(self, node: E.FloorMod) -> str:
        if node.dtype in _NARROW:  # numpy's mod, computed in float
            to, back = _NARROW[node.dtype]
            return f"{to}(unity_floormod({back}({self.expr(node.a)}), {back}({self.expr(node.b)})))"
        if not dt.is_float(node.dtype) and self.nonneg(node.a) and _positive(node.b):
            return f"({self.expr(node.a)} % {self.expr(node.b)})"
        return f"unity_floormod({self.expr(node.a)}, {self.expr(node.b)})"

    def nonneg(self, expr: E.PrimExpr) -> bool:
        """A cheap proof that integer `expr` is >= 0 (loop and thread indices, sizes...)."""
        if isinstance(expr, E.IntImm):
            return expr.value >= 0
        if isinstance(expr, E.Var):
            return expr in self.nonneg_vars or isinstance(expr, E.SizeVar)
        if isinstance(expr, (E.Add, E.Mul, E.Min, E.FloorDiv, E.Div)):
            return self.nonneg(expr.a) and self.nonneg(expr.b)
        if isinstance(expr, E.FloorMod):
            return _positive(expr.b)
        if isinstance(expr, E.Cast) and dt.is_integer(expr.value.dtype) and dt.is_integer(expr.dtype):
            return dt.bits(expr.dtype) >= dt.bits(expr.value.dtype) and self.nonneg(expr.value)
        return isinstance(expr, E.Max) and (self.nonneg(expr.a) or self.nonneg(expr.b))

    def e_min_(self, node: E.Min) -> str:
        fn = "__hmin" if node.dtype in _NARROW else "min"
        return f"{fn}({self.expr(node.a)}, {self.expr(node.b)})"

    def e_max_(self, node: E.Max) -> str:
        fn = "__hmax" if node.dtype in _NARROW else "max"
        return f"{fn}({self.expr(node.a)}, {self.expr(node.b)})"

    def e_not_(self, node: E.Not) -> str:
        return f"(!{self.expr(node.a)})"

    def e_select_(self, node: E.Select) -> str:
        c, t, f = (self.expr(x) for x in (node.condition, node.true_value, node.false_value))
        return f"({c} ? {t} : {f})"

    def e_buffer_load_(self, node: E.BufferLoad) -> str:
        return self.access(node.buffer, node.indices)

    def e_call_(self, node: E.Call) -> str:
        if is_wmma(node):
            return self.wmma_call(node)
        table = MATH_TEMPLATES.get(node.op)
        if table is None:
            raise DiagnosticError(f"CUDA codegen: intrinsic {node.op.name} has no CUDA spelling", node)
        arg_dtype = node.args[0].dtype if node.args else "*"
        template = table.get(arg_dtype) or table.get("*")
        if template is None and arg_dtype in _NARROW and "float32" in table:
            # no 16-bit spelling (erf, pow, tanh, any bfloat16 math): in float, rounded back
            args = (f"{_NARROW[a.dtype][1]}({self.expr(a)})" if a.dtype in _NARROW else self.expr(a)
                    for a in node.args)
            value = table["float32"].format(*args)
            return f"{_NARROW[node.dtype][0]}({value})" if node.dtype in _NARROW else value
        if template is None:
            raise DiagnosticError(
                f"CUDA codegen: intrinsic {node.op.name} has no CUDA spelling for {arg_dtype}", node)
        return template.format(*(self.expr(a) for a in node.args))


    def wmma_call(self, node: E.Call) -> str:
        """A tensor-core call (`LowerWmma` form): fragments as `name[index]`, memory tiles
        as `&buf[offset], stride`."""
        args = node.args

        def frag(k: int) -> str:
            return f"{self.name(args[k])}[{self.expr(args[k + 1])}]"  # type: ignore[arg-type]

        def tile(k: int) -> str:
            return f"&{self.expr(args[k])}, {self.expr(args[k + 1])}"

        if node.op is wmma_fill_op:
            return f"nvcuda::wmma::fill_fragment({frag(0)}, {self.expr(args[2])})"
        if node.op is wmma_load_op:
            return f"nvcuda::wmma::load_matrix_sync({frag(0)}, {tile(2)})"
        if node.op is wmma_mma_op:
            return f"nvcuda::wmma::mma_sync({frag(0)}, {frag(2)}, {frag(4)}, {frag(6)})"
        ptr, stride = (self.expr(a) for a in args[:2])
        return f"nvcuda::wmma::store_matrix_sync(&{ptr}, {frag(2)}, {stride}, nvcuda::wmma::mem_row_major)"


def fragment_type(buf: Buffer) -> str:
    """The `nvcuda::wmma::fragment` type of one 16 x 16 tile of fragment buffer `buf`
    (operands row-major, as `LowerWmma`'s tiles are).

    Example:
        >>> from unity.tir.buffer import decl_buffer
        >>> fragment_type(decl_buffer((16, 16), "float32", "C", scope="wmma.accumulator"))
        'nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float>'
    """
    kind = buf.scope.split(".")[1]
    layout = "" if kind == "accumulator" else ", nvcuda::wmma::row_major"
    return f"nvcuda::wmma::fragment<nvcuda::wmma::{kind}, {TILE}, {TILE}, {TILE}, {c_type(buf.dtype)}{layout}>"


def _positive(expr: E.PrimExpr) -> bool:
    return isinstance(expr, E.IntImm) and expr.value > 0
