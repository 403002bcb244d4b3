"""Graph-level IR: expressions, struct info with sympy shapes, `BlockBuilder`, operators.

Example:
    >>> from unity import relax
    >>> x = relax.Var("x", relax.TensorStructInfo(("n", 4), "float32"))
    >>> bb = relax.BlockBuilder()
    >>> with bb.function("main", [x]):
    ...     _ = bb.emit_func_output(bb.emit(relax.op.nn.relu(x)))
    >>> relax.analysis.well_formed(bb.get())
    True
"""

from unity.relax import analysis, op, printer, transform
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import (
    Attrs, Binding, BindingBlock, Call, Constant, DataflowBlock, DataflowVar, DataTypeImm, Expr,
    ExternFunc, Function, If, LeafExpr, MatchCast, PrimValue, SeqExpr, ShapeExpr, StringImm,
    Tuple, TupleGetItem, Var, VarBinding, const,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator, ExprVisitor
from unity.relax.struct_info import (
    FuncStructInfo, ObjectStructInfo, PrimStructInfo, ShapeStructInfo, StructInfo,
    TensorStructInfo, TupleStructInfo, prove_equal, shapes_equal, sym,
)  # fmt: skip
from unity.relax.utils import struct_info_equal
from unity.runtime.vm import VirtualMachine
