"""Kernels launched by a conv-bn-relu-add network (symbolic batch) before and after fusion.

The network: two 3x3 convolutions, each followed by a batch-norm folded into a per-channel
scale and shift, relu after the first, a residual add of the input and a final relu.  It
is legalized, then `AnnotateTIROpPattern -> FuseOps -> FuseTIR` run; the script prints the
number of `call_tir` launches and PrimFuncs before and after, the groups, and checks that
the VM gives the same results for two batch sizes.

Memory half: the batch gets an upper bound (``tir_var_upper_bound``); for the unfused and
the fused network it prints the intermediate memory before and after
`StaticPlanBlockMemory` + `KillAfterLastUse`: the bytes of live storage at the peak,
counted on the IR (a VM without planning holds every intermediate until it returns), and
measured in the VM's storage pool during a call (``pool.peak_bytes``; without planning
the VM still pools each intermediate and frees it after its last use).

Run: ``python bench/fusion_memory.py [channels] [size]``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import numpy as np
import sympy

import unity
from unity import tir
from unity.ir.module import IRModule
from unity.relax import BlockBuilder, Call, Var, op
from unity.relax import TensorStructInfo as TS
from unity.relax.struct_info import sym
from unity.relax.transform import (
    AnnotateTIROpPattern, CallTIRRewrite, FuseOps, FuseTIR, KillAfterLastUse, LegalizeOps,
    StaticPlanBlockMemory, ToNonDataflow,
)  # fmt: skip
from unity.relax.vm import alloc_tensor, memory
from unity.runtime.vm import VirtualMachine


def conv_bn_relu_add(channels: int, size: int) -> IRModule:
    """The network as relax ops, batch `n` symbolic."""
    x = Var("x", TS(("n", channels, size, size), "float32"))
    w1 = Var("w1", TS((channels, channels, 3, 3), "float32"))
    w2 = Var("w2", TS((channels, channels, 3, 3), "float32"))
    s1, b1, s2, b2 = (Var(k, TS((1, channels, 1, 1), "float32")) for k in ("s1", "b1", "s2", "b2"))
    bb = BlockBuilder()
    with bb.function("main", [x, w1, s1, b1, w2, s2, b2]):
        with bb.dataflow():
            y = bb.emit(op.nn.conv2d(x, w1, padding=1))
            y = bb.emit(op.nn.relu(bb.emit(op.add(bb.emit(op.multiply(y, s1)), b1))))
            y = bb.emit(op.nn.conv2d(y, w2, padding=1))
            y = bb.emit(op.add(bb.emit(op.multiply(y, s2)), b2))
            out = bb.emit_output(op.nn.relu(bb.emit(op.add(y, x))))
        bb.emit_func_output(out)
    return bb.get()


def launches(mod: IRModule) -> list[str]:
    """The PrimFunc each `call_tir` of main launches, in order."""
    values = [b.value for block in mod["main"].body.blocks for b in block.bindings]
    return [v.args[0].name_hint for v in values if isinstance(v, Call) and v.op is op.call_tir]


def kernels(mod: IRModule) -> int:
    """The number of PrimFuncs in `mod`."""
    return sum(isinstance(f, tir.PrimFunc) for f in mod.functions.values())


def run(mod: IRModule, inputs: list[np.ndarray]) -> np.ndarray:
    """Compile `mod` for the CPU and run main on `inputs`."""
    vm = VirtualMachine(unity.compile(mod), unity.cpu())
    return np.asarray(vm["main"](*inputs).numpy())


def lower(mod: IRModule, plan: bool) -> IRModule:
    """Explicit allocations (`CallTIRRewrite`), then memory planning when `plan`."""
    mod = CallTIRRewrite()(ToNonDataflow()(mod))
    return KillAfterLastUse()(StaticPlanBlockMemory()(mod)) if plan else mod


def intermediate_bytes(mod: IRModule, batch: int) -> int:
    """Bytes of main's intermediate storage at `batch`, read from the IR.

    Objects are planned storages and unplanned intermediate tensors (the output, even
    through an alias, is not intermediate).
    """
    body = mod["main"].body
    bindings = [b for block in body.blocks for b in block.bindings]
    root = {b.var: b.value for b in bindings if isinstance(b.value, Var)}
    out = body.body
    while out in root:
        out = root[out]
    total = 0
    for b in bindings:
        value = b.value
        if isinstance(value, Call) and value.op is memory.alloc_storage:
            total += _bytes(value.args[0].values, batch)
        elif isinstance(value, Call) and value.op is alloc_tensor and b.var is not out:
            total += np.dtype(value.args[1].value).itemsize * _bytes(value.args[0].values, batch)
    return total


def _bytes(dims: tuple[object, ...], batch: int) -> int:
    return int(np.prod([int(sympy.sympify(d).subs(sym("n"), batch)) for d in dims]))


def pool_peak(mod: IRModule, inputs: list[np.ndarray]) -> tuple[int, np.ndarray]:
    """Peak bytes taken from the VM's storage pool during one call, and the result."""
    vm = VirtualMachine(unity.compile(mod, pipeline=None), unity.cpu())
    vm.pool.peak_bytes = vm.pool.live_bytes
    out = np.asarray(vm["main"](*inputs).numpy())
    return vm.pool.peak_bytes, out


def with_bound(mod: IRModule, bound: int) -> IRModule:
    """`mod` whose main declares ``tir_var_upper_bound = {"n": bound}``."""
    mod = mod.copy()
    gv = mod.get_global_var("main")
    mod.update_func(gv, mod[gv].with_attr("tir_var_upper_bound", {"n": bound}))
    return mod


def memory_report(channels: int, size: int, bound: int = 16) -> None:
    """Print intermediate memory before and after planning; check the results agree."""
    unfused = LegalizeOps()(conv_bn_relu_add(channels, size))
    fused = FuseTIR()(FuseOps()(AnnotateTIROpPattern()(unfused)))
    print("intermediate memory, KiB: IR = bytes of intermediate tensors / storages allocated;")
    print("  pool = peak bytes live in the VM's storage pool during the call")
    print(f"  network  batch | no planning: IR   pool | planned: IR   pool | "
          f"planned, n <= {bound}: IR   pool")  # fmt: skip
    rng = np.random.default_rng(1)
    for label, mod in (("unfused", unfused), ("fused", fused)):
        variants = [lower(mod, False), lower(mod, True), lower(with_bound(mod, bound), True)]
        for batch in (1, bound):
            shapes = [(batch, channels, size, size), (channels, channels, 3, 3),
                      *[(1, channels, 1, 1)] * 2, (channels, channels, 3, 3),
                      *[(1, channels, 1, 1)] * 2]  # fmt: skip
            inputs = [rng.standard_normal(s).astype("float32") for s in shapes]
            cells, outs = [], []
            for variant in variants:
                peak, out = pool_peak(variant, inputs)
                outs.append(out)
                cells.append(f"{intermediate_bytes(variant, batch) / 1024:7.0f} {peak / 1024:6.0f}")
            assert all(np.array_equal(outs[0], o) for o in outs), "planning changed the results"
            print(f"  {label:8} {batch:5} |       {cells[0]} |  {cells[1]} |"
                  f"           {cells[2]}")  # fmt: skip
    print("  (results identical with and without planning)")


def main(channels: int = 8, size: int = 16) -> None:
    """Print launches and kernels before and after fusion; check the results agree."""
    before = LegalizeOps()(conv_bn_relu_add(channels, size))
    start = time.perf_counter()
    after = FuseTIR()(FuseOps()(AnnotateTIROpPattern()(before)))
    fuse_ms = (time.perf_counter() - start) * 1e3
    print(f"conv-bn-relu-add, batch n symbolic, {channels} channels, {size}x{size}")
    print(f"  before fusion: {len(launches(before))} launches of {kernels(before)} PrimFuncs")
    print(f"  after  fusion: {len(launches(after))} launches of {kernels(after)} PrimFuncs "
          f"({fuse_ms:.0f} ms for the three passes)")  # fmt: skip
    for name in launches(after):
        print(f"    {name}")
    rng = np.random.default_rng(0)
    for batch in (1, 3):
        shapes = [(batch, channels, size, size), (channels, channels, 3, 3), *[(1, channels, 1, 1)] * 2,
                  (channels, channels, 3, 3), *[(1, channels, 1, 1)] * 2]  # fmt: skip
        inputs = [rng.standard_normal(s).astype("float32") for s in shapes]
        diff = np.abs(run(after, inputs) - run(before, inputs)).max()
        print(f"  batch {batch}: max |fused - unfused| = {diff:.2e}")
        assert diff < 1e-4, "fusion changed the results"
    memory_report(channels, size)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
