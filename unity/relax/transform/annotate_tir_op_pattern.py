"""Set each PrimFunc's `op_pattern` attribute from its structure (for `FuseOps`).

Before::

    @T.prim_func
    def relu(x: T.Buffer((T.int64("n"), T.int64(4)), "float32"),
             T_relu: T.Buffer((T.int64("n"), T.int64(4)), "float32")):
        T.func_attr({"tir.noalias": True})
        for i0, i1 in T.grid(n, T.int64(4)):
            with T.block("T_relu"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T_relu[v_i0, v_i1] = T.max(x[v_i0, v_i1], T.float32(0.0))

After ``AnnotateTIROpPattern()``::

    @T.prim_func
    def relu(...):
        T.func_attr({"op_pattern": 0, "tir.noalias": True})   # 0 = elementwise
        ...

The values are those of `OpPatternKind` (elemwise 0, broadcast 1, injective 2,
comm-reduce 3, out-elemwise-fusable 4, tuple 7, opaque 8), as in TVM.  A function that
already has an `op_pattern` keeps it (a hand-written kernel may declare itself opaque).
"""

from __future__ import annotations

from dataclasses import dataclass

from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.analysis.op_pattern import analyze_op_pattern
from unity.tir.function import PrimFunc


@dataclass(frozen=True)
class AnnotateTIROpPattern(ModulePass):
    """Annotate every PrimFunc without an `op_pattern` with the pattern read from its blocks.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((4,), name="A")
        >>> B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
        >>> mod = IRModule({"add_one": te.create_prim_func([A, B])})
        >>> AnnotateTIROpPattern()(mod)["add_one"].attrs["op_pattern"]
        0
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Return `mod` with the attribute set (`mod` itself if every function had one)."""
        return mod.map_functions(PrimFunc, _annotate)


def _annotate(func: PrimFunc) -> PrimFunc:
    if "op_pattern" in func.attrs:
        return func
    return func.with_attr("op_pattern", int(analyze_op_pattern(func)))
