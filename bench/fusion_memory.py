"""Kernels launched by a conv-bn-relu-add network (symbolic batch) before and after fusion.

The network: two 3x3 convolutions, each followed by a batch-norm folded into a per-channel
scale and shift, relu after the first, a residual add of the input and a final relu.  It
is legalized, then `AnnotateTIROpPattern -> FuseOps -> FuseTIR` run; the script prints the
number of `call_tir` launches and PrimFuncs before and after, the groups, and checks that
the VM gives the same results for two batch sizes.  (Peak intermediate memory before and
after memory planning is the other half of issue 6, added with `StaticPlanBlockMemory`.)

Run: ``python bench/fusion_memory.py [channels] [size]``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import numpy as np

import unity
from unity import tir
from unity.ir.module import IRModule
from unity.relax import BlockBuilder, Call, Var, op
from unity.relax import TensorStructInfo as TS
from unity.relax.transform import AnnotateTIROpPattern, FuseOps, FuseTIR, LegalizeOps
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


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
