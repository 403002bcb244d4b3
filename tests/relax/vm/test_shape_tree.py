"""Sympy shapes -> VM shape trees -> Python over slots: same values as sympy."""

import pytest
import sympy

from unity.relax.struct_info import sym
from unity.relax.vm.shape_tree import UnboundSymbolError, to_tree
from unity.runtime.vm_checks import compile_tree

n, m = sym("n"), sym("m")
SLOTS = {n: 0, m: 1}


@pytest.mark.parametrize(
    "expr",
    [
        sympy.Integer(7), n, 2 * n + 1, n * m - 3, n**2, sympy.floor(n / 2),
        sympy.floor((n + m) / 3), sympy.ceiling(n / 4), sympy.Mod(n, 3),
        sympy.Min(n, m), sympy.Max(n, 2 * m, 5), (n - 1) * (m + 2),
    ],
)  # fmt: skip
def test_tree_matches_sympy(expr):
    fn = compile_tree(to_tree(expr, SLOTS))
    for nv, mv in [(1, 1), (5, 3), (17, 4), (64, 9)]:
        assert fn([nv, mv]) == int(expr.subs({n: nv, m: mv}))


def test_unbound_symbol_and_non_integer():
    with pytest.raises(UnboundSymbolError):
        to_tree(sym("k") + 1, SLOTS)
    with pytest.raises(ValueError, match="not an integer expression"):
        to_tree(n / 3, SLOTS)
