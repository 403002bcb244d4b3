"""`specialize`: a PrimFunc with some shape variables replaced by constants.

Before::

    @T.prim_func
    def f(x: T.Buffer((T.SizeVar("seq", "int64"), 64), "float32"), ...):
        for i, j in T.grid(seq, 64): ...

After ``specialize(f, {"seq": 128})``::

    @T.prim_func
    def f(x: T.Buffer((128, 64), "float32"), ...):
        for i, j in T.grid(128, 64): ...

Variables are named by their name hint (what a user or a tuner knows of a symbolic
dimension); every buffer whose shape, strides or offset use one is rebuilt with the
constant, and so is every expression that uses it.  Used by the tuner to measure a
schedule of a function with symbolic shapes at representative sizes.
"""

from __future__ import annotations

from collections.abc import Mapping

from unity.tir.buffer import Buffer
from unity.tir.expr import PrimExpr, Var, const
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator, post_order_visit

__all__ = ["shape_vars", "specialize"]


def shape_vars(func: PrimFunc) -> dict[str, Var]:
    """The variables used in the shapes of `func`'s buffer parameters, by name.

    Example:
        >>> sorted(shape_vars(func))  # doctest: +SKIP
        ['batch', 'seq']
    """
    found: dict[str, Var] = {}
    for p in func.params:
        if isinstance(p, Buffer):
            for dim in p.shape:
                post_order_visit(dim, lambda n: found.setdefault(n.name, n) if isinstance(n, Var) else None)
    return found


def specialize(func: PrimFunc, values: Mapping[str, int]) -> PrimFunc:
    """`func` with its shape variables named in `values` set to those constants.

    Raises:
        KeyError: a name in `values` is not a shape variable of `func`.

    Example:
        >>> from unity import te, tir
        >>> n = tir.SizeVar("n", "int64")
        >>> A = te.placeholder((n, 4), name="A")
        >>> f = te.create_prim_func([A, te.compute((n, 4), lambda i, j: A[i, j] * 2.0, name="B")])
        >>> [int(d.value) for d in specialize(f, {"n": 3}).params[0].shape]
        [3, 4]
    """
    known = shape_vars(func)
    missing = sorted(set(values) - set(known))
    if missing:
        raise KeyError(f"specialize: {', '.join(missing)} not a shape variable of the function "
                       f"(it has: {', '.join(sorted(known)) or 'none'})")  # fmt: skip
    vmap = {known[name]: const(int(v), known[name].dtype) for name, v in values.items()}
    if not vmap:
        return func
    mutator = _Specializer(vmap)
    params = tuple(mutator.visit_buffer(p) if isinstance(p, Buffer) else p for p in func.params)
    return func.replace(params=params, body=mutator.visit_stmt(func.body))


class _Specializer(StmtExprMutator):
    def __init__(self, vmap: Mapping[Var, PrimExpr]) -> None:
        super().__init__()
        self.vmap = vmap
        self.buffers: dict[Buffer, Buffer] = {}

    def visit_var_(self, var: Var) -> PrimExpr:
        return self.vmap.get(var, var)

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        done = self.buffers.get(buffer)
        if done is None:
            offset = buffer.elem_offset
            done = buffer.replace(
                shape=tuple(self.visit_expr(d) for d in buffer.shape),
                strides=tuple(self.visit_expr(s) for s in buffer.strides),
                elem_offset=None if offset is None else self.visit_expr(offset),
            )
            self.buffers[buffer] = done
        return done
