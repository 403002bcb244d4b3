"""`PrimFunc`: a loop-level function over buffers and scalar parameters.

Parameters are `Buffer`s (tensor arguments, destination passing: outputs are
parameters too) or scalar `Var`s.  Variables that appear only in parameter buffer
shapes (`n` in `A: T.Buffer(("n", 4))`) are symbolic shapes bound from the
arguments at call time.

Example:
    >>> from unity import tir
    >>> A = tir.decl_buffer((4,), "float32", "A")
    >>> f = tir.PrimFunc((A,), tir.Evaluate(tir.const(0)))
    >>> f.buffer_params()[0] is A
    True
"""

from __future__ import annotations

from unity.ir.module import BaseFunc
from unity.ir.node import binds, node
from unity.tir.buffer import Buffer
from unity.tir.expr import PrimExpr, SizeVar, Var
from unity.tir.stmt import Stmt


@node
class PrimFunc(BaseFunc):
    """A TIR function: `params` (buffers and scalar vars) and a `body` statement.

    Example:
        >>> from unity import tir
        >>> A, n = tir.decl_buffer((8,), "float32", "A"), tir.Var("n")
        >>> f = PrimFunc((A, n), tir.Evaluate(tir.const(0)))
        >>> [type(p).__name__ for p in f.params]
        ['Buffer', 'Var']
    """

    params: tuple[Buffer | Var, ...] = binds()
    body: Stmt

    def buffer_params(self) -> tuple[Buffer, ...]:
        """The parameters that are buffers, in order.

        Example:
            >>> from unity import tir
            >>> A, n = tir.decl_buffer((8,), "float32", "A"), tir.Var("n")
            >>> [b.name for b in PrimFunc((n, A), tir.Evaluate(tir.const(0))).buffer_params()]
            ['A']
        """
        return tuple(p for p in self.params if isinstance(p, Buffer))

    def shape_vars(self) -> tuple[Var, ...]:
        """Symbolic variables used in parameter buffer shapes, in first-use order.

        Example:
            >>> from unity import tir
            >>> n = tir.SizeVar("n")
            >>> A = tir.decl_buffer((n, 2), "float32", "A")
            >>> [v.name for v in tir.PrimFunc((A,), tir.Evaluate(tir.const(0))).shape_vars()]
            ['n']
        """
        seen: dict[Var, None] = {}
        for buf in self.buffer_params():
            for dim in (*buf.shape, *buf.strides):
                _collect_vars(dim, seen)
        return tuple(seen)


def _collect_vars(expr: PrimExpr, out: dict[Var, None]) -> None:
    from unity.tir.functor import post_order_visit

    post_order_visit(expr, lambda e: out.setdefault(e, None) if isinstance(e, Var) else None)


__all__ = ["PrimFunc", "SizeVar"]
