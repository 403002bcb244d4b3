"""What a converter sees: the node (`NodeView`) and the import state (`Context`).

A value flowing between ONNX nodes is one of: a numpy array (known at import
time, folded), a `SymTensor` (a shape-valued integer tensor with symbolic
entries), or a relax expression (data only known at run time).  Converters ask
the `Context` for the form they need: `ctx.expr(v)` for a relax operand,
`ctx.ints(v, "axes")` for a list that must be known now.

Example:
    >>> import numpy as np
    >>> from unity.relax.block_builder import BlockBuilder
    >>> ctx = Context(BlockBuilder(), opset=17)
    >>> ctx.ints(np.array([1, -1]), "axes")
    [1, -1]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy

from unity.ir.op import Op
from unity.relax import op as R
from unity.relax.block_builder import BlockBuilder
from unity.relax.expr import Call, Constant, Expr, ShapeExpr, Var
from unity.relax.frontend.onnx.errors import ConstantInputRequired, OnnxImportError
from unity.relax.frontend.onnx.symbolic import SymTensor
from unity.relax.struct_info import Dim, TensorStructInfo, prove_equal, prove_not_equal
from unity.runtime.narrow import widened, widened_dtype


@dataclass(frozen=True, eq=False)
class SeqValue:
    """An ONNX sequence during import: its tensors, known now (`ops.sequence`).

    Example:
        >>> SeqValue((np.zeros(2), np.ones(3)), "float64").items[1].shape
        (3,)
    """

    items: tuple[Any, ...]
    dtype: str
    """The element type of its tensors (also of an empty one)."""


@dataclass(frozen=True)
class EmptyOptional:
    """An ONNX optional holding nothing (``Optional`` with no input), during import.

    Example:
        >>> EmptyOptional().kind
        'tensor'
    """

    kind: str = "tensor"
    """What it would hold: "tensor" or "sequence"."""


Value = np.ndarray | SymTensor | Expr | SeqValue | EmptyOptional
"""A value during import: a tensor known now (numpy / `SymTensor`) or at run time
(relax), a sequence of them, or an empty optional (an optional holding a value is
that value)."""


def symbol_name(name: str) -> str:
    """An ONNX name (a dim parameter, a value) as the name of a symbol or variable.

    Example:
        >>> symbol_name("batch size"), symbol_name("0")
        ('batch_size', 'd_0')
    """
    out = re.sub(r"\W", "_", name)
    return out if out and not out[0].isdigit() else f"d_{out}"


@dataclass
class NodeView:
    """One ONNX node with its inputs already converted and its attributes decoded.

    Example:
        >>> NodeView("n", "Relu", [None], {}, 17, 1).attr("alpha", 0.01)
        0.01
    """

    name: str
    op_type: str
    inputs: list[Value | None]
    attrs: dict[str, Any]
    opset: int
    num_outputs: int
    input_names: list[str] = field(default_factory=list)

    def attr(self, key: str, default: Any = None) -> Any:
        """The attribute `key`, or `default` when the node does not set it.

        Example:
            >>> NodeView("n", "Elu", [None], {"alpha": 2.0}, 17, 1).attr("alpha")
            2.0
        """
        return self.attrs.get(key, default)

    def input(self, index: int) -> Value | None:
        """Input `index`, or None when it is omitted (absent or named "").

        Example:
            >>> NodeView("n", "Clip", [None], {}, 17, 1).input(2) is None
            True
        """
        return self.inputs[index] if index < len(self.inputs) else None


def _kind(value: SeqValue | EmptyOptional) -> str:
    return "a sequence" if isinstance(value, SeqValue) else "an empty optional"


class Context:
    """Import state shared by converters: the builder, the opset, and value helpers.

    Example:
        >>> ctx = Context(BlockBuilder(), opset=17)
        >>> ctx.sinfo(np.zeros((2, 3), "int8")).shape
        (2, 3)
    """

    def __init__(self, bb: BlockBuilder, opset: int) -> None:
        self.bb = bb
        self.opset = opset
        self.node: NodeView | None = None
        self.graph_inputs: dict[Var, str] = {}
        self._constants: dict[int, Constant] = {}
        self._narrow: dict[Expr, str] = {}
        self.entries: dict[Expr, list[Dim | None]] = {}
        self.lengths: dict[Dim, Dim] = {}
        """Symbols standing for compound lengths (a group of concatenated parts), one per
        expression, so that parts joined alike stay of one length."""
        """Entries known at import time of 1-D integer tensors computed at run time (a
        Concat of a shape's part and computed lengths), None where not known."""

    # -- errors ---------------------------------------------------------------------------
    def fail(self, message: str) -> OnnxImportError:
        """An `OnnxImportError` naming the node being converted.

        Example:
            >>> raise ctx.fail("expects 2 inputs")  # doctest: +SKIP
        """
        node = self.node
        return OnnxImportError(message, node.name if node else "", node.op_type if node else "")

    def symbol_base(self, default: str) -> str:
        """The node being converted's name as a prefix of the symbols it makes (`default`
        outside a node).

        Example:
            >>> ctx.symbol_base("concat")  # doctest: +SKIP
            '_Concat_93'
        """
        return re.sub(r"\W", "_", self.node.name if self.node else default)

    # -- relax operands -------------------------------------------------------------------
    def emit(self, expr: Expr) -> Var:
        """Bind `expr` in the current dataflow block (struct info is inferred).

        Example:
            >>> y = ctx.emit(R.exp(x))  # doctest: +SKIP
        """
        if isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.attrs.get("broadcasts"):
            expr = self._same_dims(expr)
        return self.bb.emit(expr)

    def _same_dims(self, call: Call) -> Call:
        """`call` with its operands' unrelated symbolic dims taken to be equal.

        Where two broadcasting operands have dims that are different symbols (inputs of
        dims ``n`` and ``m``, a dim made at run time), only the run time knows whether
        they are equal or one is 1, and the result's shape cannot be inferred.  As in
        nearly every model, they are taken to be equal: the later operand is cast
        (`match_cast`, checked at run time) to the dim of the first, or to a constant
        dim another operand has; the cast is named after the node and the operand
        (``Add_3_operand1_broadcast``), which the run-time error names.
        """
        infos = [a.struct_info for a in call.args]
        if not all(isinstance(i, TensorStructInfo) and i.shape is not None for i in infos):
            return call
        shapes = [list(i.shape) for i in infos]  # type: ignore[union-attr,arg-type]  # known
        rank = max(len(s) for s in shapes)
        aligned = [[None] * (rank - len(s)) + s for s in shapes]  # right-aligned, as numpy
        targets = []
        for dims in zip(*aligned):
            fixed = [d for d in dims if d is not None and d.is_number and d != 1]
            symbols = [d for d in dims if isinstance(d, sympy.Symbol)]
            targets.append(fixed[0] if fixed else symbols[0] if symbols else None)
        args = list(call.args)
        node = (self.node.name or self.node.op_type) if self.node else call.op.name
        for k, shape in enumerate(shapes):
            cast = [_unified(d, t) for d, t in zip(shape, targets[rank - len(shape):], strict=True)]
            if any(a is not b for a, b in zip(cast, shape, strict=True)):
                sinfo = TensorStructInfo(tuple(cast), infos[k].dtype)  # named for its error
                hint = re.sub(r"\W", "_", f"{node.strip('/')}_operand{k}_broadcast")
                args[k] = self.bb.match_cast(args[k], sinfo, name_hint=hint)
        changed = any(a is not b for a, b in zip(args, call.args, strict=True))
        return call.replace(args=tuple(args)) if changed else call

    def expr(self, value: Value | None) -> Expr:
        """`value` as a relax expression (constants become `Constant`s, shared per array).

        Example:
            >>> ctx.expr(np.float32(1.0)).data.dtype  # doctest: +SKIP
            dtype('float32')
        """
        if value is None:
            raise self.fail("misses a required input")
        if isinstance(value, SeqValue | EmptyOptional):
            raise self.fail(f"expects a tensor, got {_kind(value)}")
        if isinstance(value, Expr):
            return value
        if isinstance(value, SymTensor):
            return self._sym_to_expr(value)
        key = id(value)
        if key not in self._constants:
            self._constants[key] = Constant(widened(np.asarray(value)))
        return self._constants[key]

    def _sym_to_expr(self, value: SymTensor) -> Expr:
        from unity.relax.op.onnx_extra import shape_to_tensor

        flat = ShapeExpr(tuple(value.values.reshape(-1)))
        out = self.emit(shape_to_tensor(flat, value.dtype))
        if value.values.ndim != 1:
            out = self.emit(R.reshape(out, value.shape))
        return out

    def scalar(self, number: float | bool, dtype: str) -> Constant:
        """A 0-d constant of `dtype`.

        Example:
            >>> ctx.scalar(2, "float32").data.dtype  # doctest: +SKIP
            dtype('float32')
        """
        return Constant(np.array(number, dtype=dtype))

    # -- narrow types (float8, int4...: held widened) ------------------------------------
    def hold(self, expr: Expr, dtype: str) -> Expr:
        """Remember that `expr` holds values of ONNX type `dtype` (a narrow type held
        widened, `unity.runtime.narrow`); returns `expr`.

        Example:
            >>> ctx.onnx_dtype(ctx.hold(y, "float8_e4m3fn"))  # doctest: +SKIP
            'float8_e4m3fn'
        """
        if widened_dtype(dtype) != dtype:
            self._narrow[expr] = dtype
        return expr

    def onnx_dtype(self, value: Value | None) -> str:
        """The ONNX element type of `value` as a dtype name: the narrow type it holds
        (`hold`; an initializer's ml_dtypes type), else its dtype.

        Example:
            >>> import ml_dtypes
            >>> ctx.onnx_dtype(np.zeros(2, ml_dtypes.int4))  # doctest: +SKIP
            'int4'
        """
        if isinstance(value, np.ndarray | np.generic):
            return np.asarray(value).dtype.name
        if isinstance(value, Expr) and value in self._narrow:
            return self._narrow[value]
        return self.dtype(value)

    # -- static facts about values --------------------------------------------------------
    def sinfo(self, value: Value | None) -> TensorStructInfo:
        """The tensor struct info of any value.

        Example:
            >>> ctx.sinfo(np.zeros((2, 3), "int8")).shape  # doctest: +SKIP
            (2, 3)
        """
        if value is None:
            raise self.fail("misses a required input")
        if isinstance(value, SeqValue | EmptyOptional):
            raise self.fail(f"expects a tensor, got {_kind(value)}")
        if isinstance(value, SymTensor):
            return TensorStructInfo(value.shape, value.dtype)
        if isinstance(value, np.ndarray | np.generic):
            dtype = widened_dtype(str(value.dtype))  # narrow types: widened
            return TensorStructInfo(tuple(int(d) for d in np.shape(value)), dtype)
        sinfo = value.struct_info
        if not isinstance(sinfo, TensorStructInfo):
            raise self.fail(f"expects a tensor input, got {type(sinfo).__name__}")
        return sinfo

    def dtype(self, value: Value | None) -> str:
        """The element dtype of `value`.

        Example:
            >>> ctx.dtype(np.zeros(2, "int8"))  # doctest: +SKIP
            'int8'
        """
        return self.sinfo(value).dtype

    def ndim(self, value: Value | None) -> int:
        """The rank of `value`; an error when it is not known.

        Example:
            >>> ctx.ndim(np.zeros((2, 3)))  # doctest: +SKIP
            2
        """
        ndim = self.sinfo(value).ndim
        if ndim < 0:
            raise self.fail("needs an input of known rank")
        return ndim

    def shape(self, value: Value | None) -> tuple[Dim, ...]:
        """The shape of `value` (dims may be symbolic); an error when it is not known.

        Example:
            >>> ctx.shape(x)  # doctest: +SKIP
            (batch, 4)
        """
        shape = self.sinfo(value).shape
        if shape is None:
            raise self.fail("needs an input of known shape")
        return shape

    # -- values that must be known at import time -----------------------------------------
    def const(self, value: Value | None, what: str) -> np.ndarray:
        """The numpy value of `value`, which must be known now (else a clear error).

        Example:
            >>> ctx.const(np.array([0, 1]), "pads").tolist()  # doctest: +SKIP
            [0, 1]
        """
        if isinstance(value, np.ndarray | np.generic):
            return np.asarray(value)
        if isinstance(value, SymTensor):
            raise self.fail(f"needs {what} as plain numbers, got symbolic {value.values.tolist()}")
        names = self.feeding_inputs(value) if isinstance(value, Expr) else []
        node = self.node
        raise ConstantInputRequired(what, names, node.name if node else "", node.op_type if node else "")

    def feeding_inputs(self, value: Expr) -> list[str]:
        """The graph inputs `value` is computed from (through the bindings emitted so
        far), in first-use order: the inputs a user would have to make constants.

        Example:
            >>> ctx.feeding_inputs(ctx.emit(R.add(x, y)))  # doctest: +SKIP
            ['x', 'y']
        """
        from unity.relax.expr_functor import ExprVisitor

        found: dict[str, None] = {}
        seen: set[Var] = set()
        bb, inputs = self.bb, self.graph_inputs

        class _Walk(ExprVisitor):
            def visit_var_(self, var: Var) -> None:
                if var in seen:
                    return
                seen.add(var)
                if var in inputs:
                    found.setdefault(inputs[var], None)
                elif (bound := bb.lookup_binding(var)) is not None:
                    self.visit_expr(bound)

        _Walk().visit_expr(value)
        return list(found)

    def ints(self, value: Value | None, what: str) -> list[int]:
        """A list of Python ints that must be known now (axes, pads, repeats...).

        Example:
            >>> ctx.ints(np.array([[1], [2]]), "pads")  # doctest: +SKIP
            [1, 2]
        """
        return [int(v) for v in self.const(value, what).reshape(-1)]

    def dims(self, value: Value | None, what: str) -> list[Dim]:
        """A shape-like 1-D tensor as sympy dims (symbolic entries allowed).

        Example:
            >>> ctx.dims(np.array([2, 3]), "shape")  # doctest: +SKIP
            [2, 3]
        """
        if isinstance(value, SymTensor):
            return [sympy.sympify(v) for v in value.values.reshape(-1)]
        return [sympy.Integer(v) for v in self.ints(value, what)]

    def is_known(self, value: Value | None) -> bool:
        """True when `value` is known at import time (numpy or `SymTensor`).

        Example:
            >>> ctx.is_known(np.array(1))  # doctest: +SKIP
            True
        """
        return isinstance(value, np.ndarray | np.generic | SymTensor)

    def normalize_axes(self, axes: Sequence[int], ndim: int) -> list[int]:
        """Map negative axes into ``[0, ndim)``; an error naming the node when out of range.

        Example:
            >>> ctx.normalize_axes([-1, 0], 3)  # doctest: +SKIP
            [2, 0]
        """
        out = []
        for a in axes:
            if not -ndim <= a < ndim:
                raise self.fail(f"axis {a} is out of range for a tensor of rank {ndim}")
            out.append(a % ndim)
        return out


def _unified(dim: Dim, target: Dim | None) -> Dim:
    """`target` where `dim` and it are dims the compiler cannot compare, else `dim`."""
    if target is None or dim.is_number or dim == target or prove_equal(dim, target):
        return dim
    return dim if prove_not_equal(dim, target) else target
