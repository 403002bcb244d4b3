"""Helpers for op struct-info tests."""

from unity.relax import BlockBuilder, TensorStructInfo, Var
from unity.relax.struct_info import StructInfo


def tensor(name, shape, dtype="float32"):
    """A relax var of tensor struct info."""
    return Var(name, TensorStructInfo(shape, dtype))


def infer(call) -> StructInfo:
    """The inferred struct info of `call` (normalized by a BlockBuilder)."""
    return BlockBuilder().normalize(call).struct_info


def shape_of(call):
    """The inferred shape, dims rendered as strings."""
    sinfo = infer(call)
    return tuple(str(d) for d in sinfo.shape)
