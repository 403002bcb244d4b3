"""VM overhead per kernel call: a chain of 50 tiny elementwise kernels on a symbolic shape.

The relax function is ``y = x; y = y + x`` fifty times over a (n,) float32 tensor
(n = 16, so the kernels themselves take a few hundred nanoseconds).  It reports:

- the VM call (`vm["main"](x)`) per kernel,
- the same 50 kernels called straight through ctypes with prepared arguments,
- the difference: what the VM adds per kernel call (input checks, shape slots,
  storage pool, pointers, the call itself, wrapping the output), in microseconds;
- for scale, the checked `PackedFunc` call (`lib["add"](a, b, c)`) per kernel.

Run: ``python bench/vm_overhead.py``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import numpy as np

import unity
from unity import relax
from unity.relax import op

CHAIN = 50
N = 16


def chain_module() -> unity.IRModule:
    """``main(x: (n,)) = x + x + ... + x`` as 50 separate add kernels."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n",), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y = x
            for _ in range(CHAIN - 1):
                y = bb.emit(op.add(y, x))
            y = bb.emit_output(op.add(y, x))
        bb.emit_func_output(y)
    return bb.get()


def best_of(fn, runs: int = 200, repeat: int = 7) -> float:
    """Best mean seconds per call of `fn` over `repeat` rounds of `runs` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(runs):
            fn()
        best = min(best, (time.perf_counter() - start) / runs)
    return best


def main() -> None:
    # opt_level 0: no fusion, so the VM really makes 50 kernel calls (measured here)
    with unity.transform.PassContext(opt_level=0):
        ex = unity.compile(chain_module(), target="llvm")
    vm = relax.VirtualMachine(ex, unity.cpu())
    x = np.random.default_rng(0).random(N, dtype=np.float32)
    out = vm["main"](x).numpy()
    np.testing.assert_allclose(out, x * (CHAIN + 1), rtol=1e-5)
    kernels = sorted(
        {ins[1] for ins in ex.program["functions"]["main"]["code"] if ins[0] == "kernel"}
    )
    assert len(kernels) == 1, kernels  # LegalizeOps merged the 50 identical PrimFuncs
    packed = ex.kernels[kernels[0]]
    a, b, c = x.copy(), x.copy(), np.empty_like(x)
    pa, pb, pc = (arr.ctypes.data for arr in (a, b, c))
    cfunc = packed.c_function

    def raw_chain() -> None:
        for _ in range(CHAIN):
            cfunc(pa, pb, pc, N)

    def checked_chain() -> None:
        for _ in range(CHAIN):
            packed(a, b, c)

    main_fn = vm["main"]
    t_vm = best_of(lambda: main_fn(x))
    t_raw = best_of(raw_chain)
    t_checked = best_of(checked_chain, runs=50)
    per_vm = t_vm / CHAIN * 1e6
    per_raw = t_raw / CHAIN * 1e6
    print(f"chain of {CHAIN} add kernels on ({N},) float32")
    print(f"  VM call, per kernel:                    {per_vm:7.2f} us")
    print(f"  raw ctypes kernel call, per kernel:     {per_raw:7.2f} us")
    print(f"  VM overhead per kernel call:            {per_vm - per_raw:7.2f} us")
    print(f"  checked PackedFunc call, per kernel:    {t_checked / CHAIN * 1e6:7.2f} us")


if __name__ == "__main__":
    main()
