"""LegalizeOps: op calls become call_tirs of TOPI PrimFuncs whose results match numpy."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pytest
import sympy

from unity import tir, topi
from unity.ir.module import GlobalVar, IRModule
from unity.ir.structural import assert_structural_equal
from unity.relax import (
    BlockBuilder,
    Call,
    Constant,
    Function,
    ShapeExpr,
    TensorStructInfo,
    Tuple,
    TupleGetItem,
    TupleStructInfo,
    Var,
    VarBinding,
    analysis,
    op,
)  # fmt: skip
from unity.relax.transform import LegalizeOps
from unity.topi.testing import pool2d_python

RNG = np.random.default_rng(7)
_ERF = np.vectorize(math.erf)


# -- a tiny sequential runner for legalized functions (call_tir only) ------------------------


def _bind_symbols(params: Sequence[Var], inputs: Sequence[np.ndarray]) -> dict[sympy.Symbol, int]:
    env: dict[sympy.Symbol, int] = {}
    for p, a in zip(params, inputs, strict=True):
        sinfo = p.struct_info
        assert isinstance(sinfo, TensorStructInfo) and sinfo.shape is not None
        for dim, size in zip(sinfo.shape, a.shape, strict=True):
            if isinstance(dim, sympy.Symbol):
                env[dim] = size
    return env


def _alloc(sinfo: object, env: dict[sympy.Symbol, int]) -> list[np.ndarray]:
    fields = sinfo.fields if isinstance(sinfo, TupleStructInfo) else (sinfo,)
    out = []
    for f in fields:
        assert isinstance(f, TensorStructInfo) and f.shape is not None
        shape = tuple(int(sympy.sympify(d).subs(env)) for d in f.shape)
        out.append(np.zeros(shape, f.dtype))
    return out


def run(mod: IRModule, *inputs: np.ndarray) -> object:
    """Evaluate `main` binding by binding; each call_tir runs in the reference interpreter."""
    main = mod["main"]
    assert isinstance(main, Function)
    env = _bind_symbols(main.params, inputs)
    values: dict[Var, object] = dict(zip(main.params, inputs, strict=True))

    def value_of(expr: object) -> object:
        if isinstance(expr, Var):
            return values[expr]
        if isinstance(expr, Tuple):
            return tuple(value_of(f) for f in expr.fields)
        if isinstance(expr, TupleGetItem):
            return value_of(expr.tuple_value)[expr.index]  # type: ignore[index]
        if isinstance(expr, Constant):
            return expr.data
        assert isinstance(expr, Call) and expr.op is op.call_tir, f"not legalized: {expr}"
        gv, args = expr.args[0], expr.args[1]
        assert isinstance(gv, GlobalVar)
        outs = _alloc(expr.struct_info, env)
        scalars = (
            [int(sympy.sympify(v).subs(env)) for v in expr.args[2].values]
            if len(expr.args) > 2
            else []
        )
        tir.interpret(mod[gv], *value_of(args), *outs, *scalars)  # type: ignore[misc]
        return (
            outs[0]
            if len(outs) == 1 and not isinstance(expr.struct_info, TupleStructInfo)
            else tuple(outs)
        )

    for block in main.body.blocks:
        for binding in block.bindings:
            assert isinstance(binding, VarBinding)
            values[binding.var] = value_of(binding.value)
    return value_of(main.body.body)


def build(params: Sequence[Var], body: Callable[..., object]) -> IRModule:
    """A module whose `main(params)` emits `body(*params)` in a dataflow block."""
    bb = BlockBuilder()
    with bb.function("main", list(params)):
        with bb.dataflow():
            out = bb.emit_output(body(*params))
        bb.emit_func_output(out)
    return bb.get()


def tensor(name: str, shape: Sequence[object], dtype: str = "float32") -> Var:
    return Var(name, TensorStructInfo(tuple(shape), dtype))


def rand(shape: Sequence[int], dtype: str = "float32") -> np.ndarray:
    if dtype.startswith("int"):
        return RNG.integers(-3, 4, size=shape).astype(dtype)
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    return RNG.uniform(-2, 2, size=shape).astype(dtype)


def legalize_and_check(mod: IRModule, inputs: Sequence[np.ndarray], expected: object,
                       rtol: float = 1e-5, atol: float = 1e-5) -> IRModule:  # fmt: skip
    after = LegalizeOps()(mod)
    assert analysis.well_formed(after)
    got = run(after, *inputs)
    wants = expected if isinstance(expected, tuple) else (expected,)
    gots = got if isinstance(got, tuple) else (got,)
    assert len(gots) == len(wants)
    for g, w in zip(gots, wants, strict=True):
        np.testing.assert_allclose(g, np.asarray(w).astype(g.dtype), rtol=rtol, atol=atol)  # type: ignore[union-attr]
    return after


# -- the docstring example --------------------------------------------------------------------


def _example() -> tuple[Var, Var]:
    return tensor("x", ("n", 4)), tensor("y", (4,))


def test_add_relu_become_call_tirs_of_topi_prim_funcs():
    x, y = _example()
    bb = BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            lv = bb.emit(op.add(x, y))
            gv = bb.emit_output(op.nn.relu(lv))
        bb.emit_func_output(gv)
    before = bb.get()

    x2, y2 = _example()
    bb = BlockBuilder()
    with bb.function("main", [x2, y2]):
        with bb.dataflow():
            lv = bb.emit_te(topi.add, x2, y2, primfunc_name_hint="add")
            gv = bb.emit_output(bb.call_te(topi.nn.relu, lv, primfunc_name_hint="relu"))
        bb.emit_func_output(gv)
    expected = bb.get()

    after = LegalizeOps()(before)
    assert_structural_equal(after, expected)
    a, b = rand((3, 4)), rand((4,))
    np.testing.assert_allclose(run(after, a, b), np.maximum(a + b, 0))


def test_nothing_to_do_returns_the_module():
    x, y = _example()
    mod = LegalizeOps()(build([x, y], op.add))
    assert LegalizeOps()(mod) is mod


def test_calls_a_rule_declines_stay():
    x = tensor("x", (4,), "int32")
    mod = build([x], lambda v: op.bitwise_and(v, v))
    assert LegalizeOps(customize_legalize_map={op.bitwise_and: lambda bb, call: call})(mod) is mod


def test_bitwise_on_integers():
    x, y = tensor("x", (4,), "int8"), tensor("y", (4,), "int8")
    mod = build([x, y], lambda a, b: op.bitwise_not(op.bitwise_and(a, b)))
    a, b = np.array([-1, 5, 127, -128], "int8"), np.array([3, -6, 64, -1], "int8")
    legalize_and_check(mod, [a, b], ~(a & b))


def test_bitwise_on_bool_is_logical():
    x, y = tensor("x", (4,), "bool"), tensor("y", (4,), "bool")
    mod = build([x, y], lambda a, b: op.bitwise_not(op.bitwise_or(a, b)))
    a, b = np.array([1, 0, 1, 0], bool), np.array([1, 1, 0, 0], bool)
    legalize_and_check(mod, [a, b], ~(a | b))


def test_identical_prim_funcs_are_merged():
    x, y = _example()
    mod = build([x, y], lambda a, b: op.add(op.add(a, b), b))
    after = LegalizeOps()(mod)
    prims = [gv.name_hint for gv, f in after.functions.items() if isinstance(f, tir.PrimFunc)]
    assert prims == ["add"]
    a, b = rand((2, 4)), rand((4,))
    np.testing.assert_allclose(run(after, a, b), a + b + b, rtol=1e-6)


def test_custom_rule_overrides_the_op_attribute():
    x, y = _example()
    mod = build([x, y], op.add)
    custom = {
        op.add: lambda bb, call: bb.call_te(topi.subtract, *call.args, primfunc_name_hint="sub")
    }
    after = LegalizeOps(customize_legalize_map=custom)(mod)
    assert "sub" in after and "add" not in after
    a, b = rand((2, 4)), rand((4,))
    np.testing.assert_allclose(run(after, a, b), a - b)


# -- every op against numpy, static and symbolic shapes ---------------------------------------

X34 = (3, 4)
CASES: list[tuple[str, Callable[..., object], list[tuple[tuple[object, ...], str]], Callable[..., object]]] = [
    ("exp", op.exp, [(("n", 4), "float32")], np.exp),
    ("tanh", op.tanh, [(X34, "float32")], np.tanh),
    ("sigmoid", op.sigmoid, [(X34, "float32")], lambda a: 1 / (1 + np.exp(-a))),
    ("erf", op.erf, [(X34, "float32")], _ERF),
    ("negative", op.negative, [(("n",), "int32")], np.negative),
    ("isnan", op.isnan, [(X34, "float32")], np.isnan),
    ("clip", lambda v: op.clip(v, -0.5, 1.0), [(X34, "float32")], lambda a: np.clip(a, -0.5, 1.0)),
    ("astype", lambda v: op.astype(v, "int32"), [(X34, "float32")], lambda a: a.astype("int32")),
    ("subtract", op.subtract, [(("n", 1), "float32"), ((4,), "float32")], np.subtract),
    ("floor_mod", op.floor_mod, [(X34, "int32"), ((4,), "int32")], None),
    ("less", op.less, [(X34, "float32"), (X34, "float32")], np.less),
    ("where", op.where, [(X34, "bool"), (X34, "float32"), ((4,), "float32")], np.where),
    ("matmul", op.matmul, [(("b", 2, 3), "float32"), ((3, 5), "float32")], np.matmul),
    ("matmul_1d", op.matmul, [((3,), "float32"), ((2, 3, 4), "float32")], np.matmul),
    ("linear", lambda a, w, b: op.nn.linear(a, w, b), [(("n", 3), "float32"), ((5, 3), "float32"), ((5,), "float32")],
     lambda a, w, b: a @ w.T + b),
    ("relu", op.nn.relu, [(("n", 4), "float32")], lambda a: np.maximum(a, 0)),
    ("gelu", op.nn.gelu, [(X34, "float32")], lambda a: 0.5 * a * (1 + _ERF(a / np.sqrt(2)))),
    ("gelu_tanh", op.nn.gelu_tanh, [(X34, "float32")],
     lambda a: 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a**3)))),
    ("silu", op.nn.silu, [(X34, "float32")], lambda a: a / (1 + np.exp(-a))),
    ("softmax", lambda v: op.nn.softmax(v, 0), [(("n", 4), "float32")],
     lambda a: np.exp(a - a.max(0)) / np.exp(a - a.max(0)).sum(0)),
    ("log_softmax", op.nn.log_softmax, [(X34, "float32")],
     lambda a: a - a.max(-1, keepdims=True) - np.log(np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True))),
    ("reshape", lambda v: op.reshape(v, (-1, 2)), [(("n", 4), "float32")], lambda a: a.reshape(-1, 2)),
    ("permute_dims", lambda v: op.permute_dims(v, [1, 0]), [(("n", 4), "float32")], lambda a: a.T),
    ("concat", lambda a, b: op.concat([a, b], axis=1), [(("n", 2), "float32"), (("n", 3), "float32")],
     lambda a, b: np.concatenate([a, b], 1)),
    ("split", lambda v: op.split(v, [1, 3], axis=1), [(X34, "float32")], lambda a: tuple(np.split(a, [1, 3], 1))),
    ("split_n", lambda v: op.split(v, 2, axis=0), [(("n", 3), "float32")],
     lambda a: tuple(np.array_split(a, 2, 0))),
    ("max_pool2d_ceil", lambda v: op.nn.max_pool2d(v, 3, 2, 1, ceil_mode=True), [((1, 2, "n", "n"), "float32")],
     lambda a: pool2d_python(a, (3, 3), (2, 2), "max", (1, 1, 1, 1), ceil_mode=True)),
    ("squeeze", lambda v: op.squeeze(v, [1]), [((3, 1, 2), "float32")], lambda a: a.squeeze(1)),
    ("expand_dims", lambda v: op.expand_dims(v, [0]), [(("n",), "float32")], lambda a: a[None]),
    ("flatten", op.flatten, [(("n", 3), "float32")], lambda a: a.reshape(-1)),
    ("broadcast_to", lambda v: op.broadcast_to(v, (2, "n", 4)), [(("n", 1), "float32")],
     None),
    ("strided_slice", lambda v: op.strided_slice(v, [0, 1], [4, 3], [0, -100], [-2, -1]),
     [((5, 4), "float32")], lambda a: a[4:0:-2, 3:-100:-1]),
    ("strided_slice_n", lambda v: op.strided_slice(v, [0], [1], [2**31 - 1], [2]),
     [(("n", 4), "float32")], lambda a: a[1::2]),
    ("take", lambda a, i: op.take(a, i, axis=1), [(X34, "float32"), ((2,), "int64")], None),
    ("gather_elements", lambda a, i: op.gather_elements(a, i, 1), [(X34, "float32"), ((3, 2), "int64")], None),
    ("scatter_elements", lambda a, i, u: op.scatter_elements(a, i, u, 0, "add"),
     [(X34, "float32"), ((2, 4), "int64"), ((2, 4), "float32")], None),
    ("sum", lambda v: op.sum(v, axis=[1]), [(("n", 4), "float32")], lambda a: a.sum(1)),
    ("mean", lambda v: op.mean(v, axis=0, keepdims=True), [(("n", 4), "float32")], lambda a: a.mean(0, keepdims=True)),
    ("max", lambda v: op.max(v), [(X34, "float32")], np.max),
    ("variance", lambda v: op.variance(v, 1), [(X34, "float32")], lambda a: a.var(1)),
    ("argmax", lambda v: op.argmax(v, 1), [(("n", 4), "float32")], lambda a: np.argmax(a, 1)),
    ("argmin", lambda v: op.argmin(v, 0, True), [(X34, "float32")], lambda a: np.argmin(a, 0)[None]),
    ("cumsum", lambda v: op.cumsum(v, 1), [(X34, "float32")], lambda a: np.cumsum(a, 1)),
    ("tril", lambda v: op.tril(v, 1), [(X34, "float32")], lambda a: np.tril(a, 1)),
    ("triu", op.triu, [(X34, "float32")], np.triu),
    ("pad", lambda v: op.nn.pad(v, [0, 1, 2, 0], 1.5), [(("n", 4), "float32")],
     lambda a: np.pad(a, ((0, 1), (2, 0)), constant_values=1.5)),
]  # fmt: skip


def _ref(name: str, arrays: list[np.ndarray]) -> object:
    if name == "floor_mod":
        a, b = arrays
        b = np.where(b == 0, 1, b)
        arrays[1] = b
        return np.mod(a, b)
    if name == "broadcast_to":
        (a,) = arrays
        return np.broadcast_to(a, (2, a.shape[0], 4))
    if name == "take":
        a, i = arrays
        return np.take(a, i, 1)
    if name == "gather_elements":
        a, i = arrays
        return np.take_along_axis(a, i, 1)
    a, i, u = arrays
    out = a.copy()
    np.add.at(out, (i, np.arange(4)[None].repeat(2, 0)), u)
    return out


@pytest.mark.parametrize(("name", "make", "params", "ref"), CASES, ids=[c[0] for c in CASES])
def test_legalized_op_matches_numpy(name, make, params, ref):
    vars_ = [tensor(f"p{k}", shape, dtype) for k, (shape, dtype) in enumerate(params)]
    mod = build(vars_, make)
    sizes = ({"n": 2, "b": 1}, {"n": 5, "b": 3})
    for env in sizes:
        arrays = [rand(tuple(env.get(d, d) if isinstance(d, str) else d for d in shape), dtype)
                  for shape, dtype in params]  # fmt: skip
        if name in ("take", "gather_elements"):
            arrays[1] = RNG.integers(-3, 3, size=arrays[1].shape).astype("int64") % 3
        if name == "scatter_elements":
            arrays[1] = np.array([[0, 1, 2, 0], [2, 2, 1, 0]], "int64")
        want = ref(*arrays) if ref is not None else _ref(name, arrays)
        after = legalize_and_check(mod, arrays, want, rtol=1e-4, atol=1e-5)
        calls = [b.value for blk in after["main"].body.blocks for b in blk.bindings]
        assert all(c.op is op.call_tir for c in calls if isinstance(c, Call))


def test_conv_pool_norm_cnn_block_with_symbolic_batch():
    from unity.topi.testing import conv2d_python, pool2d_python

    x = tensor("x", ("n", 2, 6, 6))
    w = tensor("w", (4, 2, 3, 3))
    gamma, beta, mean, var = (tensor(nm, (4,)) for nm in ("g", "b", "m", "v"))
    bb = BlockBuilder()
    with bb.function("main", [x, w, gamma, beta, mean, var]):
        with bb.dataflow():
            c = bb.emit(op.nn.conv2d(x, w, padding=1))
            bn = bb.emit(op.nn.batch_norm(c, gamma, beta, mean, var))
            r = bb.emit(op.nn.relu(TupleGetItem(bn, 0)))
            p = bb.emit(op.nn.max_pool2d(r, 2, 2))
            q = bb.emit(op.nn.avg_pool2d(p, 3, 1, 1, count_include_pad=True))
            out = bb.emit_output(op.nn.adaptive_avg_pool2d(q, 1))
        bb.emit_func_output(out)
    mod = bb.get()
    for batch in (1, 3):
        xa, wa = rand((batch, 2, 6, 6)), rand((4, 2, 3, 3))
        g, b, m, v = rand((4,)), rand((4,)), rand((4,)), np.abs(rand((4,))) + 0.5
        conv = conv2d_python(xa, wa, padding=(1, 1, 1, 1))
        shape = (1, 4, 1, 1)
        normed = (conv - m.reshape(shape)) / np.sqrt(v.reshape(shape) + 1e-5) * g.reshape(
            shape
        ) + b.reshape(shape)
        pooled = pool2d_python(np.maximum(normed, 0), (2, 2), (2, 2), "max")
        avg = pool2d_python(pooled, (3, 3), (1, 1), "avg", (1, 1, 1, 1), count_include_pad=True)
        legalize_and_check(
            mod, [xa, wa, g, b, m, v], avg.mean(axis=(2, 3), keepdims=True), rtol=1e-4, atol=1e-4
        )


def test_norms_dropout_and_conv_transpose():
    from unity.topi.testing import conv2d_transpose_python, group_norm_python, layer_norm_python

    x = tensor("x", ("n", 4, 3))
    g, b = tensor("g", (3,)), tensor("b", (3,))
    mod = build([x, g, b], lambda v, gg, bb_: op.nn.layer_norm(v, gg, bb_, axes=-1))
    xa, ga, ba = rand((2, 4, 3)), rand((3,)), rand((3,))
    legalize_and_check(mod, [xa, ga, ba], layer_norm_python(xa, ga, ba), rtol=1e-4, atol=1e-5)

    y = tensor("y", (2, 4, 3, 3))
    g4, b4 = tensor("g4", (4,)), tensor("b4", (4,))
    mod = build([y, g4, b4], lambda v, gg, bb_: op.nn.group_norm(v, gg, bb_, num_groups=2))
    ya, ga, ba = rand((2, 4, 3, 3)), rand((4,)), rand((4,))
    legalize_and_check(mod, [ya, ga, ba], group_norm_python(ya, ga, ba, 2), rtol=1e-4, atol=1e-5)

    mod = build([x], lambda v: op.nn.dropout(v, 0.3))
    legalize_and_check(mod, [xa], (xa, np.ones_like(xa)))

    z, k = tensor("z", (1, 2, 3, 3)), tensor("k", (2, 3, 2, 2))
    mod = build([z, k], lambda v, w: op.nn.conv2d_transpose(v, w, strides=2, padding=1))
    za, ka = rand((1, 2, 3, 3)), rand((2, 3, 2, 2))
    want = conv2d_transpose_python(za, ka, (2, 2), (1, 1, 1, 1))
    legalize_and_check(mod, [za, ka], want, rtol=1e-4, atol=1e-4)


def test_creation_ops_with_symbolic_shape():
    x = tensor("x", ("n", 2))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            z = bb.emit(
                op.zeros(ShapeExpr((sympy.Symbol("n", integer=True, positive=True), 2)), "float32")
            )
            o = bb.emit(op.ones((2,), "int32"))
            f = bb.emit(op.full((3,), 2.5))
            r = bb.emit(op.arange(1, 7, 2, "int64"))
            out = bb.emit_output(Tuple((op.add(z, x), o, f, r)))
        bb.emit_func_output(out)
    mod = bb.get()
    xa = rand((3, 2))
    legalize_and_check(mod, [xa], (xa, np.ones(2), np.full(3, 2.5), np.arange(1, 7, 2)))


def test_concat_of_a_tuple_var_and_unknown_shapes_left_alone():
    x = tensor("x", ("n", 2))
    u = Var("u", TensorStructInfo(None, "float32", 2))
    bb = BlockBuilder()
    with bb.function("main", [x, u]):
        with bb.dataflow():
            t = bb.emit(Tuple((x, x)))
            c = bb.emit_output(op.concat(t, axis=1))
            d = bb.emit_output(op.exp(u))
        bb.emit_func_output(Tuple((c, d)))
    after = LegalizeOps()(bb.get())
    assert analysis.well_formed(after)
    ops = [
        b.value.op
        for blk in after["main"].body.blocks
        for b in blk.bindings
        if isinstance(b.value, Call)
    ]
    assert ops == [op.call_tir, op.exp]  # exp of an unknown shape stays
    concat = after["concat"]
    a, out = rand((3, 2)), np.zeros((3, 4), "float32")
    tir.interpret(concat, a, a, out)
    np.testing.assert_allclose(out, np.concatenate([a, a], 1))


def test_legalized_kernels_build_for_llvm():
    import unity

    x, y = _example()
    mod = LegalizeOps()(build([x, y], lambda a, b: op.nn.softmax(op.add(a, b))))
    a, b = rand((3, 4)), rand((4,))
    lib_add, lib_softmax = unity.build(mod["add"]), unity.build(mod["softmax"])
    mid, out = np.zeros((3, 4), "float32"), np.zeros((3, 4), "float32")
    lib_add["main"](a, b, mid)
    lib_softmax["main"](mid, out)
    e = np.exp((a + b) - (a + b).max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5)


def test_onnx_extra_ops():
    from unity.relax.op import onnx_extra as X

    x = tensor("x", ("n", 5))
    mod = build([x], lambda v: X.topk(v, 2, axis=1))
    a = np.array([[1, 5, 5, 2, 0], [3, 3, 1, 9, 9]], "float32")
    idx = np.argsort(-a, axis=1, kind="stable")[:, :2]
    legalize_and_check(mod, [a], (np.take_along_axis(a, idx, 1), idx))

    mod = build([x], lambda v: X.cumprod(v, 1, exclusive=True, reverse=True))
    b = rand((3, 5))
    rev = np.flip(np.cumprod(np.flip(b, 1), 1), 1)
    legalize_and_check(mod, [b], rev / b, rtol=1e-4)

    mod = build([x], lambda v: X.asin(op.multiply(v, v)))
    c = rand((2, 5)) / 2
    legalize_and_check(mod, [c], np.arcsin(c * c))

    d, i = tensor("d", (3, 4)), tensor("i", (2, 1), "int64")
    mod = build([d, i], lambda v, j: X.gather_nd(v, j))
    da, ia = rand((3, 4)), np.array([[2], [-3]], "int64")
    legalize_and_check(mod, [da, ia], da[ia[:, 0]])

    u = tensor("u", (2, 4))
    mod = build([d, i, u], lambda v, j, w: X.scatter_nd(v, j, w, "add"))
    ua = rand((2, 4))
    want = da.copy()
    want[2] += ua[0]
    want[0] += ua[1]
    legalize_and_check(mod, [da, ia, ua], want)


def test_resize_and_shape_to_tensor():
    from unity.relax.op import onnx_extra as X

    x = tensor("x", (1, 2, 3, 4))
    attrs = X.ResizeAttrs((2, 3), (6, 8), (2.0, 2.0), "linear", "half_pixel")
    mod = build([x], lambda v: X.resize(v, attrs))
    a = rand((1, 2, 3, 4))
    from unity import te

    x_t = te.placeholder((1, 2, 3, 4), name="x")
    want = np.zeros((1, 2, 6, 8), "float32")
    tir.interpret(te.create_prim_func([x_t, topi.image.resize2d(x_t, (6, 8))]), a, want)
    legalize_and_check(mod, [a], want)

    y = tensor("y", ("n", 3))
    n = sympy.Symbol("n", integer=True, positive=True)
    mod = build([y], lambda v: X.shape_to_tensor(ShapeExpr((n * 2, 3))))
    after = LegalizeOps()(mod)
    call = after["main"].body.blocks[0].bindings[0].value
    out = np.zeros(2, "int64")
    tir.interpret(after[call.args[0]], out, 5)
    np.testing.assert_array_equal(out, [10, 3])


def test_blocked_conv_and_pools_legalize_to_5d_prim_funcs():
    from unity.topi.testing import adaptive_avg_pool2d_python, conv2d_python, to_blocked

    x, w = tensor("x", ("n", 2, 5, 5, 4)), tensor("w", (8, 8, 3, 3))  # NCHW4c of (n, 8, 5, 5)
    bb = BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            c = bb.emit(op.nn.conv2d(x, w, padding=1, data_layout="NCHW4c"))
            p = bb.emit(op.nn.max_pool2d(c, 2, 1, layout="NCHW4c"))
            q = bb.emit(op.nn.avg_pool2d(p, 3, 1, 1, layout="NCHW4c"))
            out = bb.emit_output(op.nn.adaptive_avg_pool2d(q, (2, 1), layout="NCHW4c"))
        bb.emit_func_output(out)
    mod = bb.get()
    xa, wa = rand((2, 8, 5, 5)), rand((8, 8, 3, 3))
    conv = conv2d_python(xa, wa, padding=(1, 1, 1, 1))
    pooled = pool2d_python(conv, (2, 2), (1, 1), "max")
    avg = pool2d_python(pooled, (3, 3), (1, 1), "avg", (1, 1, 1, 1))
    want = to_blocked(adaptive_avg_pool2d_python(avg, (2, 1)), 4)
    after = legalize_and_check(mod, [to_blocked(xa, 4), wa], want, rtol=1e-4, atol=1e-4)
    assert after["main"].ret_struct_info.shape[1:] == (2, 2, 1, 4)


@pytest.mark.parametrize(
    ("c", "o", "block", "strides", "padding", "dilation"),
    [(3, 32, 16, 2, 1, 1),  # an image conv
     (24, 16, 8, 1, (1, 0, 2, 1), 2)],  # input channels that are not whole blocks
)  # fmt: skip
def test_conv_with_a_blocked_out_layout_reads_nchw_and_writes_blocked(
    c, o, block, strides, padding, dilation
):
    from unity.topi.testing import conv2d_python, to_blocked

    x, w = tensor("x", ("n", c, 9, 9)), tensor("w", (o, c, 3, 3))
    layout = f"NCHW{block}c"
    mod = build([x, w], lambda x, w: op.nn.conv2d(x, w, strides, padding, dilation,
                                                  out_layout=layout))  # fmt: skip
    xa, wa = rand((2, c, 9, 9)), rand((o, c, 3, 3))
    call = mod["main"].body.blocks[0].bindings[0].value
    reference = conv2d_python(xa, wa, call.attrs.strides, call.attrs.padding, call.attrs.dilation)
    after = legalize_and_check(mod, [xa, wa], to_blocked(reference, block), rtol=1e-4, atol=1e-4)
    prim_func = next(f for f in after.functions.values() if isinstance(f, tir.PrimFunc))
    assert [len(b.shape) for b in prim_func.buffer_params()] == [4, 4, 5]  # no layout copy
