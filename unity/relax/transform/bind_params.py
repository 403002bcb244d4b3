"""Bind function parameters to constant arrays, by name: they become `Constant`s.

Before::

    @R.function
    def main(x: R.Tensor((2, "n"), "float32"), w: R.Tensor(("n", 3), "float32")):
        gv = R.matmul(x, w)
        return gv

After ``BindParams("main", {"w": np.ones((4, 3), "float32")})``::

    @R.function
    def main(x: R.Tensor((2, 4), "float32")):
        gv = R.matmul(x, R.const(np.ones((4, 3), "float32")))
        return gv

Shape symbols that a bound array fixes (`n` = 4 above) are substituted in the whole
function. A name that is not a parameter, or an array whose dtype or shape does not
fit, is an error naming the parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import sympy

from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import IRModule
from unity.ir.transform import ModulePass, PassContext
from unity.relax.expr import Constant, Expr, Function, Var
from unity.relax.expr_functor import ExprMutator
from unity.relax.transform.bind_symbolic_vars import check_bindable, substitute_symbols


@dataclass(frozen=True)
class BindParams(ModulePass):
    """Replace parameters of `func_name` named in `params` by constants of their arrays.

    Example:
        >>> BindParams("main", {})(IRModule()).functions
        {}
    """

    func_name: str = "main"
    params: Mapping[str | Var, np.ndarray] = field(default_factory=dict)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Bind the arrays in function `func_name`."""
        if not self.params:
            return mod
        func = mod[self.func_name] if self.func_name in mod else None  # noqa: SIM401
        if not isinstance(func, Function):
            msg = f"BindParams: no relax function {self.func_name!r} in the module"
            raise ValueError(msg)  # noqa: TRY004 - a missing name, not a wrong argument type
        out = mod.copy()
        out.update_func(out.get_global_var(self.func_name), bind_params(func, self.params))
        return out


def bind_params(func: Function, params: Mapping[str | Var, np.ndarray]) -> Function:
    """`func` with the parameters in `params` (by name or var) replaced by constants.

    Example:
        >>> bind_params(func, {"w": np.ones((4, 3), "float32")})  # doctest: +SKIP
    """
    chosen = _match(func, params)
    symbols: dict[sympy.Symbol, sympy.Expr] = {}
    for index, array in chosen.items():
        p = func.params[index]
        for s, v in check_bindable(p.name_hint, p.struct_info, array.shape, str(array.dtype), p).items():
            if symbols.setdefault(s, v) != v:
                raise DiagnosticError(f"BindParams: arrays disagree on shape symbol {s}", p)
    func = substitute_symbols(func, symbols) if symbols else func
    remap: dict[Var, Expr] = {func.params[i]: Constant(a) for i, a in chosen.items()}
    return _Replacer(remap).visit_expr(func)


def _match(func: Function, params: Mapping[str | Var, np.ndarray]) -> dict[int, np.ndarray]:
    by_name: dict[str, list[int]] = {}
    for i, p in enumerate(func.params):
        by_name.setdefault(p.name_hint, []).append(i)
    chosen: dict[int, np.ndarray] = {}
    for key, value in params.items():
        if isinstance(key, Var):
            hits = [i for i, p in enumerate(func.params) if p is key]
        else:
            hits = by_name.get(key, [])
        name = key.name_hint if isinstance(key, Var) else key
        if not hits:
            have = ", ".join(p.name_hint for p in func.params)
            raise ValueError(f"BindParams: {name!r} is not a parameter (parameters: {have})")
        if len(hits) > 1:
            raise ValueError(f"BindParams: several parameters are called {name!r}; pass the Var")
        chosen[hits[0]] = np.asarray(value)
    return chosen


class _Replacer(ExprMutator):
    def __init__(self, remap: dict[Var, Expr]) -> None:
        super().__init__()
        self.var_remap.update(remap)
        self.bound = set(remap)

    def visit_function_(self, func: Function) -> Function:
        new = super().visit_function_(func)
        params = tuple(p for p in new.params if p not in self.bound)
        return new.replace(params=params)
