"""Rewrite math intrinsics that have no LLVM intrinsic into arithmetic, `exp` and selects.

Before::

    B[i] = T.sigmoid(A[i])

After ``LowerIntrinsics(fast_exp=False)``::

    B[i] = T.float32(1) / (T.float32(1) + T.exp(T.float32(0) - A[i]))

With `fast_exp` (the default), float32 `exp` itself becomes a polynomial and selects
(see `_fast_exp`), so softmax and gelu vectorize.  After this pass only calls whose op
has a non-None `"llvm"` attribute remain (log, sqrt, fabs, floor, ...), so the CPU codegen
maps each call to one LLVM intrinsic.  Values a rewrite uses twice are bound with `Let`.
Every rewrite works lane-wise on vectors too (constants are built in the argument's
dtype, so they broadcast).  Approximations are accurate to a few float32 ulps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from unity.ir import dtype as dt
from unity.ir.op import Op
from unity.tir import op
from unity.tir.expr import (
    Broadcast, Call, FloatImm, IntImm, Let, PrimExpr, Var, const, eq, ne, select,
)  # fmt: skip
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator
from unity.tir.transform._base import PrimFuncPass, with_body


@dataclass(frozen=True)
class LowerIntrinsics(PrimFuncPass):
    """Replace `tanh`, `sigmoid`, `erf`, `rsqrt`, `isnan`, ... by LLVM-supported math.

    Example:
        >>> from unity import te
        >>> from unity.tir.transform import ConvertBlocksToLoops
        >>> A = te.placeholder((64,), name="A")
        >>> B = te.compute((64,), lambda i: te.tanh(A[i]), name="B")
        >>> func = te.create_prim_func([A, B])
        >>> func = ConvertBlocksToLoops().transform_function(func)
        >>> out = LowerIntrinsics()(IRModule({"main": func}))
        >>> "T.tanh" in func.script(), "T.tanh" in out.script()
        (True, False)
    """

    fast_exp: bool = True
    """Also rewrite float32 `exp` into a polynomial (a few ulps, vectorizes: LLVM's
    `llvm.exp` on a vector becomes one libm call per lane)."""

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> from unity import te
            >>> from unity.tir.transform import ConvertBlocksToLoops
            >>> A = te.placeholder((64,), name="A")
            >>> B = te.compute((64,), lambda i: te.tanh(A[i]), name="B")
            >>> func = te.create_prim_func([A, B])
            >>> func = ConvertBlocksToLoops().transform_function(func)
            >>> lowered = LowerIntrinsics().transform_function(func)
            >>> "T.tanh" in lowered.script(), "T.exp" in lowered.script()
            (False, False)
        """
        return with_body(func, _IntrinsicLowerer(self.fast_exp).visit_stmt(func.body))


def _c(x: PrimExpr, value: float) -> PrimExpr:
    """The constant `value` in the dtype of `x` (a broadcast for vectors)."""
    return const(value, x.dtype)


def _poly(x: PrimExpr, coeffs: tuple[float, ...]) -> PrimExpr:
    """Horner evaluation of `coeffs[0] * x^n + ... + coeffs[n]`."""
    acc = _c(x, coeffs[0])
    for coeff in coeffs[1:]:
        acc = acc * x + _c(x, coeff)
    return acc


class _Lets:
    """Name the values a rewrite uses more than once, so the result stays a tree.

    Codegen and the interpreter walk expressions without sharing: a value used twice
    would be computed twice (and nested rewrites would grow exponentially).
    """

    def __init__(self) -> None:
        self.bindings: list[tuple[Var, PrimExpr]] = []

    def __call__(self, name: str, value: PrimExpr) -> PrimExpr:
        if isinstance(value, Var | IntImm | FloatImm | Broadcast):
            return value
        var = Var(name, value.dtype)
        self.bindings.append((var, value))
        return var

    def wrap(self, body: PrimExpr) -> PrimExpr:
        for var, value in reversed(self.bindings):
            body = Let(var, value, body)
        return body


def _rsqrt(let: _Lets, x: PrimExpr) -> PrimExpr:
    return _c(x, 1.0) / op.sqrt(x)


def _sigmoid(let: _Lets, x: PrimExpr) -> PrimExpr:
    return _c(x, 1.0) / (_c(x, 1.0) + op.exp(_c(x, 0.0) - x))


def _tanh(let: _Lets, x: PrimExpr) -> PrimExpr:
    x = let("x", x)
    ax = let("ax", op.fabs(x))
    t = let("t", op.exp(_c(x, -2.0) * ax))
    big = let("big", (_c(x, 1.0) - t) / (_c(x, 1.0) + t))  # tanh(|x|), exact enough away from 0
    big = select(x < _c(x, 0.0), _c(x, 0.0) - big, big)
    small = x * _poly(let("x2", x * x), (62 / 2835, -17 / 315, 2 / 15, -1 / 3, 1.0))  # |x| < 0.3
    return select(ax < _c(x, 0.3), small, big)


# erf(x) = x P(x^2) / Q(x^2) on |x| <= 4 (beyond, erf rounds to +-1 in float32): a
# rational fit of ours (reweighted least squares to near-minimax), relative error 6.5e-8
# in exact arithmetic, within 7 float32 ulps evaluated in float32 (and held to [-1, 1]).
# Coefficients lowest degree first.
_ERF_P = (
    1.1283790939770146, 0.20712595880477952, 0.05152497662821159, 0.003990605104884075,
    0.00014728752920977769, -1.9423231755845344e-06, 1.9110989999896862e-08,
)
_ERF_Q = (
    1.0, 0.5168918493995529, 0.11797104030998212, 0.014958132200721126,
    0.0010211215084973983,
)


def _erf(let: _Lets, x: PrimExpr) -> PrimExpr:
    xc = let("xc", _clamp(let, x, -4.0, 4.0))  # NaN passes through; +-inf -> +-1
    u = let("u", xc * xc)
    ratio = xc * _poly(u, _ERF_P[::-1]) / _poly(u, _ERF_Q[::-1])
    return _clamp(let, ratio, -1.0, 1.0)  # float32 rounding reaches 1 + 1 ulp near |x| = 4


def _clamp(let: _Lets, x: PrimExpr, lo: float, hi: float) -> PrimExpr:
    """`x` limited to `[lo, hi]` with two selects (a NaN stays NaN).  Each compares the
    value it passes on, so that LLVM makes each one instruction (x86 `maxps`, `minps`)."""
    x = let("x", x)
    raised = let("raised", select(x < _c(x, lo), _c(x, lo), x))
    return select(raised > _c(x, hi), _c(x, hi), raised)


def _atan(let: _Lets, x: PrimExpr) -> PrimExpr:
    x = let("x", x)
    ax = let("ax", op.fabs(x))
    inverted = let("inv", ax > _c(x, 1.0))
    z = let("z", select(inverted, _c(x, 1.0) / ax, ax))  # atan(z) = pi/2 - atan(1/z)
    shifted = let("shift", z > _c(x, math.tan(math.pi / 8)))
    w = let("w", select(shifted, (z - _c(x, 1.0)) / (z + _c(x, 1.0)), z))  # pi/4 + atan(w)
    series = tuple((-1.0) ** k / (2 * k + 1) for k in range(9, -1, -1))
    r = let("r", w * _poly(w * w, series))
    r = let("r", select(shifted, _c(x, math.pi / 4) + r, r))
    r = let("r", select(inverted, _c(x, math.pi / 2) - r, r))
    return select(x < _c(x, 0.0), _c(x, 0.0) - r, r)


def _asin(let: _Lets, x: PrimExpr) -> PrimExpr:
    x = let("x", x)
    return _atan(let, let("q", x / op.sqrt(_c(x, 1.0) - x * x)))


def _acos(let: _Lets, x: PrimExpr) -> PrimExpr:
    return _c(x, math.pi / 2) - _asin(let, x)


def _atan2(let: _Lets, y: PrimExpr, x: PrimExpr) -> PrimExpr:
    y, x = let("y", y), let("x", x)
    zero = _c(x, 0.0)
    a = let("a", _atan(let, let("q", y / x)))
    r = select(x < zero, select(y < zero, a - _c(x, math.pi), a + _c(x, math.pi)), a)
    on_axis = select(y > zero, _c(x, math.pi / 2), select(y < zero, _c(x, -math.pi / 2), zero))
    return select(eq(x, zero), on_axis, r)


def _sinh(let: _Lets, x: PrimExpr) -> PrimExpr:
    x = let("x", x)
    e = let("e", op.exp(x))
    big = (e - _c(x, 1.0) / e) * _c(x, 0.5)
    small = x * _poly(let("x2", x * x), (1 / 362880, 1 / 5040, 1 / 120, 1 / 6, 1.0))  # |x| < 0.5
    return select(op.fabs(x) < _c(x, 0.5), small, big)


def _cosh(let: _Lets, x: PrimExpr) -> PrimExpr:
    e = let("e", op.exp(x))
    return (e + _c(x, 1.0) / e) * _c(x, 0.5)


_LN2_HI, _LN2_LO = 0.693145751953125, 1.428606765330187e-06  # ln 2 = hi + lo, hi exact


_EXP_POLY = (
    1.0, 1.000000034080241, 0.49999993852524055, 0.16666421885855864, 0.041668056649480006,
    0.008374965403126308, 0.0013842711496029857,
)
"""`e^r` on `|r| <= ln2 / 2`, lowest degree first: a near-minimax fit of ours with the
constant held at 1 (relative error 2.1e-9)."""

_ROUND_MAGIC = 12582912.0
"""`1.5 * 2^23`: adding it to a float32 of magnitude below `2^22` rounds that float to
the nearest integer, which then sits in the low bits of the sum's mantissa."""


def _fast_exp(let: _Lets, x: PrimExpr) -> PrimExpr:
    """`exp(x)` for float32 with only arithmetic, selects, bit reinterprets and `ldexp`
    (so it vectorizes).

    `x = n ln2 + r` with `|r| <= ln2 / 2` (Cody-Waite), `e^r` by a degree-6 polynomial,
    scaled by `2^n` (`ldexp`: AVX-512's `vscalefps`, else two exponent-field products).  `n` comes from adding `_ROUND_MAGIC`, as a
    float (the sum minus the constant) and as an int32 (the sum's bits minus the
    constant's), with no rounding instruction and no float-to-int conversion.  Within 2
    ulps on the normal range; inf and -inf clamp to the range's ends (inf, 0) and a NaN
    flows through every step (its bits make some scale, and NaN times it is NaN; nothing
    is undefined), so there is no select for it.  On Zen 3 an 8-lane exp costs ~15 vector
    instructions (the degree-7, `floor` and float-to-int form before it: ~27, 1.9x slower
    over a 128x3072 tensor); `vscalefps` saves 6 of them on Zen 4.  Below `_EXP_LOWEST`
    the result is 0 (exp's subnormal results, below 1.6e-38, are flushed: computing them
    cost a microcode assist per lane).
    """
    x = let("x", x)
    xc = let("xc", _clamp(let, x, _EXP_LOWEST, 89.0))
    magic = _c(x, _ROUND_MAGIC)
    shifted = let("t", xc * _c(x, 1 / math.log(2)) + magic)
    nf = let("n", shifted - magic)
    r = let("r", (xc - nf * _c(x, _LN2_HI)) - nf * _c(x, _LN2_LO))
    p = _poly(r, _EXP_POLY[::-1])
    scaled = op.ldexp(p, op.reinterpret(shifted) - op.reinterpret(magic))
    return select(x < _c(x, _EXP_LOWEST), _c(x, 0.0), scaled)


_EXP_LOWEST = -87.0
"""Below this `exp` is 0: from `-87.0` up, `2^n * p` is a normal float (`n >= -126`, and
`p > 1` where `n = -126`).  Results in the subnormal range made every lane that reached
them a microcode assist: a softmax over a causal mask (half its inputs `-1e4` or
`-inf`) ran 7x slower than over unmasked scores (0.178 ms against 0.026 for 6 x 100 x 100)."""


def _pow(let: _Lets, x: PrimExpr, y: PrimExpr) -> PrimExpr | None:
    """`x ** y` for a constant exponent that products and square roots compute exactly
    enough (LRN's 0.75, squares, reciprocals), else None (kept as `llvm.pow`, one libm
    call per lane).  Square roots see `-inf` as `inf` and `-0` as `+0`, as `pow` does."""
    value = y.value if isinstance(y, Broadcast) else y
    if not isinstance(value, FloatImm) or value.value not in _POW_FORMS:
        return None
    roots, form = _POW_FORMS[value.value]
    x = let("x", x)
    if not roots:
        return form(x, _c(x, 1.0))
    x = let("x", select(eq(x, _c(x, -math.inf)), _c(x, math.inf), x) + _c(x, 0.0))
    r = let("r", op.sqrt(x))
    return form(r, let("q", op.sqrt(r)), _c(x, 1.0))


_POW_FORMS: dict[float, tuple[bool, Callable[..., PrimExpr]]] = {
    1.0: (False, lambda x, one: x),
    2.0: (False, lambda x, one: x * x),
    3.0: (False, lambda x, one: x * x * x),
    -1.0: (False, lambda x, one: one / x),
    -2.0: (False, lambda x, one: one / (x * x)),
    0.5: (True, lambda r, q, one: r),
    0.25: (True, lambda r, q, one: q),
    0.75: (True, lambda r, q, one: r * q),
    -0.5: (True, lambda r, q, one: one / r),
}
"""Exponent -> (uses roots, form): ``form(x, one)``, or ``form(sqrt(x), sqrt(sqrt(x)), one)``."""


_RULES: dict[Op, Callable[..., PrimExpr | None]] = {
    op.rsqrt_op: _rsqrt,                                   # rsqrt(x) -> 1 / sqrt(x)
    op.sigmoid_op: _sigmoid,                               # sigmoid(x) -> 1 / (1 + exp(-x))
    op.tanh_op: _tanh,                                     # (1 - e^-2|x|) / (1 + e^-2|x|), signed
    op.erf_op: _erf,                                       # a rational fit on |x| <= 4
    op.isnan_op: lambda let, x: _self_ne(let("x", x)),     # isnan(x) -> x != x
    op.isinf_op: lambda let, x: eq(op.fabs(x), _c(x, math.inf)),  # isinf(x) -> |x| == inf
    op.tan_op: lambda let, x: _tan(let("x", x)),           # tan(x) -> sin(x) / cos(x)
    op.atan_op: _atan,                                     # range reduction + Taylor
    op.asin_op: _asin,                                     # asin(x) -> atan(x / sqrt(1 - x^2))
    op.acos_op: _acos,                                     # acos(x) -> pi/2 - asin(x)
    op.atan2_op: _atan2,                                   # atan(y / x) + quadrant
    op.sinh_op: _sinh,                                     # (e^x - e^-x) / 2, Taylor near 0
    op.cosh_op: _cosh,                                     # (e^x + e^-x) / 2
    op.pow_op: _pow,                                       # constant exponents: products, roots
}  # fmt: skip
"""How each intrinsic without an LLVM counterpart is computed: `rule(let, *args)`."""


def _self_ne(x: PrimExpr) -> PrimExpr:
    return ne(x, x)


def _tan(x: PrimExpr) -> PrimExpr:
    return op.sin(x) / op.cos(x)


class _IntrinsicLowerer(StmtExprMutator):
    def __init__(self, fast_exp: bool) -> None:
        super().__init__()
        self.fast_exp = fast_exp

    def visit_call_(self, call: Call) -> PrimExpr:
        call = self._mutate_fields(call)
        rule = _RULES.get(call.op)
        if call.op is op.exp_op and self.fast_exp and dt.element(call.dtype) == "float32":
            rule = _fast_exp
        if rule is None:
            return call
        let = _Lets()
        lowered = rule(let, *call.args)
        return call if lowered is None else self.visit_expr(let.wrap(lowered))
