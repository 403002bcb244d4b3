"""Relax functions (after `ToNonDataflow` and `CallTIRRewrite`) to VM bytecode.

Each variable gets a register, each shape symbol a slot.  Parameters and
`match_cast`s become specs checked on entry (the first use of a symbol binds its
slot, other uses are checked); shapes become trees over the slots; calls of
PrimFuncs become ``kernel`` instructions; ``R.memory.alloc_storage`` /
``alloc_tensor`` / ``kill_*`` (from `StaticPlanBlockMemory` and `KillAfterLastUse`)
become ``storage`` / ``view`` / ``kill``.  Then `plan_storage` pools every
allocation, and every planned storage, that only kernels touch (through its views)
and frees it after its last use; views are not pooled again.  The format is
documented in `unity.runtime.vm`.

Example:
    >>> program, constants = codegen(lowered_mod)  # doctest: +SKIP
    >>> program["functions"]["main"]["code"][0][0]  # doctest: +SKIP
    'alloc'
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy

from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import GlobalVar, IRModule
from unity.ir.op import Op
from unity.relax.expr import (
    Call,
    Constant,
    DataTypeImm,
    Expr,
    ExternFunc,
    Function,
    If,
    MatchCast,
    PrimValue,
    SeqExpr,
    ShapeExpr,
    StringImm,
    Tuple,
    TupleGetItem,
    Var,
    VarBinding,
)  # fmt: skip
from unity.relax.op.call_tir import call_dps_packed, call_pure_packed, call_tir
from unity.relax.struct_info import (
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
    format_shape,
)  # fmt: skip
from unity.relax.vm import memory
from unity.relax.vm.builtin import alloc_tensor
from unity.relax.vm.shape_tree import Tree, UnboundSymbolError, to_tree
from unity.runtime.host_functions import HOST_FUNCTIONS
from unity.tir.function import PrimFunc


def codegen(mod: IRModule) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The bytecode of every relax function of `mod`, and the constants it loads.

    Example:
        >>> codegen(IRModule())[0]["functions"]
        {}
    """
    constants: list[np.ndarray] = []
    const_ids: dict[int, int] = {}
    functions = {}
    for gv, func in mod.items():
        if isinstance(func, Function):
            gen = _FunctionCodegen(mod, gv.name_hint, constants, const_ids)
            functions[gv.name_hint] = gen.run(func)
    return {"version": 1, "functions": functions}, constants


class _FunctionCodegen:
    def __init__(
        self, mod: IRModule, name: str, constants: list[np.ndarray], const_ids: dict[int, int]
    ) -> None:
        self.mod = mod
        self.name = name
        self.constants = constants
        self.const_ids = const_ids
        self.slots: dict[sympy.Symbol, int] = {}
        self.slot_info: list[list[str]] = []
        self.binder: dict[sympy.Symbol, str] = {}
        self.regs: dict[Var, int] = {}
        self.void: set[Var] = set()
        self.storages: set[int] = set()  # registers holding an R.memory.alloc_storage
        self.num_regs = 0
        self.code: list[Any] = []

    def run(self, func: Function) -> dict[str, Any]:
        params = []
        for i, p in enumerate(func.params):
            self._collect_binds(p.struct_info, f"parameter {i} '{p.name_hint}'")
        for i, p in enumerate(func.params):
            self.regs[p] = self._new_reg()
            spec = self._spec(p.struct_info, f"parameter {i} '{p.name_hint}'", p)
            params.append({"name": p.name_hint, "spec": spec})
        ret = self._seq(func.body)
        code = plan_storage(self.code, ret)
        return {
            "params": params,
            "slots": self.slot_info,
            "num_regs": self.num_regs,
            "code": code,
            "ret": ret,
        }

    # -- specs --------------------------------------------------------------------------
    def _collect_binds(self, sinfo: StructInfo, origin: str) -> None:
        dims: tuple[Any, ...] = ()
        if isinstance(sinfo, TensorStructInfo) and sinfo.shape is not None:
            dims = sinfo.shape
        elif isinstance(sinfo, ShapeStructInfo) and sinfo.values is not None:
            dims = sinfo.values
        elif isinstance(sinfo, PrimStructInfo) and sinfo.value is not None:
            if isinstance(sinfo.value, sympy.Symbol) and sinfo.value not in self.slots:
                self._add_slot(sinfo.value, origin)
            return
        elif isinstance(sinfo, TupleStructInfo):
            for i, f in enumerate(sinfo.fields):
                self._collect_binds(f, f"{origin} field {i}")
            return
        for axis, d in enumerate(dims):
            if isinstance(d, sympy.Symbol) and d not in self.slots:
                self._add_slot(d, f"{origin} dim {axis}")

    def _add_slot(self, symbol: sympy.Symbol, origin: str) -> None:
        self.slots[symbol] = len(self.slot_info)
        self.slot_info.append([str(symbol), origin])
        self.binder[symbol] = origin

    def _dim_spec(self, d: Any, origin: str, node: Any) -> Any:
        if d.is_Integer:
            return int(d)
        if isinstance(d, sympy.Symbol) and self.binder.get(d) == origin:
            return ["bind", self.slots[d]]
        return ["check", self._tree(d, node), str(d)]

    def _spec(self, sinfo: StructInfo, origin: str, node: Any) -> list[Any]:
        if isinstance(sinfo, TensorStructInfo):
            dims = None
            if sinfo.shape is not None:
                dims = [
                    self._dim_spec(d, f"{origin} dim {a}", node) for a, d in enumerate(sinfo.shape)
                ]
            dtype = None if sinfo.dtype == "void" else sinfo.dtype
            return [
                "tensor",
                dtype,
                sinfo.ndim,
                dims,
                format_shape(sinfo.shape) if dims else "(...)",
            ]
        if isinstance(sinfo, ShapeStructInfo):
            dims = None
            if sinfo.values is not None:
                dims = [
                    self._dim_spec(d, f"{origin} dim {a}", node) for a, d in enumerate(sinfo.values)
                ]
            return ["shape", sinfo.ndim, dims, format_shape(sinfo.values)]
        if isinstance(sinfo, PrimStructInfo):
            is_int = sinfo.dtype.startswith(("int", "uint"))
            value = sinfo.value
            dim = self._dim_spec(value, origin, node) if value is not None and is_int else None
            return ["prim", sinfo.dtype, dim]
        if isinstance(sinfo, TupleStructInfo):
            return [
                "tuple",
                [self._spec(f, f"{origin} field {i}", node) for i, f in enumerate(sinfo.fields)],
            ]
        return ["object"]

    def _tree(self, expr: Any, node: Any) -> Tree:
        try:
            return to_tree(expr, self.slots)
        except UnboundSymbolError as err:
            raise DiagnosticError(
                f"vm codegen @{self.name}: shape {expr} uses symbol {err.symbol}, which no "
                "parameter or match_cast defines as a plain dimension before this point",
                node,
            ) from None
        except ValueError as err:
            raise DiagnosticError(f"vm codegen @{self.name}: {err}", node) from None

    # -- registers and operands ---------------------------------------------------------
    def _new_reg(self) -> int:
        self.num_regs += 1
        return self.num_regs - 1

    def _operand(self, expr: Expr) -> int:
        if isinstance(expr, Var):
            if expr in self.void and expr not in self.regs:
                self.regs[expr] = self._new_reg()
                self.code.append(["tuple", self.regs[expr], []])
            if expr not in self.regs:
                raise DiagnosticError(
                    f"vm codegen @{self.name}: {expr.name_hint} is used before it is defined", expr
                )
            return self.regs[expr]
        dst = self._new_reg()
        self._emit_value(expr, dst)
        return dst

    def _emit_value(self, expr: Expr, dst: int) -> None:
        emit = self.code.append
        if isinstance(expr, Constant):
            key = id(expr.data)
            if key not in self.const_ids:
                self.const_ids[key] = len(self.constants)
                self.constants.append(np.asarray(expr.data, order="C"))
            emit(["const", dst, self.const_ids[key]])
        elif isinstance(expr, ShapeExpr):
            emit(["shape", dst, [self._tree(d, expr) for d in expr.values]])
        elif isinstance(expr, PrimValue):
            value = expr.value
            if expr.dtype.startswith(("int", "uint")) or expr.dtype == "bool":
                emit(["prim", dst, self._tree(value, expr)])
            else:
                emit(["lit", dst, float(value)])
        elif isinstance(expr, StringImm | DataTypeImm):
            emit(["lit", dst, expr.value])
        elif isinstance(expr, Tuple):
            emit(["tuple", dst, [self._operand(f) for f in expr.fields]])
        elif isinstance(expr, TupleGetItem):
            emit(["item", dst, self._operand(expr.tuple_value), expr.index])
        elif isinstance(expr, Call):
            self._call(expr, dst)
        elif isinstance(expr, If):
            self._if(expr, dst)
        elif isinstance(expr, SeqExpr):
            emit(["tuple", dst, [self._seq(expr)]])
            emit(["item", dst, dst, 0])
        else:
            raise DiagnosticError(
                f"vm codegen @{self.name}: cannot lower a {type(expr).__name__}", expr
            )

    # -- bindings -----------------------------------------------------------------------
    def _seq(self, seq: SeqExpr) -> int:
        for block in seq.blocks:
            for binding in block.bindings:
                self._binding(binding)
        return self._operand(seq.body)

    def _binding(self, binding: Any) -> None:
        var, value = binding.var, binding.value
        if isinstance(binding, MatchCast):
            reg = self._operand(value)
            self._collect_binds(binding.struct_info, f"match_cast of {var.name_hint}")
            spec = self._spec(binding.struct_info, f"match_cast of {var.name_hint}", binding)
            self.code.append(["match", reg, spec, f"{self.name}: match_cast of {var.name_hint}"])
            self.regs[var] = reg
            return
        assert isinstance(binding, VarBinding)
        if isinstance(value, Var):
            if value in self.void and value not in self.regs:
                self.void.add(var)
            else:
                self.regs[var] = self._operand(value)
            return
        if isinstance(value, Call) and self._is_kernel_call(value):
            self._kernel(value)
            self.void.add(var)
            return
        if isinstance(value, Call) and value.op in (memory.kill_tensor, memory.kill_storage):
            self.code.append(["kill", self._operand(value.args[0])])
            self.void.add(var)
            return
        self.regs[var] = dst = self._new_reg()
        self._emit_value(value, dst)

    def _is_kernel_call(self, call: Call) -> bool:
        return isinstance(call.op, GlobalVar) and isinstance(
            self.mod.functions.get(call.op), PrimFunc
        )

    def _kernel(self, call: Call) -> None:
        args: list[Any] = []
        for arg in call.args:
            sinfo = arg.struct_info
            if isinstance(arg, ShapeExpr):
                args += [["i", self._tree(d, arg)] for d in arg.values]
            elif isinstance(arg, PrimValue) and arg.dtype.startswith(("int", "uint")):
                args.append(["i", self._tree(arg.value, arg)])
            elif isinstance(sinfo, TensorStructInfo):
                dims = None
                if sinfo.shape is not None and all(
                    s in self.slots for d in sinfo.shape for s in d.free_symbols
                ):
                    dims = [self._tree(d, arg) for d in sinfo.shape]
                args.append(["t", self._operand(arg), dims])
            else:
                args.append(["r", self._operand(arg)])
        self.code.append(["kernel", call.op.name_hint, args])  # type: ignore[union-attr]  # GlobalVar

    def _call(self, call: Call, dst: int) -> None:
        op = call.op
        if op is alloc_tensor:
            shape = call.args[0]
            if not isinstance(shape, ShapeExpr):
                raise DiagnosticError(
                    f"vm codegen @{self.name}: alloc_tensor needs a literal shape", call
                )
            dtype = call.args[1].value  # type: ignore[attr-defined]  # DataTypeImm
            self.code.append(["alloc", dst, dtype, [self._tree(d, shape) for d in shape.values], 0])
        elif op is memory.alloc_storage or op is memory.alloc_tensor:
            self._memory(call, dst)
        elif isinstance(op, GlobalVar) and isinstance(self.mod.functions.get(op), Function):
            self.code.append(["call", dst, op.name_hint, [self._operand(a) for a in call.args]])
        elif op is call_pure_packed and isinstance(call.args[0], ExternFunc):
            name = call.args[0].global_symbol
            if name not in HOST_FUNCTIONS:
                raise DiagnosticError(f"vm codegen @{self.name}: unknown host function {name!r}", call)
            self.code.append(["host", dst, name, [self._operand(a) for a in call.args[1:]]])
        elif op is call_tir or op is call_dps_packed:
            raise DiagnosticError(
                f"vm codegen @{self.name}: {op.name} left: run CallTIRRewrite first", call
            )
        elif isinstance(op, Op):
            raise DiagnosticError(
                f"vm codegen @{self.name}: operator {op.name} has no VM lowering: LegalizeOps "
                "turns it into a call_tir when it has a legalize rule and known input ranks",
                call,
            )
        elif isinstance(op, ExternFunc):
            raise DiagnosticError(
                f"vm codegen @{self.name}: extern function {op.global_symbol} is not supported",
                call,
            )
        else:
            raise DiagnosticError(f"vm codegen @{self.name}: cannot call {op!r} here", call)

    def _memory(self, call: Call, dst: int) -> None:
        """``storage`` (size in bytes) and ``view`` (a tensor in a storage) instructions."""
        size_index, shape_index = (0, 0) if call.op is memory.alloc_storage else (None, 2)
        shape = call.args[shape_index]
        if not isinstance(shape, ShapeExpr):
            name = "alloc_storage" if size_index is not None else "alloc_tensor"
            raise DiagnosticError(
                f"vm codegen @{self.name}: memory.{name} needs a literal shape", call
            )
        dims = [self._tree(d, shape) for d in shape.values]
        if size_index is not None:
            self.code.append(["storage", dst, dims[0], 0])
            self.storages.add(dst)
            return
        offset, dtype = call.args[1], call.args[3]
        if not isinstance(offset, PrimValue) or not isinstance(dtype, DataTypeImm):
            raise DiagnosticError(
                f"vm codegen @{self.name}: memory.alloc_tensor needs a literal offset and dtype",
                call,
            )
        storage = self._operand(call.args[0])
        if storage not in self.storages:
            raise DiagnosticError(
                f"vm codegen @{self.name}: memory.alloc_tensor needs a storage made by "
                "R.memory.alloc_storage earlier in the same function",
                call,
            )
        self.code.append(["view", dst, storage, self._tree(offset.value, offset), dtype.value,
                          dims, 0])  # fmt: skip

    def _if(self, expr: If, dst: int) -> None:
        cond = self._operand(expr.cond)
        outer = self.code
        self.code = []
        then_reg = self._seq(expr.true_branch)
        then_code, self.code = self.code, []
        else_reg = self._seq(expr.false_branch)
        else_code, self.code = self.code, outer
        outer.append(["if", dst, cond, then_code, then_reg, else_code, else_reg])


def _uses(ins: list[Any], kernel_ok: bool) -> list[int]:
    """Registers `ins` reads (deeply); with `kernel_ok`, kernel tensor args are left out."""
    op = ins[0]
    if op == "kernel":
        return [a[1] for a in ins[2] if a[0] == "r" or (a[0] == "t" and not kernel_ok)]
    if op in ("view", "kill"):  # like a kernel's tensor argument: the value does not escape
        return [] if kernel_ok else [ins[2] if op == "view" else ins[1]]
    if op == "tuple":
        return list(ins[2])
    if op in ("item",):
        return [ins[2]]
    if op in ("match", "free"):
        return [ins[1]]
    if op in ("call", "host"):  # a host function reads its arguments as shaped arrays
        return list(ins[3])
    if op == "if":
        inner = [r for sub in (ins[3], ins[5]) for i in sub for r in _uses(i, kernel_ok)]
        return [ins[2], ins[4], ins[6], *inner]
    return []


def _all_instrs(code: list[Any]) -> list[list[Any]]:
    out = []
    for ins in code:
        out.append(ins)
        if ins[0] == "if":
            out += _all_instrs(ins[3]) + _all_instrs(ins[5])
    return out


def plan_storage(code: list[Any], ret: int) -> list[Any]:
    """Pool the allocations and storages only kernels use, freeing each after its last use.

    A storage (of ``R.memory.alloc_storage``) is pooled when neither it nor any tensor
    viewing it escapes; it goes back to the pool after the last use of any of them.
    Views that escape get a real shaped array (``view`` flag 1); others are the raw bytes.

    Example:
        >>> plan_storage([["alloc", 0, "float32", [4], 0]], 1)
        [['alloc', 0, 'float32', [4], 1], ['free', 0]]
    """
    instrs = _all_instrs(code)
    escaping = {ret} | {r for ins in instrs for r in _uses(ins, kernel_ok=True)}
    owner = {ins[1]: ins[2] for ins in instrs if ins[0] == "view"}
    unsafe = {owner.get(r, r) for r in escaping}
    pooled = {ins[1] for ins in instrs if ins[0] in ("alloc", "storage") and ins[1] not in unsafe}
    return _insert_frees(code, pooled, owner, escaping)


def _insert_frees(
    code: list[Any], pooled: set[int], owner: dict[int, int], escaping: set[int]
) -> list[Any]:
    out: list[Any] = []
    last: dict[int, int] = {}
    for i, ins in enumerate(code):
        if ins[0] in ("alloc", "storage") and ins[1] in pooled:
            last[ins[1]] = i
        for r in _uses(ins, kernel_ok=False):
            r = owner.get(r, r)
            if r in last:
                last[r] = i
    frees_after: dict[int, list[int]] = {}
    for reg, i in last.items():
        frees_after.setdefault(i, []).append(reg)
    for i, ins in enumerate(code):
        if (ins[0] in ("alloc", "storage") and ins[1] in pooled) or (
            ins[0] == "view" and ins[1] in escaping
        ):
            ins = [*ins[:-1], 1]  # pooled storage, or a view that needs a real shaped array
        elif ins[0] == "kill" and owner.get(ins[1], ins[1]) in pooled:
            ins = None  # the free below gives the memory back; keep the raw buffer until then
        elif ins[0] == "if":
            ins = [
                *ins[:3],
                _insert_frees(ins[3], pooled, owner, escaping),
                ins[4],
                _insert_frees(ins[5], pooled, owner, escaping),
                ins[6],
            ]
        if ins is not None:
            out.append(ins)
        out += [["free", reg] for reg in sorted(frees_after.get(i, ()))]
    return out
