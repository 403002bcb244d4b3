"""TIR (lowered form) -> LLVM IR with `llvmlite.ir.IRBuilder`.

Calling convention: each `PrimFunc` becomes::

    i32 name(ptr noalias p0, ..., ptr noalias pk, <scalar params>, <i64 shape vars>)

buffer data pointers first (parameter order), then scalar parameters (bool as i8,
float16/bfloat16/float32 as float, float64 as double, integers as themselves), then
one i64 per symbolic shape variable in `func.shape_vars()` order.  It returns 0, or
`k + 1` when the k-th `AssertStmt` (in emission order; messages go to the metadata)
fails.  Heap allocations live at that point are freed before returning.  The caller
(`unity.runtime`) checks shapes, dtypes and contiguity, so `noalias` holds unless the
same array is passed twice.

Parallel loops (`ForKind.PARALLEL`, outermost only) are outlined and launched with
libgomp's `GOMP_parallel`: see `unity.codegen.llvm_parallel`.

The kernels' module only declares the globals the runtime reads and writes
(`__unity_num_threads`); `globals_module` defines them, and the metadata, once per
library, so that kernels compiled as separate modules (in worker processes, see
`unity.codegen.build_jobs`) link into one.

Example:
    >>> cg = CodeGenLLVM(Target("llvm"))            # doctest: +SKIP
    >>> meta = cg.add_function("main", prim_func)   # doctest: +SKIP
    >>> print(cg.module)                            # doctest: +SKIP
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from llvmlite import ir

from unity.codegen.llvm_expr import I8, I32, I64, LIBM_FUNCTIONS, PTR, llvm_type
from unity.codegen.llvm_parallel import ParallelCodegen
from unity.codegen.llvm_run_kernels import add_run_kernels
from unity.codegen.metadata import function_metadata
from unity.ir import dtype as dt
from unity.ir.node import dispatch_table
from unity.runtime.module import METADATA_SYMBOL
from unity.runtime.thread_pool import NUM_THREADS_SYMBOL
from unity.target import Target
from unity.tir import expr as E
from unity.tir import stmt as S
from unity.tir.buffer import Buffer
from unity.tir.expr import PrimExpr, Var
from unity.tir.function import PrimFunc

STACK_LIMIT_BYTES = 64 * 1024
"""Constant-size allocations up to this size go on the stack, larger ones (of any scope:
a "local" buffer that did not shrink to a tile) on the heap; a worker thread's stack is
a few MB, and overflowing it kills the process."""


@dataclass
class _FunctionState:
    """Per LLVM function: where allocas go, live heap blocks, how a failed assert exits."""

    function: ir.Function
    entry: ir.IRBuilder
    status_ptr: ir.Value | None = None
    """None: return the status; else store it there and return void (outlined bodies)."""
    heap: list[ir.Value] = field(default_factory=list)


class CodeGenLLVM(ParallelCodegen):
    """Compile lowered `PrimFunc`s into one LLVM module.

    Example:
        >>> cg = CodeGenLLVM(Target("llvm"))  # doctest: +SKIP
    """

    def __init__(self, target: Target) -> None:
        self.target = target
        self.module = ir.Module(name="unity")
        self.module.triple = target.triple
        self.env: dict[Var, ir.Value] = {}
        self.allocated: set[Var] = set()
        self.vector_bits = 512 if target.has_feature("avx512f") else 256
        self.native_ldexp = target.has_feature("avx512f")
        self.memo: dict[PrimExpr, ir.Value] = {}
        self.where = "<module>"
        self.asserts: list[str] = []
        self.state: _FunctionState
        self.builder: ir.IRBuilder
        self._parallel_count = 0
        self._num_threads = ir.GlobalVariable(self.module, I32, NUM_THREADS_SYMBOL)  # declared

    # -- functions ------------------------------------------------------------------------
    def add_function(self, name: str, func: PrimFunc) -> dict[str, Any]:
        """Emit `func` as the symbol `name`; return its runtime metadata (JSON-able).

        A name the generated code itself uses (`free`, `erff`, ...) gets the symbol
        `__unity_fn_<name>` instead; the metadata records the symbol.

        Example:
            >>> meta = CodeGenLLVM(Target("llvm")).add_function("main", func)  # doctest: +SKIP
        """
        self.where, self.asserts, self.env = f"@{name}", [], {}
        symbol = f"__unity_fn_{name}" if _reserved(name) else name
        if symbol in self.module.globals:
            raise ValueError(f"codegen llvm: two functions are named {name!r}")
        buffers = func.buffer_params()
        scalars = [p for p in func.params if isinstance(p, Var)]
        shape_vars = func.shape_vars()
        arg_types = (
            [PTR] * len(buffers) + [_abi_type(v.dtype) for v in scalars] + [I64] * len(shape_vars)
        )
        fn = ir.Function(self.module, ir.FunctionType(I32, arg_types), symbol)
        args = list(fn.args)
        for arg, buf in zip(args, buffers):
            arg.name = buf.name
            arg.add_attribute("noalias")
        self._enter(fn, None)
        for buf, arg in zip(buffers, args):
            self.env[buf.data] = arg
        for var, arg in zip(scalars, args[len(buffers) :]):
            arg.name = var.name
            self.env[var] = self._from_abi(arg, var.dtype)
        for var, arg in zip(shape_vars, args[len(buffers) + len(scalars) :]):
            arg.name = var.name
            self.env.setdefault(var, self.cast(arg, "int64", var.dtype))
        self.visit_stmt(func.body)
        if not self.builder.block.is_terminated:
            self.builder.ret(ir.Constant(I32, 0))
        meta = function_metadata(name, func, shape_vars, self.asserts)
        meta["symbol"] = symbol
        meta["packed_symbol"] = self._packed_entry(fn)
        return meta

    def _packed_entry(self, fn: ir.Function) -> str:
        """Emit `i32 __unity_packed_<fn>(ptr args)`, which calls `fn` with its arguments
        read from consecutive 8-byte slots (pointers and integers as i64, floats as double,
        bool as the slot's first byte) and returns its status; return its symbol.  The VM
        fills the slots with one `struct.pack_into` and makes one ctypes call of one
        argument: a ctypes call converts each argument on its own (~0.1 us apiece)."""
        symbol = f"__unity_packed_{fn.name}"
        wrapper = ir.Function(self.module, ir.FunctionType(I32, [PTR]), symbol)
        b = ir.IRBuilder(wrapper.append_basic_block("entry"))
        values = []
        for i, ty in enumerate(fn.function_type.args):
            slot = b.gep(wrapper.args[0], [ir.Constant(I64, i)], source_etype=I64)
            if isinstance(ty, ir.FloatType):
                values.append(b.fptrunc(b.load(slot, typ=ir.DoubleType()), ty))
            else:  # a narrower integer is the slot's low bytes (the targets are little-endian)
                values.append(b.load(slot, typ=ty))
        b.ret(b.call(fn, values))
        return symbol

    def _enter(self, fn: ir.Function, status_ptr: ir.Value | None) -> None:
        """Start `fn`: an entry block holding only allocas, then a "start" block."""
        entry, start = fn.append_basic_block("entry"), fn.append_basic_block("start")
        ir.IRBuilder(entry).branch(start)
        self.builder = ir.IRBuilder(start)
        self.state = _FunctionState(fn, ir.IRBuilder(entry), status_ptr)

    def _from_abi(self, value: ir.Value, dtype: str) -> ir.Value:
        if dtype == "bool":
            return self.builder.icmp_unsigned("!=", value, ir.Constant(I8, 0))
        if dtype == "float16":
            return self.builder.fptrunc(value, llvm_type(dtype))
        return value

    # -- statements -----------------------------------------------------------------------
    def visit_stmt(self, stmt: S.Stmt) -> None:
        """Emit `stmt` at the builder's position.

        Example:
            >>> cg.visit_stmt(tir.Evaluate(tir.const(0)))  # doctest: +SKIP
        """
        self.memo.clear()
        dispatch_table(type(self), type(stmt))(self, stmt)

    def visit_stmt_(self, stmt: S.Stmt) -> None:
        raise self.error(f"cannot compile a {type(stmt).__name__} statement", stmt)

    def visit_block_(self, stmt: S.Stmt) -> None:
        raise self.error("blocks remain: run unity.tir.lower before codegen", stmt)

    visit_block_realize_ = visit_block_

    def visit_seq_stmt_(self, stmt: S.SeqStmt) -> None:
        for s in stmt.seq:
            self.visit_stmt(s)

    def visit_evaluate_(self, stmt: S.Evaluate) -> None:
        if not isinstance(stmt.value, (E.IntImm, E.FloatImm, E.StringImm)):
            self.emit(stmt.value)

    def visit_let_stmt_(self, stmt: S.LetStmt) -> None:
        self.env[stmt.var] = self.emit(stmt.value)
        self.visit_stmt(stmt.body)
        del self.env[stmt.var]

    def visit_buffer_store_(self, stmt: S.BufferStore) -> None:
        buffer = stmt.buffer
        if dt.element(stmt.value.dtype) != dt.element(buffer.dtype):
            msg = (
                f"stores a {stmt.value.dtype} value into {buffer.dtype} buffer {buffer.name}; "
                f'cast it first (T.Cast("{buffer.dtype}", value))'
            )
            raise self.error(msg, stmt)
        value = self.emit(stmt.value)
        index = self.flat_index(buffer, stmt.indices, stmt)
        elem = llvm_type(dt.element(buffer.dtype), memory=True)
        align = max(1, dt.bits(buffer.dtype) // 8)
        stored = self.to_memory(value, stmt.value.dtype)
        if dt.lanes(index.dtype) == 1:
            self.builder.store(
                stored, self.address(buffer, self.emit_index(index), index.dtype, elem), align=align
            )
        elif (
            isinstance(index, E.Ramp)
            and isinstance(index.stride, E.IntImm)
            and index.stride.value == 1
        ):
            self.dense_store(buffer, index.base, stored, elem)
        else:
            offsets = self.emit(index)
            for lane in range(dt.lanes(index.dtype)):
                at = ir.Constant(I32, lane)
                ptr = self.address(
                    buffer, self.builder.extract_element(offsets, at), dt.element(index.dtype), elem
                )
                self.builder.store(self.builder.extract_element(stored, at), ptr, align=align)

    def visit_if_then_else_(self, stmt: S.IfThenElse) -> None:
        cond = self.emit(stmt.condition)
        then_bb = self.builder.append_basic_block("if.then")
        else_bb = self.builder.append_basic_block("if.else") if stmt.else_case is not None else None
        end_bb = self.builder.append_basic_block("if.end")
        self.builder.cbranch(cond, then_bb, else_bb or end_bb)
        for bb, body in ((then_bb, stmt.then_case), (else_bb, stmt.else_case)):
            if bb is None or body is None:
                continue
            self.builder.position_at_end(bb)
            self.visit_stmt(body)
            if not self.builder.block.is_terminated:
                self.builder.branch(end_bb)
        self.builder.position_at_end(end_bb)

    def visit_while_(self, stmt: S.While) -> None:
        head, body, end = (
            self.builder.append_basic_block(n) for n in ("while.head", "while.body", "while.end")
        )
        self.builder.branch(head)
        self.builder.position_at_end(head)
        self.builder.cbranch(self.emit(stmt.condition), body, end)
        self.builder.position_at_end(body)
        self.visit_stmt(stmt.body)
        if not self.builder.block.is_terminated:
            self.builder.branch(head)
        self.builder.position_at_end(end)

    def visit_for_(self, stmt: S.For) -> None:
        if stmt.kind is S.ForKind.PARALLEL and self.state.status_ptr is None:
            self._parallel_for(stmt)
            return
        lo = self.emit(stmt.min)
        self._loop(stmt, lo, self.builder.add(lo, self.emit(stmt.extent)))

    def _loop(self, stmt: S.For, begin: ir.Value, end: ir.Value) -> None:
        """`for var in [begin, end): body` with a phi-node counter."""
        pre = self.builder.block
        name = stmt.loop_var.name
        head, body, exit_bb = (
            self.builder.append_basic_block(f"for.{part}.{name}")
            for part in ("head", "body", "end")
        )
        self.builder.branch(head)
        self.builder.position_at_end(head)
        counter = self.builder.phi(begin.type, name=name)
        counter.add_incoming(begin, pre)
        self.builder.cbranch(self.compare("<", counter, end, stmt.loop_var.dtype), body, exit_bb)
        self.builder.position_at_end(body)
        self.env[stmt.loop_var] = counter
        self.visit_stmt(stmt.body)
        del self.env[stmt.loop_var]
        if not self.builder.block.is_terminated:
            step = self.builder.add(counter, ir.Constant(begin.type, 1), flags=("nsw",))
            counter.add_incoming(step, self.builder.block)
            self.builder.branch(head)
        self.builder.position_at_end(exit_bb)

    def visit_assert_stmt_(self, stmt: S.AssertStmt) -> None:
        self.asserts.append(stmt.message)
        ok = self.builder.append_basic_block("assert.ok")
        fail = self.builder.append_basic_block("assert.fail")
        self.builder.cbranch(self.emit(stmt.condition), ok, fail)
        self.builder.position_at_end(fail)
        self._fail(ir.Constant(I32, len(self.asserts)))
        self.builder.position_at_end(ok)
        self.visit_stmt(stmt.body)

    def _fail(self, status: ir.Value) -> None:
        """Free live heap blocks and leave the function with `status`."""
        for block in reversed(self.state.heap):
            self.builder.call(self.declare("free", ir.VoidType(), [PTR]), [block])
        if self.state.status_ptr is None:
            self.builder.ret(status)
        else:
            self.builder.store(status, self.state.status_ptr)
            self.builder.ret_void()

    def visit_allocate_(self, stmt: S.Allocate) -> None:
        buffer = stmt.buffer
        elem = llvm_type(dt.element(buffer.dtype), memory=True)
        count = _const_elements(buffer)
        nbytes = None if count is None else count * max(1, dt.bits(buffer.dtype) // 8)
        on_stack = nbytes is not None and nbytes <= STACK_LIMIT_BYTES
        self.allocated.add(buffer.data)  # stack slots and heap blocks are 64-byte aligned
        if on_stack:
            assert count is not None
            self.env[buffer.data] = _alloca(
                self.state.entry, ir.ArrayType(elem, max(count, 1)), buffer.name
            )
            self.visit_stmt(stmt.body)
        else:
            self._heap_allocate(stmt, elem)
        del self.env[buffer.data]

    def _heap_allocate(self, stmt: S.Allocate, elem: ir.Type) -> None:
        """A buffer of symbolic or large size: on the heap, or, when its size is symbolic
        and within `STACK_LIMIT_BYTES` at run time, on the stack for the statement's
        extent (`_stack_or_heap`)."""
        buffer = stmt.buffer
        b = self.builder
        count = ir.Constant(I64, 1)
        for dim in buffer.shape:
            count = b.mul(count, self.cast(self.emit(dim), dim.dtype, "int64"))
        nbytes = b.mul(count, ir.Constant(I64, max(1, dt.bits(buffer.dtype) // 8)))
        rounded = b.and_(b.add(nbytes, ir.Constant(I64, 64)), ir.Constant(I64, -64))
        saved = None
        if _const_elements(buffer) is None:
            data, block, saved = self._stack_or_heap(nbytes, rounded, buffer.name)
        else:
            data = block = self._aligned_alloc(rounded, buffer.name)
        self.env[buffer.data] = data
        self.state.heap.append(block)
        self.visit_stmt(stmt.body)
        self.state.heap.pop()
        if not self.builder.block.is_terminated:
            self.builder.call(self.declare("free", ir.VoidType(), [PTR]), [block])
            if saved is not None:
                restore = self.declare("llvm.stackrestore.p0", ir.VoidType(), [PTR])
                self.builder.call(restore, [saved])

    def _stack_or_heap(
        self, nbytes: ir.Value, rounded: ir.Value, name: str
    ) -> tuple[ir.Value, ir.Value, ir.Value]:
        """`(data, heap block, saved stack pointer)` for `rounded` bytes: a dynamic
        `alloca` when `nbytes` is within `STACK_LIMIT_BYTES` (the heap block then null, so
        that `free` is a no-op), else `aligned_alloc`; the caller restores the stack
        pointer after the buffer's statement.  A per-task pad of a depthwise conv over a
        symbolic size was an `aligned_alloc` and a `free` per channel block: MobileNet
        v2's 3x3 at 7x7 ran 0.016 ms, now 0.012 (static 0.010)."""
        b = self.builder
        saved = b.call(self.declare("llvm.stacksave.p0", PTR, []), [])
        small = b.icmp_unsigned("<=", nbytes, ir.Constant(I64, STACK_LIMIT_BYTES))
        on_stack, on_heap, ready = (
            b.append_basic_block(n) for n in ("alloc.stack", "alloc.heap", "alloc.ready")
        )
        b.cbranch(small, on_stack, on_heap)
        b.position_at_end(on_stack)
        slot = b.alloca(ir.IntType(8), size=rounded, name=f"{name}.stack")
        slot.align = 64
        slot.type = PTR
        b.branch(ready)
        b.position_at_end(on_heap)
        block = self._aligned_alloc(rounded, name)
        heap_end = b.block
        b.branch(ready)
        b.position_at_end(ready)
        data = b.phi(PTR, name=name)
        data.add_incoming(slot, on_stack)
        data.add_incoming(block, heap_end)
        heap = b.phi(PTR, name=f"{name}.heap")
        heap.add_incoming(ir.Constant(PTR, None), on_stack)
        heap.add_incoming(block, heap_end)
        return data, heap, saved

    def _aligned_alloc(self, rounded: ir.Value, name: str) -> ir.Value:
        """`aligned_alloc(64, rounded)`, failing the function (out of memory) on null."""
        aligned_alloc = self.declare("aligned_alloc", PTR, [I64, I64])
        block = self.builder.call(aligned_alloc, [ir.Constant(I64, 64), rounded], name=name)
        self.asserts.append(f"out of memory allocating buffer {name}")
        status = ir.Constant(I32, len(self.asserts))
        ok, fail = (
            self.builder.append_basic_block("alloc.ok"),
            self.builder.append_basic_block("alloc.fail"),
        )
        self.builder.cbranch(
            self.builder.icmp_unsigned("!=", block, ir.Constant(PTR, None)), ok, fail
        )
        self.builder.position_at_end(fail)
        self._fail(status)
        self.builder.position_at_end(ok)
        return block

    def _slot(self, ty: ir.Type, name: str) -> ir.Value:
        """A stack slot in the current function's entry block."""
        return _alloca(self.state.entry, ty, name)


def globals_module(target: Target, metadata: dict[str, Any]) -> ir.Module:
    """The globals of a library, linked once beside its kernels' modules: the thread
    count the runtime sets (`__unity_num_threads`, 0 = one thread per core),
    `metadata` as JSON (`__unity_metadata`, read when an exported library is loaded) and
    the VM's run loop (`llvm_run_kernels`).

    Example:
        >>> text = str(globals_module(Target("llvm"), {"functions": {}}))
        >>> '@"__unity_num_threads" = global i32 0' in text, '@"__unity_metadata"' in text
        (True, True)
    """
    module = ir.Module(name="unity_globals")
    module.triple = target.triple
    threads = ir.GlobalVariable(module, I32, NUM_THREADS_SYMBOL)
    threads.initializer = ir.Constant(I32, 0)
    data = bytearray(json.dumps(metadata).encode()) + b"\0"
    blob = ir.GlobalVariable(module, ir.ArrayType(I8, len(data)), METADATA_SYMBOL)
    blob.initializer = ir.Constant(ir.ArrayType(I8, len(data)), data)
    blob.global_constant = True
    add_run_kernels(module)
    return module


def _reserved(name: str) -> bool:
    """True for names the generated code declares itself (C runtime, libgomp, libm)."""
    c_runtime = {
        "free",
        "aligned_alloc",
        "GOMP_parallel",
        "omp_get_num_threads",
        "omp_get_thread_num",
    }
    # LLVM lowers its math intrinsics (llvm.exp, llvm.pow, ...) to libm calls by these names,
    # so a kernel named `exp` would end up calling itself.
    intrinsic_libm = {"exp", "exp2", "exp10", "log", "log2", "log10", "sqrt", "pow", "sin",
                      "cos", "fabs", "floor", "ceil", "rint", "trunc", "round", "fma", "fmin",
                      "fmax", "ldexp", "frexp", "sincos"}  # fmt: skip
    libm = {
        n for short in LIBM_FUNCTIONS | intrinsic_libm for n in (short, short + "f", short + "l")
    }
    return name in c_runtime or name in libm or name.startswith(("llvm.", "__unity"))


def _alloca(entry: ir.IRBuilder, ty: ir.Type, name: str) -> ir.Value:
    """A 64-byte aligned stack slot in the entry block, typed as an opaque `ptr`."""
    entry.position_before(entry.function.entry_basic_block.terminator)
    slot = entry.alloca(ty, name=name)
    slot.align = 64
    slot.type = PTR  # llvmlite types allocas as typed pointers; LLVM has only `ptr`
    return slot


def _abi_type(dtype: str) -> ir.Type:
    """The type a scalar parameter is passed as (see the module docstring)."""
    if dtype == "bool":
        return I8
    if dtype in ("float16", "bfloat16"):
        return ir.FloatType()
    return llvm_type(dtype)


def _const_elements(buffer: Buffer) -> int | None:
    count = 1
    for dim in buffer.shape:
        if not isinstance(dim, E.IntImm):
            return None
        count *= dim.value
    return count
