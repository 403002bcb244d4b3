"""Before the rules: spell a constant index into a unit dimension as the unit iter var.

Broadcasting writes ``T_conv2d[0, vc, vy, vx]`` when the batch dimension is 1; the
block's own batch iteration variable `vn` (domain ``[0, 1)``) is then equal to `0`.
Writing ``T_conv2d[vn, vc, vy, vx]`` instead lets `reverse_compute_inline` see a
consumer that reads its producer at exactly its iteration point, so an epilogue (bias
add, relu) fuses into a conv's write-back.  The rewrite only swaps `0` for a variable
whose only value is `0`, so the result is the same program.

Before::

    with T.block("T_add"):
        vn, vc, vy, vx = T.axis.remap("SSSS", [n, c, y, x])
        T_add[vn, vc, vy, vx] = T_conv2d[0, vc, vy, vx] + bias[0, vc, 0, 0]

After ``unit_indices_as_vars(func)``::

    T_add[vn, vc, vy, vx] = T_conv2d[vn, vc, vy, vx] + bias[vn, vc, 0, 0]
"""

from __future__ import annotations

from unity.schedule.analysis import as_int, with_regions
from unity.schedule.tree import replace_stmts, walk
from unity.tir.expr import BufferLoad, PrimExpr, Var
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator
from unity.tir.stmt import BlockRealize, BufferStore

__all__ = ["unit_indices_as_vars"]


def unit_indices_as_vars(func: PrimFunc) -> PrimFunc:
    """Rewrite constant-0 indices into unit dimensions as the matching unit iter var.

    Loads of the same rank as the block's store are touched (parameters too: a
    ``[1, 128, 768] x [768, 3072]`` matmul reads ``a[0, i, k]``, which kept it from
    the matmul rule, at 1 GFLOP/s), at a position where the store uses an iteration
    variable of domain ``[0, 1)``.

    Example:
        >>> func = unit_indices_as_vars(func)  # doctest: +SKIP
    """
    changes = {}
    for stmt in walk(func.body):
        if not isinstance(stmt, BlockRealize) or not isinstance(stmt.block.body, BufferStore):
            continue
        block = stmt.block
        store = block.body
        units = {
            iv.var for iv in block.iter_vars
            if as_int(iv.dom.min) == 0 and as_int(iv.dom.extent) == 1
        }  # fmt: skip
        slots = {
            d: idx for d, idx in enumerate(store.indices) if isinstance(idx, Var) and idx in units
        }
        if not slots:
            continue
        value = _Rewrite(slots, len(store.indices)).visit_expr(store.value)
        if value is not store.value:
            changes[block] = with_regions(block.replace(body=store.replace(value=value)))
    if not changes:
        return func
    return func.replace(body=replace_stmts(func.body, changes))


class _Rewrite(StmtExprMutator):
    def __init__(self, slots: dict[int, Var], ndim: int) -> None:
        super().__init__()
        self.slots, self.ndim = slots, ndim

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        load = self._mutate_fields(load)
        buf = load.buffer
        if len(load.indices) != self.ndim:
            return load
        indices = list(load.indices)
        for d, var in self.slots.items():
            if as_int(indices[d]) == 0 and as_int(buf.shape[d]) == 1:
                indices[d] = var
        if all(a is b for a, b in zip(indices, load.indices)):
            return load
        return load.replace(indices=tuple(indices))
