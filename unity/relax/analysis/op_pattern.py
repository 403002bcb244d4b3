"""Classify a `PrimFunc` by its fusion pattern (TVM's `OpPatternKind`), read from its blocks.

Each block is classified from its single buffer store and the loads it makes:

- every load indexed exactly like the store (same block vars, same order): elementwise;
- loads indexed by a subsequence of the store's vars (or by 0 on a dim of extent 1):
  broadcast;
- any other load (a transpose, a shifted or clamped index): injective;
- a reduction block (with `init`): comm-reduce, or out-elemwise-fusable when it is a
  multiply-accumulate ``C = C + A * B`` where neither `A` nor `B` uses every output var
  (matmul, conv2d: an operand is reused across outputs);
- no blocks, nested blocks, several stored buffers: opaque.

The function's pattern is the most general of its blocks' (the `max`).

Example:
    >>> from unity import te
    >>> A = te.placeholder((4, 4), name="A")
    >>> B = te.compute((4, 4), lambda i, j: A[i, j] * 2.0, name="B")
    >>> analyze_op_pattern(te.create_prim_func([A, B])).name
    'ELEMWISE'
"""

from __future__ import annotations

from enum import IntEnum

from unity.tir.expr import Add, BufferLoad, Cast, IntImm, Mul, PrimExpr, Var
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprVisitor, post_order_visit
from unity.tir.stmt import Block, BlockRealize, BufferStore, For, SeqStmt, Stmt


class OpPatternKind(IntEnum):
    """How an operator may fuse with its neighbours; larger values are more general.

    Example:
        >>> OpPatternKind.ELEMWISE < OpPatternKind.INJECTIVE < OpPatternKind.OPAQUE
        True
        >>> max(OpPatternKind.BROADCAST, OpPatternKind.COMM_REDUCE).name
        'COMM_REDUCE'
    """

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


def analyze_op_pattern(func: PrimFunc) -> OpPatternKind:
    """Return the fusion pattern of `func` (the most general pattern of its blocks).

    Example:
        >>> from unity import te
        >>> A = te.placeholder((4, 4), name="A")
        >>> B = te.compute((4,), lambda i: A[i, 0] + A[i, 3], name="B")
        >>> analyze_op_pattern(te.create_prim_func([A, B])).name
        'INJECTIVE'
    """
    blocks = _leaf_blocks(func.body)
    if not blocks:
        return OpPatternKind.OPAQUE
    return max(_block_pattern(b) for b in blocks)


def _leaf_blocks(body: Stmt) -> list[Block] | None:
    """The computation blocks under the optional root block, or None when the body has
    loops or statements outside blocks that we cannot classify, or nested blocks."""
    if isinstance(body, BlockRealize) and not body.block.iter_vars:
        body = body.block.body  # the root block that holds the intermediate allocations
    blocks: list[Block] = []
    if not _collect(body, blocks):
        return None
    return blocks


def _collect(stmt: Stmt, out: list[Block]) -> bool:
    if isinstance(stmt, SeqStmt):
        return all(_collect(s, out) for s in stmt.seq)
    if isinstance(stmt, For):
        return _collect(stmt.body, out)
    if isinstance(stmt, BlockRealize):
        if _has_nested_block(stmt.block.body):
            return False
        out.append(stmt.block)
        return True
    return False


def staged_params(func: PrimFunc) -> frozenset[int]:
    """Positions of the parameters that only spatial blocks writing intermediates read
    (a conv's padding copies its input; the reduction reads the copy).  A producer of
    such an input can be computed inside the copy at no cost to the reduction.

    Example:
        >>> from unity import te, topi
        >>> x, w = te.placeholder((1, 4, 8, 8), name="x"), te.placeholder((4, 4, 3, 3), name="w")
        >>> sorted(staged_params(te.create_prim_func([x, w, topi.nn.conv2d(x, w, 1, 1)])))
        [0]
    """
    blocks = _leaf_blocks(func.body)
    if not blocks:
        return frozenset()
    params = func.buffer_params()
    staged = set()
    for n, param in enumerate(params):
        readers = [b for b in blocks if any(r.buffer is param for r in b.reads)]
        copies = [
            b for b in readers
            if not _has_reduce_var(b) and b.init is None and b.writes
            and b.writes[0].buffer not in params
        ]  # fmt: skip
        if readers and len(copies) == len(readers):
            staged.add(n)
    return frozenset(staged)


def _has_nested_block(stmt: Stmt) -> bool:
    found: list[Block] = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, Block) else None)
    return bool(found)


class _Accesses(StmtExprVisitor):
    """The stores and loads of one block body."""

    def __init__(self) -> None:
        super().__init__()
        self.stores: list[BufferStore] = []
        self.loads: list[BufferLoad] = []

    def visit_buffer_store_(self, store: BufferStore) -> None:
        self.stores.append(store)
        self.visit_stmt_(store)

    def visit_buffer_load_(self, load: BufferLoad) -> None:
        self.loads.append(load)
        self.visit_prim_expr_(load)


def _block_pattern(block: Block) -> OpPatternKind:
    acc = _Accesses()
    acc.visit_stmt(block.body)
    stored = {s.buffer for s in acc.stores}
    if len(stored) != 1:
        return OpPatternKind.OPAQUE
    store = acc.stores[-1]
    out = store.buffer
    loads = [ld for ld in acc.loads if ld.buffer is not out]
    if block.init is not None or _has_reduce_var(block):
        return _reduction_pattern(store, loads)
    if not all(isinstance(i, Var) for i in store.indices):
        return OpPatternKind.INJECTIVE
    return max((_load_pattern(store, ld) for ld in loads), default=OpPatternKind.ELEMWISE)


def _has_reduce_var(block: Block) -> bool:
    return any(iv.iter_type.value == "reduce" for iv in block.iter_vars)


def _load_pattern(store: BufferStore, load: BufferLoad) -> OpPatternKind:
    if len(load.indices) == len(store.indices) and all(
        a is b for a, b in zip(load.indices, store.indices, strict=True)
    ):
        return OpPatternKind.ELEMWISE
    if _is_broadcast(store.indices, load):
        return OpPatternKind.BROADCAST
    return OpPatternKind.INJECTIVE


def _is_broadcast(out_indices: tuple[PrimExpr, ...], load: BufferLoad) -> bool:
    """Whether `load` reads a subsequence of the output's vars (0 on unit dims)."""
    position = 0
    for index, dim in zip(load.indices, load.buffer.shape, strict=True):
        if isinstance(index, IntImm) and index.value == 0 and _is_one(dim):
            continue
        while position < len(out_indices) and out_indices[position] is not index:
            position += 1
        if position == len(out_indices):
            return False
        position += 1
    return True


def _is_one(dim: PrimExpr) -> bool:
    return isinstance(dim, IntImm) and dim.value == 1


def _reduction_pattern(store: BufferStore, loads: list[BufferLoad]) -> OpPatternKind:
    value = store.value
    if not isinstance(value, Add) or not isinstance(value.b, Mul):
        return OpPatternKind.COMM_REDUCE
    product = value.b
    operands = [_strip_cast(product.a), _strip_cast(product.b)]
    if not all(isinstance(o, BufferLoad) for o in operands):
        return OpPatternKind.COMM_REDUCE
    a, b = operands
    if a.buffer is b.buffer:  # type: ignore[union-attr]  # loads
        return OpPatternKind.COMM_REDUCE  # a sum of squares (a norm) takes no epilogue
    if any(_allows_reuse(store, o) for o in operands):  # type: ignore[arg-type]  # loads
        # a matmul or conv reuses both operands; a depthwise or grouped conv at least its
        # weights: each takes its elementwise epilogue (bias, relu) into its tile
        return OpPatternKind.OUT_ELEMWISE_FUSABLE
    return OpPatternKind.COMM_REDUCE


def _strip_cast(expr: PrimExpr) -> PrimExpr:
    return expr.value if isinstance(expr, Cast) else expr


def _allows_reuse(store: BufferStore, load: BufferLoad) -> bool:
    """True when some output var is absent from the load's indices: the loaded value is
    reused across several outputs (the signature of matmul and convolution operands)."""
    out_vars = [i for i in store.indices if isinstance(i, Var)]
    if len(out_vars) != len(store.indices):
        return False
    used: set[Var] = set()
    for index in load.indices:
        post_order_visit(index, lambda n: used.add(n) if isinstance(n, Var) else None)
    return any(v not in used for v in out_vars)

