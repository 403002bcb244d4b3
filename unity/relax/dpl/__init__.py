"""The dataflow pattern language (TVM's `relax.dpl`): patterns, matching, rewriting.

Example:
    >>> from unity.relax.dpl import is_op, wildcard
    >>> pat = is_op("relax.nn.relu")(is_op("relax.add")(wildcard(), wildcard()))
    >>> type(pat).__name__
    'CallPattern'
"""

from unity.relax.dpl.matcher import Match, match_expr
from unity.relax.dpl.pattern import (
    AndPattern, AttrPattern, CallPattern, ConstantPattern, DataTypePattern, DFPattern,
    ExprPattern, OpPattern, OrPattern, ShapePattern, TupleGetItemPattern, TuplePattern,
    VarPattern, WildcardPattern, is_const, is_expr, is_op, is_tuple, is_tuple_get_item, is_var,
    wildcard,
)  # fmt: skip
from unity.relax.dpl.rewrite import get_var2val, rewrite_bindings, rewrite_call

__all__ = [
    "AndPattern", "AttrPattern", "CallPattern", "ConstantPattern", "DFPattern",
    "DataTypePattern", "ExprPattern", "Match", "OpPattern", "OrPattern", "ShapePattern",
    "TupleGetItemPattern", "TuplePattern", "VarPattern", "WildcardPattern", "get_var2val",
    "is_const", "is_expr", "is_op", "is_tuple", "is_tuple_get_item", "is_var", "match_expr",
    "rewrite_bindings", "rewrite_call", "wildcard",
]  # fmt: skip


def __getattr__(name: str) -> object:
    """`FuseOpsByPattern` / `FusionPattern` live with the passes; reachable from here too."""
    if name in ("FuseOpsByPattern", "FusionPattern"):
        from unity.relax.transform import fuse_ops_by_pattern

        return getattr(fuse_ops_by_pattern, name)
    raise AttributeError(f"module 'unity.relax.dpl' has no attribute {name!r}")
