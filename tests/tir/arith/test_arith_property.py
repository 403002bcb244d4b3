"""Property tests: simplified expressions evaluate like the originals on points in range.

Expressions are int64 (no wrap-around for the magnitudes drawn) over variables with
random bound ranges; divisions use nonzero constants of both signs or a positive variable.
"""

import random

from _arith_eval import evaluate
from hypothesis import given, settings
from hypothesis import strategies as st

from unity import tir
from unity.tir.arith import Analyzer

VARS = tuple(tir.Var(name, "int64") for name in ("a", "b", "c", "d"))
DIVISOR = tir.Var("p", "int64")  # bound to [1, 9]
SETTINGS = settings(max_examples=250, deadline=None)


def _const(v: int) -> tir.PrimExpr:
    return tir.const(v, "int64")


_LEAVES = st.one_of(st.sampled_from(VARS), st.integers(-20, 20).map(_const))
_ARITH = (tir.add, tir.sub, tir.mul, tir.min, tir.max)
_DIVS = (tir.floordiv, tir.floormod, tir.truncdiv, tir.truncmod)
_CMPS = (tir.lt, tir.le, tir.gt, tir.ge, tir.eq, tir.ne)


def _extend(children: st.SearchStrategy) -> st.SearchStrategy:
    divisor = st.one_of(
        st.sampled_from([-8, -3, -1, 1, 2, 3, 4, 8, 16, 32]).map(_const), st.just(DIVISOR)
    )
    return st.one_of(
        st.builds(lambda f, x, y: f(x, y), st.sampled_from(_ARITH), children, children),
        st.builds(lambda f, x, y: f(x, y), st.sampled_from(_DIVS), children, divisor),
        st.builds(lambda k, x, y: x * k + y, st.sampled_from([2, 4, 8, 32]), children, children),
        st.builds(
            lambda f, x, y, t, e: tir.select(f(x, y), t, e),
            st.sampled_from(_CMPS),
            children,
            children,
            children,
            children,
        ),
    )


INT_EXPRS = st.recursive(_LEAVES, _extend, max_leaves=10)
BOOL_EXPRS = st.recursive(
    st.builds(lambda f, x, y: f(x, y), st.sampled_from(_CMPS), INT_EXPRS, INT_EXPRS),
    lambda kids: st.one_of(
        st.builds(tir.logical_and, kids, kids),
        st.builds(tir.logical_or, kids, kids),
        kids.map(lambda e: ~e),
    ),
    max_leaves=4,
)
RANGES = st.tuples(st.integers(-10, 10), st.integers(1, 40))


def _setup(ranges: list[tuple[int, int]]) -> Analyzer:
    ana = Analyzer()
    for var, (lo, ext) in zip(VARS, ranges):
        ana.bind(var, tir.Range(_const(lo), _const(ext)))
    ana.bind(DIVISOR, tir.Range(_const(1), _const(9)))
    return ana


def _points(ranges: list[tuple[int, int]], seed: int, count: int = 30) -> list[dict[tir.Var, int]]:
    rng = random.Random(seed)
    points = []
    for k in range(count):
        env = {var: (lo if k == 0 else lo + ext - 1 if k == 1 else rng.randrange(lo, lo + ext))
               for var, (lo, ext) in zip(VARS, ranges)}  # fmt: skip
        env[DIVISOR] = rng.randint(1, 9)
        points.append(env)
    return points


@SETTINGS
@given(INT_EXPRS, st.lists(RANGES, min_size=4, max_size=4), st.integers(0, 2**16))
def test_simplify_keeps_integer_values(expr, ranges, seed):
    ana = _setup(ranges)
    simplified = ana.simplify(expr)
    bound = ana.const_int_bound(expr)
    for env in _points(ranges, seed):
        value = evaluate(expr, env)
        assert evaluate(simplified, env) == value
        assert bound.min_value <= value <= bound.max_value


@SETTINGS
@given(BOOL_EXPRS, st.lists(RANGES, min_size=4, max_size=4), st.integers(0, 2**16))
def test_simplify_keeps_conditions_and_proofs_are_sound(cond, ranges, seed):
    ana = _setup(ranges)
    simplified = ana.simplify(cond)
    proven = ana.can_prove(cond)
    for env in _points(ranges, seed):
        value = evaluate(cond, env)
        assert evaluate(simplified, env) == value
        assert value or not proven


@SETTINGS
@given(INT_EXPRS, st.lists(RANGES, min_size=4, max_size=4), st.integers(0, 2**16))
def test_int_set_contains_every_value(expr, ranges, seed):
    ana = Analyzer()
    ana.bind(DIVISOR, tir.Range(_const(1), _const(9)))
    doms = {var: tir.Range(_const(lo), _const(ext)) for var, (lo, ext) in zip(VARS, ranges)}
    s = ana.int_set(expr, doms)
    for env in _points(ranges, seed):
        value = evaluate(expr, env)
        if s.min_value is not None:
            assert evaluate(s.min_value, env) <= value
        if s.max_value is not None:
            assert value <= evaluate(s.max_value, env)


@SETTINGS
@given(BOOL_EXPRS, INT_EXPRS, st.lists(RANGES, min_size=4, max_size=4), st.integers(0, 2**16))
def test_simplify_under_a_constraint_holds_where_the_constraint_does(cond, expr, ranges, seed):
    ana = _setup(ranges)
    with ana.constraint_scope(cond):
        simplified = ana.simplify(expr)
    for env in _points(ranges, seed, count=60):
        if evaluate(cond, env):
            assert evaluate(simplified, env) == evaluate(expr, env)
