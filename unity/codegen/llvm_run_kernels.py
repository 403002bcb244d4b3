"""The run loop every library carries: call a plan's packed kernel entries in order.

Defined once per library beside its globals (`llvm.globals_module`) as::

    i64 __unity_run_kernels(ptr plan, ptr slots)
    ; plan: i64 [n, entry_0, offset_0, entry_1, offset_1, ...]
    ; calls entry_k(slots + offset_k) for k = 0 .. n-1; returns 0, or
    ; (k + 1) << 32 | status for the first call returning a non-zero status

The VM (`unity.runtime.kernel_runs`) calls a whole run of kernels through it with one
ctypes call.

Example:
    >>> module = ir.Module()
    >>> add_run_kernels(module).name
    '__unity_run_kernels'
"""

from __future__ import annotations

from llvmlite import ir

from unity.codegen.llvm_expr import I8, I32, I64, PTR
from unity.runtime.kernel_runs import RUN_KERNELS_SYMBOL

__all__ = ["add_run_kernels"]


def add_run_kernels(module: ir.Module) -> ir.Function:
    """Define `__unity_run_kernels` (see the module docstring) in `module`.

    Example:
        >>> fn = add_run_kernels(ir.Module())
        >>> [str(a.type) for a in fn.args]
        ['ptr', 'ptr']
    """
    fn = ir.Function(module, ir.FunctionType(I64, [PTR, PTR]), RUN_KERNELS_SYMBOL)
    plan, slots = fn.args
    entry, loop, ok, fail, done = (
        fn.append_basic_block(n) for n in ("entry", "loop", "ok", "fail", "done")
    )
    b = ir.IRBuilder(entry)
    n = b.load(plan, typ=I64, name="n")
    b.cbranch(b.icmp_signed(">", n, I64(0)), loop, done)

    b.position_at_end(loop)
    i = b.phi(I64, name="i")
    i.add_incoming(I64(0), entry)
    word = b.add(b.shl(i, I64(1)), I64(1))
    entry_type = ir.FunctionType(I32, [PTR]).as_pointer()  # typed: the call reads its type
    kernel = b.load(b.gep(plan, [word], source_etype=I64), typ=entry_type, name="entry")
    offset = b.load(b.gep(plan, [b.add(word, I64(1))], source_etype=I64), typ=I64)
    args = b.gep(slots, [offset], source_etype=I8, name="args")
    status = b.call(kernel, [args], name="status")
    b.cbranch(b.icmp_signed("!=", status, I32(0)), fail, ok)

    b.position_at_end(ok)
    following = b.add(i, I64(1), name="next")
    i.add_incoming(following, ok)
    b.cbranch(b.icmp_signed("<", following, n), loop, done)

    b.position_at_end(fail)
    which = b.shl(b.add(i, I64(1)), I64(32))
    b.ret(b.or_(which, b.zext(status, I64)))

    b.position_at_end(done)
    b.ret(I64(0))
    return fn
