"""TIR expressions -> LLVM IR values (the expression half of `CodeGenLLVM`).

Value representation: bool is `i1` in registers and `i8` in memory; float16 is
`half`; bfloat16 is `float` in registers (rounded to bfloat16 precision by casts)
and `i16` in memory; vectors `float32x16` are `<16 x float>`.  Float arithmetic
carries only the `contract` fast-math flag (FMA fusion), never full fast-math.

Example:
    >>> str(llvm_type("float32x16"))
    '<16 x float>'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llvmlite import ir

from unity.codegen.llvm_align import access_alignment
from unity.ir import dtype as dt
from unity.ir.diagnostics import DiagnosticError
from unity.ir.node import dispatch_table
from unity.tir import expr as E
from unity.tir.buffer import Buffer
from unity.tir.expr import PrimExpr, Var
from unity.tir.op import ldexp_op, prefetch_op

I1, I8, I16, I32, I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))
F32 = ir.FloatType()
PTR = ir.PointerType()
CONTRACT = ("contract",)
"""Fast-math flags on float arithmetic: FMA contraction only (results stay IEEE otherwise)."""

LIBM_FUNCTIONS = {"erf", "tan", "atan", "asin", "acos", "sinh", "cosh", "atan2", "fmod"}
"""Math ops without an LLVM intrinsic: called in libm, lane by lane."""


def llvm_type(dtype: str, memory: bool = False) -> ir.Type:
    """The LLVM type of a value (or, with `memory=True`, a stored element) of `dtype`.

    Example:
        >>> str(llvm_type("bool", memory=True))
        'i8'
    """
    elem, lanes = dt.element(dtype), dt.lanes(dtype)
    if elem == "bool":
        base: ir.Type = I8 if memory else I1
    elif elem == "float16":
        base = ir.HalfType()
    elif elem == "bfloat16":
        base = I16 if memory else F32
    elif elem == "float32":
        base = F32
    elif elem == "float64":
        base = ir.DoubleType()
    elif elem == "handle":
        base = PTR
    else:
        base = ir.IntType(dt.bits(elem))
    return base if lanes == 1 else ir.VectorType(base, lanes)


def _bf16_bits(value: float) -> float:
    """`value` rounded to bfloat16 precision (nearest even), as a Python float."""
    import struct

    (bits,) = struct.unpack("<I", struct.pack("<f", value))
    if (bits & 0x7F800000) != 0x7F800000:
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def _splat(ty: ir.Type, value: float) -> ir.Constant:
    """The constant `value` of type `ty` (every lane, for a vector type)."""
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, value)] * ty.count)
    return ir.Constant(ty, value)


class ExprCodegen:
    """Emit expressions with `self.builder`; variables are looked up in `self.env`.

    Example:
        >>> class CodeGenLLVM(ExprCodegen): ...  # doctest: +SKIP
    """

    module: ir.Module
    builder: ir.IRBuilder
    env: dict[Var, ir.Value]
    where: str
    allocated: set[Var]
    """Data pointers of the buffers the generated code allocated (64-byte aligned)."""

    vector_bits: int
    """Width of the target's vector registers (512 with AVX-512, else 256)."""

    native_ldexp: bool
    """Whether `llvm.ldexp` is one instruction (AVX-512's `vscalefps`); else `ldexp` is
    two exponent-field products (LLVM would call libm's `ldexpf` per lane)."""

    memo: dict[PrimExpr, ir.Value]
    """Values of the expressions emitted for the current statement: lowering shares
    subexpressions (a DAG), and each is emitted once.  Cleared at every statement (a
    store may change what a load reads) and every `Let` (a binding changes)."""

    in_index: bool = False
    """Whether the expression being emitted is a memory index (`emit_index`)."""

    def emit(self, expr: PrimExpr) -> ir.Value:
        """The LLVM value of `expr` at the builder's position.

        Example:
            >>> value = cg.emit(i * 4 + 1)  # doctest: +SKIP
        """
        value = self.memo.get(expr)
        if value is None:
            value = dispatch_table(type(self), type(expr))(self, expr)
            self.memo[expr] = value
        return value

    def emit_index(self, expr: PrimExpr) -> ir.Value:
        """`emit` for an element index: its signed `+`, `-` and `*` are `nsw` (an index
        that overflows its type would address outside every buffer; index types are
        chosen wide enough, see `unity.te.index_dtype`), so LLVM may move the constant
        terms of ``sext(i + c)`` into the address's displacement.  Without it, each
        load of a 3x3 conv's unrolled window recomputed ``(i + c) << 32 >> 30``.  A
        subexpression emitted here first keeps its flags when the statement reuses it
        (`memo`); it differs from the wrapping value only where the index overflows.

        Example:
            >>> ptr = cg.address(A, cg.emit_index(i * 4 + 1), "int32", F32)  # doctest: +SKIP
        """
        if self.in_index:
            return self.emit(expr)
        self.in_index = True
        try:
            return self.emit(expr)
        finally:
            self.in_index = False

    def _int_flags(self, e: PrimExpr) -> tuple[str, ...]:
        """`nsw` on a signed integer operation of an index."""
        return ("nsw",) if self.in_index and not _unsigned(e) else ()

    def error(self, msg: str, node: Any) -> DiagnosticError:
        """A codegen error naming the function being compiled.

        Example:
            >>> raise cg.error("cannot compile a While", stmt)  # doctest: +SKIP
        """
        return DiagnosticError(f"codegen llvm, in {self.where}: {msg}", node)

    def visit_prim_expr_(self, expr: PrimExpr) -> ir.Value:
        raise self.error(f"cannot compile a {type(expr).__name__} expression", expr)

    # -- leaves ---------------------------------------------------------------------------
    def visit_var_(self, var: Var) -> ir.Value:
        value = self.env.get(var)
        if value is None:
            raise self.error(f"variable {var.name} is used but not defined", var)
        return value

    def visit_int_imm_(self, imm: E.IntImm) -> ir.Value:
        return ir.Constant(llvm_type(imm.dtype), int(imm.value))

    def visit_float_imm_(self, imm: E.FloatImm) -> ir.Value:
        value = _bf16_bits(imm.value) if dt.element(imm.dtype) == "bfloat16" else imm.value
        return ir.Constant(llvm_type(imm.dtype), value)

    def visit_cast_(self, cast: E.Cast) -> ir.Value:
        return self.cast(self.emit(cast.value), cast.value.dtype, cast.dtype)

    # -- arithmetic -----------------------------------------------------------------------
    def visit_add_(self, e: E.Add) -> ir.Value:
        a, b = self.emit(e.a), self.emit(e.b)
        if _is_float(e):
            return self.builder.fadd(a, b, flags=CONTRACT)
        return self.builder.add(a, b, flags=self._int_flags(e))

    def visit_sub_(self, e: E.Sub) -> ir.Value:
        a, b = self.emit(e.a), self.emit(e.b)
        if _is_float(e):
            return self.builder.fsub(a, b, flags=CONTRACT)
        return self.builder.sub(a, b, flags=self._int_flags(e))

    def visit_mul_(self, e: E.Mul) -> ir.Value:
        a, b = self.emit(e.a), self.emit(e.b)
        if _is_float(e):
            return self.builder.fmul(a, b, flags=CONTRACT)
        return self.builder.mul(a, b, flags=self._int_flags(e))

    def visit_div_(self, e: E.Div) -> ir.Value:
        a, b = self.emit(e.a), self.emit(e.b)
        if _is_float(e):
            return self.builder.fdiv(a, b, flags=CONTRACT)
        if _unsigned(e):
            return self._div_guard(
                a, b, self.builder.udiv(a, self._safe_divisor(a, b, False)), False
            )
        quotient = self.builder.sdiv(a, self._safe_divisor(a, b, True))
        return self._div_guard(a, b, quotient, True)

    def visit_mod_(self, e: E.Mod) -> ir.Value:
        a, b = self.emit(e.a), self.emit(e.b)
        if _is_float(e):
            return self.builder.frem(a, b)
        if _unsigned(e):
            return self.builder.urem(a, self._safe_divisor(a, b, False))
        return self.builder.srem(a, self._safe_divisor(a, b, True))

    def visit_floor_div_(self, e: E.FloorDiv) -> ir.Value:
        a, b = self.emit(e.a), self.emit(e.b)
        if _is_float(e):
            return self.intrinsic("llvm.floor", [self.builder.fdiv(a, b)])
        if _unsigned(e):
            return self._div_guard(
                a, b, self.builder.udiv(a, self._safe_divisor(a, b, False)), False
            )
        safe = self._safe_divisor(a, b, True)
        quotient = self.builder.sdiv(a, safe)
        quotient = self.builder.sub(quotient, self.builder.zext(self._floor_fix(a, safe), a.type))
        return self._div_guard(a, b, quotient, True)

    def visit_floor_mod_(self, e: E.FloorMod) -> ir.Value:
        a, b = self.emit(e.a), self.emit(e.b)
        if _is_float(e):
            return self._float_floor_mod(a, b)
        if _unsigned(e):
            return self.builder.urem(a, self._safe_divisor(a, b, False))
        safe = self._safe_divisor(a, b, True)
        rem = self.builder.srem(a, safe)
        return self.builder.select(self._floor_fix(a, safe), self.builder.add(rem, safe), rem)

    def _float_floor_mod(self, a: ir.Value, b: ir.Value) -> ir.Value:
        """numpy's `mod` of floats: C's `fmod`, moved by `b` where its sign differs from
        `b`'s, a zero taking `b`'s sign (`a - floor(a / b) * b` would be NaN for a finite
        `a` and an infinite `b`, where numpy answers `a` or `b`)."""
        rem = self.builder.frem(a, b)
        zero = _splat(a.type, 0.0)
        signs = self.builder.xor(self.builder.fcmp_ordered("<", rem, zero),
                                 self.builder.fcmp_ordered("<", b, zero))
        moved = self.builder.fadd(rem, b)
        nonzero = self.builder.select(signs, moved, rem)
        signed_zero = self.intrinsic("llvm.copysign", [zero, b])
        return self.builder.select(self.builder.fcmp_ordered("==", rem, zero), signed_zero, nonzero)

    # Integer division by 0 (and signed MIN / -1) traps the CPU (SIGFPE) and kills the
    # process.  The divisor is replaced by 1 in those lanes, and the quotient fixed up:
    # x / 0 == x % 0 == 0 (numpy's answer), x / -1 == -x (wrapping), x % -1 == 0.
    @staticmethod
    def _divisor_is_safe(b: ir.Value, signed: bool) -> bool:
        """True when `b` is a scalar constant that can never trap."""
        if not isinstance(b, ir.Constant) or not isinstance(b.constant, int):
            return False
        return b.constant != 0 and not (signed and b.constant == -1)

    def _safe_divisor(self, a: ir.Value, b: ir.Value, signed: bool) -> ir.Value:
        """`b`, with 1 in the lanes where dividing by it would trap (0, or -1 if signed)."""
        if self._divisor_is_safe(b, signed):
            return b
        bad = self.builder.icmp_unsigned("==", b, ir.Constant(b.type, None))
        if signed:
            minus = self.builder.icmp_signed("==", b, _splat(b.type, -1))
            bad = self.builder.or_(bad, minus)
        return self.builder.select(bad, _splat(b.type, 1), b)

    def _div_guard(self, a: ir.Value, b: ir.Value, quotient: ir.Value, signed: bool) -> ir.Value:
        """The quotient computed with `_safe_divisor`, fixed up: 0 for x / 0, -x for x / -1."""
        if self._divisor_is_safe(b, signed):
            return quotient
        zero = ir.Constant(b.type, None)
        if signed:
            minus = self.builder.icmp_signed("==", b, _splat(b.type, -1))
            quotient = self.builder.select(minus, self.builder.sub(zero, a), quotient)
        return self.builder.select(self.builder.icmp_unsigned("==", b, zero), zero, quotient)

    def _floor_fix(self, a: ir.Value, b: ir.Value) -> ir.Value:
        """True where truncating division differs from floor division (the remainder
        is nonzero and its sign differs from the divisor's)."""
        zero = ir.Constant(a.type, None)
        rem = self.builder.srem(a, b)
        nonzero = self.builder.icmp_signed("!=", rem, zero)
        signs = self.builder.icmp_signed("<", self.builder.xor(rem, b), zero)
        return self.builder.and_(nonzero, signs)

    def visit_min_(self, e: E.Min) -> ir.Value:
        a, b = self.emit(e.a), self.emit(e.b)
        return self.builder.select(self.compare("<", a, b, e.a.dtype), a, b)

    def visit_max_(self, e: E.Max) -> ir.Value:
        a, b = self.emit(e.a), self.emit(e.b)
        return self.builder.select(self.compare(">", a, b, e.a.dtype), a, b)

    # -- comparisons and logic ------------------------------------------------------------
    def compare(self, op: str, a: ir.Value, b: ir.Value, dtype: str) -> ir.Value:
        """`a op b` for `op` in `== != < <= > >=`, signed/unsigned/float by `dtype`.

        Example:
            >>> flag = cg.compare("<", a, b, "int32")  # doctest: +SKIP
        """
        if dt.is_float(dtype):
            if op == "!=":
                return self.builder.fcmp_unordered(op, a, b)
            return self.builder.fcmp_ordered(op, a, b)
        if dt.is_uint(dtype) or dt.is_bool(dtype):
            return self.builder.icmp_unsigned(op, a, b)
        return self.builder.icmp_signed(op, a, b)

    def visit_and_(self, e: E.And) -> ir.Value:
        return self.builder.and_(self.emit(e.a), self.emit(e.b))

    def visit_or_(self, e: E.Or) -> ir.Value:
        return self.builder.or_(self.emit(e.a), self.emit(e.b))

    def visit_not_(self, e: E.Not) -> ir.Value:
        return self.builder.not_(self.emit(e.a))

    def visit_select_(self, e: E.Select) -> ir.Value:
        if dt.lanes(e.dtype) > 1:
            uniform, varying = _split_uniform(e.condition)
            if uniform is not None:
                return self._uniform_select(uniform, varying, e)
        cond = self.emit(e.condition)
        if dt.lanes(e.dtype) == 1 and (_loads_memory(e.true_value) or _loads_memory(e.false_value)):
            return self._branchy_select(cond, e)
        return self.builder.select(cond, self.emit(e.true_value), self.emit(e.false_value))

    def _uniform_select(
        self, uniform: PrimExpr, varying: PrimExpr | None, e: E.Select
    ) -> ir.Value:
        """``select(Broadcast(u) && v, t, f)`` as ``u ? select(v, t, f) : f``: the scalar
        `u` (a padded row's bounds) is one test, not a lane mask computed per vector, and a
        constant `v` (its columns) folds.  A vectorized 16-wide pad copy on AVX2 built the
        mask lane by lane from a byte vector, ~20 instructions a row."""
        def taken() -> ir.Value:
            inner = self.emit(e.true_value)
            if varying is not None:
                inner = self.builder.select(self.emit(varying), inner, self.emit(e.false_value))
            return inner

        if _loads_memory(e.true_value) or _loads_memory(e.false_value):  # the arm not taken
            return self._branch(self.emit(uniform), taken, lambda: self.emit(e.false_value))  # must not load
        false_value = self.emit(e.false_value)
        return self.builder.select(self.emit(uniform), taken(), false_value)

    def _branchy_select(self, cond: ir.Value, e: E.Select) -> ir.Value:
        """A scalar select whose arm loads memory becomes a branch: the arm not taken may
        index out of bounds (padding: `select(in_bounds, X[i - pad], 0)`; a scatter's
        update row when there are no updates), so it must not run."""
        return self._branch(cond, lambda: self.emit(e.true_value), lambda: self.emit(e.false_value))

    def _branch(self, cond: ir.Value, then_value: Callable[[], ir.Value],
                else_value: Callable[[], ir.Value]) -> ir.Value:  # fmt: skip
        """`then_value()` or `else_value()`, emitted in the arms of a branch on `cond`.
        Values emitted inside an arm do not dominate the join: the memo is restored."""
        saved = dict(self.memo)
        with self.builder.if_else(cond) as (then, otherwise):
            with then:
                true_value, true_block = then_value(), self.builder.block
            self.memo = dict(saved)
            with otherwise:
                false_value, false_block = else_value(), self.builder.block
        self.memo = saved
        phi = self.builder.phi(true_value.type)
        phi.add_incoming(true_value, true_block)
        phi.add_incoming(false_value, false_block)
        return phi

    # -- vectors --------------------------------------------------------------------------
    def splat(self, value: ir.Value, lanes: int) -> ir.Value:
        """The vector of `lanes` copies of the scalar `value`.

        Example:
            >>> vec = cg.splat(cg.emit(tir.const(1.0)), 16)  # doctest: +SKIP
        """
        vec_type = ir.VectorType(value.type, lanes)
        one = self.builder.insert_element(
            ir.Constant(vec_type, ir.Undefined), value, ir.Constant(I32, 0)
        )
        mask = ir.Constant(ir.VectorType(I32, lanes), None)
        return self.builder.shuffle_vector(one, ir.Constant(vec_type, ir.Undefined), mask)

    def visit_broadcast_(self, e: E.Broadcast) -> ir.Value:
        return self.splat(self.emit(e.value), e.lanes)

    def visit_ramp_(self, e: E.Ramp) -> ir.Value:
        base, stride = self.emit(e.base), self.emit(e.stride)
        steps = ir.Constant(ir.VectorType(base.type, e.lanes), list(range(e.lanes)))
        offsets = self.builder.mul(self.splat(stride, e.lanes), steps)
        return self.builder.add(self.splat(base, e.lanes), offsets)

    def visit_let_(self, e: E.Let) -> ir.Value:
        self.env[e.var] = self.emit(e.value)
        self.memo.clear()
        try:
            return self.emit(e.body)
        finally:
            del self.env[e.var]
            self.memo.clear()

    # -- calls ----------------------------------------------------------------------------
    def declare(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        """The module's function `name`, declared with this signature on first use (the C
        runtime, libm, libgomp, LLVM intrinsics).

        Example:
            >>> free = cg.declare("free", ir.VoidType(), [PTR])  # doctest: +SKIP
        """
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, args), name)
        return fn

    def intrinsic(self, name: str, args: list[ir.Value]) -> ir.Value:
        """Call the overloaded LLVM intrinsic `name` (e.g. `llvm.exp`) on `args`' type.

        Example:
            >>> y = cg.intrinsic("llvm.exp", [x])  # doctest: +SKIP
        """
        ty = args[0].type
        fn = self.declare(f"{name}.{_suffix(ty)}", ty, [a.type for a in args])
        return self.builder.call(fn, args)

    def visit_call_(self, call: E.Call) -> ir.Value:
        if call.op is prefetch_op:
            return self._prefetch(call)
        args = [self.emit(a) for a in call.args]
        short = call.op.name.removeprefix("tir.")
        llvm_name = call.op.get_attr("llvm")
        if llvm_name == "bitcast":  # `reinterpret`: an instruction, not an intrinsic
            return self.builder.bitcast(args[0], llvm_type(call.dtype))
        if call.op is ldexp_op:
            return self._ldexp(*args)
        if dt.element(call.args[0].dtype) == "float16" and (llvm_name is None):
            wide = [
                self.cast(a, x.dtype, dt.with_lanes("float32", dt.lanes(x.dtype)))
                for a, x in zip(args, call.args)
            ]
            out = self._fallback_math(short, wide, call)
            return out if dt.is_bool(call.dtype) else self.builder.fptrunc(out, args[0].type)
        if llvm_name is not None:
            return self.intrinsic(llvm_name, args)
        return self._fallback_math(short, args, call)

    def _prefetch(self, call: E.Call) -> ir.Value:
        """`llvm.prefetch` (a read, into L1: ``prefetcht0`` on x86) of the element that
        `call`'s one `BufferLoad` argument names; its address may lie past the buffer
        (a prefetch does not fault), so it is not `inbounds`."""
        load = call.args[0]
        if not isinstance(load, E.BufferLoad) or dt.lanes(load.dtype) != 1:
            raise self.error("tir.prefetch takes one scalar buffer element", call)
        elem = llvm_type(dt.element(load.buffer.dtype), memory=True)
        index = self.flat_index(load.buffer, load.indices, load)
        ptr = self.address(load.buffer, self.emit_index(index), index.dtype, elem, inbounds=False)
        fn = self.declare("llvm.prefetch.p0", ir.VoidType(), [PTR, I32, I32, I32])
        read, locality, data = (ir.Constant(I32, v) for v in (0, 3, 1))
        self.builder.call(fn, [ptr, read, locality, data])
        return ir.Constant(I32, 0)

    def _ldexp(self, x: ir.Value, n: ir.Value) -> ir.Value:
        """``x * 2**n`` (float32 `x`, int32 `n`): `llvm.ldexp` where it is one instruction,
        else ``x * 2**h * 2**(n - h)`` with ``h = n >> 1``, each power the float whose
        exponent field is ``k + 127`` (neither leaves the normal range for ``|n| <= 252``
        before the product does, so results down to the subnormals are right)."""
        if self.native_ldexp:
            full = f"llvm.ldexp.{_suffix(x.type)}.{_suffix(n.type)}"
            return self.builder.call(self.declare(full, x.type, [x.type, n.type]), [x, n])
        b = self.builder
        half = b.ashr(n, _splat(n.type, 1))  # floor(n / 2)

        def pow2(k: ir.Value) -> ir.Value:
            return b.bitcast(b.shl(b.add(k, _splat(n.type, 127)), _splat(n.type, 23)), x.type)

        return b.fmul(b.fmul(x, pow2(half)), pow2(b.sub(n, half)))

    def _fallback_math(self, short: str, args: list[ir.Value], call: E.Call) -> ir.Value:
        """Ops lowering normally rewrites (LowerIntrinsics), compiled directly here."""
        x = args[0]
        one = self._float_const(x.type, 1.0)
        if short == "rsqrt":
            return self.builder.fdiv(one, self.intrinsic("llvm.sqrt", [x]))
        if short == "sigmoid":
            exp = self.intrinsic("llvm.exp", [self.builder.fneg(x)])
            return self.builder.fdiv(one, self.builder.fadd(one, exp))
        if short == "tanh":  # 1 - 2 / (exp(2x) + 1): exact at +-inf, no inf/inf
            exp = self.intrinsic("llvm.exp", [self.builder.fadd(x, x)])
            two = self._float_const(x.type, 2.0)
            return self.builder.fsub(one, self.builder.fdiv(two, self.builder.fadd(exp, one)))
        if short == "isnan":
            return self.builder.fcmp_unordered("uno", x, x)
        if short == "isinf":
            inf = self._float_const(x.type, float("inf"))
            return self.builder.fcmp_ordered("==", self.intrinsic("llvm.fabs", [x]), inf)
        if short in LIBM_FUNCTIONS:
            return self._libm(short, args)
        raise self.error(f"no LLVM lowering for intrinsic {call.op.name}", call)

    def _float_const(self, ty: ir.Type, value: float) -> ir.Value:
        if isinstance(ty, ir.VectorType):
            return ir.Constant(ty, [value] * ty.count)
        return ir.Constant(ty, value)

    def _libm(self, short: str, args: list[ir.Value]) -> ir.Value:
        ty = args[0].type
        scalar = ty.element if isinstance(ty, ir.VectorType) else ty
        fn = self.declare(short + ("f" if scalar == F32 else ""), scalar, [scalar] * len(args))
        if not isinstance(ty, ir.VectorType):
            return self.builder.call(fn, args)
        out: ir.Value = ir.Constant(ty, ir.Undefined)
        for lane in range(ty.count):
            idx = ir.Constant(I32, lane)
            lane_args = [self.builder.extract_element(a, idx) for a in args]
            out = self.builder.insert_element(out, self.builder.call(fn, lane_args), idx)
        return out

    # -- casts ----------------------------------------------------------------------------
    def cast(self, value: ir.Value, src: str, dst: str) -> ir.Value:
        """Convert `value` of dtype `src` to dtype `dst` (C semantics; to bool is `!= 0`).

        Example:
            >>> f = cg.cast(i, "int32", "float32")  # doctest: +SKIP
        """
        fs, fd = dt.element(src), dt.element(dst)
        if fs == fd:
            return value
        to = llvm_type(dst)
        if fd == "bool":
            zero = ir.Constant(value.type, None)
            if dt.is_float(src):
                return self.builder.fcmp_unordered("!=", value, zero)
            return self.builder.icmp_unsigned("!=", value, zero)
        if fd == "bfloat16":
            wide = self.cast(value, src, dt.with_lanes("float32", dt.lanes(src)))
            return self.round_bf16(wide)
        if fs == "bfloat16":
            return self.cast(value, dt.with_lanes("float32", dt.lanes(src)), dst)
        if fs == "bool":
            return (
                self.builder.uitofp(value, to) if dt.is_float(dst) else self.builder.zext(value, to)
            )
        return self._numeric_cast(value, src, dst, to)

    def _numeric_cast(self, value: ir.Value, src: str, dst: str, to: ir.Type) -> ir.Value:
        b = self.builder
        if dt.is_float(src) and dt.is_float(dst):
            return b.fpext(value, to) if dt.bits(dst) > dt.bits(src) else b.fptrunc(value, to)
        if dt.is_float(src):
            return b.fptoui(value, to) if dt.is_uint(dst) else b.fptosi(value, to)
        if dt.is_float(dst):
            return b.uitofp(value, to) if dt.is_uint(src) else b.sitofp(value, to)
        if dt.bits(dst) < dt.bits(src):
            return b.trunc(value, to)
        if dt.bits(dst) == dt.bits(src):
            return value
        return b.zext(value, to) if dt.is_uint(src) else b.sext(value, to)

    def round_bf16(self, value: ir.Value) -> ir.Value:
        """A float (or float vector) rounded to bfloat16 precision, still as float.

        Example:
            >>> r = cg.round_bf16(x)  # doctest: +SKIP
        """
        bits = self.builder.and_(self._bf16_round_bits(value), self._int_like(value, 0xFFFF0000))
        return self.builder.bitcast(bits, value.type)

    def _bf16_round_bits(self, value: ir.Value) -> ir.Value:
        b = self.builder
        bits = b.bitcast(value, self._int_type_like(value))
        lsb = b.and_(b.lshr(bits, self._int_like(value, 16)), self._int_like(value, 1))
        return b.add(b.add(bits, self._int_like(value, 0x7FFF)), lsb)

    def _int_type_like(self, value: ir.Value) -> ir.Type:
        ty = value.type
        return ir.VectorType(I32, ty.count) if isinstance(ty, ir.VectorType) else I32

    def _int_like(self, value: ir.Value, number: int) -> ir.Value:
        ty = self._int_type_like(value)
        return ir.Constant(ty, [number] * ty.count if isinstance(ty, ir.VectorType) else number)

    # -- memory ---------------------------------------------------------------------------
    def from_memory(self, value: ir.Value, dtype: str) -> ir.Value:
        """A loaded element (or vector) in its register form.

        Example:
            >>> flag = cg.from_memory(byte, "bool")  # doctest: +SKIP
        """
        elem = dt.element(dtype)
        if elem == "bool":
            return self.builder.icmp_unsigned("!=", value, ir.Constant(value.type, None))
        if elem == "bfloat16":
            lanes = dt.lanes(dtype)
            wide_type = llvm_type(dt.with_lanes("int32", lanes))
            sixteen = ir.Constant(wide_type, [16] * lanes if lanes > 1 else 16)
            shifted = self.builder.shl(self.builder.zext(value, wide_type), sixteen)
            return self.builder.bitcast(shifted, llvm_type(dtype))
        return value

    def to_memory(self, value: ir.Value, dtype: str) -> ir.Value:
        """A register value in the form stored to memory.

        Example:
            >>> byte = cg.to_memory(flag, "bool")  # doctest: +SKIP
        """
        elem = dt.element(dtype)
        if elem == "bool":
            return self.builder.zext(value, llvm_type(dtype, memory=True))
        if elem == "bfloat16":
            top = self.builder.lshr(self._bf16_round_bits(value), self._int_like(value, 16))
            return self.builder.trunc(top, llvm_type(dtype, memory=True))
        return value

    def flat_index(self, buffer: Buffer, indices: tuple[PrimExpr, ...], node: Any) -> PrimExpr:
        """One index into the memory of `buffer` (row-major, or by its strides).

        Example:
            >>> cg.flat_index(A, (i, j), load)  # A[i, j] -> i * 64 + j  # doctest: +SKIP
        """
        if len(indices) != len(buffer.shape) and not (len(indices) == 1 and not buffer.strides):
            raise self.error(
                f"buffer {buffer.name} has rank {len(buffer.shape)}, indexed with "
                f"{len(indices)} indices",
                node,
            )
        if len(indices) == 1 and not buffer.strides:
            flat = indices[0]
        elif buffer.strides:
            flat = _sum(idx * stride for idx, stride in zip(indices, buffer.strides))
        else:
            flat = indices[0]
            for idx, extent in zip(indices[1:], buffer.shape[1:]):
                flat = flat * extent + idx
        return flat if buffer.elem_offset is None else flat + buffer.elem_offset

    def address(
        self, buffer: Buffer, index: ir.Value, index_dtype: str, elem: ir.Type,
        inbounds: bool = True,
    ) -> ir.Value:  # fmt: skip
        """Pointer to element `index` (a scalar integer) of `buffer` (`inbounds`: LLVM may
        assume it points into the buffer; pass False for a masked access's base).

        Example:
            >>> ptr = cg.address(A, cg.emit(i), "int32", F32)  # doctest: +SKIP
        """
        base = self.visit_var_(buffer.data)
        if index.type != I64:
            index = (
                self.builder.zext(index, I64)
                if dt.is_uint(index_dtype)
                else self.builder.sext(index, I64)
            )
        return self.builder.gep(base, [index], inbounds=inbounds, source_etype=elem)

    def vector_alignment(self, buffer: Buffer, base: PrimExpr) -> int:
        """`align` of a contiguous vector access from element `base` of `buffer`.

        Example:
            >>> cg.vector_alignment(T_local, i * 16)  # 64 for an allocated buffer  # doctest: +SKIP
        """
        elem_bytes = max(1, dt.bits(buffer.dtype) // 8)
        return access_alignment(elem_bytes, base, buffer.data in self.allocated)

    def visit_buffer_load_(self, load: E.BufferLoad) -> ir.Value:
        buffer = load.buffer
        index = self.flat_index(buffer, load.indices, load)
        elem = llvm_type(dt.element(buffer.dtype), memory=True)
        align = max(1, dt.bits(buffer.dtype) // 8)
        lanes = dt.lanes(index.dtype)
        if lanes == 1:
            ptr = self.address(buffer, self.emit_index(index), index.dtype, elem)
            return self.from_memory(self.builder.load(ptr, typ=elem, align=align), load.dtype)
        if _is_dense(index):
            assert isinstance(index, E.Ramp)
            return self.from_memory(self.dense_load(buffer, index.base, lanes, elem), load.dtype)
        if _is_short_stride(index, dt.bits(buffer.dtype)):
            return self._strided(buffer, index, elem, load.dtype)
        clamped = _clamped_ramp(index, dt.bits(buffer.dtype))
        if clamped is not None:
            return self.from_memory(self._clamped(buffer, *clamped, elem, align), load.dtype)
        return self._gather(buffer, index, elem, align, load.dtype)

    def _clamped(
        self, buffer: Buffer, base: PrimExpr, ramp: E.Ramp, lo: PrimExpr | None,
        hi: PrimExpr | None, max_outer: bool, elem: ir.Type, align: int,
    ) -> ir.Value:  # fmt: skip
        """`buffer[base + clamp(Ramp(r, s, n), lo, hi)]` (the safe load of a padded
        tensor's border; either bound may be absent) without a gather: the elements of
        the span ``[r, r + (n-1) s]`` inside ``[lo, hi]`` are one masked load from
        ``base + r`` (elements outside are not read), every `s`-th of them a lane; the
        lanes below `lo` take lane 0's element and those above `hi` lane n-1's (a clamp of
        an increasing ramp; `max_outer` says which way it is written, which matters only
        when ``lo > hi``).  A 3x3 depthwise conv at 28x28 spent 90% of its time in the
        gathered pad copy; a 3x3 stride-2 max pool reads its padded rows at stride 2."""
        n, stride = ramp.lanes, ramp.stride.value
        first, last = ramp.base, ramp.base + (n - 1) * stride

        def clamp(at: PrimExpr) -> PrimExpr:
            if lo is None or hi is None:
                return E.Max(at, lo) if hi is None else E.Min(at, hi)
            return E.Max(E.Min(at, hi), lo) if max_outer else E.Min(E.Max(at, lo), hi)

        edges = [
            self.builder.load(
                self.address(buffer, self.emit_index(base + clamp(at)), base.dtype, elem),
                typ=elem,
                align=align,
            )
            for at in (first, last)
        ]

        wide = n * stride
        # Which elements of the span lie inside [lo, hi]: compare the constant offsets
        # 0, 1, ... (and 0, s, 2s, ... for the lanes) with the bounds relative to `first`,
        # in int32 (the bounds clamped to [-1, wide] first): an int64 index would make
        # each compare 2-4x wider.
        def relative(bound: PrimExpr | None) -> ir.Value | None:
            if bound is None:
                return None
            top, none = E.IntImm(first.dtype, wide), E.IntImm(first.dtype, -1)
            value = self.emit(E.Max(E.Min(bound - first, top), none))
            return value if value.type == I32 else self.builder.trunc(value, I32)

        rel_lo, rel_hi = relative(lo), relative(hi)

        def outside(step: int, count: int) -> tuple[ir.Value | None, ir.Value | None]:
            offsets = ir.Constant(ir.VectorType(I32, count), [k * step for k in range(count)])
            below = above = None
            if rel_lo is not None:
                below = self.builder.icmp_signed("<", offsets, self.splat(rel_lo, count))
            if rel_hi is not None:
                above = self.builder.icmp_signed(">", offsets, self.splat(rel_hi, count))
            return below, above

        inside = ir.Constant(
            ir.VectorType(I1, wide), [int(k <= (n - 1) * stride) for k in range(wide)]
        )  # the span
        for out in outside(1, wide):
            if out is not None:
                inside = self.builder.and_(inside, self.builder.not_(out))
        # lane 0 may lie before the buffer (its lanes are masked off): not `inbounds`
        ptr = self.address(buffer, self.emit(base + first), base.dtype, elem, inbounds=False)
        vec = ir.VectorType(elem, wide)
        loaded = self.builder.call(
            self._masked_load(vec),
            [ptr, ir.Constant(I32, align), inside, ir.Constant(vec, ir.Undefined)],
        )
        if stride != 1:
            picks = ir.Constant(ir.VectorType(I32, n), [k * stride for k in range(n)])
            loaded = self.builder.shuffle_vector(loaded, ir.Constant(vec, ir.Undefined), picks)
        below, above = outside(stride, n)
        out = loaded
        if below is not None:
            out = self.builder.select(below, self.splat(edges[0], n), out)
        if above is not None:
            out = self.builder.select(above, self.splat(edges[1], n), out)
        return out

    def dense_load(self, buffer: Buffer, base: PrimExpr, lanes: int, elem: ir.Type) -> ir.Value:
        """`lanes` contiguous elements of `buffer` from element `base`; a lane count that
        is not a power of two is loaded in power-of-two pieces and concatenated.

        A register tile 14 columns wide is a ``<14 x float>`` per row.  Loaded or stored
        whole, LLVM widens the type to 16 lanes, cannot read 2 lanes past the row, and
        scalarizes the access; the tile's stack buffer then stays in memory (a 1x1 conv
        at width 14 on AVX2: 4x slower than with 8 + 4 + 2 lane pieces).

        Example:
            >>> cg.dense_load(A, i * 14, 14, F32)  # doctest: +SKIP
        """
        parts = []
        for offset, size in self._pieces(lanes, buffer):
            at = base if offset == 0 else base + offset
            ptr = self.address(buffer, self.emit_index(at), base.dtype, elem)
            align = self.vector_alignment(buffer, at)
            parts.append(self.builder.load(ptr, typ=ir.VectorType(elem, size), align=align))
        out = parts[0]
        for part in parts[1:]:
            out = self._concat(out, part)
        return out

    def dense_store(self, buffer: Buffer, base: PrimExpr, value: ir.Value, elem: ir.Type) -> None:
        """Store vector `value` to contiguous elements of `buffer` from `base`, in the
        power-of-two pieces of `dense_load`.

        Example:
            >>> cg.dense_store(A, i * 14, vec14, F32)  # doctest: +SKIP
        """
        lanes = value.type.count
        for offset, size in self._pieces(lanes, buffer):
            at = base if offset == 0 else base + offset
            ptr = self.address(buffer, self.emit_index(at), base.dtype, elem)
            part = value
            if size != lanes:
                picks = ir.Constant(ir.VectorType(I32, size), list(range(offset, offset + size)))
                undef = ir.Constant(value.type, ir.Undefined)
                part = self.builder.shuffle_vector(value, undef, picks)
            self.builder.store(part, ptr, align=self.vector_alignment(buffer, at))

    def _pieces(self, lanes: int, buffer: Buffer) -> list[tuple[int, int]]:
        """Whole when the vector fits a register or its lane count is a power of two (a
        ``<7 x float>`` on AVX2 stays whole: LLVM handles it well, and 4 + 2 + 1 pieces
        measured 2x slower); else `_pow2_pieces`."""
        bits = lanes * max(8, dt.bits(dt.element(buffer.dtype)))  # bool: a byte each
        if lanes & (lanes - 1) == 0 or bits <= self.vector_bits:
            return [(0, lanes)]
        return _pow2_pieces(lanes)

    def _masked_load(self, vec: ir.VectorType) -> ir.Function:
        """The `llvm.masked.load` intrinsic for vectors of type `vec` (declared once)."""
        mask = ir.VectorType(I1, vec.count)
        return self.declare(f"llvm.masked.load.{_suffix(vec)}.p0", vec, [PTR, I32, mask, vec])

    def _concat(self, head: ir.Value, tail: ir.Value) -> ir.Value:
        """`head ++ tail` for vectors with `tail` no longer than `head`."""
        n, m = head.type.count, tail.type.count
        if m < n:  # shufflevector takes operands of one type: widen the tail first
            widen = ir.Constant(ir.VectorType(I32, n), [*range(m), *([m] * (n - m))])
            tail = self.builder.shuffle_vector(tail, ir.Constant(tail.type, ir.Undefined), widen)
        picks = ir.Constant(ir.VectorType(I32, n + m), [*range(n), *range(n, n + m)])
        return self.builder.shuffle_vector(head, tail, picks)

    def _strided(self, buffer: Buffer, index: E.Ramp, elem: ir.Type, dtype: str) -> ir.Value:
        """`Ramp(base, s, n)` with a small constant stride: one masked load of the span the
        lanes cover (lanes past the last element masked off, so nothing is read beyond
        it), then a shuffle that keeps every `s`-th element (a stride-2 pooling or
        convolution window: two vector loads and a permute instead of `n` scalar loads)."""
        lanes, stride = dt.lanes(index.dtype), index.stride.value
        wide, span = lanes * stride, (lanes - 1) * stride + 1
        ptr = self.address(buffer, self.emit_index(index.base), index.base.dtype, elem)
        vec = ir.VectorType(elem, wide)
        fn = self._masked_load(vec)
        mask = ir.Constant(ir.VectorType(I1, wide), [int(k < span) for k in range(wide)])
        align = ir.Constant(I32, 4)  # 32-bit elements (`_is_short_stride`)
        loaded = self.builder.call(fn, [ptr, align, mask, ir.Constant(vec, ir.Undefined)])
        picks = ir.Constant(ir.VectorType(I32, lanes), [k * stride for k in range(lanes)])
        out = self.builder.shuffle_vector(loaded, ir.Constant(vec, ir.Undefined), picks)
        return self.from_memory(out, dtype)

    def _gather(
        self, buffer: Buffer, index: PrimExpr, elem: ir.Type, align: int, dtype: str
    ) -> ir.Value:
        lanes = dt.lanes(index.dtype)
        offsets = self.emit(index)
        out: ir.Value = ir.Constant(ir.VectorType(elem, lanes), ir.Undefined)
        for lane in range(lanes):
            at = ir.Constant(I32, lane)
            ptr = self.address(
                buffer, self.builder.extract_element(offsets, at), dt.element(index.dtype), elem
            )
            out = self.builder.insert_element(
                out, self.builder.load(ptr, typ=elem, align=align), at
            )
        return self.from_memory(out, dtype)


def _split_uniform(cond: PrimExpr) -> tuple[PrimExpr | None, PrimExpr | None]:
    """`(u, v)` with ``cond == Broadcast(u) && v`` for the terms of the conjunction `cond`
    that are the same in every lane (`u` scalar; None when there are none) and the rest
    (`v`; None when every term is uniform).

    Example:
        >>> i, ramp = E.Var("i"), E.Ramp(E.const(0), E.const(1), 8)
        >>> u, v = _split_uniform(E.And(E.Broadcast(i < 3, 8), ramp < E.Broadcast(E.const(5), 8)))
        >>> u.script(), v.dtype
        ('i < 3', 'boolx8')
    """
    terms: list[PrimExpr] = []

    def flatten(c: PrimExpr) -> None:
        if isinstance(c, E.And):
            flatten(c.a)
            flatten(c.b)
        else:
            terms.append(c)

    flatten(cond)
    uniform = [t.value for t in terms if isinstance(t, E.Broadcast)]
    varying = [t for t in terms if not isinstance(t, E.Broadcast)]
    if not uniform:
        return None, cond
    return _conjoin(uniform), (_conjoin(varying) if varying else None)


def _conjoin(terms: list[PrimExpr]) -> PrimExpr:
    out = terms[0]
    for t in terms[1:]:
        out = E.And(out, t)
    return out


def _clamped_ramp(
    index: PrimExpr, element_bits: int = 32
) -> tuple[PrimExpr, E.Ramp, PrimExpr | None, PrimExpr | None, bool] | None:
    """`(base, ramp, lo, hi, max_outer)` for ``Broadcast(base) + clamp(Ramp(r, s, n), lo,
    hi)`` (the clamp written ``max(min(., hi), lo)`` or ``min(max(., lo), hi)`` over
    broadcasts, or one side only: ``max(., lo)``, ``min(., hi)``, the other bound None;
    `base` may be absent: 0; `s` is 1, or a short stride that `_is_short_stride` takes),
    else None.

    Example:
        >>> _clamped_ramp(Broadcast(i, 8) + Max(Min(Ramp(j, 1, 8), Broadcast(27, 8)),
        ...     Broadcast(0, 8)))  # doctest: +SKIP
        (i, Ramp(j, 1, 8), 0, 27, True)
    """
    base: PrimExpr | None = None
    if isinstance(index, E.Add):
        for bcast, rest in ((index.a, index.b), (index.b, index.a)):
            if isinstance(bcast, E.Broadcast):
                base, index = bcast.value, rest
                break
        else:
            return None
    if not isinstance(index, E.Max | E.Min) or not isinstance(index.b, E.Broadcast):
        return None
    outer, inner = (E.Max, E.Min) if isinstance(index, E.Max) else (E.Min, E.Max)
    if isinstance(index.a, inner) and isinstance(index.a.b, E.Broadcast):
        ramp, first, second = index.a.a, index.a.b.value, index.b.value
        lo, hi = (second, first) if outer is E.Max else (first, second)
    else:  # one side: max(ramp, lo) or min(ramp, hi)
        ramp = index.a
        lo, hi = (index.b.value, None) if outer is E.Max else (None, index.b.value)
    if not (_is_dense(ramp) or _is_short_stride(ramp, element_bits)):
        return None
    zero = E.IntImm(ramp.base.dtype, 0)
    return (base if base is not None else zero), ramp, lo, hi, outer is E.Max


def _pow2_pieces(lanes: int) -> list[tuple[int, int]]:
    """`(offset, size)` power-of-two pieces of `lanes`, largest first (14: 8, 4, 2).

    Example:
        >>> _pow2_pieces(14)
        [(0, 8), (8, 4), (12, 2)]
    """
    pieces, offset = [], 0
    for bit in reversed(range(lanes.bit_length())):
        if lanes >> bit & 1:
            pieces.append((offset, 1 << bit))
            offset += 1 << bit
    return pieces


def _is_float(e: PrimExpr) -> bool:
    return dt.is_float(e.dtype)


def _unsigned(e: PrimExpr) -> bool:
    return dt.is_uint(e.dtype)


def _is_dense(index: PrimExpr) -> bool:
    """True for `Ramp(base, 1, n)`: a contiguous vector access."""
    return (
        isinstance(index, E.Ramp) and isinstance(index.stride, E.IntImm) and index.stride.value == 1
    )


def _is_short_stride(index: PrimExpr, element_bits: int) -> bool:
    """True for `Ramp(base, s, n)` with a constant stride of 2 to 4 over 32-bit elements
    and at most 64 elements spanned: `_strided` loads it as one masked vector."""
    if not (isinstance(index, E.Ramp) and isinstance(index.stride, E.IntImm)):
        return False
    stride = index.stride.value
    return 2 <= stride <= 4 and dt.lanes(index.dtype) * stride <= 64 and element_bits == 32


def _sum(terms: Any) -> PrimExpr:
    total: PrimExpr | None = None
    for term in terms:
        total = term if total is None else total + term
    assert total is not None
    return total


def _suffix(ty: ir.Type) -> str:
    """Intrinsic overload suffix: `f32`, `v16f32`, `f16`, `f64`."""
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{_suffix(ty.element)}"
    if isinstance(ty, ir.HalfType):
        return "f16"
    if isinstance(ty, ir.DoubleType):
        return "f64"
    if isinstance(ty, ir.FloatType):
        return "f32"
    return f"i{ty.width}"


def _make_cmp(op: str) -> Callable[[ExprCodegen, Any], ir.Value]:
    def hook(self: ExprCodegen, e: E.CmpOp) -> ir.Value:
        return self.compare(op, self.emit(e.a), self.emit(e.b), e.a.dtype)

    return hook


for _cls, _op in ((E.EQ, "=="), (E.NE, "!="), (E.LT, "<"), (E.LE, "<="), (E.GT, ">"), (E.GE, ">=")):
    setattr(ExprCodegen, f"visit_{_cls.__name__.lower()}_", _make_cmp(_op))


def _loads_memory(expr: PrimExpr) -> bool:
    """True when `expr` contains a `BufferLoad` (so evaluating it may touch memory)."""
    from unity.tir.functor import post_order_visit

    found: list[bool] = []
    post_order_visit(expr, lambda n: found.append(True) if isinstance(n, E.BufferLoad) else None)
    return bool(found)
