"""The rule-table pattern language."""

import pytest

from unity import tir
from unity.tir.arith import P, Rule, RuleSet, rewrite

x, y, c1, c2 = P.var("x"), P.var("y"), P.const("c1"), P.const("c2")
i, j = tir.Var("i"), tir.Var("j")


def test_repeated_name_must_bind_equal_nodes():
    rules = RuleSet([Rule(x - x, lambda x: tir.const(0))])  # x - x -> 0
    assert rules.apply((i + 1) - (i + 1)).value == 0  # structurally equal, distinct objects
    assert rules.apply(i - j) is None


def test_constants_and_literals():
    rules = RuleSet([
        Rule((x + c1) + c2, lambda x, c1, c2: x + (c1.value + c2.value)),  # fold consts
        Rule(x * 0, lambda x: tir.const(0)),                               # x * 0 -> 0
    ])  # fmt: skip
    out = rules.apply((i + 3) + 4)
    assert out.a is i and out.b.value == 7
    assert rules.apply((i + j) + 4) is None
    assert rules.apply(i * 0).value == 0


def test_declining_rule_lets_the_next_one_try():
    rules = RuleSet([
        Rule(x + y, lambda x, y: None),                                    # declines
        Rule(x + 0, lambda x: x),                                          # x + 0 -> x
    ])  # fmt: skip
    assert rules.apply(i + 0) is i


def test_rewrite_runs_bottom_up_to_a_fixed_point():
    rules = RuleSet([Rule(x * 1, lambda x: x), Rule(x + 0, lambda x: x)])
    assert rewrite(((i * 1) + 0) * 1, rules) is i


def test_min_max_select_patterns():
    rules = RuleSet([
        Rule(P.min(x, x), lambda x: x),                                    # min(x, x) -> x
        Rule(P.select(True, x, y), lambda x, y: x),                        # select(true, x, y) -> x
    ])  # fmt: skip
    assert rules.apply(tir.min(i, i)) is i
    assert rules.apply(tir.select(tir.const(True), i, j)) is i


def test_bare_name_is_not_a_rule():
    with pytest.raises(TypeError, match="must start with an operator"):
        Rule(x, lambda x: x)
