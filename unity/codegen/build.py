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

from unity.codegen.build_jobs import map_jobs, split_jobs
from unity.codegen.llvm import CodeGenLLVM
from unity.codegen.llvm_jit import CompiledModule, compile_module, load_compiled
from unity.ir.module import IRModule
from unity.runtime.module import Module
from unity.target import Target
from unity.tir.function import PrimFunc
from unity.tir.functor import post_order_nodes

SECONDS_PER_NODE = 4e-4
"""About what lowering and compiling takes per node of a PrimFunc's body before lowering
(0.3-0.7 ms over the light ONNX models' kernels, on a 2-core Zen 4): the cost estimate
that splits a build into jobs (`unity.codegen.build_jobs`)."""


def build(
    mod_or_func: IRModule | PrimFunc,
    target: Target | str | Mapping[str, Any] = "llvm",
    name: str | None = None,
) -> Module:
    """Lower (`unity.tir.lower`) and compile every PrimFunc; return the runtime module.

    A module whose PrimFuncs take long to compile (by an estimate from their size) is
    split into jobs of consecutive functions, run in worker processes (see
    `unity.codegen.build_jobs`; ``PassContext(config={"build.jobs": 1})`` keeps it all
    in this process).

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
    names = [gv.name_hint for gv, func in mod.items() if isinstance(func, PrimFunc)]
    if not names:
        raise ValueError("unity.build: the module has no PrimFunc to compile")
    costs = [len(post_order_nodes(mod[name].body)) * SECONDS_PER_NODE for name in names]
    jobs = split_jobs(costs)
    if len(jobs) == 1:  # in one piece: instruments see the module as lowered before
        done = [_compile(mod, target)]
    else:
        parts = [IRModule({names[i]: mod[names[i]] for i in job}) for job in jobs]
        done = map_jobs(len(parts), lambda i: _compile(parts[i], target))
    functions: dict[str, Any] = {}
    for metas, _ in done:
        functions.update(metas)
    _check_symbols(functions)
    metadata = {"functions": {name: functions[name] for name in names}}
    return load_compiled([part for _, part in done], target, metadata)


def _compile(mod: IRModule, target: Target) -> tuple[dict[str, Any], CompiledModule]:
    """Lower `mod`'s PrimFuncs and compile them into one LLVM module: (metadata of each
    function, the compiled module)."""
    lowered = _lower(mod)
    codegen = CodeGenLLVM(target)
    metas: dict[str, Any] = {}
    for gv, func in lowered.items():
        if isinstance(func, PrimFunc):
            symbol = func.attrs.get("global_symbol", gv.name_hint)
            metas[gv.name_hint] = codegen.add_function(symbol, func)
    return metas, compile_module(codegen.module, target)


def _check_symbols(functions: dict[str, Any]) -> None:
    """Functions compiled apart (`_compile` per job) must not share a symbol."""
    seen: dict[str, str] = {}
    for name, meta in functions.items():
        other = seen.setdefault(meta["symbol"], name)
        if other != name:
            raise ValueError(
                f"unity.build: functions {other!r} and {name!r} both have the symbol "
                f"{meta['symbol']!r} (their global_symbol attributes)"
            )


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
