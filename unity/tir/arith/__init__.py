"""Integer arithmetic analysis: simplifier, bounds, interval sets, affine maps, sympy bridge.

Example:
    >>> from unity import tir
    >>> from unity.tir.arith import Analyzer
    >>> i0, i1 = tir.Var("i0"), tir.Var("i1")
    >>> ana = Analyzer()
    >>> ana.bind(i1, tir.Range.from_min_extent(0, 32))
    >>> ana.simplify((i0 * 32 + i1) // 32) is i0
    True
"""

from unity.tir.arith.analyzer import Analyzer
from unity.tir.arith.const_int_bound import NEG_INF, POS_INF, ConstIntBound
from unity.tir.arith.int_set import IntervalSet, eval_set
from unity.tir.arith.iter_affine import IterMapResult, IterSplit, IterSum, detect_iter_map
from unity.tir.arith.pattern import P, Rule, RuleSet, rewrite
from unity.tir.arith.sympy_bridge import from_sympy, to_sympy

__all__ = [
    "NEG_INF", "POS_INF", "Analyzer", "ConstIntBound", "IntervalSet", "IterMapResult",
    "IterSplit", "IterSum", "P", "Rule", "RuleSet", "detect_iter_map", "eval_set", "from_sympy",
    "rewrite", "to_sympy",
]  # fmt: skip
