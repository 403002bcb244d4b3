"""FuseTIR: groups that fuse to structurally equal PrimFuncs share one PrimFunc."""

from __future__ import annotations

import numpy as np

import unity
from unity import tir
from unity.ir.module import IRModule
from unity.relax import BlockBuilder, Call, Tuple, Var, op
from unity.relax import TensorStructInfo as TS
from unity.relax.analysis import well_formed
from unity.relax.transform import AnnotateTIROpPattern, FuseOps, FuseTIR, LegalizeOps
from unity.runtime.vm import VirtualMachine

RNG = np.random.default_rng(5)


def _two_add_relu_branches(x_shape: tuple, y_shape: tuple) -> IRModule:
    """main(x, y, b) = (relu(x + b), relu(y + b)): two separate groups of one kind."""
    x, y = Var("x", TS(x_shape, "float32")), Var("y", TS(y_shape, "float32"))
    b = Var("b", TS((4,), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x, y, b]):
        with bb.dataflow():
            u = bb.emit(op.nn.relu(bb.emit(op.add(x, b))))
            v = bb.emit(op.nn.relu(bb.emit(op.add(y, b))))
            out = bb.emit_output(Tuple((u, v)))
        bb.emit_func_output(out)
    return AnnotateTIROpPattern()(LegalizeOps()(bb.get()))


def _prim_funcs(mod: IRModule) -> list[str]:
    return [gv.name_hint for gv, f in mod.items() if isinstance(f, tir.PrimFunc)]


def _callees(mod: IRModule) -> list[str]:
    values = [b.value for block in mod["main"].body.blocks for b in block.bindings]
    return [v.args[0].name_hint for v in values if isinstance(v, Call) and v.op is op.call_tir]


def _run(mod: IRModule, *args: np.ndarray) -> list[np.ndarray]:
    vm = VirtualMachine(unity.compile(mod), unity.cpu())
    return [np.asarray(t.numpy()) for t in vm["main"](*args)]


def test_equal_groups_share_one_prim_func_and_compute_the_same():
    after = FuseTIR()(FuseOps()(_two_add_relu_branches((3, 4), (3, 4))))
    assert well_formed(after)
    (name,) = _prim_funcs(after)
    assert _callees(after) == [name, name]
    x, y, b = (RNG.standard_normal(s).astype("float32") for s in ((3, 4), (3, 4), (4,)))
    u, v = _run(after, x, y, b)
    np.testing.assert_allclose(u, np.maximum(x + b, 0), rtol=1e-6)
    np.testing.assert_allclose(v, np.maximum(y + b, 0), rtol=1e-6)


def test_groups_equal_up_to_their_shape_symbols_share_one_and_bind_their_own_shapes():
    after = FuseTIR()(FuseOps()(_two_add_relu_branches(("n", 4), ("m", 4))))
    assert len(_prim_funcs(after)) == 1
    x, y, b = (RNG.standard_normal(s).astype("float32") for s in ((2, 4), (5, 4), (4,)))
    u, v = _run(after, x, y, b)
    np.testing.assert_allclose(u, np.maximum(x + b, 0), rtol=1e-6)
    np.testing.assert_allclose(v, np.maximum(y + b, 0), rtol=1e-6)


def test_groups_of_different_shapes_keep_their_own_prim_funcs():
    after = FuseTIR()(FuseOps()(_two_add_relu_branches((3, 4), (2, 4))))
    assert len(_prim_funcs(after)) == 2
