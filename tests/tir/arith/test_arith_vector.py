"""Ramp/broadcast rules: structure on examples, values lane by lane on random cases."""

import random

from _arith_eval import evaluate
from hypothesis import given, settings
from hypothesis import strategies as st

from unity import tir
from unity.ir.structural import assert_structural_equal
from unity.tir.arith import Analyzer

i, f = tir.Var("i"), tir.Var("f", "float32")


def bc(value, lanes=4):
    return tir.Broadcast(tir.const(value), lanes)


def ramp(base, stride=1, lanes=4):
    return tir.Ramp(base, tir.const(stride), lanes)


def _ana() -> Analyzer:
    ana = Analyzer()
    ana.bind(i, tir.Range.from_min_extent(0, 16))
    return ana


def check(before, expected):
    assert_structural_equal(_ana().simplify(before), expected, map_free_vars=False)


def test_ramp_division_with_one_quotient_is_a_broadcast():
    check(ramp(i * 8) // bc(8), tir.Broadcast(i, 4))
    check(ramp(i * 8 + 4) // bc(8), tir.Broadcast(i, 4))
    check(ramp(i * 8) % bc(8), ramp(tir.const(0)))
    check(ramp(i * 8 + 4) % bc(8), ramp(tir.const(4)))


def test_ramp_crossing_a_multiple_stays():
    before = ramp(i * 8 + 5) // bc(8)
    check(before, before)


def test_stride_multiple_of_the_divisor():
    check(ramp(i, 8) // bc(4), tir.Ramp(i // 4, tir.const(2), 4))
    check(ramp(i, 8) % bc(4), tir.Broadcast(i % 4, 4))


def test_lane_arithmetic():
    check(ramp(i * 8) + bc(2), ramp(i * 8 + 2))
    check(bc(2) + ramp(i), ramp(i + 2))
    check(bc(2) + bc(3), bc(5))
    check(ramp(i * 8) * bc(2), ramp(i * 16, 2))
    check(ramp(i, 3) - ramp(i, 1), tir.Ramp(tir.const(0), tir.const(2), 4))
    check(ramp(i) - ramp(i), bc(0))
    check(tir.Broadcast(f, 4) * tir.Broadcast(tir.const(1.0), 4), tir.Broadcast(f, 4))


@settings(max_examples=150, deadline=None)
@given(
    st.integers(-3, 3), st.integers(-9, 9), st.integers(0, 9), st.sampled_from([2, 4, 8]),
    st.sampled_from([1, 2, 3, 4, 8, 16]), st.sampled_from(["//", "%", "+", "-", "*"]),
    st.integers(0, 2**16),
)  # fmt: skip
def test_vector_rules_keep_lane_values(coeff, offset, stride, lanes, c, op, seed):
    a, b = ramp(i * coeff + offset, stride, lanes), tir.Broadcast(tir.const(c), lanes)
    expr = {"//": a // b, "%": a % b, "+": a + b, "-": b - a, "*": a * b}[op]
    simplified = _ana().simplify(expr)
    rng = random.Random(seed)
    for _ in range(10):
        env = {i: rng.randrange(0, 16)}
        assert evaluate(simplified, env) == evaluate(expr, env)
