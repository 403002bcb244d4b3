"""Structural equality and hashing: alpha-equivalence, mismatches, hash agreement, paths."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from unity import tir
from unity.ir import GlobalVar, IRModule
from unity.ir.structural import (
    assert_structural_equal, register_leaf_equal, structural_equal, structural_hash,
)  # fmt: skip


def _add_one(
    *,
    names: tuple[str, str, str] = ("A", "B", "i"),
    const: float = 1.0,
    dtype: str = "float32",
    kind: tir.ForKind = tir.ForKind.SERIAL,
    n: int = 8,
) -> tir.PrimFunc:
    """`for i in range(n): B[i] = A[i] + const` with fresh variables named `names`."""
    a_name, b_name, i_name = names
    A = tir.decl_buffer((n,), dtype, a_name)
    B = tir.decl_buffer((8,), dtype, b_name)
    i = tir.Var(i_name, "int32")
    store = tir.BufferStore(B, A[i] + tir.const(const, dtype), (i,))
    loop = tir.For(i, tir.const(0), tir.const(8), kind, store)
    return tir.PrimFunc((A, B), loop)


def _two_stores(second: int = 1) -> tir.PrimFunc:
    """A loop whose body stores `A[i]` then `A[i] + second`."""
    A = tir.decl_buffer((8,), "int32", "A")
    B = tir.decl_buffer((8,), "int32", "B")
    i = tir.Var("i")
    body = tir.SeqStmt(
        (tir.BufferStore(B, A[i], (i,)), tir.BufferStore(B, A[i] + second, (i,)))
    )
    return tir.PrimFunc((A, B), tir.For(i, tir.const(0), tir.const(8), tir.ForKind.SERIAL, body))


def test_alpha_equivalent_functions_are_equal_and_hash_alike():
    f = _add_one(names=("A", "B", "i"))
    g = _add_one(names=("X", "Y", "k"))
    assert structural_equal(f, g)
    assert structural_hash(f) == structural_hash(g)
    assert_structural_equal(f, g)


@pytest.mark.parametrize(
    "changed",
    [
        {"const": 2.0},
        {"dtype": "float16"},
        {"kind": tir.ForKind.PARALLEL},
        {"n": 16},
    ],
    ids=["constant", "dtype", "loop_kind", "buffer_shape"],
)
def test_a_changed_detail_makes_functions_unequal(changed):
    assert not structural_equal(_add_one(), _add_one(**changed))


def test_swapped_buffers_are_unequal():
    A = tir.decl_buffer((8,), "float32", "A")
    B = tir.decl_buffer((8,), "float32", "B")
    i = tir.Var("i")
    loop = tir.For(i, tir.const(0), tir.const(8), tir.ForKind.SERIAL,
                   tir.BufferStore(A, B[i], (i,)))  # fmt: skip
    assert not structural_equal(_add_one(), tir.PrimFunc((A, B), loop))


def test_mismatched_kinds_return_false():
    x = tir.Var("x")
    assert not structural_equal(x, tir.const(1))
    assert not structural_equal(tir.const(1), tir.const(1.0))
    assert not structural_equal(tir.Evaluate(x), x + 1)
    assert not structural_equal(_add_one(), IRModule({"main": _add_one()}))
    assert not structural_equal(None, x)
    assert not structural_equal((x,), x)
    assert not structural_equal(tir.Var("v"), tir.SizeVar("v"))


def test_free_vars_map_only_when_allowed():
    x, y = tir.Var("x"), tir.Var("y")
    assert structural_equal(x + 1, y + 1)
    assert not structural_equal(x + 1, y + 1, map_free_vars=False)
    assert structural_equal(x + 1, x + 1, map_free_vars=False)
    # bound variables map even without map_free_vars
    assert structural_equal(_add_one(), _add_one(names=("P", "Q", "j")), map_free_vars=False)


def test_mapping_is_a_bijection():
    x, y = tir.Var("x"), tir.Var("y")
    assert not structural_equal(x + x, x + y)
    assert not structural_equal(x + y, x + x)
    assert structural_equal(x * y, y * x)  # x<->y, y<->x
    assert structural_hash(x + x) != structural_hash(x + y)


def test_bound_variable_used_out_of_scope_is_detected():
    i, j = tir.Var("i"), tir.Var("j")
    A = tir.decl_buffer((8,), "int32", "A")
    loop_i = tir.For(i, tir.const(0), tir.const(8), tir.ForKind.SERIAL,
                     tir.BufferStore(A, i, (i,)))  # fmt: skip
    loop_j = tir.For(j, tir.const(0), tir.const(8), tir.ForKind.SERIAL,
                     tir.BufferStore(A, i, (j,)))  # fmt: skip
    assert not structural_equal(loop_i, loop_j)


def test_buffers_sharing_data_must_share_it_on_both_sides():
    n = tir.SizeVar("n")
    A = tir.decl_buffer((n, 4), "float32", "A")
    flat_shared = tir.decl_buffer((n * 4,), "float32", "A_flat", data=A.data)
    flat_fresh = tir.decl_buffer((n * 4,), "float32", "A_flat")

    def func(flat: tir.Buffer) -> tir.PrimFunc:
        return tir.PrimFunc((A,), tir.Allocate(flat, tir.Evaluate(flat[0])))

    m = tir.SizeVar("m")
    A2 = tir.decl_buffer((m, 4), "float32", "A")
    flat2 = tir.decl_buffer((m * 4,), "float32", "A_flat", data=A2.data)
    other = tir.PrimFunc((A2,), tir.Allocate(flat2, tir.Evaluate(flat2[0])))
    assert structural_equal(func(flat_shared), other)
    assert not structural_equal(func(flat_fresh), other)


def test_symbolic_shapes_map_between_functions():
    n, m = tir.SizeVar("n"), tir.SizeVar("m")
    f = tir.PrimFunc((tir.decl_buffer((n, n), "float32", "A"),), tir.Evaluate(tir.const(0)))
    g = tir.PrimFunc((tir.decl_buffer((m, m), "float32", "A"),), tir.Evaluate(tir.const(0)))
    k = tir.SizeVar("k")
    h = tir.PrimFunc((tir.decl_buffer((m, k), "float32", "A"),), tir.Evaluate(tir.const(0)))
    assert structural_equal(f, g, map_free_vars=False)
    assert not structural_equal(f, h)
    assert structural_hash(f) == structural_hash(g) != structural_hash(h)


def test_blocks_compare_iter_vars_and_annotations():
    def block(name_i: str, annotation: int) -> tir.Block:
        A = tir.decl_buffer((4,), "float32", "A")
        v = tir.Var(name_i)
        iv = tir.IterVar(v, tir.Range.from_min_extent(0, 4), tir.IterType.SPATIAL)
        return tir.Block((iv,), (), (A.full_region(),), "blk",
                         tir.BufferStore(A, tir.const(0.0), (v,)),
                         annotations={"unroll": annotation, "tag": "x"})  # fmt: skip

    assert structural_equal(block("vi", 1), block("vj", 1))
    assert structural_hash(block("vi", 1)) == structural_hash(block("vj", 1))
    assert not structural_equal(block("vi", 1), block("vi", 2))


def test_modules_compare_functions_by_name_and_attrs():
    m1 = IRModule({"main": _add_one(), "g": _two_stores()}, attrs={"target": "llvm"})
    m2 = IRModule({"g": _two_stores(), "main": _add_one(names=("X", "Y", "z"))},
                  attrs={"target": "llvm"})  # fmt: skip
    assert structural_equal(m1, m2)
    assert structural_hash(m1) == structural_hash(m2)
    assert not structural_equal(m1, IRModule({"main": _add_one()}, attrs={"target": "llvm"}))
    assert not structural_equal(m1, m2.with_attr("target", "cuda"))
    assert not structural_equal(m1, IRModule({"main": _add_one(), "h": _two_stores()}))


def test_global_vars_compare_by_name_and_ops_by_identity():
    assert structural_equal(GlobalVar("f"), GlobalVar("f"))
    assert not structural_equal(GlobalVar("f"), GlobalVar("g"))
    one = tir.const(1.0)
    assert structural_equal(tir.exp(one), tir.exp(tir.const(1.0)))
    assert not structural_equal(tir.exp(one), tir.log(one))


def test_leaves_numbers_arrays_sympy_and_mappings():
    assert structural_equal(math.nan, math.nan)
    assert structural_hash(math.nan) == structural_hash(float("nan"))
    assert structural_equal(tir.const(math.nan), tir.const(math.nan))
    a = np.array([1.0, np.nan], dtype="float32")
    assert structural_equal(a, a.copy())
    assert structural_hash(a) == structural_hash(a.copy())
    assert not structural_equal(a, a.astype("float64"))
    assert not structural_equal(a, a.reshape(2, 1))
    n = sympy.Symbol("n", integer=True, positive=True)
    assert structural_equal(2 * (n + 1), 2 * n + 2)
    assert structural_hash(2 * (n + 1)) == structural_hash(2 * n + 2)
    assert not structural_equal(n + 1, n + 2)
    assert structural_equal({"a": 1, "b": (2, 3)}, {"b": (2, 3), "a": 1})
    assert structural_hash({"a": 1, "b": 2}) == structural_hash({"b": 2, "a": 1})
    assert not structural_equal({"a": 1}, {"a": 1, "b": 2})
    assert not structural_equal(tir.ForKind.SERIAL, "serial")


def test_registered_leaf_comparator_is_used():
    class Tolerant:
        def __init__(self, value: float) -> None:
            self.value = value

    register_leaf_equal(Tolerant, lambda a, b: abs(a.value - b.value) < 0.5, lambda _: 7)
    assert structural_equal((Tolerant(1.0),), (Tolerant(1.2),))
    assert not structural_equal(Tolerant(1.0), Tolerant(2.0))


def test_assert_reports_the_path_of_the_first_mismatch():
    with pytest.raises(AssertionError) as info:
        assert_structural_equal(_two_stores(1), _two_stores(2))
    message = str(info.value)
    assert message.splitlines()[0] == "not structurally equal: IntImm.value differs: 1 vs 2"
    assert "lhs at root.body.body.seq[1].value.b:" in message
    assert "rhs at root.body.body.seq[1].value.b:" in message


def test_assert_reports_a_path_inside_a_module():
    with pytest.raises(AssertionError) as info:
        assert_structural_equal(
            IRModule({"main": _add_one()}), IRModule({"main": _add_one(kind=tir.ForKind.UNROLLED)})
        )
    message = str(info.value)
    assert "For.kind differs: ForKind.SERIAL vs ForKind.UNROLLED" in message
    assert "lhs at @main.body:" in message


def test_assert_reports_a_misbound_variable():
    x, y = tir.Var("x"), tir.Var("y")
    with pytest.raises(AssertionError, match="lhs x is bound to rhs x, but here it meets y"):
        assert_structural_equal(tir.Let(x, tir.const(1), x + x), tir.Let(x, tir.const(1), x + y))


def test_large_expressions_do_not_hit_the_recursion_limit():
    x = tir.Var("x")
    e1, e2 = x, tir.Var("y")
    for k in range(3000):
        e1, e2 = tir.const(k) + e1, tir.const(k) + e2  # deep on the right: cheap to build
    assert structural_equal(e1, e2)
    assert structural_hash(e1) == structural_hash(e2)


def test_assert_describes_sequences_of_different_length():
    a, b, c = (tir.Evaluate(tir.const(k)) for k in range(3))
    nested = tir.SeqStmt((tir.SeqStmt((a, b)), c))
    flat = tir.SeqStmt((a, b, c))
    with pytest.raises(AssertionError) as info:
        assert_structural_equal(nested, flat)
    first_line = str(info.value).splitlines()[0]
    assert first_line == (
        "not structurally equal: SeqStmt.seq differs: "
        "2 items (SeqStmt, Evaluate) vs 3 items (Evaluate, Evaluate, Evaluate)"
    )


_SHAPES = st.recursive(
    st.one_of(
        st.integers(0, 2).map(lambda v: ("var", v)),
        st.integers(-3, 3).map(lambda c: ("const", c)),
    ),
    lambda inner: st.tuples(st.sampled_from(["add", "mul", "min", "let"]), inner, inner),
    max_leaves=12,
)


def _build(shape: object, names: tuple[str, ...]) -> tir.PrimExpr:
    """An expression of `shape` over three fresh free variables (and fresh let variables)."""
    free = [tir.Var(n) for n in names]

    def build(s: object, scope: list[tir.Var]) -> tir.PrimExpr:
        kind, x, y = s if len(s) == 3 else (*s, None)  # type: ignore[arg-type]  # tuple shapes
        if kind == "var":
            return scope[x % len(scope)]
        if kind == "const":
            return tir.const(x)
        if kind == "let":
            bound = tir.Var("t")
            return tir.Let(bound, build(x, scope), build(y, [bound, *scope]))
        a, b = build(x, scope), build(y, scope)
        return {"add": tir.Add, "mul": tir.Mul, "min": tir.Min}[kind](a, b)

    return build(shape, free)


@given(_SHAPES, _SHAPES)
@settings(max_examples=60, deadline=None)
def test_hash_agrees_with_equality_on_random_expressions(shape1, shape2):
    e1, e1_renamed = _build(shape1, ("a", "b", "c")), _build(shape1, ("x", "y", "z"))
    assert structural_equal(e1, e1_renamed)
    assert structural_hash(e1) == structural_hash(e1_renamed)
    e2 = _build(shape2, ("a", "b", "c"))
    if structural_equal(e1, e2):
        assert structural_hash(e1) == structural_hash(e2)
    assert structural_equal(e1, e2) == structural_equal(e2, e1)
