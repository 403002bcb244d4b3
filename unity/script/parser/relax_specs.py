"""What `R.*` calls return inside a relax script, and the script form of relax ops.

Statements such as `with R.dataflow():`, `R.output(gv)`, `R.func_attr({...})` and
`lv = R.match_cast(x, sinfo)` evaluate to small specs that the function parser reads.
`ScriptOp` wraps a relax `Op` so that `R.nn.conv2d(x, w, strides=2)` (the op builder's
keywords) and the printed form `R.nn.conv2d(x, w, strides=(2, 2), padding=(0, 0, 0, 0),
...)` (every field of the op's attrs) both build the call.

Example:
    >>> from unity.relax import op
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo((2, 3), "float32"))
    >>> ScriptOp(op.squeeze)(x, axes=(0,)).attrs.axes
    (0,)
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from unity.ir.op import Op
from unity.relax.expr import Attrs, Call, Expr, Tuple
from unity.relax.struct_info import StructInfo


@dataclass(frozen=True)
class DataflowSpec:
    """`with R.dataflow():` opens a dataflow block.

    Example:
        >>> from unity.script import relax as R
        >>> R.dataflow()
        DataflowSpec()
    """


@dataclass(frozen=True)
class OutputSpec:
    """`R.output(a, b)`: the variables a dataflow block exports (its last statement).

    Example:
        >>> from unity.script import relax as R
        >>> R.output("gv0", "gv1")
        OutputSpec(values=('gv0', 'gv1'))
    """

    values: tuple[Any, ...]


@dataclass(frozen=True)
class MatchCastSpec:
    """`R.match_cast(value, sinfo)`: the right-hand side of a `MatchCast` binding.

    Example:
        >>> from unity import relax
        >>> from unity.script import relax as R
        >>> x = relax.Var("x", relax.TensorStructInfo(ndim=2, dtype="float32"))
        >>> R.match_cast(x, R.Tensor((4, 4), "float32")).struct_info
        R.Tensor((4, 4), dtype="float32")
    """

    value: Expr
    struct_info: StructInfo


@dataclass(frozen=True)
class FuncAttrSpec:
    """`R.func_attr({...})`: the attributes of the enclosing function.

    Example:
        >>> from unity.script import relax as R
        >>> R.func_attr({"num_input": 1})
        FuncAttrSpec(attrs={'num_input': 1})
    """

    attrs: Mapping[str, Any]


class StructInfoMaker:
    """`R.Tensor`, `R.Object`, ...: callable, and usable bare as an annotation (`x: R.Object`).

    Example:
        >>> from unity.relax.struct_info import ObjectStructInfo
        >>> isinstance(as_struct_info(StructInfoMaker("R.Object", ObjectStructInfo)), StructInfo)
        True
    """

    def __init__(self, name: str, make: Any) -> None:
        self.name = name
        self.make = make

    def __call__(self, *args: Any, **kwargs: Any) -> StructInfo:
        return self.make(*args, **kwargs)

    def __repr__(self) -> str:
        return self.name


def as_struct_info(value: object) -> StructInfo:
    """`value` as struct info (a bare `R.Tensor` / `R.Object` is called); TypeError otherwise.

    Example:
        >>> from unity.relax.struct_info import ObjectStructInfo
        >>> as_struct_info(ObjectStructInfo()).script()
        'R.Object'
    """
    if isinstance(value, StructInfoMaker):
        value = value()
    if not isinstance(value, StructInfo):
        raise TypeError(f"expected struct info such as R.Tensor(...), got {_kind(value)}")
    return value


def _kind(value: object) -> str:
    if isinstance(value, StructInfo):
        return f"the struct info {value.script()}"
    return type(value).__name__ if not isinstance(value, Expr) else f"the expression {value}"


# -- ops ---------------------------------------------------------------------------------
class ScriptOp:
    """A relax op as script calls it: builder keywords, or every field of its attrs.

    The builder is tried first (`R.sum(x, axis=1)`); when its signature does not accept
    the arguments, the keywords must name the fields of one attrs class of the op's
    family (what the printer writes) and the call is built from them directly.

    Example:
        >>> from unity import relax
        >>> from unity.script import relax as R
        >>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
        >>> R.sum.script_name, R.sum(x, axis=1)
        ('R.sum', R.sum(x, axis=(1,), keepdims=False))
    """

    def __init__(self, op: Op) -> None:
        self.op = op

    @property
    def script_name(self) -> str:
        """`R.nn.conv2d` for `relax.nn.conv2d`."""
        return "R." + self.op.name.removeprefix("relax.")

    def __call__(self, *args: Any, **kwargs: Any) -> Call:
        make = self.op.attrs["make"]
        signature = inspect.signature(make)
        try:
            signature.bind(self.op, *args, **kwargs)
        except TypeError as err:
            call = self._from_attr_fields(make, args, kwargs)
            if call is None:
                params = ", ".join(list(signature.parameters)[1:])
                raise TypeError(f"{self.script_name}({params}): {err}") from None
            return call
        return _with_given_args(self.op(*args, **kwargs), args)

    def _from_attr_fields(
        self, make: Any, args: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> Call | None:
        attrs_cls = _attrs_class(make, set(kwargs))
        if attrs_cls is None or not all(isinstance(a, Expr | tuple | list) for a in args):
            return None
        if len(args) != _expr_arity(make):
            return None
        values = {k: _tupled(v) for k, v in kwargs.items()}
        return Call(self.op, tuple(as_expr(a) for a in args), attrs_cls(**values))

    def __repr__(self) -> str:
        return self.script_name


def _with_given_args(call: Call, args: Sequence[Any]) -> Call:
    """`call` with exactly the expressions written, when they are all of its arguments.

    The printed form writes a call's own arguments (`R.dtype("float32")`, not "float32");
    a builder that wraps its inputs again must not change them.
    """
    if len(args) != len(call.args) or not all(isinstance(a, Expr) for a in args):
        return call
    return call.replace(args=tuple(args))


def _attrs_class(make: Any, names: set[str]) -> type | None:
    """The attrs class next to the op builder `make` whose fields are exactly `names`."""
    if not names:
        return None
    module = sys.modules.get(make.__module__)
    found = {
        cls
        for cls in vars(module).values()
        if isinstance(cls, type) and issubclass(cls, Attrs) and cls is not Attrs
        if {f.name for f in dataclasses.fields(cls)} == names
    }
    return found.pop() if len(found) == 1 else None


def _expr_arity(make: Any) -> int:
    """How many expression arguments the builder takes (parameters annotated with `Expr`)."""
    params = list(inspect.signature(make).parameters.values())[1:]
    return sum("Expr" in f"{p.annotation}" for p in params)


def _tupled(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_tupled(v) for v in value)  # type: ignore[union-attr]  # a sequence
    return value


def as_expr(value: object) -> Expr:
    """`value` as a relax expression: a Python tuple of expressions becomes a `Tuple`.

    Example:
        >>> as_expr(()).fields
        ()
    """
    if isinstance(value, Expr):
        return value
    if isinstance(value, tuple | list):
        return Tuple(tuple(as_expr(v) for v in value))  # type: ignore[union-attr]  # a sequence
    raise TypeError(f"expected a relax expression, got {_kind(value)}")


class OpNamespace:
    """`R.nn`: ops named `relax.nn.<name>` as attributes.

    Example:
        >>> OpNamespace("relax.nn").relu
        R.nn.relu
    """

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix

    def __getattr__(self, name: str) -> ScriptOp | OpNamespace:
        return lookup_op(self._prefix, name)

    def __repr__(self) -> str:
        return "R." + self._prefix.removeprefix("relax.").removeprefix("relax")


def lookup_op(prefix: str, name: str) -> ScriptOp | OpNamespace:
    """The op `<prefix>.<name>` (or the namespace of ops under it); AttributeError if none.

    Example:
        >>> lookup_op("relax", "exp")
        R.exp
    """
    import unity.relax.op  # noqa: F401  # registers the ops

    full = f"{prefix}.{name}"
    if full in Op.registry:
        return ScriptOp(Op.registry[full])
    if any(key.startswith(full + ".") for key in Op.registry):
        return OpNamespace(full)
    shown = "R." + full.removeprefix("relax.")
    raise AttributeError(f"unknown relax operator {shown}")
