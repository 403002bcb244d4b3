"""ONNX `Loop` decided at run time: a relax function that runs one step and calls itself.

A `Loop` whose trip count or condition is run-time data (Keypoint R-CNN loops over its
detections; scripted ``while`` loops test a computed condition), or that would unroll
into too many copies of its body, becomes a recursive function::

    # Loop(M, cond, v) with body(i, c, v) -> (c', v', s): v carried, s a scan output
    @R.function
    def loop_Loop_0(i, c, m, v, acc, w):      # w: an enclosing value the body reads
        go = R.logical_and(R.less(i, m), c)
        if go:
            c1, v1, s = <body>(i, c, v)
            acc1 = R.call_pure_packed("unity.host.stack_append", acc, s)  # spare room
            r = loop_Loop_0(i + 1, c1, m, v1, acc1, w)
        else:
            r = (v, acc)
        return r

    # in main:
    lv = loop_Loop_0(0, cond, M, v0, R.zeros((0, ...)), w)
    v = R.match_cast(lv[0], ...); s = R.match_cast(lv[1], R.Tensor((Loop_0_steps, ...)))

A carried value's dims that stay the same from step to step keep their size (static, or
the enclosing graph's symbol); the others (a value that grows, the number of steps) get
fresh symbols, bound on entry to each step and, after the loop, by a `match_cast`.  A
value the body only appends rows to (``v1 = Concat(v, x)``: TorchScript's ``cat`` in a
loop) grows on the host like the scan outputs, into spare room, instead of a concat
copying every row at every step.  The VM runs a self-call in tail position as a jump, so
a long loop does not deepen the stack.

Example:
    >>> outputs = runtime_loop(importer, proto, node)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import onnx
import sympy

from unity.relax import op as R
from unity.relax.expr import (
    Call, Constant, Expr, ExternFunc, Function, If, SeqExpr, Tuple, TupleGetItem, Var,
)  # fmt: skip
from unity.relax.frontend.onnx.context import NodeView, SeqValue, Value, symbol_name
from unity.relax.struct_info import TensorStructInfo, TupleStructInfo, sym

if TYPE_CHECKING:
    from unity.relax.frontend.onnx.importer import _GraphImporter


class _Scan(NamedTuple):
    dtype: str
    rank: int  # of one step's value
    dims: tuple[sympy.Expr, ...] | None  # one step's dims in the loop's symbols; None: made in
    # the step (fresh symbols each step), so the steps are stacked on the host


class _Retry(Exception):
    """The body showed more about the step (a dim that changes, the scan outputs'
    shapes): build the function again with what it showed."""


def runtime_loop(imp: _GraphImporter, proto: onnx.NodeProto, node: NodeView) -> list[Value]:
    """The values of a `Loop` node's outputs, computed by a recursive relax function
    (the carried values' final values, then the scan outputs stacked on a first axis).

    Example:
        >>> values = runtime_loop(importer, proto, node)  # doctest: +SKIP
    """
    return _LoopBuilder(imp, proto, node).run()


class _LoopBuilder:
    def __init__(self, imp: _GraphImporter, proto: onnx.NodeProto, node: NodeView) -> None:
        from unity.relax.frontend.onnx.control_flow import subgraphs

        self.imp, self.ctx, self.node = imp, imp.ctx, node
        self.body = subgraphs(proto)["body"]
        self.base = symbol_name(node.name)
        trip, cond, *carried = node.inputs
        ctx = self.ctx
        self.trip = None if trip is None else self._scalar(trip, "int64", "trip count M")
        self.cond = None if cond is None else self._scalar(cond, "bool", "condition")
        self.carried = [ctx.expr(v) for v in carried]  # initial values, in main
        self.n_scan = len(self.body.output) - 1 - len(carried)
        self.outer: dict[str, Expr] = {}  # enclosing values the body reads, in main
        self.consts: dict[str, Value] = {}
        for name in free_names(self.body):
            if name not in imp.env:
                raise ctx.fail(f"body reads {name!r}, which no enclosing node, initializer or "
                               "graph input produces")  # fmt: skip
            value = imp.env[name]
            if isinstance(value, np.ndarray | np.generic):
                self.consts[name] = value
            elif isinstance(value, SeqValue):
                raise ctx.fail(f"body reads the sequence {name!r}: a Loop run at run time "
                               "takes tensors only")  # fmt: skip
            else:
                self.outer[name] = ctx.expr(value)
        for j, init in enumerate(self.carried):
            if ctx.sinfo(init).ndim < 0:
                raise ctx.fail(f"loop-carried value {j} has an unknown rank")
        symbols = set()
        for e in [*self.carried, *self.outer.values()]:
            for d in ctx.sinfo(e).shape or ():
                symbols |= sympy.sympify(d).free_symbols
        self.inner = {s: sym(f"{s.name}_{self.base}") for s in sorted(symbols, key=str)}
        self.variable: set[tuple[int, int]] = set()  # (carried value, axis) that change
        self.rows = appended_rows(self.body, len(carried))  # carried values the body appends to
        self.scans: list[_Scan] | None = None if self.n_scan else []
        self.compound: dict[sympy.Expr, sympy.Symbol] = {}  # see _outer_dim
        self.gv = None

    def _scalar(self, value: Value, dtype: str, what: str) -> Expr:
        """`value` as a 0-d tensor of `dtype` (emitted in the function being built)."""
        ctx = self.ctx
        expr = ctx.expr(value)
        sinfo = ctx.sinfo(expr)
        if sinfo.dtype != dtype:
            raise ctx.fail(f"{what} must be {dtype}, got {sinfo.dtype}")
        if sinfo.shape is None or any(d != 1 for d in sinfo.shape):
            raise ctx.fail(f"{what} must have one element, got shape {sinfo.shape}")
        return ctx.emit(R.reshape(expr, ())) if len(sinfo.shape) else expr

    # -- the function ---------------------------------------------------------------------
    def run(self) -> list[Value]:
        for _ in range(2 + sum(self.ctx.ndim(c) for c in self.carried)):  # each retry learns more
            try:
                self._build()
                return self._call()
            except _Retry:
                continue
        raise AssertionError("unreachable: every retry marks a dim as changing or learns the scans")

    def _carried_dim(self, j: int, axis: int) -> sympy.Expr:
        shape = self.ctx.sinfo(self.carried[j]).shape
        d0 = None if shape is None else sympy.sympify(shape[axis])
        if (j, axis) in self.variable or d0 is None:
            return sym(f"{self.base}_v{j}_d{axis}")
        if d0.is_number:
            return d0
        return d0.xreplace(self.inner) if isinstance(d0, sympy.Symbol) else sym(f"{self.base}_v{j}_d{axis}")

    def _params(self) -> tuple[list[Var], list[Var], list[Var], list[Var]]:
        ctx = self.ctx
        head = [Var("iter", TensorStructInfo((), "int64")), Var("cond", TensorStructInfo((), "bool"))]
        if self.trip is not None:
            head.append(Var("trip", TensorStructInfo((), "int64")))
        carried = []
        for j, init in enumerate(self.carried):
            dims = tuple(self._carried_dim(j, a) for a in range(ctx.ndim(init)))
            carried.append(ctx.hold(Var(f"v{j}", TensorStructInfo(dims, ctx.dtype(init))),
                                    ctx.onnx_dtype(init)))  # fmt: skip
        accs = []
        for k, scan in enumerate(self.scans or []):
            dims = scan.dims or tuple(sym(f"{self.base}_s{k}_d{a}") for a in range(scan.rank))
            accs.append(Var(f"scan{k}", TensorStructInfo((sym(f"{self.base}_steps"), *dims), scan.dtype)))
        plain = {d for v in carried for d in v.struct_info.shape if isinstance(d, sympy.Symbol)}
        for e in self.outer.values():
            plain |= {self.inner[d] for d in ctx.sinfo(e).shape or () if isinstance(d, sympy.Symbol)}
        outer = []
        for name, e in self.outer.items():
            sinfo = ctx.sinfo(e)
            shape = None if sinfo.shape is None else tuple(self._outer_dim(d, plain) for d in sinfo.shape)
            var = Var(symbol_name(name), TensorStructInfo(shape, sinfo.dtype, ndim=sinfo.ndim))
            outer.append(ctx.hold(var, ctx.onnx_dtype(e)))
        return head, carried, accs, outer

    def _outer_dim(self, d: sympy.Expr, plain: set[sympy.Symbol]) -> sympy.Expr:
        """An enclosing value's dim in the loop function: its symbols renamed; an
        expression of symbols no parameter binds as a plain dim (``min(100, n)``) becomes
        a symbol of its own, the same for equal expressions."""
        inner = sympy.sympify(d).xreplace(self.inner)
        if inner.is_number or isinstance(inner, sympy.Symbol) or inner.free_symbols <= plain:
            return inner
        if inner not in self.compound:
            self.compound[inner] = sym(f"{self.base}_w{len(self.compound)}")
        return self.compound[inner]

    def _ret(self, carried: list[Var], accs: list[Var]) -> TupleStructInfo:
        fields = []
        for j, v in enumerate(carried):
            sinfo = v.struct_info
            if any(jj == j for jj, _ in self.variable):
                sinfo = TensorStructInfo(None, sinfo.dtype, ndim=sinfo.ndim)
            fields.append(sinfo)
        fields += [TensorStructInfo(None, a.struct_info.dtype, ndim=a.struct_info.ndim) for a in accs]
        return TupleStructInfo(tuple(fields))

    def _build(self) -> None:
        imp, ctx, bb = self.imp, self.ctx, self.imp.bb
        head, carried, accs, outer = self._params()
        params = [*head, *carried, *accs, *outer]
        ret = self._ret(carried, accs)
        placeholder = Function(tuple(params), SeqExpr((), Tuple(tuple([*carried, *accs]))), ret)
        if self.gv is None:
            self.gv = bb.add_func(placeholder, f"loop_{self.base}")
        else:
            bb.update_func(self.gv, placeholder)
        saved_env, saved_dataflow, saved_node = imp.env, imp.dataflow, ctx.node
        imp.env = {**imp.env, **self.consts, **dict(zip(self.outer, outer, strict=True))}
        imp.dataflow = False
        try:
            with bb.function(self.gv.name_hint, params):
                go = self._go(head)
                with bb.nested() as blocks:
                    result = self._step(head, carried, accs, outer)
                out = bb.emit(If(go, SeqExpr(tuple(blocks), result),
                                 SeqExpr((), Tuple(tuple([*carried, *accs])))))  # fmt: skip
                bb.emit_func_output(out)
        finally:
            imp.env, imp.dataflow, ctx.node = saved_env, saved_dataflow, saved_node
        func = bb.get()[self.gv.name_hint]
        bb.update_func(self.gv, func.replace(ret_struct_info=ret))

    def _go(self, head: list[Var]) -> Expr:
        bb = self.imp.bb
        i, c = head[0], head[1]
        if self.trip is None:
            return c
        return bb.emit(R.logical_and(bb.emit(R.less(i, head[2])), c))

    def _step(self, head: list[Var], carried: list[Var], accs: list[Var], outer: list[Var]) -> Expr:
        from unity.relax.frontend.onnx.control_flow import inline_graph

        imp, ctx, bb = self.imp, self.ctx, self.imp.bb
        seen = [self._no_rows(v) if j in self.rows else v for j, v in enumerate(carried)]
        outs = inline_graph(imp, self.body, f"{self.node.name}/body", [head[0], head[1], *seen])
        ctx.node = self.node
        cond = self._scalar(outs[0], "bool", "the body's condition output")  # even without a cond input,
        # as onnxruntime and the reference implementation do
        nxt = [self._append_rows(j, v, ctx.expr(out)) if j in self.rows else ctx.expr(out)
               for j, (v, out) in enumerate(zip(carried, outs[1:1 + len(carried)], strict=True))]
        self._check_carried(carried, nxt)
        scans = [ctx.expr(v) for v in outs[1 + len(carried):]]
        if self.scans is None:
            self._learn_scans(scans)
        accs_next = [self._append(acc, step, scan) for acc, step, scan in zip(accs, scans, self.scans, strict=True)]
        i_next = bb.emit(R.add(head[0], Constant(np.array(1, "int64"))))
        args = (i_next, cond, *head[2:], *nxt, *accs_next, *outer)
        return bb.emit(Call(self.gv, args))

    def _no_rows(self, rows: Var) -> Expr:
        """What the body reads for a value it appends to: no rows (its concat then gives
        the new rows alone)."""
        sinfo = rows.struct_info
        return self.imp.bb.emit(R.zeros((0, *sinfo.shape[1:]), sinfo.dtype))

    def _append_rows(self, j: int, rows: Var, new: Expr) -> Expr:
        """`rows` with the `new` rows after them, on the host: into spare room when there
        is some (a loop appending a row per step copied all the rows before each step:
        Mask R-CNN's 100 masks of 320 x 320, 0.3 s)."""
        ctx, bb = self.ctx, self.imp.bb
        sinfo = rows.struct_info
        if ctx.dtype(new) != sinfo.dtype or ctx.ndim(new) != sinfo.ndim:
            return new  # `_check_carried` names the mismatch
        loose = TensorStructInfo(None, sinfo.dtype, ndim=sinfo.ndim)
        grown = bb.emit(R.call_pure_packed(ExternFunc("unity.host.append_rows"), rows, new, sinfo_args=loose))
        dims = (sym(f"{self.base}_v{j}_rows"), *sinfo.shape[1:])
        return bb.match_cast(grown, TensorStructInfo(dims, sinfo.dtype))

    def _check_carried(self, carried: list[Var], nxt: list[Expr]) -> None:
        ctx = self.ctx
        grown = set()
        for j, (param, value) in enumerate(zip(carried, nxt, strict=True)):
            want, got = param.struct_info, ctx.sinfo(value)
            if got.dtype != want.dtype or got.ndim != want.ndim:
                raise ctx.fail(f"body gives loop-carried value {j} as {got.dtype} of rank {got.ndim}"
                               f"; it enters as {want.dtype} of rank {want.ndim}")  # fmt: skip
            for axis, d in enumerate(want.shape):
                same = got.shape is not None and sympy.simplify(got.shape[axis] - d) == 0
                if not same and (j, axis) not in self.variable:
                    grown.add((j, axis))
        if grown:
            self.variable |= grown
            raise _Retry

    def _learn_scans(self, steps: list[Expr]) -> None:
        """Each scan output's dtype, rank and, when every step has the same shape in terms
        the enclosing graph knows, its dims."""
        ctx = self.ctx
        back = self._to_main()
        self.scans = []
        for k, step in enumerate(steps):
            sinfo = ctx.sinfo(step)
            if sinfo.ndim < 0:
                name = self.body.output[1 + len(self.carried) + k].name
                raise ctx.fail(f"scan output {name!r} has an unknown rank")
            dims = None if sinfo.shape is None else tuple(sympy.sympify(d) for d in sinfo.shape)
            if dims is not None and set().union(*(d.free_symbols for d in dims)) - set(back):
                dims = None  # a shape made in the step: stacked on the host, checked there
            self.scans.append(_Scan(sinfo.dtype, sinfo.ndim, dims))
        raise _Retry

    def _append(self, acc: Var, step: Expr, scan: _Scan) -> Expr:
        """`acc` with one more step, on the host (into spare room: a concat would copy all
        the steps before at every step)."""
        bb = self.imp.bb
        sinfo = TensorStructInfo(None, scan.dtype, ndim=scan.rank + 1)
        grown = bb.emit(R.call_pure_packed(ExternFunc("unity.host.stack_append"), acc, step, sinfo_args=sinfo))
        if scan.dims is None:
            return grown
        steps = sym(f"{self.base}_steps_next")
        return bb.match_cast(grown, TensorStructInfo((steps, *scan.dims), scan.dtype))

    def _to_main(self) -> dict[sympy.Symbol, sympy.Expr]:
        """The loop function's symbols that stand for values known in main."""
        back: dict[sympy.Symbol, sympy.Expr] = {v: k for k, v in self.inner.items()}
        back.update({v: k.xreplace(back) for k, v in self.compound.items()})
        for j, init in enumerate(self.carried):
            shape = self.ctx.sinfo(init).shape or ()
            for axis, d0 in enumerate(shape):
                inner = self._carried_dim(j, axis)
                if isinstance(inner, sympy.Symbol) and inner not in back:
                    if (j, axis) not in self.variable:
                        back[inner] = sympy.sympify(d0)
        return back

    # -- the call in main -----------------------------------------------------------------
    def _call(self) -> list[Value]:
        ctx, bb = self.ctx, self.imp.bb
        back = self._to_main()
        args: list[Expr] = [Constant(np.array(0, "int64")),
                            self.cond if self.cond is not None else Constant(np.array(True))]
        if self.trip is not None:
            args.append(self.trip)
        args += self.carried
        for scan in self.scans or []:
            dims = (0,) * scan.rank if scan.dims is None else tuple(d.xreplace(back) for d in scan.dims)
            args.append(ctx.emit(R.zeros((0, *dims), scan.dtype)))
        args += list(self.outer.values())
        result = ctx.emit(Call(self.gv, tuple(args)))
        values: list[Value] = []
        steps = sym(f"{self.base}_steps")
        for k, field in enumerate(result.struct_info.fields):
            item = ctx.emit(TupleGetItem(result, k))
            if field.shape is None:
                if k < len(self.carried):
                    shape = ctx.sinfo(self.carried[k]).shape
                    dims = tuple(sym(f"{self.base}_v{k}_d{a}") if (k, a) in self.variable or shape is None
                                 else shape[a] for a in range(field.ndim))  # fmt: skip
                else:
                    j = k - len(self.carried)
                    scan = self.scans[j]  # type: ignore[index]
                    dims = (steps, *(tuple(d.xreplace(back) for d in scan.dims) if scan.dims is not None
                                     else (sym(f"{self.base}_s{j}_d{a}") for a in range(scan.rank))))
                item = bb.match_cast(item, TensorStructInfo(dims, field.dtype))
            values.append(ctx.hold(item, ctx.onnx_dtype(self.carried[k])) if k < len(self.carried) else item)
        return values


def appended_rows(body: onnx.GraphProto, carried: int) -> set[int]:
    """The loop-carried values the body only appends rows to (``v = Concat(v, new)`` on
    axis 0, `v` read through `Identity` / `Cast` alone, the result read by nothing else):
    TorchScript's ``out = torch.cat([out, x])`` in a loop.

    Example:
        >>> from onnx import helper
        >>> body = helper.make_graph(
        ...     [helper.make_node("Concat", ["v", "x"], ["v2"], axis=0)], "b",
        ...     [helper.make_tensor_value_info(n, 1, None) for n in ("i", "c", "v")],
        ...     [helper.make_tensor_value_info(n, 1, None) for n in ("c", "v2")])
        >>> appended_rows(body, 1)
        {0}
    """
    from unity.relax.frontend.onnx.control_flow import subgraphs

    producers = {o: n for n in body.node for o in n.output}
    uses: dict[str, int] = {}
    for name in [x for n in body.node for x in n.input if x] + [o.name for o in body.output] + [
            x for n in body.node for g in subgraphs(n).values() for x in free_names(g)]:  # fmt: skip
        uses[name] = uses.get(name, 0) + 1
    found = set()
    for j in range(carried):
        start, out = body.input[2 + j].name, body.output[1 + j].name
        node = producers.get(out)
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0) if node is not None else None
        if node is None or node.op_type != "Concat" or len(node.input) != 2 or axis != 0 or uses[out] != 1:
            continue
        name = node.input[0]
        while name != start and uses.get(name) == 1 and name in producers:
            if producers[name].op_type not in ("Identity", "Cast"):
                break
            name = producers[name].input[0]
        if name == start and uses.get(start) == 1:
            found.add(j)
    return found


def free_names(graph: onnx.GraphProto) -> list[str]:
    """The names `graph` reads from its enclosing graphs (its nodes' and nested
    subgraphs' inputs, and its outputs, that it does not define), in first-use order.

    Example:
        >>> from onnx import helper
        >>> g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "b",
        ...                       [helper.make_tensor_value_info("x", 1, [2])], [])
        >>> free_names(g)
        ['w']
    """
    from unity.relax.frontend.onnx.control_flow import subgraphs

    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    for n in graph.node:
        defined.update(n.output)
    used: list[str] = []
    for n in graph.node:
        used += [x for x in n.input if x]
        for g in subgraphs(n).values():
            used += free_names(g)
    used += [o.name for o in graph.output]
    return [u for u in dict.fromkeys(used) if u not in defined]
