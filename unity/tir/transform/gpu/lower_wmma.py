"""`LowerWmma`: tensor-core calls from tile form to fragment indices and row strides.

Runs after `LowerStorageScopes` (fragment buffers are one warp's, their tiles counted
from 0) and before `FlattenBuffer` (the N-d shapes are still there to read).

Before (a warp's `(64, 16)` operand buffer, four fragments; a `(128, 40)` shared tile)::

    T.cuda.wmma_load(A_frag[i_2 * 16, 0], A_shared[threadIdx_z * 64 + i_2 * 16, k_1 * 16])

After ``LowerWmma()``::

    T.cuda.wmma_load(A_frag.data, i_2, A_shared[threadIdx_z * 64 + i_2 * 16, k_1 * 16], 40)

A fragment argument becomes its buffer's data variable and the index of its 16 x 16
tile (tiles counted row-major over the buffer's last two dimensions, the leading ones
outermost); a memory argument keeps its top-left element and gains its row stride (the
buffer's last dimension).  Wrong scopes, fragment buffers not made of whole tiles and
tile origins off the 16-grid are errors naming the call.
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.diagnostics import DiagnosticError
from unity.ir.printer import script
from unity.tir.expr import BufferLoad, Call, IntImm, PrimExpr, floordiv, floormod
from unity.tir.function import PrimFunc
from unity.tir.transform._base import LoopBoundsMutator, PrimFuncPass, is_const_int, with_body
from unity.tir.transform.gpu.wmma import (
    FRAGMENT_SCOPES, TILE, wmma_fill_op, wmma_load_op, wmma_mma_op, wmma_store_op,
)  # fmt: skip

_EXPECTED = {
    wmma_fill_op: ("wmma.accumulator", None),
    wmma_load_op: (("wmma.matrix_a", "wmma.matrix_b"), "memory"),
    wmma_mma_op: ("wmma.accumulator", "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"),
    wmma_store_op: ("memory", "wmma.accumulator"),
}
"""Per op, what each argument must be: a fragment scope (or scopes), memory, or a value."""


@dataclass(frozen=True)
class LowerWmma(PrimFuncPass):
    """Rewrite each `wmma` call's tiles as (fragment data, index) and (memory, row stride).

    Example:
        >>> from unity import tir
        >>> from unity.tir.transform.gpu import wmma
        >>> F = tir.decl_buffer((32, 16), "float32", "F", scope="wmma.accumulator")
        >>> body = tir.Allocate(F, wmma.fill(F[16, 0], 0.0))
        >>> out = LowerWmma().transform_function(tir.PrimFunc([], body))
        >>> [a.script() for a in out.body.body.value.args]
        ['F', '1', 'T.float32(0.0)']
    """

    def transform_function(self, func: PrimFunc) -> PrimFunc:
        """Rewrite one function (itself when it makes no tensor-core call).

        Example:
            >>> from unity import tir
            >>> f = tir.PrimFunc([], tir.Evaluate(tir.const(0)))
            >>> LowerWmma().transform_function(f) is f
            True
        """
        return with_body(func, _Rewriter().visit_stmt(func.body))


class _Rewriter(LoopBoundsMutator):
    def visit_call_(self, call: Call) -> PrimExpr:
        expected = _EXPECTED.get(call.op)
        if expected is None:
            return self._mutate_fields(call)
        if len(call.args) != len(expected):
            raise _error(call, f"takes {len(expected)} arguments in tile form, got {len(call.args)}")
        args: list[PrimExpr] = []
        for arg, want in zip(call.args, expected):
            if want is None:
                args.append(arg)
            elif want == "memory":
                args.extend(self._memory(call, arg))
            else:
                args.extend(self._fragment(call, arg, (want,) if isinstance(want, str) else want))
        return call.replace(args=tuple(args))

    def _fragment(self, call: Call, arg: PrimExpr, scopes: tuple[str, ...]) -> list[PrimExpr]:
        if not isinstance(arg, BufferLoad) or arg.buffer.scope not in scopes:
            got = arg.buffer.scope if isinstance(arg, BufferLoad) else "a value"
            raise _error(call, f"wants a fragment in scope {' or '.join(scopes)}, got {got}")
        buf = arg.buffer
        sides = []
        for dim in buf.shape[-2:]:
            if not isinstance(dim, IntImm) or dim.value % TILE:
                raise _error(call, f"fragment buffer {buf.name} of shape "
                             f"({', '.join(d.script() for d in buf.shape)}) is not made of {TILE} x {TILE} tiles")
            sides.append(dim.value // TILE)
        index: PrimExpr | None = None
        for dim, i in zip(buf.shape[:-2], arg.indices[:-2]):
            index = i if index is None else index * dim + i
        for side, i in zip(sides, arg.indices[-2:]):
            if not is_const_int(self.analyzer.simplify(floormod(i, TILE)), 0):
                raise _error(call, f"tile of {buf.name} at {i.script()} is not on the {TILE}-grid")
            tile = floordiv(i, TILE)
            index = tile if index is None else index * side + tile
        return [buf.data, self.analyzer.simplify(index)]

    def _memory(self, call: Call, arg: PrimExpr) -> list[PrimExpr]:
        if not isinstance(arg, BufferLoad) or arg.buffer.scope in FRAGMENT_SCOPES or len(arg.indices) < 2:
            raise _error(call, "wants a 2-D (or more) tile of memory as its memory argument")
        if arg.buffer.strides:
            return [arg, arg.buffer.strides[-2]]
        return [arg, arg.buffer.shape[-1]]


def _error(call: Call, what: str) -> DiagnosticError:
    return DiagnosticError(f"{call.op.name} {what}: {script(call).strip()}", call)
