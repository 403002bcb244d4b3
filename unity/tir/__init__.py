"""Loop-level IR (TensorIR): expressions, statements, buffers, blocks and `PrimFunc`.

Example:
    >>> from unity import tir
    >>> i = tir.Var("i")
    >>> (i + 1).dtype
    'int32'
"""

from unity.tir import op
from unity.tir.buffer import Buffer, BufferRegion, decl_buffer
from unity.tir.expr import (
    EQ, GE, GT, LE, LT, NE, Add, And, BinaryOp, Broadcast, BufferLoad, Call, Cast, CmpOp, Div,
    FloatImm, FloorDiv, FloorMod, IntImm, IterType, IterVar, Let, Max, Min, Mod, Mul, Not, Or,
    PrimExpr, Ramp, Range, Select, SizeVar, StringImm, Sub, Var, add, cast, const, div, eq,
    floordiv, floormod, ge, gt, le, logical_and, logical_or, lt, mul, ne, select, sub, truncdiv,
    truncmod,
)  # fmt: skip
from unity.tir.expr import max_value_of as max  # noqa: A004 - TVM's name
from unity.tir.expr import min_value_of as min  # noqa: A004 - TVM's name
from unity.tir.function import PrimFunc
from unity.tir.functor import (
    ExprMutator, ExprVisitor, StmtExprMutator, StmtExprVisitor, post_order_visit, substitute,
)  # fmt: skip
from unity.tir.op import (
    abs, acos, asin, atan, atan2, call_intrin, ceil, cos, cosh, erf, exp, exp2, fabs, floor, fmod,
    isinf, isnan, ldexp, log, log2, log10, max_value, min_value, power, reinterpret, round, rsqrt, sigmoid,
    sin, sinh, sqrt, tan, tanh, trunc,
)  # fmt: skip
from unity.tir.stmt import (
    Allocate, AssertStmt, Block, BlockRealize, BufferStore, Evaluate, For, ForKind, IfThenElse,
    LetStmt, MatchBufferRegion, SeqStmt, Stmt, While, seq,
)  # fmt: skip

pow = power  # noqa: A001 - TVM's name
from unity.tir.interpreter import InterpretError, interpret  # noqa: E402 - the reference interpreter
from unity.tir import printer as _printer  # noqa: F401 - registers the TIR printer


def lower(mod_or_func: "IRModule | PrimFunc") -> "IRModule":  # noqa: F821, UP037 - lazy import
    """Lower TensorIR to the lowered form codegen reads (`unity.tir.transform.lower`).

    Example:
        >>> tir.lower(func).show()  # doctest: +SKIP
    """
    from unity.tir.transform.pipeline import lower as _lower  # lazy: transform imports arith

    return _lower(mod_or_func)
