"""`tir.lower` on TE workloads: the lowered form holds and interpreter results do not change."""

import numpy as np
import pytest

from unity import te, tir
from unity.ir.module import IRModule
from unity.tir import Block, BlockRealize, BufferLoad, BufferStore, Call, For, ForKind
from unity.tir.functor import StmtExprMutator
from unity.topi import testing

from ._workloads import module


def _matmul(n: int = 16, m: int = 12, k: int = 8):  # noqa: ANN202
    A = te.placeholder((n, k), "float32", "A")
    B = te.placeholder((k, m), "float32", "B")
    r = te.reduce_axis((0, k), "k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return te.create_prim_func([A, B, C])


def _conv2d(stride: int = 2, pad: int = 1):  # noqa: ANN202
    N, CI, H, W, CO, K = 1, 3, 9, 9, 4, 3
    X = te.placeholder((N, CI, H, W), "float32", "X")
    Wt = te.placeholder((CO, CI, K, K), "float32", "W")
    Xp = te.compute(
        (N, CI, H + 2 * pad, W + 2 * pad),
        lambda n, c, h, w: te.if_then_else(
            (h >= pad) & (h < H + pad) & (w >= pad) & (w < W + pad),
            X[n, c, h - pad, w - pad], te.const(0.0),
        ),
        name="pad",
    )  # fmt: skip
    OH, OW = (H + 2 * pad - K) // stride + 1, (W + 2 * pad - K) // stride + 1
    rc = te.reduce_axis((0, CI), "rc")
    rh, rw = te.reduce_axis((0, K), "rh"), te.reduce_axis((0, K), "rw")
    Y = te.compute(
        (N, CO, OH, OW),
        lambda n, f, y, x: te.sum(
            Xp[n, rc, y * stride + rh, x * stride + rw] * Wt[f, rc, rh, rw], axis=[rc, rh, rw]
        ),
        name="Y",
    )  # fmt: skip
    return te.create_prim_func([X, Wt, Y])


def _softmax(n: int = 4, m: int = 24):  # noqa: ANN202
    A = te.placeholder((n, m), "float32", "A")
    k1, k2 = te.reduce_axis((0, m), "k1"), te.reduce_axis((0, m), "k2")
    mx = te.compute((n,), lambda i: te.max(A[i, k1], axis=k1), name="mx")
    ex = te.compute((n, m), lambda i, j: te.exp(A[i, j] - mx[i]), name="ex")
    sm = te.compute((n,), lambda i: te.sum(ex[i, k2], axis=k2), name="sm")
    out = te.compute((n, m), lambda i, j: ex[i, j] / sm[i], name="out")
    return te.create_prim_func([A, out])


def _gelu(n: int = 64):  # noqa: ANN202
    A = te.placeholder((n,), "float32", "A")
    B = te.compute((n,), lambda i: A[i] * 0.5 * (1.0 + te.erf(A[i] * 0.7071067811865476)), name="B")
    return te.create_prim_func([A, B])


class _Annotate(StmtExprMutator):
    """Mark the outermost loop PARALLEL (and its nested outer ones) and innermost VECTORIZED."""

    def visit_for_(self, loop: For) -> For:
        loop = self._mutate_fields(loop)
        inner = not _contains_loop(loop.body)
        kind = ForKind.VECTORIZED if inner else ForKind.PARALLEL
        return loop.replace(kind=kind)


def _contains_loop(stmt: tir.Stmt) -> bool:
    found: list[object] = []
    tir.post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, For) else None)
    return bool(found)


def _annotated(func: tir.PrimFunc) -> tir.PrimFunc:
    return func.replace(body=_Annotate().visit_stmt(func.body))


def _run(mod: IRModule, arrays: list[np.ndarray]) -> list[np.ndarray]:
    copies = [a.copy() for a in arrays]
    tir.interpret(mod, *copies)
    return copies


def _inputs(func: tir.PrimFunc, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(tuple(int(d.value) for d in b.shape)).astype(b.dtype)
        for b in func.buffer_params()
    ]


def assert_lowered_form(mod: IRModule) -> None:
    """Check the contract of lowered_form.md that can be seen in the IR."""
    for func in mod.functions.values():
        params = {b.data for b in func.buffer_params()}
        allocated: set[object] = set()
        seen: list[object] = []
        tir.post_order_visit(func.body, seen.append)
        for node in seen:
            assert not isinstance(node, Block | BlockRealize), "a block survived lowering"
            if isinstance(node, tir.Allocate):
                allocated.add(node.buffer.data)
            if isinstance(node, BufferLoad | BufferStore):
                assert len(node.buffer.shape) == 1 and len(node.indices) == 1
            if isinstance(node, For):
                assert node.kind in (ForKind.SERIAL, ForKind.PARALLEL)
                if node.kind is ForKind.PARALLEL:
                    assert not any(
                        isinstance(x, For) and x.kind is ForKind.PARALLEL
                        for x in _stmts_under(node.body)
                    ), "nested parallel loops"
            if isinstance(node, Call):
                assert node.op.attrs.get("llvm") is not None, f"{node.op.name} left for codegen"
        for node in seen:
            if isinstance(node, BufferLoad | BufferStore):
                assert node.buffer.data in params | allocated


def _stmts_under(stmt: tir.Stmt) -> list[object]:
    out: list[object] = []
    tir.post_order_visit(stmt, out.append)
    return out


WORKLOADS = {"matmul": _matmul, "conv2d": _conv2d, "softmax": _softmax, "gelu": _gelu}


@pytest.mark.parametrize("name", WORKLOADS)
@pytest.mark.parametrize("annotate", [False, True], ids=["plain", "parallel_vectorized"])
def test_lowering_keeps_interpreter_results(name: str, annotate: bool):
    func = WORKLOADS[name]()
    if annotate:
        func = _annotated(func)
    lowered = tir.lower(func)
    assert_lowered_form(lowered)
    assert lowered["main"].params == func.params
    arrays = _inputs(func)
    for got, want in zip(_run(lowered, arrays), _run(module(func), arrays)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_results_match_numpy_references():
    func = _conv2d()
    x, w, y = _inputs(func)
    (_, _, got) = _run(tir.lower(func), [x, w, y])
    np.testing.assert_allclose(got, testing.conv2d_nchw_python(x, w, 2, 1), rtol=1e-5, atol=1e-5)
    a, out = _inputs(_softmax())
    (_, got) = _run(tir.lower(_annotated(_softmax())), [a, out])
    np.testing.assert_allclose(got, testing.softmax_python(a), rtol=1e-5, atol=1e-7)


def test_symbolic_shape_function_lowers_and_runs_at_two_sizes():
    n = te.var("n")
    A = te.placeholder((n, 8), "float32", "A")
    B = te.compute((n, 8), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    lowered = tir.lower(_annotated(te.create_prim_func([A, B])))
    assert_lowered_form(lowered)
    for rows in (3, 5):
        a = np.random.default_rng(rows).standard_normal((rows, 8)).astype("float32")
        b = np.zeros_like(a)
        tir.interpret(lowered, a, b)
        np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)


def test_lower_accepts_a_module_and_rejects_other_things():
    mod = module(_gelu())
    assert isinstance(tir.lower(mod), IRModule)
    with pytest.raises(TypeError, match="lower takes an IRModule or a PrimFunc"):
        tir.lower("main")  # type: ignore[arg-type]
