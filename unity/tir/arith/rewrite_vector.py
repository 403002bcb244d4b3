"""Rules for vector lanes: `Ramp` and `Broadcast` arithmetic, and ramp division by bounds.

What vectorized loops leave behind: `ramp(i*8, 1, 4) + broadcast(2, 4)`,
`ramp(i*8, 1, 4) // broadcast(8, 4)`.  Lane-wise operations on broadcasts are exact for
floats too (the same operation per lane); ramps are integer only.

Example:
    >>> from unity import tir
    >>> from unity.tir.arith import Analyzer
    >>> i = tir.Var("i")
    >>> ramp = tir.Ramp(i * 8, tir.const(1), 4)
    >>> out = Analyzer().simplify(ramp // tir.Broadcast(tir.const(8), 4))
    >>> type(out).__name__, out.value is i
    ('Broadcast', True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from unity.tir import expr as E
from unity.tir.arith.canonical import split_multiples
from unity.tir.arith.const_int_bound import POS_INF
from unity.tir.arith.linear import Linear, make_int
from unity.tir.arith.pattern import P, Rule, RuleSet

if TYPE_CHECKING:
    from unity.tir.arith.rewrite_simplify import Simplifier

b1, s1, b2, s2, v1, v2 = (P.var(n) for n in ("b1", "s1", "b2", "s2", "v1", "v2"))
ramp1, ramp2 = P.ramp(b1, s1, "l"), P.ramp(b2, s2, "l")
bc1, bc2 = P.broadcast(v1, "l"), P.broadcast(v2, "l")

VECTOR_RULES = RuleSet([
    Rule(bc1 + bc2, lambda v1, v2, l: E.Broadcast(v1 + v2, l)),        # bc(x) + bc(y) -> bc(x + y)
    Rule(bc1 - bc2, lambda v1, v2, l: E.Broadcast(v1 - v2, l)),        # bc(x) - bc(y) -> bc(x - y)
    Rule(bc1 * bc2, lambda v1, v2, l: E.Broadcast(v1 * v2, l)),        # bc(x) * bc(y) -> bc(x * y)
    Rule(bc1 // bc2, lambda v1, v2, l: E.Broadcast(v1 // v2, l)),      # bc(x) // bc(y) -> bc(x // y)
    Rule(bc1 % bc2, lambda v1, v2, l: E.Broadcast(v1 % v2, l)),        # bc(x) % bc(y) -> bc(x % y)
    Rule(P.min(bc1, bc2), lambda v1, v2, l: E.Broadcast(E.Min(v1, v2), l)),  # lane-wise min
    Rule(P.max(bc1, bc2), lambda v1, v2, l: E.Broadcast(E.Max(v1, v2), l)),  # lane-wise max
    Rule(ramp1 + bc2, lambda b1, s1, v2, l: E.Ramp(b1 + v2, s1, l)),   # ramp(b, s) + bc(x) -> ramp(b + x, s)
    Rule(bc1 + ramp2, lambda v1, b2, s2, l: E.Ramp(v1 + b2, s2, l)),   # bc(x) + ramp(b, s) -> ramp(x + b, s)
    Rule(ramp1 - bc2, lambda b1, s1, v2, l: E.Ramp(b1 - v2, s1, l)),   # ramp(b, s) - bc(x) -> ramp(b - x, s)
    Rule(bc1 - ramp2, lambda v1, b2, s2, l: E.Ramp(v1 - b2, 0 - s2, l)),  # bc(x) - ramp(b, s) -> ramp(x - b, -s)
    Rule(ramp1 + ramp2, lambda b1, s1, b2, s2, l: E.Ramp(b1 + b2, s1 + s2, l)),  # add bases and strides
    Rule(ramp1 - ramp2, lambda b1, s1, b2, s2, l: E.Ramp(b1 - b2, s1 - s2, l)),  # subtract them
    Rule(ramp1 * bc2, lambda b1, s1, v2, l: E.Ramp(b1 * v2, s1 * v2, l)),  # ramp(b, s) * bc(x) -> ramp(b*x, s*x)
    Rule(bc1 * ramp2, lambda v1, b2, s2, l: E.Ramp(b2 * v1, s2 * v1, l)),  # bc(x) * ramp(b, s) -> ramp(b*x, s*x)
])  # fmt: skip


def ramp_divmod(simp: Simplifier, cls: type, ramp: E.Ramp, c: int) -> E.PrimExpr | None:
    """Simplify `ramp(b, s, l) // c` or `% c` (c > 0, constant s >= 0), else None.

    When all lanes share one quotient the division is a broadcast and the modulo a ramp;
    when `c` divides the stride, the division is a ramp and the modulo a broadcast.

    Example:
        >>> from unity import tir
        >>> from unity.tir.arith import Analyzer
        >>> i = tir.Var("i")
        >>> out = Analyzer().simplify(tir.Ramp(i * 8 + 4, tir.const(1), 4) % tir.Broadcast(tir.const(8), 4))
        >>> type(out).__name__, out.base.value
        ('Ramp', 4)
    """
    stride = ramp.stride
    if type(stride) is not E.IntImm or stride.value < 0:
        return None
    base, s, lanes, dtype = ramp.base, stride.value, ramp.lanes, ramp.base.dtype
    is_div = cls is E.FloorDiv
    c_imm = make_int(dtype, c)
    if s % c == 0:
        if is_div:
            return E.Ramp(simp.simplify(E.FloorDiv(base, c_imm)), make_int(dtype, s // c), lanes)
        return E.Broadcast(simp.simplify(E.FloorMod(base, c_imm)), lanes)
    q, r = split_multiples(simp.linear(base), c)
    lo, hi = simp.bounds.bound_linear(r)
    last = hi + s * (lanes - 1)
    if lo <= -POS_INF or last >= POS_INF or lo // c != last // c:
        return None
    k = lo // c
    if is_div:
        return E.Broadcast(simp.emit(q.plus(Linear(dtype, None, k))), lanes)
    return E.Ramp(simp.emit(r.plus(Linear(dtype, None, -k * c))), stride, lanes)
