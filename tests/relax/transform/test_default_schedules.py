"""`DefaultSchedules`: `unity.compile` schedules every kernel and packs constant weights."""

from __future__ import annotations

import numpy as np

import unity
from unity import relax, te, topi
from unity.ir.module import IRModule
from unity.ir.pass_context import PassContext
from unity.relax import op
from unity.relax.pipeline import get_pipeline
from unity.relax.transform.default_schedules import DefaultSchedules
from unity.schedule.default.analysis import RuleContext
from unity.tir.function import PrimFunc

rng = np.random.default_rng(0)


def _add_relu() -> PrimFunc:
    a, b = te.placeholder((3, 70), name="a"), te.placeholder((3, 70), name="b")
    return te.create_prim_func([a, b, topi.nn.relu(topi.add(a, b))])


def _conv_ref(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    n, _, h, wd = a.shape
    padded = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd), np.float32)
    for ry in range(3):
        for rx in range(3):
            out += np.einsum(
                "nchw,oc->nohw", padded[:, :, ry : ry + h, rx : rx + wd], w[:, :, ry, rx]
            )
    return out


def test_pass_can_be_switched_off():
    mod = IRModule({"main": _add_relu()})
    with PassContext(config={"schedule.default.enabled": False}):
        assert DefaultSchedules()(mod) is mod
    assert DefaultSchedules()(mod)["main"].attrs["tir.is_scheduled"]


def test_compile_schedules_symbolic_batch_end_to_end():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 8, 12, 12), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((16, 8, 3, 3), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            y = bb.emit(op.nn.relu(op.nn.conv2d(x, w, padding=1)))
            out = bb.emit_output(op.nn.softmax(y, axis=-1))
        bb.emit_func_output(out)
    vm = relax.VirtualMachine(unity.compile(bb.get(), target="llvm"), unity.cpu())
    for n in (1, 3):
        a = rng.standard_normal((n, 8, 12, 12), dtype=np.float32)
        b = rng.standard_normal((16, 8, 3, 3), dtype=np.float32)
        ref = np.maximum(_conv_ref(a, b), 0)
        e = np.exp(ref - ref.max(-1, keepdims=True))
        np.testing.assert_allclose(
            vm["main"](a, b).numpy(), e / e.sum(-1, keepdims=True), rtol=1e-4, atol=1e-5
        )


def test_constant_weights_are_packed_at_compile_time():
    wv = rng.standard_normal((32, 16, 3, 3), dtype=np.float32)
    dv = rng.standard_normal((32, 48), dtype=np.float32)
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 16, 6, 6), "float32"))  # direct, not Winograd
    with bb.function("main", [x]):
        with bb.dataflow():
            z = bb.emit(op.nn.relu(op.nn.conv2d(x, relax.Constant(wv), padding=1)))
            t = bb.emit(op.permute_dims(op.reshape(z, (32, 36))))
            out = bb.emit_output(op.matmul(t, relax.Constant(dv)))
        bb.emit_func_output(out)
    mod = bb.get()
    lowered = get_pipeline()(mod)
    names = {gv.name_hint: f for gv, f in lowered.items()}
    packed = [n for n in names if n.endswith("_prepacked")]
    assert len(packed) == 2
    assert not [n for n in names if n + "_prepacked" in names]  # the unpacked kernels are gone
    conv = next(f for n, f in names.items() if "conv2d" in n)
    # the conv runs on channel-blocked data: [O/t, C/b, R, S, b, t]
    blocks, cb, r, s, b, tile = (int(d.value) for d in conv.params[1].shape)
    lanes = RuleContext.for_target().lanes
    assert (cb * b, r, s, b) == (16, 3, 3, lanes) and blocks * tile == 32
    assert tile == min(32, 2 * lanes)  # two vectors of output channels per register tile
    vm = relax.VirtualMachine(unity.compile(mod), unity.cpu())
    a = rng.standard_normal((1, 16, 6, 6), dtype=np.float32)
    ref = np.maximum(_conv_ref(a, wv), 0).reshape(32, 36).T @ dv
    np.testing.assert_allclose(vm["main"](a).numpy(), ref, rtol=1e-4, atol=1e-3)


def test_a_conv_over_a_symbolic_batch_gets_the_tiled_schedule_and_packed_weights():
    """Models exported with a dynamic batch: the conv of ``(n, 32, 28, 28)`` data is tiled
    like a batch-1 conv (it ran as a plain loop nest, 20x slower on a ResNet-18), or runs
    as Winograd over ``n`` images' tiles.  64 channels in and out: the fewest that take
    Winograd (fewer keep the direct form)."""
    wv = rng.standard_normal((64, 64, 3, 3), dtype=np.float32)
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 64, 28, 28), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(op.nn.relu(op.nn.conv2d(x, relax.Constant(wv), padding=1)))
        bb.emit_func_output(out)
    mod = bb.get()
    direct = unity.transform.PassContext(disabled_pass=["Conv2dWinograd"])
    with direct:
        names = [gv.name_hint for gv, _ in get_pipeline()(mod).items()]
        assert [n for n in names if "conv2d" in n and n.endswith("_prepacked")]
        vm_direct = relax.VirtualMachine(unity.compile(mod), unity.cpu())
    lowered = get_pipeline()(mod)  # Winograd: its tile rows are `batch` images' tiles
    (matmul,) = [f for gv, f in lowered.items() if gv.name_hint.startswith("winograd_matmul")]
    assert "n" in str(matmul.params[0].shape[2])
    vm = relax.VirtualMachine(unity.compile(mod), unity.cpu())
    for n in (1, 3):
        a = rng.standard_normal((n, 64, 28, 28), dtype=np.float32)
        want = np.maximum(_conv_ref(a, wv), 0)
        np.testing.assert_allclose(vm_direct["main"](a).numpy(), want, rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(vm["main"](a).numpy(), want, rtol=1e-4, atol=1e-3)


def test_a_conv_over_a_symbolic_width_gets_row_tiles_with_a_guarded_last_one():
    """wav2vec 2.0's feature encoder: 1 x 3 convs of stride 2 over a run-time number of
    samples.  They ran as plain loop nests (12x slower than onnxruntime)."""
    wv = rng.standard_normal((32, 16, 1, 3), dtype=np.float32)
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(("n", 16, 1, "w"), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(op.nn.conv2d(x, relax.Constant(wv), strides=(1, 2)))
        bb.emit_func_output(out)
    mod = bb.get()
    names = [gv.name_hint for gv, _ in get_pipeline()(mod).items()]
    assert [n for n in names if "conv2d" in n and n.endswith("_prepacked")]
    vm = relax.VirtualMachine(unity.compile(mod), unity.cpu())
    for n, width in ((1, 7), (2, 40)):
        a = rng.standard_normal((n, 16, 1, width), dtype=np.float32)
        taps = [a[..., k : k + width - 2 : 2] for k in range(3)]
        want = sum(np.einsum("nchw,oc->nohw", taps[k], wv[:, :, 0, k]) for k in range(3))
        np.testing.assert_allclose(vm["main"](a).numpy(), want, rtol=1e-4, atol=1e-4)


def test_a_constant_bound_to_a_variable_is_packed_and_the_binding_dropped():
    """`FoldConstant` leaves ``lv = R.const(W.T)``: the call passes `lv`, not the constant
    (ONNX Gemm with transB). The GEMV still gets the packed weight, and the unpacked
    copy does not stay in the executable."""
    wv = rng.standard_normal((64, 96), dtype=np.float32)
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 96), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(op.matmul(x, op.permute_dims(relax.Constant(wv))))
        bb.emit_func_output(out)
    with PassContext(opt_level=2):
        lowered = get_pipeline()(bb.get())
        ex = unity.compile(bb.get())
    assert [gv.name_hint for gv in lowered.get_global_vars() if "prepacked" in gv.name_hint]
    text = lowered["main"].script()
    assert text.count("R.const") == 1  # the packed weight only
    a = rng.standard_normal((1, 96), dtype=np.float32)
    np.testing.assert_allclose(
        relax.VirtualMachine(ex, unity.cpu())["main"](a).numpy(), a @ wv.T, rtol=1e-4, atol=1e-4
    )
