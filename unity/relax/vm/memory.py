"""VM memory builtins: explicit storage and tensors placed in it (what memory planning emits).

``R.memory.alloc_storage(size, virtual_device_index, storage_scope, dtype)`` allocates
`size` bytes; ``R.memory.alloc_tensor(storage, offset, shape, dtype)`` is a tensor
viewing that storage from byte `offset`; ``R.memory.kill_storage`` /
``R.memory.kill_tensor`` end an object's life (the VM may reuse its memory after it
and after every tensor placed in it).  As in TVM they print::

    storage: R.Object = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str("global"), R.dtype("float32"))
    alloc: R.Tensor((2, 4), dtype="float32") = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"))
    _: R.Tuple = R.memory.kill_tensor(alloc)

Example:
    >>> s = alloc_storage((32,), 0, "global", "float32")
    >>> s.op.name, alloc_tensor(s, 0, (2, 4), "float32").op.name
    ('relax.memory.alloc_storage', 'relax.memory.alloc_tensor')
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from unity.relax.expr import Call, DataTypeImm, Expr, PrimValue, ShapeExpr, StringImm
from unity.relax.op.base import RelaxOp, fail, register_op, shape_arg
from unity.relax.struct_info import (
    ObjectStructInfo, StructInfo, TensorStructInfo, TupleStructInfo,
)  # fmt: skip


def _infer_storage(call: Call) -> StructInfo:
    size = shape_arg(call, 0)
    if size is not None and len(size) != 1:
        raise fail(call, f"expects a 1-D size in bytes, got {len(size)} dims")
    if not isinstance(call.args[2], StringImm) or not isinstance(call.args[3], DataTypeImm):
        raise fail(call, "expects a storage scope string and a dtype literal as arguments 2 and 3")
    return ObjectStructInfo()


def _infer_tensor(call: Call) -> StructInfo:
    if not isinstance(call.args[0].struct_info, ObjectStructInfo):
        raise fail(call, "expects a storage (R.Object) as argument 0")
    dtype = call.args[3]
    if not isinstance(dtype, DataTypeImm):
        raise fail(call, "expects a dtype literal as argument 3")
    return TensorStructInfo(shape_arg(call, 2), dtype.value)


def _infer_kill(call: Call) -> StructInfo:
    if len(call.args) != 1:
        raise fail(call, f"expects one argument, got {len(call.args)}")
    return TupleStructInfo(())


def _prim(value: int | sympy.Expr | Expr) -> Expr:
    return value if isinstance(value, Expr) else PrimValue(sympy.sympify(value))


def _shape(values: Sequence[object] | Expr) -> Expr:
    return values if isinstance(values, Expr) else ShapeExpr(tuple(values))


@register_op("memory.alloc_storage", infer=_infer_storage, pure=False)
def alloc_storage(
    op: RelaxOp,
    size: Sequence[object] | Expr,
    virtual_device_index: int | Expr = 0,
    storage_scope: str | Expr = "global",
    dtype: str | Expr = "uint8",
) -> Call:
    """Allocate a storage of `size` (a 1-D shape: the byte count) on the VM's device.

    Example:
        >>> alloc_storage((64,)).args[0].values
        (64,)
    """
    scope = storage_scope if isinstance(storage_scope, Expr) else StringImm(storage_scope)
    dt = dtype if isinstance(dtype, Expr) else DataTypeImm(dtype)
    return Call(op, (_shape(size), _prim(virtual_device_index), scope, dt))


@register_op("memory.alloc_tensor", infer=_infer_tensor, pure=False)
def alloc_tensor(
    op: RelaxOp,
    storage: Expr,
    offset: int | Expr,
    shape: Sequence[object] | Expr,
    dtype: str | Expr,
) -> Call:
    """A tensor of `shape` and `dtype` in `storage`, starting `offset` bytes into it.

    Example:
        >>> from unity.relax.expr import Var
        >>> alloc_tensor(Var("s", ObjectStructInfo()), 0, (4,), "int8").args[3].value
        'int8'
    """
    dt = dtype if isinstance(dtype, Expr) else DataTypeImm(dtype)
    return Call(op, (storage, _prim(offset), _shape(shape), dt))


@register_op("memory.kill_storage", infer=_infer_kill, pure=False)
def kill_storage(op: RelaxOp, storage: Expr) -> Call:
    """End the life of `storage` (its memory is reusable once its tensors are dead too).

    Example:
        >>> from unity.relax.expr import Var
        >>> kill_storage(Var("s", ObjectStructInfo())).op.name
        'relax.memory.kill_storage'
    """
    return Call(op, (storage,))


@register_op("memory.kill_tensor", infer=_infer_kill, pure=False)
def kill_tensor(op: RelaxOp, tensor: Expr) -> Call:
    """End the life of `tensor` (a tensor of `alloc_tensor`).

    Example:
        >>> from unity.relax.expr import Var
        >>> kill_tensor(Var("t", TensorStructInfo((4,), "int8"))).op.name
        'relax.memory.kill_tensor'
    """
    return Call(op, (tensor,))
