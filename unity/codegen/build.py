"""`unity.build`: compile a `PrimFunc` or the PrimFuncs of an `IRModule` for a target.

Example:
    >>> import numpy as np, unity
    >>> from unity import tir
    >>> A = tir.decl_buffer((4,), "float32", "A")
    >>> B = tir.decl_buffer((4,), "float32", "B")
    >>> i = tir.Var("i")
    >>> body = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL,
    ...                tir.BufferStore(B, A[i] + tir.const(1.0), (i,)))
    >>> lib = unity.build(tir.PrimFunc((A, B), body))
    >>> b = np.zeros(4, "float32"); lib["main"](np.ones(4, "float32"), b); b.tolist()
    [2.0, 2.0, 2.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unity.codegen.llvm import CodeGenLLVM
from unity.codegen.llvm_jit import jit_module
from unity.ir.module import IRModule
from unity.runtime.module import Module
from unity.target import Target
from unity.tir.function import PrimFunc


def build(
    mod_or_func: IRModule | PrimFunc,
    target: Target | str | Mapping[str, Any] = "llvm",
    name: str | None = None,
) -> Module:
    """Lower (`unity.tir.lower`) and compile every PrimFunc; return the runtime module.

    Args:
        mod_or_func: An `IRModule` (its PrimFuncs are compiled, under their names) or
            one `PrimFunc` (compiled as its `global_symbol` attribute, or `name`, or "main").
        target: `"llvm"` (the host CPU), a `Target`, or a target dict.
        name: The name of a single PrimFunc.

    Returns:
        A `unity.runtime.Module`: `lib["main"](*arrays)`.

    Example:
        >>> lib = unity.build(func, target="llvm -num-cores=2")  # doctest: +SKIP
    """
    target = Target(target)
    if target.kind == "cuda":  # CUDA C + lazily loaded kernels (unity.codegen.cuda_build)
        from unity.codegen.cuda_build import build as build_cuda

        return build_cuda(_as_module(mod_or_func, name), target)  # type: ignore[return-value]
    if target.kind != "llvm":
        raise ValueError(f"unity.build: target {target} is not supported yet (only llvm)")
    mod = _as_module(mod_or_func, name)
    mod = _lower(mod)
    codegen = CodeGenLLVM(target)
    functions: dict[str, Any] = {}
    for gv, func in mod.items():
        if isinstance(func, PrimFunc):
            symbol = func.attrs.get("global_symbol", gv.name_hint)
            functions[gv.name_hint] = codegen.add_function(symbol, func)
    if not functions:
        raise ValueError("unity.build: the module has no PrimFunc to compile")
    metadata = {"functions": functions}
    return jit_module(codegen.finish(metadata), target, metadata)


def _as_module(mod_or_func: IRModule | PrimFunc, name: str | None) -> IRModule:
    if isinstance(mod_or_func, IRModule):
        return mod_or_func
    if isinstance(mod_or_func, PrimFunc):
        key = name or mod_or_func.attrs.get("global_symbol") or "main"
        return IRModule({key: mod_or_func})
    raise TypeError(
        f"unity.build: expected an IRModule or a PrimFunc, got {type(mod_or_func).__name__}"
    )


def _lower(mod: IRModule) -> IRModule:
    """Run `unity.tir.lower` when the lowering passes exist (they are written separately)."""
    try:
        from unity.tir import lower  # type: ignore[attr-defined]  # added by the lowering issue
    except ImportError:
        return mod
    lower_fn = getattr(lower, "lower", lower)  # the function, or a module of that name
    return lower_fn(mod)
