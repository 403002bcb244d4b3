"""`to_sympy` / `from_sympy`: lossless round trips of integer arithmetic."""

import random

import pytest
import sympy
from _arith_eval import evaluate

from unity import tir
from unity.tir.arith import from_sympy, to_sympy

i, j = tir.Var("i"), tir.Var("j")
n = tir.SizeVar("n")

CASES = [
    i * 32 + j,
    (i * 32 + j) // 8,
    (i * 4 + j) % 8,
    i // j,
    i % j,
    tir.min(i, j) + tir.max(i * 2, n),
    tir.truncdiv(i - 7, 3),
    tir.truncmod(i - 7, 3),
    tir.select(i < j, i * 3, j - 1),
    -i + 5,
    (i - j) * (i + j),
    ((i * 3 + 1) // 4 + j) // 2,
]


@pytest.mark.parametrize("expr", CASES)
def test_round_trip_keeps_values(expr):
    var_map: dict = {}
    back = from_sympy(to_sympy(expr, var_map), var_map, dtype="int32")
    rng = random.Random(0)
    for _ in range(50):
        env = {
            i: rng.randint(-40, 40),
            j: rng.choice([-7, -3, -1, 1, 2, 5, 9]),
            n: rng.randint(0, 30),
        }
        assert evaluate(back, env) == evaluate(expr, env)


def test_floor_division_and_modulo_map_to_floor_and_mod():
    si, sj = sympy.symbols("i j", integer=True)
    assert to_sympy(i // j) == sympy.floor(si / sj)
    assert to_sympy(i % j) == sympy.Mod(si, sj)
    assert to_sympy(tir.min(i, j)) == sympy.Min(si, sj)


def test_size_var_is_nonnegative():
    s = to_sympy(n)
    assert s.is_nonnegative and s.is_integer


def test_sympy_round_trip_of_canonical_forms():
    si, sj = sympy.symbols("i j", integer=True)
    for s in (
        si * 32 + sj,
        sympy.floor(si / 4),
        sympy.Mod(si + 3, 8),
        sympy.Max(si, sj + 1),
        sympy.ceiling(si / 8),
    ):
        again = to_sympy(from_sympy(s, {"i": i, "j": j}), {i: si, j: sj})
        for vi, vj in ((-9, 4), (0, 0), (13, -5), (7, 7)):
            assert again.subs({si: vi, sj: vj}) == s.subs({si: vi, sj: vj})


def test_ceiling_is_exact():
    s = sympy.ceiling(sympy.Symbol("i", integer=True) / 8)
    e = from_sympy(s, {"i": i})
    for v in range(-20, 20):
        assert evaluate(e, {i: v}) == -(-v // 8)


def test_name_clash_gets_a_suffix():
    other = tir.Var("i")
    var_map: dict = {}
    s = to_sympy(i + other, var_map)
    assert len(s.free_symbols) == 2
    assert from_sympy(s, var_map) is not None


def test_constants_take_the_variables_dtype():
    assert from_sympy(sympy.Integer(5), {}).dtype == "int64"
    e = from_sympy(sympy.ceiling(sympy.Symbol("i", integer=True) / 8), {"i": i})
    assert e.dtype == "int32"
    w = tir.Var("w", "int64")
    assert from_sympy(sympy.Symbol("w", integer=True) + 1, {"w": w}).dtype == "int64"


def test_errors_name_the_problem():
    with pytest.raises(TypeError, match="has no tir.Var"):
        from_sympy(sympy.Symbol("q", integer=True), {})
    with pytest.raises(TypeError, match="rational"):
        from_sympy(sympy.Symbol("q", integer=True) / 2, {"q": i})
    with pytest.raises(TypeError, match="integer expressions only"):
        to_sympy(tir.Var("f", "float32") + 1.0)
    A = tir.decl_buffer((4,), "int32", "A")
    with pytest.raises(TypeError, match="BufferLoad"):
        to_sympy(tir.BufferLoad(A, (i,)))
