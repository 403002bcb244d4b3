"""Convert conv2d (and the layout-sensitive ops around it) to a desired data layout.

Before::

    @R.function
    def main(x: R.Tensor(("n", 3, 8, 8), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")):
        with R.dataflow():
            c = R.nn.conv2d(x, w, padding=1)
            r = R.nn.relu(c)
            gv = R.add(r, R.const(1.0, "float32"))
            R.output(gv)
        return gv

After ``ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]})``::

    @R.function
    def main(x: R.Tensor(("n", 3, 8, 8), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")):
        with R.dataflow():
            x_0231 = R.permute_dims(x, axes=[0, 2, 3, 1])
            w_0231 = R.permute_dims(w, axes=[0, 2, 3, 1])
            c = R.nn.conv2d(x_0231, w_0231, padding=1, data_layout="NHWC", kernel_layout="OHWI")
            r = R.nn.relu(c)
            gv_inner = R.add(r, R.const(1.0, "float32"))
            gv = R.permute_dims(gv_inner, axes=[0, 3, 1, 2])
            R.output(gv)
        return gv

Semantics follow TVM's ``ConvertLayout``: the ops named in `desired_layouts` (conv2d,
conv2d_transpose, pooling) are rewritten to the desired layout; elementwise and
broadcast ops, pooling, reductions, softmax, batch/layer norm, concat, split, pad and
strided_slice follow the layout of their inputs (rules in `layout_rules.py`), so a chain
of convolutions converts once on the way in and once on the way out. A `permute_dims` is inserted
only where a value must change layout: before the first converted op, before an op
without a layout rule, and where a value leaves a dataflow block or the function.
Broadcast operands of lower rank are expanded and permuted (constants become a
`permute_dims` of a reshaped constant, which `FoldConstant` folds), as are constant
weights.

A desired data layout may also be channel-blocked, ``{"relax.nn.conv2d": ["NCHW16c", "OIHW"]}``
(rules in `blocked_layout_rules.py`): an NCHW value ``x`` (N, C, H, W) is blocked by
``R.permute_dims(R.reshape(x, (N, C/16, 16, H, W)), axes=[0, 1, 3, 4, 2])`` and unblocked by
``R.reshape(R.permute_dims(y, axes=[0, 1, 4, 2, 3]), (N, C, H, W))`` (a single reshape where
H and W are 1); constants are blocked with numpy.  A conv whose input channels are not whole
blocks (an image's 3) but whose output channels are, without groups, reads NCHW and writes
the blocked result itself (``out_layout="NCHW16c"``); any other conv whose channels or groups
do not fit the block keeps its original layout.  Channel counts that are no multiple of the
block (24) are held padded to whole blocks: blocked by ``R.nn.pad`` of the channels before
the reshape, unblocked by ``R.strided_slice`` of the first C channels after it; a conv's
kernel on padded channels is zero-padded (``Padded``: with numpy where it is a constant).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from unity.ir.module import IRModule
from unity.ir.op import Op
from unity.ir.transform import ModulePass, PassContext
from unity.relax import op
from unity.relax.expr import (
    Binding,
    BindingBlock,
    Call,
    Constant,
    DataflowBlock,
    DataflowVar,
    Expr,
    Function,
    SeqExpr,
    Tuple,
    TupleGetItem,
    Var,
    VarBinding,
)  # fmt: skip
from unity.relax.expr_functor import ExprMutator, ExprVisitor
from unity.relax.struct_info import Dim, TensorStructInfo, TupleStructInfo, as_dim
from unity.relax.transform.blocked_layout_rules import (
    decide_blocked_layout,
    desired_block,
    wants_blocked,
)  # fmt: skip
from unity.relax.transform.layout_rules import (
    ANCHORS,
    Blocked,
    Decision,
    Layout,
    Padded,
    Perm,
    TupleLayout,
    decide_layout,
    normalize,
    perm_between,
    whole_blocks,
)  # fmt: skip
from unity.relax.utils import struct_info_equal


@dataclass(frozen=True)
class ConvertLayout(ModulePass):
    """Rewrite the ops in `desired_layouts` to their desired layouts, with few permutes.

    Example:
        >>> ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]})(IRModule()).functions
        {}
    """

    desired_layouts: Mapping[Op | str, Sequence[str]] = field(default_factory=dict)
    """Op (or its name) -> ``[data_layout, kernel_layout]``; the kernel may be "default"."""

    def __post_init__(self) -> None:
        table = {_as_op(k): tuple(v) for k, v in dict(self.desired_layouts).items()}
        for o, layouts in table.items():
            _check_layouts(o, layouts)
        object.__setattr__(self, "desired_layouts", table)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Convert every relax function of `mod` that calls an op of the table."""
        table: dict[Op, tuple[str, ...]] = self.desired_layouts  # type: ignore[assignment]  # post-init
        return mod.map_functions(Function, lambda f: convert_function_layout(mod, f, table))


def _as_op(key: Op | str) -> Op:
    if isinstance(key, Op):
        return key
    try:
        return Op.get(key if key.startswith("relax.") else f"relax.{key}")
    except (KeyError, ValueError):
        raise ValueError(f"ConvertLayout: unknown op {key!r} in desired_layouts") from None


def _check_layouts(o: Op, layouts: tuple[str, ...]) -> None:
    if o not in ANCHORS:
        names = sorted(a.name for a in ANCHORS)
        raise ValueError(f"ConvertLayout: {o.name} takes no desired layout; ops that do: {names}")
    if not layouts:
        raise ValueError(f"ConvertLayout: no layout given for {o.name}")
    if desired_block(layouts) is not None:
        _check_blocked(o, layouts)
        return
    perm_between("NCHW", layouts[0])  # raises when the letters are wrong
    if len(layouts) > 1 and layouts[1] != "default":
        kernel = "IOHW" if o is op.nn.conv2d_transpose else "OIHW"
        perm_between(kernel, layouts[1])


def _check_blocked(o: Op, layouts: tuple[str, ...]) -> None:
    if o is op.nn.conv2d_transpose:
        raise ValueError(f"ConvertLayout: {o.name} takes no blocked layout ({layouts[0]!r})")
    if len(layouts) > 1 and layouts[1] not in ("OIHW", "default"):
        msg = f"{o.name} in {layouts[0]!r} takes an 'OIHW' kernel, not {layouts[1]!r}"
        raise ValueError(f"ConvertLayout: {msg}")


def convert_function_layout(
    mod: IRModule, func: Function, table: dict[Op, tuple[str, ...]]
) -> Function:
    """`func` (of `mod`) with the ops of `table` in their desired layouts: what
    `ConvertLayout` does to each function (`table` as its normalized `desired_layouts`).

    Example:
        >>> table = {op.nn.conv2d: ("NHWC", "OHWI")}
        >>> convert_function_layout(mod, mod["main"], table)  # doctest: +SKIP
    """
    if not _calls_any(func, table):
        return func
    return _Converter(mod, table, _read_in_later_blocks(func)).visit_expr(func)


def _calls_any(func: Function, table: dict[Op, tuple[str, ...]]) -> bool:
    found: list[bool] = []

    class _Find(ExprVisitor):
        def visit_call_(self, expr: Call) -> None:
            found.append(expr.op in table)
            super().visit_call_(expr)

    _Find().visit_expr(func)
    return any(found)


def _read_in_later_blocks(func: Function) -> set[Var]:
    """The vars that bindings of another block than their own read (a later block, or the
    branches of a later `If`)."""
    home: dict[Var, int] = {}
    read: set[Var] = set()
    blocks: list[int] = []

    class _Uses(ExprVisitor):
        def visit_binding_block(self, block: BindingBlock) -> None:
            blocks.append(id(block))
            super().visit_binding_block(block)
            blocks.pop()

        def visit_var_def(self, var: Var) -> None:
            if blocks:
                home[var] = blocks[-1]

        def visit_var_(self, var: Var) -> None:
            if blocks and home.get(var, blocks[-1]) != blocks[-1]:
                read.add(var)

    _Uses().visit_expr(func)
    return read


class _Converter(ExprMutator):
    """Rewrite bindings in order, tracking each original var's current layout."""

    def __init__(self, mod: IRModule, table: dict[Op, tuple[str, ...]], later: set[Var]) -> None:
        super().__init__(mod)
        self.table = table
        self.later = later  # dataflow outputs that later blocks read
        self.layout: dict[Var, Layout] = {}  # original var -> layout of the value now held
        self.versions: dict[tuple[int, Layout], Expr] = {}  # (id(original), layout) -> holder
        self.keep: list[Expr] = []  # keeps ids in `versions` alive
        self.pending: list[Binding] = []

    # -- traversal ---------------------------------------------------------------------

    def visit_expr(self, expr: Any) -> Any:
        """Vars are looked up afresh at each use (their holder depends on the scope)."""
        if isinstance(expr, Var):
            return self.visit_var_(expr)
        return super().visit_expr(expr)

    def visit_var_(self, var: Var) -> Expr:
        """A use without a rule gets the value in its original layout."""
        return self._as_layout(var, None)

    def visit_seq_expr_(self, expr: SeqExpr) -> Expr:
        """Convert the blocks; the body gets values in their original layout."""
        saved = dict(self.versions), dict(self.layout)
        blocks = [self.visit_binding_block(b) for b in expr.blocks]
        outer, self.pending = self.pending, []
        body = self.visit_expr(expr.body)
        if self.pending:
            blocks.append(BindingBlock(tuple(self.pending)))
        self.pending = outer
        self.versions, self.layout = saved
        if body is expr.body and all(a is b for a, b in zip(blocks, expr.blocks, strict=True)):
            return expr
        return SeqExpr(tuple(blocks), body, span=expr.span)

    def visit_binding_block(self, block: BindingBlock) -> BindingBlock:
        """Convert the bindings; the conversions held in dataflow vars end with their block."""
        out = super().visit_binding_block(block)
        if isinstance(block, DataflowBlock):
            gone = [k for k, held in self.versions.items() if isinstance(held, DataflowVar)]
            for key in gone:
                del self.versions[key]
        return out

    def visit_binding(self, binding: Binding) -> list[Binding]:
        """Apply the layout rule of the bound value (or feed it original layouts)."""
        outer, self.pending = self.pending, []
        decided = self._decide(binding) if isinstance(binding, VarBinding) else None
        if decided is None:
            out = super().visit_binding(binding)
        else:
            out = self._rewrite(binding, *decided)  # type: ignore[arg-type]  # a VarBinding
        emitted, self.pending = self.pending, outer
        return emitted + out

    # -- decisions ---------------------------------------------------------------------

    def _decide(self, binding: VarBinding) -> tuple[Expr, Layout] | None:
        value = binding.value
        if isinstance(value, TupleGetItem) and isinstance(value.tuple_value, Var):
            src = self.layout.get(value.tuple_value)
            if not isinstance(src, TupleLayout):
                return None
            item = TupleGetItem(self._holder(value.tuple_value, src), value.index, span=value.span)
            return self.refresh(item), src.fields[value.index]
        if isinstance(value, Tuple):
            fields = [self._layout_of(f) for f in value.fields]
            if all(f is None for f in fields):
                return None
            held = tuple(self._as_layout(f, lay) for f, lay in zip(value.fields, fields, strict=True))
            return self.refresh(Tuple(held, span=value.span)), TupleLayout(tuple(fields))
        if not isinstance(value, Call) or not isinstance(value.op, Op):
            return None
        layouts = [self._layout_of(a) for a in value.args]
        desired = self.table.get(value.op)
        decide = decide_blocked_layout if wants_blocked(layouts, desired) else decide_layout
        decision = decide(value, layouts, desired)
        if decision is None:
            return None
        return self._apply(value, decision), decision.out

    def _apply(self, call: Call, decision: Decision) -> Expr:
        pairs = zip(call.args, decision.args, strict=True)
        args = tuple(self._as_layout(a, lay) for a, lay in pairs)
        same = all(a is b for a, b in zip(args, call.args, strict=True))
        attrs = call.attrs if decision.attrs == call.attrs else decision.attrs
        if same and attrs is call.attrs:
            return call
        return self.refresh(call.replace(args=args, attrs=attrs))

    def _rewrite(self, binding: VarBinding, value: Expr, layout: Layout) -> list[Binding]:
        var = binding.var
        layout = normalize(layout)
        if layout is None:
            same = value is binding.value or struct_info_equal(var.struct_info, value.struct_info)
            new = var if same else type(var)(var.name_hint, value.struct_info_, span=var.span)
            if new is not var:
                self.var_remap[var] = new
            return [binding.replace(var=new, value=value)]
        if not self.in_dataflow or isinstance(var, DataflowVar):
            new = type(var)(var.name_hint, value.struct_info_, span=var.span)
            self._record(var, layout, new)
            return [VarBinding(new, value, span=binding.span)]
        # a dataflow output leaves its block in the original layout (and, where later blocks
        # read it, in its new layout too: a `Var`, in scope after the block)
        kind = Var if var in self.later else DataflowVar
        inner = kind(var.name_hint + "_inner", value.struct_info_, span=var.span)
        self._record(var, layout, inner)
        outer, self.pending = self.pending, []
        back = self._convert(inner, layout, None, var.name_hint)
        last = self.pending.pop()
        assert isinstance(last, VarBinding) and last.var is back
        leave = VarBinding(var, last.value, span=binding.span)
        out = [VarBinding(inner, value), *self.pending, leave]
        self.pending = outer
        self._record(var, None, var)
        return out

    # -- values in a layout ------------------------------------------------------------

    def _record(self, var: Var, layout: Layout, holder: Expr) -> None:
        if layout is not None:
            self.layout.setdefault(var, layout)
        self.versions[(id(var), layout)] = holder
        self.keep.append(var)

    def _layout_of(self, expr: Expr) -> Layout:
        if isinstance(expr, Var):
            return self.layout.get(expr)
        if isinstance(expr, Tuple):
            return normalize(TupleLayout(tuple(self._layout_of(f) for f in expr.fields)))
        return None

    def _holder(self, var: Var, layout: Layout) -> Expr:
        held = self.versions.get((id(var), layout))
        if held is not None:
            return held
        if layout is None:
            return self.var_remap.get(var, var)
        raise AssertionError(f"no holder of {var.name_hint} in layout {layout}")

    def _as_layout(self, expr: Expr, layout: Layout) -> Expr:
        """`expr` (an original-program value) held in `layout`, emitting permutes once."""
        layout = normalize(layout)
        if isinstance(expr, Tuple) and (layout is None or isinstance(layout, TupleLayout)):
            wanted = layout.fields if layout else (None,) * len(expr.fields)
            fields = tuple(self._as_layout(f, w) for f, w in zip(expr.fields, wanted, strict=True))
            same = all(a is b for a, b in zip(fields, expr.fields, strict=True))
            return expr if same else self.refresh(Tuple(fields, span=expr.span))
        if layout is None:
            if isinstance(expr, Var):
                return self._in_layout(expr, None)
            return super().visit_expr(expr)
        if (id(expr), layout) in self.versions:
            return self.versions[(id(expr), layout)]
        if isinstance(expr, Var) and self._rank(expr) in (-1, _width(layout)):
            return self._in_layout(expr, layout)
        return self._broadcast(expr, layout)

    def _in_layout(self, var: Var, layout: Layout) -> Expr:
        key = (id(var), layout)
        if key not in self.versions:
            current = self.layout.get(var)
            held = self._holder(var, current)
            self.versions[key] = self._convert(held, current, layout, var.name_hint)
            self.keep.append(var)
        return self.versions[key]

    def _rank(self, expr: Expr) -> int:
        sinfo = expr.struct_info_
        return sinfo.ndim if isinstance(sinfo, TensorStructInfo) else -1

    def _broadcast(self, expr: Expr, layout: Layout) -> Expr:
        """A lower-rank operand (or a constant) broadcast against a tensor held in `layout`."""
        if isinstance(layout, Blocked):
            return self._broadcast_blocked(expr, layout)
        if isinstance(layout, Padded):  # a constant kernel (a var's is a conversion)
            assert isinstance(expr, Constant), "call arguments are vars or constants (ANF)"
            data = expr.data if layout.perm is None else np.transpose(expr.data, layout.perm)
            held = Constant(_pad_to(data, layout.shape))
            self.versions[(id(expr), layout)] = held
            self.keep.append(expr)
            return held
        assert isinstance(layout, tuple)
        base = self._as_layout(expr, None) if isinstance(expr, Var) else expr
        sinfo = base.struct_info_
        assert isinstance(sinfo, TensorStructInfo) and sinfo.ndim >= 0, "rules check ranks"
        rank, width = sinfo.ndim, len(layout)
        if rank == 0 or (sinfo.shape is not None and all(d == 1 for d in sinfo.shape)):
            return base  # a scalar-like operand broadcasts the same in any layout
        if isinstance(base, Constant):
            data = base.data.reshape((1,) * (width - rank) + base.data.shape)
            base = Constant(np.asarray(data, order="C")) if width > rank else base
        elif width > rank:
            base = self._emit(op.expand_dims(base, list(range(width - rank))), _hint(base))
        held = self._emit(op.permute_dims(base, list(layout)), _hint(base) + "_" + _digits(layout))
        self.versions[(id(expr), layout)] = held
        self.keep.append(expr)
        return held

    def _convert(self, held: Expr, current: Layout, wanted: Layout, hint: str) -> Expr:
        """Permute `held` (in layout `current`) into layout `wanted`."""
        if current == wanted:
            return held
        sinfo = held.struct_info_
        if isinstance(sinfo, TupleStructInfo):
            none = (None,) * len(sinfo.fields)
            cur = current.fields if isinstance(current, TupleLayout) else none
            want = wanted.fields if isinstance(wanted, TupleLayout) else none
            items = [self._emit(TupleGetItem(held, i), f"{hint}_{i}") for i in range(len(cur))]
            parts = enumerate(zip(items, cur, want, strict=True))
            fields = [self._convert(it, c, w, f"{hint}_{i}") for i, (it, c, w) in parts]
            return self._emit(Tuple(tuple(fields)), hint)
        if isinstance(wanted, Padded):  # a kernel given as a var
            if current is not None:
                held = self._convert(held, current, None, hint)
            if wanted.perm is not None:
                name = f"{hint}_{_digits(wanted.perm)}"
                held = self._emit(op.permute_dims(held, list(wanted.perm)), name)
            pairs = zip(_dims(held), wanted.shape, strict=True)
            pads = [w for have, want in pairs for w in (0, want - int(have))]
            return self._emit(op.nn.pad(held, pads), f"{hint}_padded")
        if isinstance(current, Blocked) or isinstance(wanted, Blocked):
            return self._convert_blocked(held, current, wanted, hint)
        width = sinfo.ndim if isinstance(sinfo, TensorStructInfo) else _width(current)
        q = current if isinstance(current, tuple) else tuple(range(width))
        p = wanted if isinstance(wanted, tuple) else tuple(range(width))
        axes = tuple(q.index(a) for a in p)
        return self._emit(op.permute_dims(held, list(axes)), f"{hint}_{_digits(p)}")

    # -- channel-blocked values ----------------------------------------------------------

    def _broadcast_blocked(self, expr: Expr, layout: Blocked) -> Expr:
        """An operand broadcast against a blocked tensor: (C, 1, 1) -> (1, C/b, 1, 1, b)."""
        base = self._as_layout(expr, None) if isinstance(expr, Var) else expr
        shape = _dims(base)
        if all(d == 1 for d in shape):
            return base  # a scalar-like operand broadcasts the same in any layout
        padded = (as_dim(1),) * (layout.ndim - len(shape)) + shape
        if isinstance(base, Constant):
            data = base.data.reshape(tuple(int(d) for d in padded))
            held: Expr = Constant(_blocked_array(data, layout.block, layout.padded))
        else:
            held = self._block(base, padded, layout.block, _hint(base))
        self.versions[(id(expr), layout)] = held
        self.keep.append(expr)
        return held

    def _convert_blocked(self, held: Expr, current: Layout, wanted: Layout, hint: str) -> Expr:
        """Convert between layouts of which one is blocked, through the original layout."""
        if isinstance(current, Blocked):
            held, current = self._unblock(held, current, hint), None
        elif current is not None:
            held, current = self._convert(held, current, None, hint), None
        if isinstance(wanted, Blocked):
            return self._block(held, _dims(held), wanted.block, hint)
        return self._convert(held, None, wanted, hint)

    def _block(self, value: Expr, shape: tuple[Dim, ...], block: int, hint: str) -> Var:
        """`value`, of `shape` (N, C, *rest) up to a reshape, as (N, C/block, *rest, block)
        (C padded with zeros to whole blocks first)."""
        n, c, *rest = shape
        if c == 1:  # no channel extent: broadcasts over the blocks and the lanes
            return self._emit(op.reshape(value, (n, c, *rest, 1)), f"{hint}_{block}c")
        if int(c) % block:
            if _dims(value) != shape:
                value = self._emit(op.reshape(value, shape), f"{hint}_4d")
            whole = whole_blocks(int(c), block)
            pads = [0, 0, 0, whole - int(c)] + [0, 0] * len(rest)
            value, c = self._emit(op.nn.pad(value, pads), f"{hint}_pad"), as_dim(whole)
        blocks = as_dim(int(c) // block)
        if all(d == 1 for d in rest):  # nothing between the channels and the lanes
            return self._emit(op.reshape(value, (n, blocks, *rest, block)), f"{hint}_{block}c")
        split = self._emit(op.reshape(value, (n, blocks, block, *rest)), f"{hint}_split")
        axes = [0, 1, *range(3, len(shape) + 1), 2]
        return self._emit(op.permute_dims(split, axes), f"{hint}_{block}c")

    def _unblock(self, held: Expr, layout: Blocked, hint: str) -> Var:
        """`held` (N, C/b, *rest, b) back as (N, C, *rest) (its first C channels, where the
        last block is padded)."""
        n, blocks, *rest, lanes = _dims(held)
        shape = (n, blocks * lanes, *rest)
        name = f"{hint}_{_digits(tuple(range(layout.ndim)))}"
        merged_name = name if layout.channels is None else f"{hint}_padded"
        if all(d == 1 for d in rest):
            out = self._emit(op.reshape(held, shape), merged_name)
        else:
            axes = [0, 1, layout.ndim, *range(2, layout.ndim)]
            merged = self._emit(op.permute_dims(held, axes), f"{hint}_merge")
            out = self._emit(op.reshape(merged, shape), merged_name)
        if layout.channels is None:
            return out
        return self._emit(op.strided_slice(out, [1], [0], [layout.channels]), name)

    def _emit(self, value: Expr, hint: str) -> Var:
        value = self.refresh(value)
        var = self.fresh_var(hint, value.struct_info_)
        self.pending.append(VarBinding(var, value))
        return var


def _width(layout: Layout) -> int:
    if isinstance(layout, Blocked):
        return layout.ndim
    if isinstance(layout, Padded):
        return len(layout.shape)
    return len(layout) if isinstance(layout, tuple) else -1


def _dims(expr: Expr) -> tuple[Dim, ...]:
    sinfo = expr.struct_info_
    assert isinstance(sinfo, TensorStructInfo) and sinfo.shape is not None, "rules check shapes"
    return tuple(sinfo.shape)


def _blocked_array(data: np.ndarray, block: int, padded: int | None = None) -> np.ndarray:
    """`data` (N, C, *rest) as (N, C/block, *rest, block), or (N, 1, *rest, 1) when C is 1;
    C zero-padded to `padded` channels first where given."""
    n, c, *rest = data.shape
    if c == 1:
        return np.ascontiguousarray(data.reshape(*data.shape, 1))
    if padded is not None:
        data, c = _pad_to(data, (n, padded, *rest)), padded
    split = data.reshape(n, c // block, block, *rest)
    return np.ascontiguousarray(np.moveaxis(split, 2, -1))


def _pad_to(data: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`data` zero-padded at the end of each axis to `shape`."""
    return np.pad(data, [(0, want - have) for have, want in zip(data.shape, shape, strict=True)])


def _digits(perm: Perm) -> str:
    return "".join(str(a) for a in perm)


def _hint(expr: Expr) -> str:
    return expr.name_hint if isinstance(expr, Var) else "c"
