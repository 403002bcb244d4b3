"""Search spaces: every knob setting the templates accept keeps the result."""

import random

import numpy as np
import pytest

import unity
from tests.tune.helpers import matmul
from unity import te
from unity.ir.module import IRModule
from unity.schedule.default.analysis import RuleContext
from unity.schedule.error import ScheduleError
from unity.tune.space import Candidate, spaces_for


def dense_relu(n: int, m: int, k: int):
    """`relu(A @ W.T + bias)`: B indexed `[j, k]` and an epilogue to take into the tile."""
    A = te.placeholder((n, k), name="A")
    W = te.placeholder((m, k), name="W")
    bias = te.placeholder((m,), name="bias")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * W[j, r], axis=r), name="C")
    D = te.compute((n, m), lambda i, j: te.max(C[i, j] + bias[j], 0.0), name="D")
    return te.create_prim_func([A, W, bias, D]), lambda a, w, b: np.maximum(a @ w.T + b, 0)


def run(func, args):
    lib = unity.build(IRModule({"main": func}), "llvm")
    lib["main"](*args)
    return args[-1]


def test_matmul_gets_the_rules_and_the_tiled_space():
    func = matmul(32, 48, 16)
    rules, tiled = spaces_for(func)
    assert rules.name == "rules" and tiled.name == "matmul"
    assert tiled.choices["ti"] == (1, 2, 4, 8, 16) and tiled.choices["kb"] == (None,)
    assert all(48 % t == 0 for t in tiled.choices["tj"])


def test_elementwise_gets_only_the_rules_space():
    A = te.placeholder((64,), name="A")
    func = te.create_prim_func([A, te.compute((64,), lambda i: A[i] + 1.0, name="B")])
    assert [s.name for s in spaces_for(func)] == ["rules"]


@pytest.mark.parametrize("shape", [(32, 32, 32), (16, 48, 64)])
def test_random_matmul_candidates_keep_the_result(shape):
    n, m, k = shape
    func = matmul(n, m, k)
    rng = np.random.default_rng(0)
    a, b = (
        rng.standard_normal((n, k), dtype=np.float32),
        rng.standard_normal((k, m), dtype=np.float32),
    )
    pick = random.Random(1)
    for space in spaces_for(func):
        for _ in range(3):
            cand = space.sample(pick)
            scheduled, _ = space.apply(func, cand.knobs)
            out = run(scheduled, [a, b, np.zeros((n, m), np.float32)])
            np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4, err_msg=cand.id)


def test_dense_with_epilogue_takes_the_epilogue_into_the_tile():
    func, ref = dense_relu(16, 32, 24)
    space = spaces_for(func)[1]
    knobs = {
        "ti": 4,
        "tj": 16,
        "kb": None,
        "pack": True,
        "order": "ji",
        "parallel": False,
        "unroll": True,
    }
    scheduled, trace = space.apply(func, knobs)
    assert "reverse_compute_inline" in trace and "transform_layout" in trace
    rng = np.random.default_rng(0)
    a, w, b = (rng.standard_normal(s, dtype=np.float32) for s in [(16, 24), (32, 24), (32,)])
    out = run(scheduled, [a, w, b, np.zeros((16, 32), np.float32)])
    np.testing.assert_allclose(out, ref(a, w, b), rtol=1e-4, atol=1e-4)


def test_a_knob_that_does_not_divide_is_a_schedule_error():
    func = matmul(32)
    space = spaces_for(func)[1]
    knobs = {
        "ti": 5,
        "tj": 16,
        "kb": None,
        "pack": False,
        "order": "ij",
        "parallel": True,
        "unroll": True,
    }
    with pytest.raises(ScheduleError, match=r"knob ti=5 does not divide the extent 32"):
        space.apply(func, knobs)


def test_mutation_changes_exactly_one_knob():
    space = spaces_for(matmul(32))[1]
    rng = random.Random(0)
    cand = space.sample(rng)
    for _ in range(10):
        other = space.mutate(cand, rng)
        assert isinstance(other, Candidate)
        assert sum(other.knobs[k] != cand.knobs[k] for k in cand.knobs) == 1


def conv_relu(groups: int, channels: int = 8, hw: int = 8):
    from unity import topi

    X = te.placeholder((1, channels, hw, hw), name="X")
    W = te.placeholder((channels, channels // groups, 3, 3), name="W")
    Y = topi.nn.conv2d(X, W, strides=1, padding=1, groups=groups)
    R = te.compute(Y.shape, lambda *i: te.max(Y(*i), 0.0), name="relu")
    return te.create_prim_func([X, W, R])


@pytest.mark.parametrize("groups", [1, 8])
def test_conv2d_gets_the_tiled_space_and_its_candidates_keep_the_result(groups):
    func = conv_relu(groups)
    names = [s.name for s in spaces_for(func)]
    assert names == ["rules", "conv", "tiled"]
    tiled = spaces_for(func)[-1]
    assert tiled.choices["t0"] == (1,) and tiled.choices["t3"] == (1, 4, 8)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 8, 8, 8), dtype=np.float32)
    w = rng.standard_normal((8, 8 // groups, 3, 3), dtype=np.float32)
    ref = run(func, [x, w, np.zeros((1, 8, 8, 8), np.float32)]).copy()
    pick = random.Random(2)
    for _ in range(3):
        cand = tiled.sample(pick)
        scheduled, trace = tiled.apply(func, cand.knobs)
        assert "reverse_compute_inline" in trace  # the relu went into the tile's write-back
        out = run(scheduled, [x, w, np.zeros((1, 8, 8, 8), np.float32)])
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4, err_msg=cand.id)


def test_conv_space_sets_the_rules_tile_and_parallel_loop_and_keeps_the_result():
    func = conv_relu(1, channels=32, hw=9)
    conv = spaces_for(func, RuleContext(lanes=16))[1]  # the tiles of an AVX-512 machine
    assert conv.name == "conv"
    assert conv.default == {"variant": "channels", "to": 32, "tx": 9, "parallel": "auto"}
    assert conv.choices["to"] == (1, 2, 4, 8, 16, 32) and conv.choices["variant"] == ("channels", "columns")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((1, 32, 9, 9), dtype=np.float32),
            rng.standard_normal((32, 32, 3, 3), dtype=np.float32), np.zeros((1, 32, 9, 9), np.float32)]  # fmt: skip
    ref = run(func, [a.copy() for a in args]).copy()
    for knobs in ({"variant": "channels", "to": 16, "tx": 4, "parallel": "rows"},
                  {"variant": "channels", "to": 8, "tx": 5, "parallel": "channels"},
                  {"variant": "columns", "to": 4, "tx": 9, "parallel": "auto"}):  # fmt: skip
        scheduled, _ = conv.apply(func, knobs)
        assert 'T.allocate_buffer' not in scheduled.script()
        np.testing.assert_allclose(run(scheduled, [a.copy() for a in args]), ref, rtol=1e-4, atol=1e-4)
    with pytest.raises(ScheduleError, match="spills"):
        conv.apply(func, {"variant": "channels", "to": 32, "tx": 16, "parallel": "auto"})


def test_matmul_space_over_a_symbolic_row_count_keeps_the_result():
    from unity import te, tir, topi

    seq = tir.SizeVar("seq", "int64")
    x, w = te.placeholder((2, seq, 32), name="x"), te.placeholder((32, 48), name="w")
    func = te.create_prim_func([x, w, topi.matmul(x, w)])
    space = spaces_for(func)[1]
    assert space.name == "matmul" and space.choices["ti"] == (1, 2, 3, 4, 6, 8, 12, 16)
    pick = random.Random(1)
    rng = np.random.default_rng(0)
    for _ in range(4):
        cand = space.sample(pick)
        scheduled, _ = space.apply(func, cand.knobs)
        lib = unity.build(scheduled)
        for n in (5, 24):
            a = rng.standard_normal((2, n, 32), dtype=np.float32)
            b = rng.standard_normal((32, 48), dtype=np.float32)
            out = np.zeros((2, n, 48), np.float32)
            lib["main"](a, b, out)
            np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4, err_msg=cand.id)


def _blocked_conv(c: int, hw: int, o: int, k: int):
    """conv2d on NCHW8c data + bias + relu (what AlterConvLayout makes), with numpy inputs."""
    from unity import topi

    x = te.placeholder((1, c // 8, hw, hw, 8), name="x")
    w = te.placeholder((o, c, k, k), name="w")
    b = te.placeholder((1, o // 8, 1, 1, 8), name="b")
    y = topi.nn.relu(topi.add(topi.nn.conv2d(x, w, 1, k // 2, 1, 1, "NCHW8c", "OIHW"), b))
    rng = np.random.default_rng(0)
    shapes = [[int(d.value) for d in t.shape] for t in (x, w, b)]
    args = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    return te.create_prim_func([x, w, b, y]), args + [np.zeros((1, o // 8, hw, hw, 8), np.float32)]


@pytest.mark.parametrize("k", [1, 3])
def test_blocked_conv_space_sets_the_tile_flattening_chunks_and_parallel_loop(k):
    func, args = _blocked_conv(16, 6, 32, k)
    spaces = {s.name: s for s in spaces_for(func, RuleContext(lanes=8))}
    space = spaces["conv_blocked"]
    assert space.choices["to"] == (8, 16, 32)  # 1, 2 or 4 vectors of 8 (3 does not divide 4)
    assert space.choices["flatten"] == (True, False)
    assert space.choices["unroll_window"] == ((False, True) if k == 3 else (False,))
    assert space.choices["rc_block"] == (0, 1)  # 2 input channel blocks: chunks of 1
    assert space.default == {"to": 16, "tx": 5 if k == 1 else 6, "flatten": k == 1,
                             "unroll_window": k == 3, "parallel": "auto", "rc_block": 0}  # fmt: skip
    from unity.ir.structural import assert_structural_equal
    from unity.schedule.default import schedule_primfunc

    default = schedule_primfunc(func, RuleContext(lanes=8))
    assert_structural_equal(space.apply(func, space.default)[0], default)
    ref = run(func, [a.copy() for a in args]).copy()
    others = (
        {"to": 32, "tx": 3, "flatten": True, "unroll_window": False, "parallel": "rows"},
        {"to": 8, "tx": 5, "flatten": False, "unroll_window": k == 3, "parallel": "channels"},
        {"to": 16, "tx": 3, "flatten": False, "unroll_window": False, "parallel": "auto",
         "rc_block": 1},
    )
    for knobs in (space.default, *others):
        scheduled, _ = space.apply(func, knobs)
        out = run(scheduled, [a.copy() for a in args])
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    with pytest.raises(ScheduleError, match="spills"):
        space.apply(func, {**others[0], "to": 32, "tx": 4})


def test_conv_space_offers_a_pointwise_conv_its_pixels_variant():
    from unity import topi

    x = te.placeholder((1, 12, 8, 6), name="x")
    w = te.placeholder((18, 4, 1, 1), name="w")
    func = te.create_prim_func([x, w, topi.nn.conv2d(x, w, 1, 0, 1, 3)])
    conv = spaces_for(func, RuleContext(lanes=8))[1]
    assert conv.choices["variant"] == ("columns", "pixels")
    assert conv.default["variant"] == "pixels"
    assert (conv.default["to"], conv.default["tx"]) == (6, 16)
    rng = np.random.default_rng(0)
    args = [
        rng.standard_normal((1, 12, 8, 6), dtype=np.float32),
        rng.standard_normal((18, 4, 1, 1), dtype=np.float32),
        np.zeros((1, 18, 8, 6), np.float32),
    ]
    ref = run(func, [a.copy() for a in args]).copy()
    for to, tx in ((3, 24), (2, 8), (1, 48)):
        knobs = {"variant": "pixels", "to": to, "tx": tx, "parallel": "auto"}
        scheduled, _ = conv.apply(func, knobs)
        out = run(scheduled, [a.copy() for a in args])
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    with pytest.raises(ScheduleError, match="no pixel tile"):
        conv.apply(func, {"variant": "pixels", "to": 2, "tx": 7, "parallel": "auto"})
