"""Lower a block's `init` into an `if` at the start of its body.

Before::

    with T.block("C"):
        vi, vk = T.axis.remap("SR", [i, k])
        with T.init():
            C[vi] = T.float32(0)
        C[vi] = C[vi] + A[vi, vk]

After ``LowerInitBlock()``::

    with T.block("C"):
        vi, vk = T.axis.remap("SR", [i, k])
        if vk == 0:
            C[vi] = T.float32(0)
        C[vi] = C[vi] + A[vi, vk]

The condition is "every reduction iteration variable is at the minimum of its domain";
a block with `init` but no reduction variable runs `init` every time.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.tir.expr import IterType, PrimExpr, const, eq, logical_and
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator
from unity.tir.stmt import Block, IfThenElse, Stmt, seq
from unity.tir.transform._base import PrimFuncPass, with_body


@dataclass(frozen=True)
class LowerInitBlock(PrimFuncPass):
    """Replace `Block.init` by `if (all reduce vars at their min): init` before the body.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((4, 8), name="A")
        >>> k = te.reduce_axis((0, 8), name="k")
        >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
        >>> func = te.create_prim_func([A, B])
        >>> "if v_k == 0:" in LowerInitBlock()(IRModule({"main": func}))["main"].script()
        True
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when nothing changes).

        Example:
            >>> from unity import te
            >>> A = te.placeholder((4, 8), name="A")
            >>> k = te.reduce_axis((0, 8), name="k")
            >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
            >>> func = te.create_prim_func([A, B])
            >>> print(LowerInitBlock().transform_function(func).body.script())
            for i, k in T.grid(4, 8):
                with T.block("B"):
                    v_i, v_k = T.axis.remap("SR", [i, k])
                    T.reads(A[v_i, v_k])
                    T.writes(B[v_i])
                    if v_k == 0:
                        B[v_i] = T.float32(0.0)
                    B[v_i] = B[v_i] + A[v_i, v_k]
        """
        return with_body(func, _InitLowerer().visit_stmt(func.body))


def init_condition(block: Block) -> PrimExpr:
    """The condition under which `block.init` runs: reduce iter vars at their minimum.

    Example:
        >>> init_condition(matmul_block).script()  # doctest: +SKIP
        'vk == 0'
    """
    cond: PrimExpr | None = None
    for iv in block.iter_vars:
        if iv.iter_type is not IterType.REDUCE:
            continue
        term = eq(iv.var, iv.dom.min)
        cond = term if cond is None else logical_and(cond, term)
    return const(True) if cond is None else cond


def lower_init(block: Block, body: Stmt) -> Stmt:
    """`body` preceded by the block's init under `init_condition` (body if no init).

    Example:
        >>> lower_init(block, block.body)  # doctest: +SKIP
    """
    if block.init is None:
        return body
    if not any(iv.iter_type is IterType.REDUCE for iv in block.iter_vars):
        return seq(block.init, body)
    return seq(IfThenElse(init_condition(block), block.init), body)


class _InitLowerer(StmtExprMutator):
    def visit_block_(self, block: Block) -> Stmt:
        block = self._mutate_fields(block)
        if block.init is None:
            return block
        return block.replace(body=lower_init(block, block.body), init=None)
