"""Share storage between intermediate tensors whose lifetimes do not overlap.

Before::

    @R.function
    def main(x: R.Tensor((2, 4), "float32")):
        alloc = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
        _ = cls.exp(x, alloc, out_sinfo=R.Tuple())
        alloc1 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
        _1 = cls.exp(alloc, alloc1, out_sinfo=R.Tuple())
        alloc2 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
        _2 = cls.exp(alloc1, alloc2, out_sinfo=R.Tuple())
        alloc3 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
        _3 = cls.exp(alloc2, alloc3, out_sinfo=R.Tuple())
        return alloc3

After ``StaticPlanBlockMemory()`` (``alloc2`` reuses the storage of ``alloc``, dead by then;
the returned ``alloc3`` is not planned)::

    @R.function
    def main(x: R.Tensor((2, 4), "float32")):
        storage = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
        _ = cls.exp(x, alloc, out_sinfo=R.Tuple())
        storage1 = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc1 = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
        _1 = cls.exp(alloc, alloc1, out_sinfo=R.Tuple())
        alloc2 = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
        _2 = cls.exp(alloc1, alloc2, out_sinfo=R.Tuple())
        alloc3 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
        _3 = cls.exp(alloc2, alloc3, out_sinfo=R.Tuple())
        return alloc3

Rules (TVM's, in our words):

- Only `R.builtin.alloc_tensor` results are planned, within one `SeqExpr` (a function body
  or an `If` branch; its blocks in order).  A tensor's life runs from its allocation to the
  last use of it or of anything aliasing it (`y = x`, tuples, tuple items, `match_cast`).
- Tensors that escape are left alone: returned (the body of the `SeqExpr`), passed to a call
  that is not a PrimFunc kernel (the callee may keep them), or used inside an `If`.
- Storage is bytes, so tensors of any dtypes may share it.  A request takes the smallest
  free storage that is large enough, else grows the largest free one, else makes a new one.
- Sizes are sympy expressions.  A symbol with an upper bound in the function attribute
  ``tir_var_upper_bound`` (``{"n": 1024}``) is replaced by its bound, so the storage has a
  constant size (the VM checks at run time that each tensor fits).  Unbounded symbolic
  sizes take a storage sympy proves large enough, else grow one it proves smaller; sizes
  it cannot order (rounded by strided layers) share a storage of the ``Max`` of both,
  picked by their sizes at typical symbol values (`TYPICAL_SIZE`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property

import sympy

from unity.ir.module import GlobalVar, IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import (
    Binding, BindingBlock, Call, DataTypeImm, Expr, Function, If, MatchCast, PrimValue, SeqExpr,
    ShapeExpr, Tuple, TupleGetItem, Var, VarBinding,
)  # fmt: skip
from unity.relax.analysis.fresh_names import FreshNames
from unity.relax.expr_functor import ExprVisitor
from unity.relax.struct_info import ObjectStructInfo
from unity.relax.utils import free_symbols
from unity.relax.vm import memory
from unity.relax.vm.builtin import alloc_tensor
from unity.runtime.tensor import numpy_dtype
from unity.tir.function import PrimFunc

UPPER_BOUND_ATTR = "tir_var_upper_bound"
"""Function attribute: ``{"n": 1024}`` bounds symbolic dim `n` for memory planning."""

_NON_RETAINING = (memory.kill_tensor, memory.kill_storage)
"""Ops that use a tensor without keeping it (beside PrimFunc kernels)."""


@dataclass(frozen=True)
class StaticPlanBlockMemory(ModulePass):
    """Rewrite `R.builtin.alloc_tensor` to tensors in shared `R.memory.alloc_storage`s.

    Run it after `CallTIRRewrite`; returns the module itself when nothing is planned.

    Example:
        >>> StaticPlanBlockMemory()(IRModule()).functions
        {}
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Plan every relax function of `mod`."""
        return mod.map_functions(Function, lambda f: _plan_function(mod, f))


def _plan_function(mod: IRModule, func: Function) -> Function:
    bounds = _upper_bounds(func)
    names = FreshNames.of(func, "storage")
    symbols = {s for p in func.params for s in free_symbols(p.struct_info)}
    return func.replace(body=_plan_seq(mod, func.body, bounds, names, symbols))


def _upper_bounds(func: Function) -> dict[str, int]:
    raw = func.attrs.get(UPPER_BOUND_ATTR, {})
    if not isinstance(raw, Mapping):
        raise TypeError(
            f"StaticPlanBlockMemory: function attribute {UPPER_BOUND_ATTR} must map symbol "
            f'names to ints (e.g. {{"n": 1024}}), got {type(raw).__name__}'
        )
    bounds = {}
    for name, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | sympy.Integer) or value < 1:
            raise TypeError(
                f"StaticPlanBlockMemory: {UPPER_BOUND_ATTR}[{name!r}] must be a positive int, "
                f"got {value!r}"
            )
        bounds[str(name)] = int(value)
    return bounds



@dataclass(eq=False)
class _Storage:
    size: sympy.Expr
    dtype: str
    symbols: frozenset[sympy.Symbol]
    """Symbols defined where the storage is first used (a grown size may only use these)."""
    typical: int
    """`size` at typical symbol values (`_typical`)."""
    var: Var | None = None


@dataclass(eq=False)
class _Token:
    var: Var
    index: int
    size: sympy.Expr
    last_use: int
    escapes: bool = False
    storage: _Storage | None = None

    @cached_property
    def typical(self) -> int:
        """`size` at typical symbol values (`_typical`)."""
        return _typical(self.size)


def _bindings(seq: SeqExpr) -> Iterator[tuple[int, Binding]]:
    index = 0
    for block in seq.blocks:
        for binding in block.bindings:
            yield index, binding
            index += 1


def _plan_seq(
    mod: IRModule,
    seq: SeqExpr,
    bounds: dict[str, int],
    names: FreshNames,
    symbols: set[sympy.Symbol],
) -> SeqExpr:
    seq = _plan_branches(mod, seq, bounds, names, symbols)
    tokens = _Liveness(mod, bounds).run(seq)
    planned = [t for t in tokens if not t.escapes]
    if not planned:
        return seq
    _assign_storage(seq, planned, symbols)
    return _rewrite(seq, {t.var: t for t in planned}, names)


def _plan_branches(
    mod: IRModule, seq: SeqExpr, bounds: dict[str, int], names: FreshNames, symbols: set[sympy.Symbol]
) -> SeqExpr:
    """Plan the `SeqExpr`s of `If` branches on their own."""
    blocks = []
    symbols = set(symbols)
    for block in seq.blocks:
        bindings = []
        for b in block.bindings:
            value = b.value  # type: ignore[attr-defined]  # both binding kinds
            if isinstance(value, If):
                b = b.replace(
                    value=value.replace(
                        true_branch=_plan_seq(mod, value.true_branch, bounds, names, symbols),
                        false_branch=_plan_seq(mod, value.false_branch, bounds, names, symbols),
                    )
                )
            symbols |= free_symbols(b.var.struct_info)
            bindings.append(b)
        blocks.append(_with_bindings(block, bindings))
    return _with_blocks(seq, blocks)


def _with_bindings(block: BindingBlock, bindings: list[Binding]) -> BindingBlock:
    """`block` itself when `bindings` are its own, else a copy holding them."""
    if len(bindings) == len(block.bindings) and all(map(operator.is_, bindings, block.bindings)):
        return block
    return block.replace(bindings=tuple(bindings))


def _with_blocks(seq: SeqExpr, blocks: list[BindingBlock]) -> SeqExpr:
    if all(map(operator.is_, blocks, seq.blocks)):
        return seq
    return seq.replace(blocks=tuple(blocks))


class _Liveness:
    """The tokens (planned allocations) of one `SeqExpr`, with their last uses and escapes."""

    def __init__(self, mod: IRModule, bounds: dict[str, int]) -> None:
        self.mod = mod
        self.bounds = bounds
        self.of: dict[Var, set[_Token]] = {}
        self.tokens: list[_Token] = []

    def run(self, seq: SeqExpr) -> list[_Token]:
        for index, binding in _bindings(seq):
            self.binding(index, binding)
        for token in self.used(seq.body, 0, touch=False):
            token.escapes = True
        return self.tokens

    def used(self, expr: Expr, index: int, touch: bool = True) -> set[_Token]:
        """The tokens `expr` refers to (directly or inside tuples), marking a use at `index`."""
        found: set[_Token] = set()
        if isinstance(expr, Var):
            found = set(self.of.get(expr, ()))
        elif isinstance(expr, Tuple):
            for f in expr.fields:
                found |= self.used(f, index, touch)
        elif isinstance(expr, TupleGetItem):
            found = self.used(expr.tuple_value, index, touch)
        if touch:
            for token in found:
                token.last_use = max(token.last_use, index)
        return found

    def binding(self, index: int, binding: Binding) -> None:
        var, value = binding.var, binding.value  # type: ignore[attr-defined]  # both kinds
        if isinstance(binding, MatchCast) or isinstance(value, Var | Tuple | TupleGetItem):
            self.of[var] = self.used(value, index)
        elif isinstance(value, Call):
            self.call(index, var, value)
        elif isinstance(value, If | SeqExpr | Function):
            for token in self._free_var_tokens(value):
                token.escapes = True

    def call(self, index: int, var: Var, call: Call) -> None:
        if call.op is alloc_tensor:
            token = self.new_token(index, var, call)
            if token is not None:
                self.of[var] = {token}
                self.tokens.append(token)
            return
        kernel = isinstance(call.op, GlobalVar) and isinstance(
            self.mod.functions.get(call.op), PrimFunc
        )
        for arg in call.args:
            for token in self.used(arg, index):
                if not (kernel or call.op in _NON_RETAINING):
                    token.escapes = True  # the callee may keep it or return it

    def new_token(self, index: int, var: Var, call: Call) -> _Token | None:
        shape, dtype, device = call.args
        if not (isinstance(shape, ShapeExpr) and isinstance(dtype, DataTypeImm)):
            return None
        if not (isinstance(device, PrimValue) and device.value == 0):
            return None
        size = numpy_dtype(dtype.value).itemsize * math.prod(shape.values, start=sympy.Integer(1))
        return _Token(var, index, self.bounded(sympy.expand(size)), index)

    def bounded(self, size: sympy.Expr) -> sympy.Expr:
        subs = {s: self.bounds[s.name] for s in size.free_symbols if s.name in self.bounds}
        upper = size.subs(subs) if subs else size
        return upper if upper.is_Integer else size

    def _free_var_tokens(self, expr: Expr) -> set[_Token]:
        refs = _Refs()
        refs.visit_expr(expr)
        return {t for v in refs.vars for t in self.of.get(v, ())}


class _Refs(ExprVisitor):
    """Every var an expression mentions (branches and nested functions included)."""

    def __init__(self) -> None:
        self.vars: set[Var] = set()

    def visit_var_(self, var: Var) -> None:
        self.vars.add(var)


def _assign_storage(seq: SeqExpr, tokens: list[_Token], symbols: set[sympy.Symbol]) -> None:
    """Give each token a storage, reusing those whose tokens are all dead."""
    starts = {t.index: t for t in tokens}
    ends: dict[int, list[_Token]] = {}
    for t in tokens:
        ends.setdefault(t.last_use, []).append(t)
    free: list[_Storage] = []
    symbols = set(symbols)
    for index, binding in _bindings(seq):
        token = starts.get(index)
        if token is not None:
            token.storage = _request(free, token, frozenset(symbols))
        symbols |= free_symbols(binding.var.struct_info)
        for t in ends.get(index, ()):
            assert t.storage is not None
            free.append(t.storage)


def _request(free: list[_Storage], token: _Token, symbols: frozenset[sympy.Symbol]) -> _Storage:
    dtype = token.var.struct_info.dtype  # type: ignore[attr-defined]  # a tensor
    fits = [s for s in free if _at_least(s.size, token.size)]
    if fits:
        best = min(fits, key=lambda s: _sort_key(s.size))
        free.remove(best)
        return best
    growable = [
        s for s in free if _at_least(token.size, s.size) and token.size.free_symbols <= s.symbols
    ]
    if growable:
        best = max(growable, key=lambda s: _sort_key(s.size))
        free.remove(best)
        best.size, best.typical = token.size, token.typical
        return best
    shared = _share_unordered(free, token)
    if shared is not None:
        return shared
    return _Storage(token.size, dtype, symbols, token.typical)


TYPICAL_SIZE = 224
"""The value every symbol takes when storages of sizes sympy cannot order are compared
(an image's side; for a batch every size scales alike)."""


def _typical(size: sympy.Expr) -> int:
    """`size` with every symbol at `TYPICAL_SIZE` (0 when that leaves no number)."""
    value = size.subs({s: TYPICAL_SIZE for s in size.free_symbols})
    return int(value) if value.is_number else 0


def _share_unordered(free: list[_Storage], token: _Token) -> _Storage | None:
    """A free symbolic storage for a symbolic `token` whose sizes sympy cannot order (the
    rounded sizes after strided layers), grown to ``Max`` of both: the smallest large
    enough at typical sizes, else the largest.  Sharing never takes more memory than two
    storages; each storage the pool holds apart is cold in the caches when it is next
    written (MobileNet v3-small over a symbolic size: 24 buffers, 4.5 MB, against a
    static size's 4, 1.8 MB)."""
    if token.size.is_Integer:
        return None
    candidates = [
        s for s in free if not s.size.is_Integer and token.size.free_symbols <= s.symbols
    ]
    if not candidates:
        return None
    need = token.typical
    large = [s for s in candidates if s.typical >= need]
    if large:
        best = min(large, key=lambda s: s.typical)
    else:
        best = max(candidates, key=lambda s: s.typical)
    free.remove(best)
    parts = best.size.args if isinstance(best.size, sympy.Max) else (best.size,)
    if token.size not in parts:  # unevaluated (sympy's Max compares its arguments slowly)
        best.size = sympy.Max(*parts, token.size, evaluate=False)
    best.typical = max(best.typical, need)
    return best


_ROUNDED = (sympy.floor, sympy.ceiling, sympy.Mod)


def _at_least(a: sympy.Expr, b: sympy.Expr) -> bool:
    """True when sympy proves ``a >= b`` for every positive value of the symbols.  Sizes
    sharing their symbolic part compare by their constant factors, and rounded sizes of
    different shapes are not expanded: GoogLeNet over a symbolic image size spent 9 s in
    sympy's expansions here (few pairs repeat: a cache did not help)."""
    if a.is_Integer != b.is_Integer:
        return False  # constant (bounded) and dynamic storage stay apart
    if isinstance(a, sympy.Max):  # a storage shared by sizes sympy could not order
        return any(_at_least(part, b) for part in a.args)
    (ca, xa), (cb, xb) = a.as_coeff_Mul(), b.as_coeff_Mul()
    if xa == xb and ca * cb > 0:  # constants times the same symbolic part, whose sign is
        return bool(ca >= cb if ca > 0 else ca <= cb)  # theirs: sizes are not negative
    if a.has(*_ROUNDED) or b.has(*_ROUNDED):
        return False  # sizes after strided layers: sympy rarely decides them, slowly
    diff = sympy.expand(a - b)
    return bool(diff == 0 or diff.is_nonnegative)


def _sort_key(size: sympy.Expr) -> tuple[int, str]:
    return (int(size), "") if size.is_Integer else (0, str(size))


def _rewrite(seq: SeqExpr, planned: dict[Var, _Token], names: FreshNames) -> SeqExpr:
    blocks = []
    for block in seq.blocks:
        bindings: list[Binding] = []
        for b in block.bindings:
            token = planned.get(b.var)
            if token is None:
                bindings.append(b)
                continue
            storage = token.storage
            assert storage is not None
            if storage.var is None:
                storage.var = Var(names.fresh(), ObjectStructInfo())
                bindings.append(VarBinding(storage.var, _alloc_storage(storage)))
            value = b.value  # type: ignore[attr-defined]  # planned tokens are VarBindings
            bindings.append(VarBinding(b.var, _alloc_in(storage.var, value)))
        blocks.append(block.replace(bindings=tuple(bindings)))
    return seq.replace(blocks=tuple(blocks))


def _alloc_storage(storage: _Storage) -> Call:
    call = memory.alloc_storage(ShapeExpr((storage.size,)), 0, "global", storage.dtype)
    return call.replace(struct_info_=ObjectStructInfo())


def _alloc_in(storage: Var, builtin_call: Call) -> Call:
    shape, dtype, _ = builtin_call.args
    call = memory.alloc_tensor(storage, 0, shape, dtype)
    return call.replace(struct_info_=builtin_call.struct_info)
