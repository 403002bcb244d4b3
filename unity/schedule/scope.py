"""Helpers about a block's scope: its enclosing block, top-level statement, allocations.

Example:
    >>> blk, stmt = scope_and_top(func, path)  # doctest: +SKIP
"""

from __future__ import annotations

from unity.schedule.analysis import child_realizes
from unity.tir.buffer import Buffer
from unity.tir.expr import PrimExpr, Var, const
from unity.tir.function import PrimFunc
from unity.tir.stmt import Block, BlockRealize, SeqStmt, Stmt


def scope_index(path: list[Stmt]) -> int:
    """Index in `path` of the innermost `Block` above `path[-1]` (-1: none, the func body).

    Example:
        >>> from unity import te
        >>> from unity.schedule.tree import find_path
        >>> A = te.placeholder((8,), name="A")
        >>> B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
        >>> func = with_root_block(te.create_prim_func([A, B]))
        >>> path = find_path(func.body, lambda s: isinstance(s, BlockRealize)
        ...                  and s.block.name_hint == "B")
        >>> [type(s).__name__ for s in path], scope_index(path)
        (['BlockRealize', 'Block', 'For', 'BlockRealize'], 1)
    """
    for k in range(len(path) - 2, -1, -1):
        if isinstance(path[k], Block):
            return k
    return -1


def scope_body(func: PrimFunc, path: list[Stmt]) -> Stmt:
    """The statement that holds the scope's children (a block body or the func body).

    Example:
        >>> from unity import te
        >>> from unity.schedule.tree import find_path
        >>> A = te.placeholder((8,), name="A")
        >>> B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
        >>> func = with_root_block(te.create_prim_func([A, B]))
        >>> path = find_path(func.body, lambda s: isinstance(s, BlockRealize)
        ...                  and s.block.name_hint == "B")
        >>> scope_body(func, path) is func.body.block.body
        True
    """
    k = scope_index(path)
    return path[k].body if k >= 0 else func.body


def top_level(path: list[Stmt]) -> Stmt:
    """The child of the scope body (or the body itself) that contains `path[-1]`.

    Example:
        >>> from unity import te
        >>> from unity.schedule.tree import find_path
        >>> A = te.placeholder((8,), name="A")
        >>> B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
        >>> func = with_root_block(te.create_prim_func([A, B]))
        >>> path = find_path(func.body, lambda s: isinstance(s, BlockRealize)
        ...                  and s.block.name_hint == "B")
        >>> top_level(path) is path[2]  # the loop nest holding block B
        True
    """
    k = scope_index(path)
    rest = path[k + 1 :] if k >= 0 else path
    if isinstance(rest[0], SeqStmt) and len(rest) > 1:
        return rest[1]
    return rest[0]


def scope_realizes(func: PrimFunc, path: list[Stmt]) -> list[BlockRealize]:
    """Every block of the scope of `path[-1]`, in program order.

    Example:
        >>> from unity import te
        >>> from unity.schedule.tree import find_path
        >>> A = te.placeholder((8,), name="A")
        >>> B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
        >>> func = with_root_block(te.create_prim_func([A, B]))
        >>> path = find_path(func.body, lambda s: isinstance(s, BlockRealize)
        ...                  and s.block.name_hint == "B")
        >>> [r.block.name_hint for r in scope_realizes(func, path)]
        ['B']
    """
    return child_realizes(scope_body(func, path)) if scope_index(path) >= 0 else _root_list(func)


def _root_list(func: PrimFunc) -> list[BlockRealize]:
    body = func.body
    if isinstance(body, BlockRealize):
        return [body]
    return child_realizes(body)


def with_root_block(func: PrimFunc) -> PrimFunc:
    """`func` whose body is a `root` block (wrapping the body in one if needed: a loop
    nest, or one lone computing block such as a scalar's, around which a root is needed
    before any loop can go).

    Example:
        >>> from unity import te
        >>> a = te.placeholder((), "float32", "a")
        >>> out = te.compute((), lambda: a() * 2.0, "out")
        >>> with_root_block(te.create_prim_func([a, out])).body.block.name_hint
        'root'
    """
    if isinstance(func.body, BlockRealize) and child_realizes(func.body.block.body):
        return func
    root = Block((), (), (), "root", func.body)
    return func.replace(body=BlockRealize((), const(True), root))


def alloc_in_root(func: PrimFunc, buffers: list[Buffer], remove: Buffer | None = None) -> PrimFunc:
    """Add `buffers` to (and drop `remove` from) the allocations of the block allocating them.

    New buffers go to the root block; `remove` is dropped wherever it is allocated.

    Example:
        >>> from unity import te, tir
        >>> A = te.placeholder((8,), name="A")
        >>> func = te.create_prim_func([A, te.compute((8,), lambda i: A[i] + 1.0, name="B")])
        >>> C = tir.decl_buffer((8,), "float32", "C")
        >>> [b.name for b in alloc_in_root(func, [C]).body.block.alloc_buffers]
        ['C']
    """
    func = with_root_block(func)
    realize: BlockRealize = func.body  # type: ignore[assignment]
    root = realize.block
    allocs = [b for b in root.alloc_buffers if b is not remove] + list(buffers)
    root = root.replace(alloc_buffers=tuple(allocs))
    body = realize.replace(block=root)
    if remove is not None and remove not in root.alloc_buffers:
        body = _drop_alloc(body, remove)
    return func.replace(body=body)


def _drop_alloc(stmt: Stmt, buf: Buffer) -> Stmt:
    from unity.schedule.tree import replace_stmts, walk

    for s in walk(stmt):
        if isinstance(s, Block) and buf in s.alloc_buffers:
            new = s.replace(alloc_buffers=tuple(b for b in s.alloc_buffers if b is not buf))
            return replace_stmts(stmt, {s: new})
    return stmt


def is_param(func: PrimFunc, buf: Buffer) -> bool:
    """Whether `buf` is (or shares memory with) a parameter buffer of `func`.

    Example:
        >>> from unity import te, tir
        >>> A = te.placeholder((8,), name="A")
        >>> func = te.create_prim_func([A, te.compute((8,), lambda i: A[i] + 1.0, name="B")])
        >>> is_param(func, func.params[0]), is_param(func, tir.decl_buffer((8,), "float32", "C"))
        (True, False)
    """
    return any(p is buf or p.data is buf.data for p in func.buffer_params())


def fresh_like(var: Var, name: str | None = None) -> Var:
    """A new variable with the dtype of `var`.

    Example:
        >>> i = Var("i", "int64")
        >>> j = fresh_like(i, "j")
        >>> j.name, j.dtype, j is i
        ('j', 'int64', False)
    """
    return Var(name or var.name, var.dtype)
