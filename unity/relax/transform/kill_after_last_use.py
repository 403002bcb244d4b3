"""End the life of planned tensors and storages right after their last use.

Before::

    @R.function
    def main(x: R.Tensor((2, 4), "float32")):
        storage = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
        _ = cls.exp(x, alloc, out_sinfo=R.Tuple())
        alloc1 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
        _1 = cls.exp(alloc, alloc1, out_sinfo=R.Tuple())
        return alloc1

After ``KillAfterLastUse()``::

    @R.function
    def main(x: R.Tensor((2, 4), "float32")):
        storage = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
        _2 = R.memory.kill_storage(storage)
        _ = cls.exp(x, alloc, out_sinfo=R.Tuple())
        alloc1 = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
        _1 = cls.exp(alloc, alloc1, out_sinfo=R.Tuple())
        _3 = R.memory.kill_tensor(alloc)
        return alloc1

As in TVM, a kill drops the function's reference: the storage dies after its last
`alloc_tensor`, yet its memory is reused only once every tensor in it is dead too (the
VM codegen works that out).  A tensor's uses include those of its aliases (``y = x``,
tuples, tuple items, `match_cast`); one used inside an `If` dies after the `If`; a
returned one, or one already killed, gets no kill.  Run it after `StaticPlanBlockMemory`.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import (
    Binding, BindingBlock, Call, Expr, Function, If, MatchCast, SeqExpr, Tuple, TupleGetItem,
    Var, VarBinding,
)  # fmt: skip
from unity.relax.analysis.fresh_names import FreshNames
from unity.relax.expr_functor import ExprVisitor
from unity.relax.struct_info import TupleStructInfo
from unity.relax.vm import memory

_KILLS = (memory.kill_tensor, memory.kill_storage)


@dataclass(frozen=True)
class KillAfterLastUse(ModulePass):
    """Insert ``R.memory.kill_tensor`` / ``kill_storage`` after each object's last use.

    Example:
        >>> KillAfterLastUse()(IRModule()).functions
        {}
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Add kills to every relax function of `mod` (returns `mod` when none allocates)."""
        return mod.map_functions(Function, _kill_function)


def _kill_function(func: Function) -> Function:
    names = FreshNames.of(func, "_")
    return func.replace(body=_kill_seq(func.body, names))



class _Refs(ExprVisitor):
    """Every var an expression mentions, nested functions and branches included."""

    def __init__(self) -> None:
        self.vars: set[Var] = set()

    def visit_var_(self, var: Var) -> None:
        self.vars.add(var)


def _refs(expr: Expr) -> set[Var]:
    refs = _Refs()
    refs.visit_expr(expr)
    return refs.vars


def _kill_seq(seq: SeqExpr, names: FreshNames) -> SeqExpr:
    seq = _kill_branches(seq, names)
    bindings = [b for block in seq.blocks for b in block.bindings]
    objects: dict[Var, Call] = {}  # object var -> its allocation
    owner: dict[Var, set[Var]] = {}  # var -> the objects it may hold
    last: dict[Var, int] = {}
    killed: set[Var] = set()
    for i, b in enumerate(bindings):
        value = b.value  # type: ignore[attr-defined]  # both binding kinds
        is_kill = isinstance(value, Call) and value.op in _KILLS
        used = {o for v in _refs(value) for o in owner.get(v, ())}
        for o in used:
            last[o] = i
        if is_kill:
            killed |= used
        elif isinstance(value, Call) and value.op in (memory.alloc_tensor, memory.alloc_storage):
            objects[b.var] = value
            owner[b.var] = {b.var}
            last[b.var] = i
        elif isinstance(b, MatchCast) or isinstance(value, Var | Tuple | TupleGetItem):
            owner[b.var] = used
    escaping = {o for v in _refs(seq.body) for o in owner.get(v, ())}
    kills: dict[int, list[Call]] = {}
    for kind in (memory.kill_storage, memory.kill_tensor):
        for obj, alloc in objects.items():
            if obj in killed or (obj in escaping and alloc.op is memory.alloc_tensor):
                continue
            if (alloc.op is memory.alloc_storage) == (kind is memory.kill_storage):
                kills.setdefault(last[obj], []).append(kind(obj).replace(struct_info_=_VOID))
    if not kills:
        return seq
    return _insert(seq, kills, names)


_VOID = TupleStructInfo(())


def _kill_branches(seq: SeqExpr, names: FreshNames) -> SeqExpr:
    blocks = []
    for block in seq.blocks:
        new = []
        for b in block.bindings:
            value = b.value  # type: ignore[attr-defined]  # both binding kinds
            if isinstance(value, If):
                b = b.replace(
                    value=value.replace(
                        true_branch=_kill_seq(value.true_branch, names),
                        false_branch=_kill_seq(value.false_branch, names),
                    )
                )
            new.append(b)
        blocks.append(_with_bindings(block, new))
    return _with_blocks(seq, blocks)


def _with_bindings(block: BindingBlock, bindings: list[Binding]) -> BindingBlock:
    if len(bindings) == len(block.bindings) and all(map(operator.is_, bindings, block.bindings)):
        return block
    return block.replace(bindings=tuple(bindings))


def _with_blocks(seq: SeqExpr, blocks: list[BindingBlock]) -> SeqExpr:
    if all(map(operator.is_, blocks, seq.blocks)):
        return seq
    return seq.replace(blocks=tuple(blocks))


def _insert(seq: SeqExpr, kills: dict[int, list[Call]], names: FreshNames) -> SeqExpr:
    blocks = []
    index = 0
    for block in seq.blocks:
        new: list[Binding] = []
        for b in block.bindings:
            new.append(b)
            for call in kills.get(index, ()):
                new.append(VarBinding(Var(names.fresh(), _VOID), call))
            index += 1
        blocks.append(block.replace(bindings=tuple(new)))
    return seq.replace(blocks=tuple(blocks))
