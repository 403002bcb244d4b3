"""Measure the machine's float32 FMA peak: independent vector FMAs on every core.

The kernel (llvmlite IR, no unity codegen involved) keeps `accumulators` independent
`<lanes x float>` accumulators and runs `acc = fma(acc, x, y)` on each per iteration, so
neither FMA latency nor memory limits it; one Python thread per core calls it through
ctypes (which releases the GIL).  Every kernel bench reports its speed as a share of
this figure, measured in the same run.

What the figure is, on the 2-core AMD EPYC (Zen 4, family 25 model 17) VM here:
``python bench/peak.py --sweep`` gives the same ~116 GFLOP/s per core for 8 or 16
lanes (256- or 512-bit vectors) and 8 to 32 accumulators, and the clock estimate
(a chain of dependent integer adds, one per cycle) says ~3.6 GHz: 32 flop/cycle/core.
That is Zen 4's design: two 256-bit FMA pipes, a 512-bit FMA issued as two halves, so
16 float32 FMAs per cycle.  The 2-core peak is therefore ~230 GFLOP/s, not the ~520
once quoted (that needs 64 flop/cycle/core: two full 512-bit FMA units, as on Intel
server cores).  Lower figures mean other jobs share the cores: benches interleave
peak measurements with their own and keep the best.

On an AVX2 machine (Zen 3, 16 vector registers) 16 accumulators do not fit in the
registers: the loop spills and measures a third of the peak (~30 against ~92
GFLOP/s per core at 2.9 GHz).  So the kernel uses the host's vector width and the
best of 8 and 12 accumulators, which fit in 16 registers and cover the FMA latency
(4 cycles x 2 pipes) on every x86 core seen here.

On the 2-core Intel Sapphire Rapids VM (AMX, AVX-512; LLVM calls it rocketlake) the
sweep gives ~210 GFLOP/s per core with 512-bit vectors and 8 to 24 accumulators (half
that with 256-bit) at ~3.65 GHz: ~60 flop/cycle/core, two full 512-bit FMA units, a
2-core peak of ~430-475.  Its cores fold `add reg, imm` chains at rename (the clock
read 21 GHz), so the clock kernel adds a register instead.

Run: ``python bench/peak.py [--sweep]``
"""

from __future__ import annotations

import argparse
import ctypes
import functools
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

LANES = 16 if Target("llvm").has_feature("avx512f") else 8
"""float32 lanes of the host's widest vector register."""
ACCUMULATORS = (8, 12)
"""Independent accumulator chains tried (the best counts): both fit in 16 registers."""
CHAIN = 200
"""Dependent adds per iteration of the clock kernel."""

_KEEP: list[object] = []


def _fma_kernel(lanes: int, accumulators: int) -> ir.Module:
    """`void fma_loop(i64 iters, ptr out)`: `accumulators` chains of vector FMAs."""
    module = ir.Module("peak")
    vec = ir.VectorType(ir.FloatType(), lanes)
    i64 = ir.IntType(64)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [i64, ir.PointerType()]), "fma_loop")
    fma = ir.Function(module, ir.FunctionType(vec, [vec, vec, vec]), f"llvm.fma.v{lanes}f32")
    entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    x = ir.Constant(vec, [1.0000001] * lanes)
    y = ir.Constant(vec, [1e-7] * lanes)
    b.branch(loop)
    b.position_at_end(loop)
    counter = b.phi(i64)
    counter.add_incoming(ir.Constant(i64, 0), entry)
    accs = []
    for k in range(accumulators):
        phi = b.phi(vec)
        phi.add_incoming(ir.Constant(vec, [float(k)] * lanes), entry)
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


def _clock_kernel() -> ir.Module:
    """`i64 add_chain(i64 iters)`: CHAIN dependent one-cycle adds per iteration (x86)."""
    module = ir.Module("clock")
    i64 = ir.IntType(64)
    fn = ir.Function(module, ir.FunctionType(i64, [i64]), "add_chain")
    entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    counter, value = b.phi(i64), b.phi(i64)
    counter.add_incoming(ir.Constant(i64, 0), entry)
    value.add_incoming(ir.Constant(i64, 0), entry)
    # `add reg, reg`, not `add $1, reg`: Golden Cove cores fold immediate adds at rename
    adds = ir.InlineAsm(ir.FunctionType(i64, [i64, i64]), "add $2, $0\n" * CHAIN, "=r,0,r,~{flags}")
    result = b.call(adds, [value, ir.Constant(i64, 1)])
    value.add_incoming(result, loop)
    step = b.add(counter, ir.Constant(i64, 1))
    counter.add_incoming(step, loop)
    b.cbranch(b.icmp_signed("<", step, fn.args[0]), loop, done)
    b.position_at_end(done)
    b.ret(result)
    return module


def _jit(module: ir.Module, symbol: str, ctype: type) -> ctypes._CFuncPtr:
    target = Target("llvm")
    machine = new_target_machine(target, jit=True)  # initializes the native target
    llvm.initialize_native_asmparser()  # for the inline asm of the clock kernel
    engine = llvm.create_mcjit_compiler(optimize(module, target), machine)
    engine.finalize_object()
    _KEEP.append(engine)
    return ctype(engine.get_function_address(symbol))


@functools.cache
def _clock_function() -> ctypes._CFuncPtr:
    return _jit(_clock_kernel(), "add_chain", ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64))


@functools.cache
def _fma_function(lanes: int, accumulators: int) -> ctypes._CFuncPtr:
    proto = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)
    return _jit(_fma_kernel(lanes, accumulators), "fma_loop", proto)


def measure_peak_gflops(
    seconds: float = 0.2,
    threads: int | None = None,
    tries: int = 3,
    lanes: int = LANES,
    accumulators: int | tuple[int, ...] = ACCUMULATORS,
) -> float:
    """float32 FMA GFLOP/s of `threads` cores (default all): the best of `tries` runs of
    about `seconds` each (the machine is shared; the best run is the least disturbed),
    for each count of accumulator chains in `accumulators`.

    Example:
        >>> measure_peak_gflops(seconds=0.05, threads=1) > 1.0  # doctest: +SKIP
        True
    """
    if isinstance(accumulators, tuple):
        return max(measure_peak_gflops(seconds, threads, tries, lanes, a) for a in accumulators)
    kernel = _fma_function(lanes, accumulators)
    out = (ctypes.c_float * (lanes * 64))()
    kernel(1000, out)
    start = time.perf_counter()
    kernel(20_000, out)
    per_iter = (time.perf_counter() - start) / 20_000
    iters = max(1000, int(seconds / per_iter))
    threads = threads or num_cores()
    flops_per_iter = 2 * lanes * accumulators
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
        best = max(best, flops_per_iter * iters * threads / (time.perf_counter() - start) / 1e9)
    return best


def measure_ghz(seconds: float = 0.1, tries: int = 5) -> float:
    """The core clock in GHz, from a chain of dependent adds (one per cycle); best of `tries`.

    Example:
        >>> 0.5 < measure_ghz() < 10  # doctest: +SKIP
        True
    """
    kernel = _clock_function()
    iters = max(100, int(seconds * 3e9 / CHAIN))
    best = 0.0
    for _ in range(tries):
        start = time.perf_counter()
        kernel(iters)
        best = max(best, iters * CHAIN / (time.perf_counter() - start) / 1e9)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", action="store_true", help="vector widths x accumulators")
    args = parser.parse_args()
    ghz = single = 0.0
    for _ in range(20):  # short interleaved bursts: the least disturbed ones agree
        ghz = max(ghz, measure_ghz(seconds=0.01, tries=1))
        single = max(single, measure_peak_gflops(seconds=0.01, threads=1, tries=1))
    full = measure_peak_gflops()
    print(f"float32 FMA peak: {full:.1f} GFLOP/s on {num_cores()} cores ({single:.1f} on one)")
    print(f"clock ~{ghz:.2f} GHz: {single / ghz:.1f} flop/cycle/core (both lower when shared)")
    if args.sweep:
        print("one core, GFLOP/s by vector width and independent accumulators:")
        for lanes in (8, 16):
            row = [measure_peak_gflops(0.1, 1, 3, lanes, acc) for acc in (4, 8, 16, 24, 32)]
            cells = "  ".join(f"{acc:2d} acc {g:6.1f}" for acc, g in zip((4, 8, 16, 24, 32), row))
            print(f"  {lanes * 32:3d}-bit: {cells}")


if __name__ == "__main__":
    main()
