"""`BlockBuilder`: build relax functions binding by binding, inferring struct info on emit.

Nested calls are put in A-normal form: ``bb.emit(relu(add(x, y)))`` binds the
`add` first.  `call_te` / `emit_te` turn a TE compute into a PrimFunc of the same
module and a `call_tir` to it.

Example:
    >>> from unity.relax import op
    >>> from unity.relax.expr import Var
    >>> from unity.relax.struct_info import TensorStructInfo
    >>> x = Var("x", TensorStructInfo(("n", 4), "float32"))
    >>> bb = BlockBuilder()
    >>> with bb.function("main", [x]):
    ...     with bb.dataflow():
    ...         y = bb.emit(op.exp(x))
    ...         out = bb.emit_output(op.add(y, x))
    ...     _ = bb.emit_func_output(out)
    >>> bb.get()["main"].ret_struct_info.shape
    (n, 4)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import BaseFunc, GlobalVar, IRModule
from unity.relax.expr import (
    Binding, BindingBlock, Call, DataflowBlock, DataflowVar, Expr, Function, If, LeafExpr,
    MatchCast, SeqExpr, Tuple, TupleGetItem, Var, VarBinding,
)  # fmt: skip
from unity.relax.infer import infer_struct_info
from unity.relax.struct_info import StructInfo, TensorStructInfo, prove_not_equal


@dataclass
class _FunctionFrame:
    name: str
    params: list[Var] | None
    attrs: dict[str, Any]
    pure: bool
    blocks: list[BindingBlock] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    dataflow: bool = False
    done: bool = False


class BlockBuilder:
    """Builds an `IRModule` function by function (TVM's `relax.BlockBuilder`).

    Example:
        >>> bb = BlockBuilder()
        >>> len(bb.get().functions)
        0
    """

    def __init__(self, mod: IRModule | None = None) -> None:
        self._mod = mod.copy() if mod is not None else IRModule()
        self._frame: _FunctionFrame | None = None
        self._names: dict[str, int] = {}
        self._values: dict[Var, Expr] = {}

    # -- scopes ---------------------------------------------------------------------------
    @contextmanager
    def function(
        self,
        name: str,
        params: Sequence[Var] | None = None,
        attrs: Mapping[str, Any] | None = None,
        pure: bool = True,
    ) -> Iterator[None]:
        """Open the scope of function `name`; `emit_func_output` must close it.  A function
        opened inside another is built aside (an importer meeting a loop body): the outer
        one goes on where it was when the inner one is closed.

        Example:
            >>> with bb.function("main", [x]):  # doctest: +SKIP
            ...     bb.emit_func_output(x)
        """
        outer = self._frame
        if outer is not None and outer.name == name:
            raise RuntimeError(f"BlockBuilder: function {name!r} opened inside itself")
        self._frame = _FunctionFrame(name, None if params is None else list(params),
                                     dict(attrs or {}), pure)  # fmt: skip
        try:
            yield
            if not self._frame.done:
                raise RuntimeError(f"BlockBuilder: function {name!r} ended without emit_func_output")
        finally:
            self._frame = outer

    @contextmanager
    def dataflow(self) -> Iterator[None]:
        """Open a dataflow block: `emit` makes `DataflowVar`s, `emit_output` makes `Var`s.

        Example:
            >>> with bb.dataflow():  # doctest: +SKIP
            ...     lv = bb.emit(op.exp(x))
        """
        frame = self._require_frame("dataflow")
        if frame.dataflow:
            raise RuntimeError("BlockBuilder: dataflow blocks do not nest")
        self._flush(frame)
        frame.dataflow = True
        try:
            yield
        finally:
            self._flush(frame)
            frame.dataflow = False

    # -- emitting -------------------------------------------------------------------------
    def emit(self, expr: Expr, name_hint: str = "") -> Var:
        """Bind `expr` (normalized, nested calls bound first) to a fresh var.

        Example:
            >>> lv = bb.emit(op.exp(x))  # doctest: +SKIP
        """
        frame = self._require_frame("emit")
        value = self._normalize(expr, emit_nested=True)
        var_cls = DataflowVar if frame.dataflow else Var
        var = var_cls(self._fresh(name_hint or ("lv" if frame.dataflow else "gv")), value.struct_info)
        self.emit_normalized(VarBinding(var, value))
        return var

    def emit_output(self, expr: Expr, name_hint: str = "") -> Var:
        """Bind `expr` to a `Var` visible after the dataflow block.

        Example:
            >>> gv = bb.emit_output(lv)  # doctest: +SKIP
        """
        frame = self._require_frame("emit_output")
        if not frame.dataflow:
            raise RuntimeError("BlockBuilder: emit_output is only valid inside bb.dataflow()")
        value = self._normalize(expr, emit_nested=True)
        var = Var(self._fresh(name_hint or "gv"), value.struct_info)
        self.emit_normalized(VarBinding(var, value))
        return var

    def match_cast(self, value: Expr, struct_info: StructInfo, name_hint: str = "") -> Var:
        """Bind ``R.match_cast(value, struct_info)``; new shape symbols get defined here.

        Example:
            >>> y = bb.match_cast(x, TensorStructInfo(("m", 4), "float32"))  # doctest: +SKIP
        """
        frame = self._require_frame("match_cast")
        value = self._normalize(value, emit_nested=True)
        _check_castable(value, struct_info)
        var_cls = DataflowVar if frame.dataflow else Var
        var = var_cls(self._fresh(name_hint or ("lv" if frame.dataflow else "gv")), struct_info)
        self.emit_normalized(MatchCast(var, value, struct_info))
        return var

    def emit_func_output(
        self, output: Expr | Sequence[Expr], params: Sequence[Var] | None = None
    ) -> GlobalVar:
        """Finish the current function with result `output`; add it to the module.

        Example:
            >>> gv = bb.emit_func_output(out)  # doctest: +SKIP
        """
        frame = self._require_frame("emit_func_output")
        if frame.dataflow:
            raise RuntimeError("BlockBuilder: emit_func_output must be called outside bb.dataflow()")
        if params is not None:
            if frame.params is not None:
                raise RuntimeError(f"BlockBuilder: params of {frame.name!r} were already given")
            frame.params = list(params)
        if frame.params is None:
            raise RuntimeError(f"BlockBuilder: function {frame.name!r} has no params")
        body = self._normalize(Tuple(tuple(output)) if isinstance(output, Sequence) else output,
                               emit_nested=True)  # fmt: skip
        if not isinstance(body, LeafExpr | Tuple):
            body = self.emit(body)
        for leaf in body.fields if isinstance(body, Tuple) else (body,):
            if isinstance(leaf, DataflowVar):
                msg = f"function output {leaf.name_hint} is a DataflowVar: emit_output it in the block"
                raise DiagnosticError(msg, leaf)
        self._flush(frame)
        func = Function(tuple(frame.params), SeqExpr(tuple(frame.blocks), body),
                        body.struct_info, frame.pure,
                        attrs={"global_symbol": frame.name, **frame.attrs})  # fmt: skip
        frame.done = True
        return self._set_func(frame.name, func)

    # -- normalization --------------------------------------------------------------------
    def normalize(self, expr: Expr) -> Expr:
        """Fill the struct info of `expr` and its sub-expressions (without emitting).

        Example:
            >>> bb.normalize(op.exp(x)).struct_info.shape  # doctest: +SKIP
            (n, 4)
        """
        return self._normalize(expr, emit_nested=False)

    def normalize_anf(self, expr: Expr) -> Expr:
        """Like `normalize`, but bind nested non-leaf arguments in the current block first.

        Example:
            >>> bb.normalize_anf(op.exp(op.exp(x))).args[0].name_hint  # doctest: +SKIP
            'lv'
        """
        return self._normalize(expr, emit_nested=True)

    @contextmanager
    def nested(self) -> Iterator[list[BindingBlock]]:
        """Collect what is emitted inside into blocks of their own, kept out of the function
        (the body of an `If` branch: ``SeqExpr(tuple(blocks), result)``); the yielded list
        is filled when the scope ends.  Only outside dataflow blocks (relax has no `If`
        inside one).

        Example:
            >>> with bb.nested() as blocks:  # doctest: +SKIP
            ...     y = bb.emit(op.exp(x))
            >>> branch = SeqExpr(tuple(blocks), y)  # doctest: +SKIP
        """
        frame = self._require_frame("nested")
        if frame.dataflow:
            raise RuntimeError("BlockBuilder: nested scopes (If branches) are not allowed in a dataflow block")
        self._flush(frame)
        start = len(frame.blocks)
        blocks: list[BindingBlock] = []
        try:
            yield blocks
        finally:
            self._flush(frame)
            blocks.extend(frame.blocks[start:])
            del frame.blocks[start:]

    # -- low-level block control (used by passes that rebuild functions) ------------------
    def begin_block(self, dataflow: bool) -> None:
        """Start a (dataflow) binding block outside `function` scopes (for passes).

        Example:
            >>> bb.begin_block(dataflow=True)  # doctest: +SKIP
        """
        if self._frame is None:
            self._frame = _FunctionFrame("<pass>", [], {}, True)
        self._flush(self._frame)
        self._frame.dataflow = dataflow

    def emit_normalized(self, binding: Binding) -> None:
        """Append an already-normalized binding to the current block.

        Example:
            >>> bb.emit_normalized(VarBinding(v, value))  # doctest: +SKIP
        """
        self._require_frame("emit_normalized").bindings.append(binding)
        self._values[binding.var] = binding.value  # type: ignore[attr-defined]  # both kinds

    def end_block(self) -> BindingBlock | None:
        """Close the block opened by `begin_block`; None when it is empty.

        Example:
            >>> block = bb.end_block()  # doctest: +SKIP
        """
        frame = self._require_frame("end_block")
        self._flush(frame)
        frame.dataflow = False
        return frame.blocks.pop() if frame.blocks else None

    def _normalize(self, expr: Expr, emit_nested: bool) -> Expr:
        if isinstance(expr, LeafExpr):
            if expr.struct_info_ is None:
                raise DiagnosticError(f"{type(expr).__name__} has no struct info", expr)
            return expr
        if isinstance(expr, Call):
            for k, a in enumerate(expr.args):
                if not isinstance(a, (Expr, GlobalVar)):
                    raise DiagnosticError(
                        f"{getattr(expr.op, 'name', expr.op)}: argument {k} must be a relax "
                        f"expression, got {type(a).__name__} {a!r}; wrap constants with "
                        "relax.const(...)",
                        expr,
                    )
            args = tuple(self._normalize_arg(a, emit_nested) for a in expr.args)
            if all(a is b for a, b in zip(args, expr.args, strict=True)):
                args = expr.args
            op = expr.op
            if isinstance(op, Expr) and not isinstance(op, LeafExpr):
                op = self._normalize_arg(op, emit_nested)
            expr = expr.replace(op=op, args=args)
        elif isinstance(expr, Tuple):
            fields = tuple(self._normalize_arg(f, emit_nested) for f in expr.fields)
            if not all(a is b for a, b in zip(fields, expr.fields, strict=True)):
                expr = Tuple(fields, span=expr.span)
        elif isinstance(expr, TupleGetItem):
            expr = expr.replace(tuple_value=self._normalize_arg(expr.tuple_value, emit_nested))
        elif isinstance(expr, If):
            cond = self._normalize_arg(expr.cond, emit_nested)
            t, f = self._normalize(expr.true_branch, False), self._normalize(expr.false_branch, False)
            expr = expr.replace(cond=cond, true_branch=t, false_branch=f)
        elif isinstance(expr, SeqExpr):
            expr = expr.replace(body=self._normalize(expr.body, False))
        if expr.struct_info_ is None:
            expr = expr.replace(struct_info_=infer_struct_info(expr, self._mod))
        return expr

    def _normalize_arg(self, arg: Any, emit_nested: bool) -> Any:
        if isinstance(arg, GlobalVar):
            return arg
        if isinstance(arg, LeafExpr):
            return self._normalize(arg, emit_nested)
        value = self._normalize(arg, emit_nested)
        if emit_nested and self._frame is not None and not isinstance(value, Tuple):
            return self.emit(value)
        return value

    # -- module ---------------------------------------------------------------------------
    def add_func(self, func: BaseFunc, func_name: str) -> GlobalVar:
        """Add `func` under a fresh name derived from `func_name`; return its GlobalVar.

        Example:
            >>> gv = bb.add_func(prim_func, "exp")  # doctest: +SKIP
        """
        return self._mod.add(func_name, func)

    def update_func(self, gv: GlobalVar, func: BaseFunc) -> None:
        """Replace the function of `gv`.

        Example:
            >>> bb.update_func(gv, new_func)  # doctest: +SKIP
        """
        self._mod.update_func(gv, func)

    def get(self) -> IRModule:
        """The module built so far.

        Example:
            >>> mod = bb.get()  # doctest: +SKIP
        """
        return self._mod.copy()

    def call_te(self, func: Callable[..., Any], *args: Any, primfunc_name_hint: str | None = None,
                **kwargs: Any) -> Call:  # fmt: skip
        """Make a PrimFunc from TE compute `func(*args)` and return a `call_tir` to it.

        Relax tensors become `te.placeholder`s; shape symbols become int64 tir vars.

        Example:
            >>> call = bb.call_te(topi.add, x, y)  # doctest: +SKIP
        """
        from unity.relax.call_te import make_call_te

        return make_call_te(self, func, args, kwargs, primfunc_name_hint)

    def emit_te(self, func: Callable[..., Any], *args: Any, primfunc_name_hint: str | None = None,
                **kwargs: Any) -> Var:  # fmt: skip
        """Emit `call_te(func, *args, **kwargs)`.

        Example:
            >>> lv = bb.emit_te(topi.nn.relu, x)  # doctest: +SKIP
        """
        return self.emit(self.call_te(func, *args, primfunc_name_hint=primfunc_name_hint, **kwargs))

    # -- helpers --------------------------------------------------------------------------
    def lookup_binding(self, var: Var) -> Expr | None:
        """The value bound to `var` by this builder (None for params and unknown vars).

        Example:
            >>> bb.lookup_binding(lv).op is op.exp  # doctest: +SKIP
            True
        """
        return self._values.get(var)

    def current_block_is_dataflow(self) -> bool:
        """Whether emitted bindings go into a dataflow block now.

        Example:
            >>> BlockBuilder().current_block_is_dataflow()
            False
        """
        return self._frame is not None and self._frame.dataflow

    def _require_frame(self, what: str) -> _FunctionFrame:
        if self._frame is None:
            raise RuntimeError(f"BlockBuilder: {what} must be called inside bb.function(...)")
        return self._frame

    def _flush(self, frame: _FunctionFrame) -> None:
        if frame.bindings:
            kind = DataflowBlock if frame.dataflow else BindingBlock
            frame.blocks.append(kind(tuple(frame.bindings)))
        frame.bindings = []

    def _fresh(self, hint: str) -> str:
        count = self._names.get(hint, 0)
        self._names[hint] = count + 1
        return hint if count == 0 else f"{hint}{count}"

    def _set_func(self, name: str, func: Function) -> GlobalVar:
        if name in self._mod:
            gv = self._mod.get_global_var(name)
            self._mod.update_func(gv, func)
            return gv
        self._mod[name] = func
        return self._mod.get_global_var(name)


def _check_castable(value: Expr, target: StructInfo) -> None:
    source = value.struct_info
    if not isinstance(target, TensorStructInfo) or not isinstance(source, TensorStructInfo):
        return
    if -1 not in (source.ndim, target.ndim) and source.ndim != target.ndim:
        raise DiagnosticError(f"match_cast of a rank-{source.ndim} tensor to rank {target.ndim}", value)
    if "void" not in (source.dtype, target.dtype) and source.dtype != target.dtype:
        raise DiagnosticError(f"match_cast of a {source.dtype} tensor to {target.dtype}", value)
    if source.shape is not None and target.shape is not None:
        for a, b in zip(source.shape, target.shape, strict=True):
            if prove_not_equal(a, b):
                raise DiagnosticError(f"match_cast of dim {a} to a different dim {b}", value)
