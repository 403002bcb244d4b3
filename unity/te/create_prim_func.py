"""`create_prim_func`: turn a graph of `te` tensors into a block-based `PrimFunc`.

Every `te.compute` becomes one loop nest with one `Block` named after it; tensors in the
argument list become the parameters (in that order), computed tensors not in it become
`alloc_buffers` of a root block "root" (which, as in the script, exists only when there
are such buffers).

Example:
    >>> from unity import te
    >>> A = te.placeholder((64, 64), name="A")
    >>> B = te.placeholder((64, 64), name="B")
    >>> k = te.reduce_axis((0, 64), name="k")
    >>> C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    >>> f = te.create_prim_func([A, B, C])

gives, as script::

    @T.prim_func
    def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
             C: T.Buffer((64, 64), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, j, k in T.grid(64, 64, 64):
            with T.block("C"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(A[v_i, v_k], B[v_k, v_j])
                T.writes(C[v_i, v_j])
                with T.init():
                    C[v_i, v_j] = T.float32(0)
                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
"""

from __future__ import annotations

from collections.abc import Sequence

from unity.te.index_dtype import widen_index_dtype
from unity.te.reduction import Reduce
from unity.te.region import access_regions
from unity.te.tensor import ComputeOp, Operation, PlaceholderOp, Tensor
from unity.tir.buffer import Buffer, BufferRegion
from unity.tir.expr import BufferLoad, IntImm, IterVar, Let, PrimExpr, Var, const
from unity.tir.function import PrimFunc
from unity.tir.functor import post_order_visit, substitute
from unity.tir.stmt import (
    Block, BlockRealize, BufferStore, For, ForKind, IfThenElse, LetStmt, Stmt, seq,
)  # fmt: skip


def create_prim_func(
    args: Sequence[Tensor | Var], index_dtype_override: str | None = None
) -> PrimFunc:
    """Make a `PrimFunc` computing the tensors in `args` from the placeholders in `args`.

    Args:
        args: the parameters in order: input and output tensors, and scalar `Var`s.
        index_dtype_override: "int64" widens every int32 index (loop and block vars,
            shapes, index constants) to int64, as TVM's option does.

    Raises:
        ValueError: a placeholder that a compute needs is missing from `args`.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((8,), name="A")
        >>> B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
        >>> f = te.create_prim_func([A, B])
        >>> f.body.body.block.name_hint
        'B'
    """
    params: list[Buffer | Var] = []
    listed: set[int] = set()
    for k, arg in enumerate(args):
        if isinstance(arg, Tensor):
            params.append(arg.buffer)
            listed.add(id(arg.buffer))
        elif isinstance(arg, Var):
            params.append(arg)
        else:
            raise TypeError(f"create_prim_func: argument {k} is a {type(arg).__name__}, "
                            "expected a te.Tensor or a tir.Var")
    ops = _topo_order([a for a in args if isinstance(a, Tensor)], listed)
    computes = [op for op in ops if isinstance(op, ComputeOp)]
    stmts = [_compute_stmt(op, name) for op, name in zip(computes, _unique_names(computes))]
    allocs = tuple(
        buf
        for op in ops
        if isinstance(op, ComputeOp)
        for buf in op.buffers
        if id(buf) not in listed
    )
    body = seq(*stmts)
    if allocs:  # the script's convention: a root block exists only to hold allocations
        body = BlockRealize((), const(True), Block((), (), (), "root", body, alloc_buffers=allocs))
    func = PrimFunc(tuple(params), body, attrs={"tir.noalias": True})
    _check_free_vars(func)
    if index_dtype_override is not None:
        func = widen_index_dtype(func, index_dtype_override)
    return func


def _check_free_vars(func: PrimFunc) -> None:
    """Every scalar variable must be a parameter, a shape variable, or a loop/block var."""
    defined: set[Var] = set(func.shape_vars()) | {p for p in func.params if isinstance(p, Var)}
    used: dict[Var, None] = {}

    def visit(node: object) -> None:
        if isinstance(node, For):
            defined.add(node.loop_var)
        elif isinstance(node, Block):
            defined.update(iv.var for iv in node.iter_vars)
        elif isinstance(node, (LetStmt, Let)):
            defined.add(node.var)
        elif isinstance(node, Var) and node.dtype != "handle":
            used.setdefault(node, None)

    post_order_visit(func.body, visit)
    missing = [v.name for v in used if v not in defined]
    if missing:
        raise ValueError(
            f"create_prim_func: variable(s) {', '.join(missing)} are used but are neither in "
            "the argument list nor in the shape of a tensor in it; pass them as arguments"
        )


def _topo_order(outputs: list[Tensor], listed: set[int]) -> list[Operation]:
    """Operations reachable from `outputs`, producers before consumers."""
    order: list[Operation] = []
    state: dict[int, str] = {}

    def visit(tensor: Tensor, user: str) -> None:
        op = tensor.op
        if isinstance(op, PlaceholderOp) and id(tensor.buffer) not in listed:
            raise ValueError(
                f"create_prim_func: placeholder {op.name!r} is read by {user!r} but is not in "
                "the argument list"
            )
        mark = state.get(id(op))
        if mark == "done":
            return
        if mark == "active":
            raise ValueError(f"create_prim_func: a cycle through {op.name!r}")
        state[id(op)] = "active"
        for source in op.input_tensors:
            visit(source, op.name)
        state[id(op)] = "done"
        order.append(op)

    for tensor in outputs:
        visit(tensor, "the argument list")
    return order


def _unique_names(ops: list[ComputeOp]) -> list[str]:
    """Block names for `ops`: each op's name, with ``_1``, ``_2``... on later repeats (two
    `topi.add` calls both name their compute ``T_add``), so `Schedule.get_block` finds each."""
    taken = {op.name for op in ops}
    names: list[str] = []
    for op in ops:
        name, k = op.name, 0
        while name in names or (k and name in taken):
            k += 1
            name = f"{op.name}_{k}"
        names.append(name)
    return names


def _compute_stmt(op: ComputeOp, name: str) -> Stmt:
    """One loop nest and block (named `name`) for `op`."""
    axes = (*op.axis, *op.reduce_axis)
    loop_vars = [Var(iv.var.name, iv.var.dtype) for iv in axes]
    block_vars = [Var(f"v_{iv.var.name}", iv.var.dtype) for iv in axes]
    vmap: dict[Var, PrimExpr] = {iv.var: bv for iv, bv in zip(axes, block_vars)}
    iter_vars = tuple(IterVar(bv, iv.dom, iv.iter_type) for iv, bv in zip(axes, block_vars))
    spatial = tuple(block_vars[: len(op.axis)])
    bodies = [substitute(b, vmap) for b in op.body]
    reads = access_regions(bodies)
    writes = tuple(BufferRegion.from_point(buf, spatial) for buf in op.buffers)
    init, body = _block_body(op, bodies, spatial)
    block = Block(iter_vars, reads, writes, name, body, init, annotations=dict(op.attrs))
    stmt: Stmt = BlockRealize(tuple(loop_vars), const(True), block)
    for iv, lv in reversed(list(zip(axes, loop_vars))):
        stmt = For(lv, iv.dom.min, iv.dom.extent, ForKind.SERIAL, stmt)
    return stmt


def _block_body(
    op: ComputeOp, bodies: list[PrimExpr], spatial: tuple[PrimExpr, ...]
) -> tuple[Stmt | None, Stmt]:
    """The block's `(init, body)`: a plain store, or a reduction update with its init."""
    first = bodies[0]
    if not isinstance(first, Reduce):
        return None, seq(*(BufferStore(buf, b, spatial) for buf, b in zip(op.buffers, bodies)))
    combiner = first.combiner
    vmap: dict[Var, PrimExpr] = {}
    for lhs, rhs, buf, source in zip(combiner.lhs, combiner.rhs, op.buffers, first.source):
        vmap[lhs] = BufferLoad(buf, spatial)
        vmap[rhs] = source
    updates = [substitute(r, vmap) for r in combiner.result]
    body = _update(op.buffers, updates, spatial)
    if not (isinstance(first.condition, IntImm) and first.condition.value):
        body = IfThenElse(first.condition, body)
    starts = first.init or combiner.identity
    init = seq(*(BufferStore(buf, s, spatial) for buf, s in zip(op.buffers, starts)))
    return init, body


def _update(
    buffers: tuple[Buffer, ...], values: list[PrimExpr], spatial: tuple[PrimExpr, ...]
) -> Stmt:
    """Store the new accumulator values; several values are first bound with `LetStmt`s,
    since each is computed from all the old ones."""
    if len(values) == 1:
        return BufferStore(buffers[0], values[0], spatial)
    temps = [Var(f"v_{buf.name}", v.dtype) for buf, v in zip(buffers, values)]
    body: Stmt = seq(*(BufferStore(buf, t, spatial) for buf, t in zip(buffers, temps)))
    for temp, value in reversed(list(zip(temps, values))):
        body = LetStmt(temp, value, body)
    return body
