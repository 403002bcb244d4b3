"""`FusedPrimFuncBuilder`: inline PrimFuncs one after another into one fused PrimFunc.

Used by `FuseTIR`.  Each inlined PrimFunc gets fresh loop, block and buffer variables
(the same PrimFunc may be inlined twice), its symbolic shape variables are mapped onto the
shapes of the buffers it is called with, and its root-block allocations move to the fused
root block.  Block names are made unique (`T_add`, `T_add_1`, ...).

Example:
    >>> b = FusedPrimFuncBuilder()
    >>> x = b.add_param("x", TensorStructInfo(("n",), "float32"))
    >>> [str(d) for d in x.shape]
    ['n']
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from unity.ir.diagnostics import DiagnosticError
from unity.relax.struct_info import TensorStructInfo
from unity.relax.utils import sympy_to_tir
from unity.tir.buffer import Buffer, decl_buffer
from unity.tir.expr import Let, PrimExpr, Var, const
from unity.tir.function import PrimFunc
from unity.tir.functor import StmtExprMutator
from unity.tir.stmt import Block, BlockRealize, For, LetStmt, Stmt, seq


class FusedPrimFuncBuilder:
    """Collects parameters and inlined bodies, then `finish`es the fused PrimFunc.

    Example:
        >>> builder = FusedPrimFuncBuilder()
        >>> x = builder.add_param("x", TensorStructInfo(("n", 4), "float32"))
        >>> [v.name for v in builder.symbols.values()], len(builder.params)
        (['n'], 1)
    """

    def __init__(self) -> None:
        self.symbols: dict[sympy.Symbol, Var] = {}
        self.params: list[Buffer] = []
        self.outputs: list[Buffer] = []
        self.allocs: list[Buffer] = []
        self.bodies: list[Stmt] = []
        self.block_names: dict[str, int] = {}

    def add_param(self, name: str, sinfo: TensorStructInfo) -> Buffer:
        """Declare an input buffer of the fused function.

        Example:
            >>> FusedPrimFuncBuilder().add_param("x", TensorStructInfo((4,), "int8")).dtype
            'int8'
        """
        buf = self._buffer(name, sinfo)
        self.params.append(buf)
        return buf

    def inline(self, prim: PrimFunc, inputs: Sequence[object], outputs: Sequence[TensorStructInfo],
               tir_vars: Sequence[sympy.Expr], node: object) -> list[Buffer]:  # fmt: skip
        """Append the body of `prim` called on `inputs`; return its new output buffers.

        Example:
            >>> out = builder.inline(add_func, [x, y], [x_sinfo], (), node=call)  # doctest: +SKIP
        """
        bufs = prim.buffer_params()
        scalars = [p for p in prim.params if isinstance(p, Var)]
        if len(bufs) != len(inputs) + len(outputs) or len(scalars) != len(tir_vars):
            msg = (f"FuseTIR: the PrimFunc takes {len(bufs)} buffers and {len(scalars)} scalars, "
                   f"but is called with {len(inputs)} inputs, {len(outputs)} outputs and "
                   f"{len(tir_vars)} symbolic values")  # fmt: skip
            raise DiagnosticError(msg, node)
        out_bufs = [self._buffer(b.name, s) for b, s in zip(bufs[len(inputs):], outputs)]
        actual = [*inputs, *out_bufs]
        vmap: dict[Var, PrimExpr] = {v: sympy_to_tir(e, self.symbols) for v, e in zip(scalars, tir_vars)}
        bmap: dict[Buffer, Buffer] = {}
        for formal, buf in zip(bufs, actual, strict=True):
            if not isinstance(buf, Buffer):
                raise DiagnosticError("FuseTIR: a call_tir argument is not a tensor", node)
            _match_shape(formal, buf, vmap, node)
            bmap[formal] = buf
        self.outputs.extend(out_bufs)
        renewer = _Renewer(vmap, bmap, self.block_names)
        body, allocs = _strip_root(prim.body)
        self.allocs.extend(renewer.visit_buffer(b) for b in allocs)
        self.bodies.append(renewer.visit_stmt(body))
        return out_bufs

    def finish(self, results: Sequence[object], node: object) -> tuple[PrimFunc, tuple[sympy.Symbol, ...]]:
        """The fused PrimFunc returning `results`, and the shape symbols it takes as scalars.

        Example:
            >>> prim, extra = builder.finish([out], node=func)  # doctest: +SKIP
        """
        for r in results:
            if not isinstance(r, Buffer) or r not in self.outputs:
                raise DiagnosticError("FuseTIR: the fused function must return computed tensors", node)
        if len(set(results)) != len(results):  # type: ignore[arg-type]  # buffers hash by id
            raise DiagnosticError("FuseTIR: the fused function returns a tensor twice", node)
        outs = list(results)
        allocs = [b for b in self.outputs if b not in outs] + self.allocs  # type: ignore[operator]
        body: Stmt = seq(*self.bodies)
        if allocs:
            root = Block((), (), (), "root", body, alloc_buffers=tuple(allocs))
            body = BlockRealize((), const(True), root)
        # a dim that is a bare symbol defines it; ``batch * seq`` defines neither
        defined = {d for buf in self.params + outs for d in buf.shape if isinstance(d, Var)}  # type: ignore[operator]
        extra = tuple(s for s, v in self.symbols.items() if v not in defined)
        scalars = tuple(self.symbols[s] for s in extra)
        params = (*self.params, *outs, *scalars)
        return PrimFunc(params, body, attrs={"tir.noalias": True}), extra  # type: ignore[arg-type]

    def _buffer(self, name: str, sinfo: TensorStructInfo) -> Buffer:
        shape = [sympy_to_tir(d, self.symbols) for d in sinfo.shape or ()]
        return decl_buffer(shape, sinfo.dtype, name)


def _match_shape(formal: Buffer, actual: Buffer, vmap: dict[Var, PrimExpr], node: object) -> None:
    """Bind the formal buffer's shape variables to the actual buffer's dims."""
    if len(formal.shape) != len(actual.shape) or formal.dtype != actual.dtype:
        msg = (f"FuseTIR: buffer {formal.name} of the PrimFunc is a {len(formal.shape)}-d "
               f"{formal.dtype} tensor, but gets a {len(actual.shape)}-d {actual.dtype} one")
        raise DiagnosticError(msg, node)
    for f, a in zip(formal.shape, actual.shape, strict=True):
        if isinstance(f, Var) and f not in vmap:
            vmap[f] = a if a.dtype == f.dtype else a.astype(f.dtype)


def _strip_root(body: Stmt) -> tuple[Stmt, tuple[Buffer, ...]]:
    """The body under the root block (which only holds allocations) and those allocations."""
    if isinstance(body, BlockRealize) and not body.block.iter_vars and body.block.name_hint == "root":
        block = body.block
        if block.init is None and not block.match_buffers:
            return block.body, block.alloc_buffers
    return body, ()


class _Renewer(StmtExprMutator):
    """Substitute shape vars and buffers; give every defined var and buffer a fresh copy."""

    def __init__(self, vmap: dict[Var, PrimExpr], bmap: dict[Buffer, Buffer],
                 block_names: dict[str, int]) -> None:  # fmt: skip
        super().__init__()
        self.vmap = vmap
        self.bmap = bmap
        self.block_names = block_names

    def visit_var_(self, var: Var) -> PrimExpr:
        return self.vmap.get(var, var)

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        new = self.bmap.get(buffer)
        if new is None:
            shape = tuple(self.visit_expr(d) for d in buffer.shape)
            strides = tuple(self.visit_expr(d) for d in buffer.strides)
            data = Var(buffer.data.name, buffer.data.dtype)
            new = buffer.replace(data=data, shape=shape, strides=strides)
            self.bmap[buffer] = new
        return new

    def _renew(self, var: Var) -> None:
        self.vmap[var] = Var(var.name, var.dtype)

    def visit_for_(self, stmt: For) -> Stmt:
        self._renew(stmt.loop_var)
        return self.visit_stmt_(stmt)

    def visit_let_stmt_(self, stmt: LetStmt) -> Stmt:
        self._renew(stmt.var)
        return self.visit_stmt_(stmt)

    def visit_let_(self, expr: Let) -> PrimExpr:
        self._renew(expr.var)
        return self.visit_prim_expr_(expr)

    def visit_block_(self, block: Block) -> Stmt:
        for iv in block.iter_vars:
            self._renew(iv.var)
        new = self.visit_stmt_(block)
        assert isinstance(new, Block)
        return new.replace(name_hint=self._unique(block.name_hint))

    def _unique(self, name: str) -> str:
        count = self.block_names.get(name, 0)
        self.block_names[name] = count + 1
        return name if count == 0 else f"{name}_{count}"
