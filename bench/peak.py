"""Measure the machine's float32 FMA peak: independent vector FMAs on every core.

The kernel (llvmlite IR, no unity codegen involved) keeps 16 independent
`<16 x float>` accumulators and runs `acc = fma(acc, x, y)` on each per iteration, so
neither FMA latency nor memory limits it; one Python thread per core calls it through
ctypes (which releases the GIL).  Every kernel bench reports its speed as a share of
this figure, measured in the same run.

Run: ``python bench/peak.py``
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import llvmlite.binding as llvm
from llvmlite import ir

from unity.codegen.llvm_jit import new_target_machine, optimize
from unity.runtime.thread_pool import num_cores
from unity.target import Target

LANES, ACCUMULATORS = 16, 16
FLOPS_PER_ITER = 2 * LANES * ACCUMULATORS


def _fma_kernel() -> ir.Module:
    """`void fma_loop(i64 iters, ptr out)`: ACCUMULATORS chains of vector FMAs."""
    module = ir.Module("peak")
    vec = ir.VectorType(ir.FloatType(), LANES)
    i64 = ir.IntType(64)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [i64, ir.PointerType()]), "fma_loop")
    fma = ir.Function(module, ir.FunctionType(vec, [vec, vec, vec]), f"llvm.fma.v{LANES}f32")
    entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    x = ir.Constant(vec, [1.0000001] * LANES)
    y = ir.Constant(vec, [1e-7] * LANES)
    b.branch(loop)
    b.position_at_end(loop)
    counter = b.phi(i64)
    counter.add_incoming(ir.Constant(i64, 0), entry)
    accs = []
    for k in range(ACCUMULATORS):
        phi = b.phi(vec)
        phi.add_incoming(ir.Constant(vec, [float(k)] * LANES), entry)
        accs.append(phi)
    new = [b.call(fma, [acc, x, y]) for acc in accs]
    for phi, value in zip(accs, new):
        phi.add_incoming(value, loop)
    step = b.add(counter, ir.Constant(i64, 1))
    counter.add_incoming(step, loop)
    b.cbranch(b.icmp_signed("<", step, fn.args[0]), loop, done)
    b.position_at_end(done)
    total = new[0]
    for value in new[1:]:
        total = b.fadd(total, value)
    b.store(total, fn.args[1], align=4)
    b.ret_void()
    return module


_KEEP: list[object] = []


def measure_peak_gflops(seconds: float = 0.2, threads: int | None = None, tries: int = 3) -> float:
    """float32 FMA GFLOP/s of `threads` cores (default all): the best of `tries` runs of
    about `seconds` each (the machine is shared; the best run is the least disturbed)."""
    target = Target("llvm")
    ref = optimize(_fma_kernel(), target)
    engine = llvm.create_mcjit_compiler(
        ref, new_target_machine(target, jit=True)
    )  # the engine owns its machine
    engine.finalize_object()
    _KEEP.append(engine)
    kernel = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)(
        engine.get_function_address("fma_loop")
    )
    out = (ctypes.c_float * (LANES * 64))()
    kernel(1000, out)
    start = time.perf_counter()
    kernel(100_000, out)
    per_iter = (time.perf_counter() - start) / 100_000
    iters = max(1000, int(seconds / per_iter))
    threads = threads or num_cores()
    best = 0.0
    for _ in range(tries):
        workers = [
            threading.Thread(target=kernel, args=(iters, ctypes.byref(out, 64 * k)))
            for k in range(threads)
        ]
        start = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        best = max(best, FLOPS_PER_ITER * iters * threads / (time.perf_counter() - start) / 1e9)
    return best


def main() -> None:
    single = measure_peak_gflops(threads=1)
    full = measure_peak_gflops()
    print(f"float32 FMA peak: {full:.1f} GFLOP/s on {num_cores()} cores ({single:.1f} on one)")
    print("(Zen 4 runs a 512-bit FMA on two 256-bit pipes: 32 flop/cycle/core, about")
    print(" 115-130 GFLOP/s per core at 3.6-4 GHz; other jobs on a shared machine lower it)")


if __name__ == "__main__":
    main()
