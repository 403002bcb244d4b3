"""The pass infrastructure: `Pass`, `ModulePass`, `Sequential`, `PassContext`, decorators.

Semantics follow TVM's `tvm.transform`:

- A pass maps an `IRModule` to an `IRModule`. **A pass returns its input object
  (`result is mod`) when it changes nothing**, so pipelines and tests can tell cheaply.
- `pass_(mod)` runs under `PassContext.current()`: it is skipped (the input returned)
  when its name is in `disabled_pass`, or when its `opt_level` is above the context's
  and its name is not in `required_pass`. Instruments are asked `should_run` (ignored
  for required passes), then get `run_before_pass` / `run_after_pass`.
- A `DiagnosticError` raised inside a pass gets the pass name and module attached
  (`with_context`), so its message says `in pass: NAME` and shows the module.
- Names listed in a pass's `required` run before it (looked up among the defined pass
  classes and decorated passes).

Example:
    >>> from unity.ir import IRModule
    >>> @module_pass(opt_level=3)
    ... def tag(mod, ctx):
    ...     return mod.with_attr("tagged", True)
    >>> mod = IRModule()
    >>> Sequential([tag])(mod) is mod  # opt_level 3 > 2: skipped, the input comes back
    True
    >>> with PassContext(opt_level=3):
    ...     Sequential([tag])(mod).attrs["tagged"]
    True
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from unity.ir.diagnostics import DiagnosticError
from unity.ir.module import BaseFunc, IRModule
from unity.ir.pass_context import PassContext, UnknownNameError, list_configs, register_config

__all__ = [
    "ApplyPassToFunction", "FunctionPass", "ModulePass", "Pass", "PassContext", "PassInfo",
    "PrintIR", "Sequential", "function_pass", "get_pass", "list_configs", "module_pass",
    "register_config",
]  # fmt: skip

_PASSES: dict[str, Callable[[], Pass]] = {}
"""Pass name -> factory, for resolving `required` names (class names and decorated passes)."""


@dataclass(frozen=True)
class PassInfo:
    """What the runner needs to know about a pass: its level, name and prerequisites.

    Example:
        >>> PassInfo(2, "FoldConstant").opt_level
        2
    """

    opt_level: int
    name: str
    required: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.name} (opt_level={self.opt_level})"


class Pass:
    """Base of every pass: `pass_(mod)` runs it under the current `PassContext`.

    Subclasses set the class attributes `opt_level` and `required` and implement
    `_transform(mod, ctx)`; the name is the class name unless `info` is overridden.

    Example:
        >>> PrintIR("x").info.name, isinstance(PrintIR("x"), Pass)
        ('PrintIR', True)
    """

    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, register: bool = True, **kwargs: Any) -> None:
        """Record concrete pass classes by name so `required` names can find them."""
        super().__init_subclass__(**kwargs)
        if register and not cls.__name__.startswith("_"):
            _PASSES[cls.__name__] = cls

    @property
    def info(self) -> PassInfo:
        """The `PassInfo` of this pass."""
        cls = type(self)
        return PassInfo(cls.opt_level, cls.__name__, tuple(cls.required))

    def __call__(self, mod: IRModule) -> IRModule:
        """Run on `mod` under `PassContext.current()` (skipped passes return `mod`).

        Example:
            >>> mod = IRModule()
            >>> PassContext.current().opt_level, Sequential([])(mod) is mod
            (2, True)
        """
        if not isinstance(mod, IRModule):
            raise TypeError(
                f"pass {self.info.name} expects an IRModule, got {type(mod).__name__}; "
                "wrap a function with IRModule({'main': func})"
            )
        ctx = PassContext.current()
        info = self.info
        if not ctx.pass_enabled(info):
            return mod
        for name in info.required:
            mod = get_pass(name, required_by=info.name)(mod)
        if not ctx.instrument_before_pass(mod, info):
            return mod
        result = self._run_checked(mod, ctx, info)
        ctx.instrument_after_pass(result, info)
        return result

    def _run_checked(self, mod: IRModule, ctx: PassContext, info: PassInfo) -> IRModule:
        try:
            result = self._transform(mod, ctx)
        except DiagnosticError as err:
            err.with_context(pass_name=info.name, module=mod)
            raise
        if not isinstance(result, IRModule):
            raise TypeError(
                f"pass {info.name} returned {type(result).__name__}, not an IRModule "
                "(return the input module itself when nothing changes)"
            )
        return result

    def _transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        raise TypeError(f"{type(self).__name__} is abstract: subclass ModulePass or FunctionPass")


class ModulePass(Pass, register=False):
    """A pass over the whole module; subclasses implement `transform_module`.

    Write passes as frozen dataclasses whose fields are the options.

    Example:
        >>> @dataclass(frozen=True)
        ... class DropAttrs(ModulePass):
        ...     def transform_module(self, mod, ctx):
        ...         return mod if not mod.attrs else IRModule(dict(mod.items()))
        >>> m = IRModule()
        >>> DropAttrs()(m) is m
        True
    """

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """Return the transformed module (`mod` itself when nothing changes).

        Example:
            >>> @dataclass(frozen=True)
            ... class Tag(ModulePass):
            ...     def transform_module(self, mod, ctx):
            ...         return mod.with_attr("tagged", True)
            >>> Tag().transform_module(IRModule(), PassContext.current()).attrs
            {'tagged': True}
        """
        raise TypeError(f"{type(self).__name__} must override transform_module")

    def _transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return self.transform_module(mod, ctx)


class FunctionPass(Pass, register=False):
    """A pass applied to each function of kind `function_kind`, independently.

    Example:
        >>> @dataclass(frozen=True)
        ... class Same(FunctionPass):
        ...     def transform_function(self, func, mod, ctx):
        ...         return func
    """

    function_kind: ClassVar[type[BaseFunc]] = BaseFunc
    """Only functions of this class are transformed (e.g. `tir.PrimFunc`)."""

    def transform_function(self, func: BaseFunc, mod: IRModule, ctx: PassContext) -> BaseFunc:
        """Return the transformed function (`func` itself when nothing changes).

        Example:
            >>> from unity import tir
            >>> @dataclass(frozen=True)
            ... class Named(FunctionPass):
            ...     def transform_function(self, func, mod, ctx):
            ...         return func.with_attr("seen", True)
            >>> mod = IRModule({"main": tir.PrimFunc([], tir.Evaluate(tir.const(0)))})
            >>> dict(Named()(mod)["main"].attrs)
            {'seen': True}
        """
        raise TypeError(f"{type(self).__name__} must override transform_function")

    def _transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        kind = type(self).function_kind
        return mod.map_functions(kind, lambda f: self.transform_function(f, mod, ctx))


class Sequential(Pass, register=False):
    """Run `passes` in order; each is still subject to the context's checks.

    Example:
        >>> seq = Sequential([PrintIR("before")], name="debug")
        >>> seq.info.name, len(seq.passes)
        ('debug', 1)
    """

    __slots__ = ("passes", "opt_level_", "name", "required_")

    def __init__(
        self,
        passes: Sequence[Pass] = (),
        opt_level: int = 0,
        name: str = "sequential",
        required: Sequence[str] = (),
    ) -> None:
        for p in passes:
            if not isinstance(p, Pass):
                raise TypeError(f"Sequential {name!r}: {type(p).__name__} is not a Pass")
        self.passes: tuple[Pass, ...] = tuple(passes)
        self.opt_level_ = opt_level
        self.name = name
        self.required_ = tuple(required)

    @property
    def info(self) -> PassInfo:
        return PassInfo(self.opt_level_, self.name, self.required_)

    def _transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        for p in self.passes:
            mod = p(mod)
        return mod


@dataclass(frozen=True)
class PrintIR(ModulePass):
    """Print the module (with `header`) and return it unchanged.

    Example:
        >>> PrintIR("after fusion")(IRModule())  # doctest: +SKIP
        PrintIR(after fusion):
        ...
    """

    header: str = ""

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        print(f"PrintIR({self.header}):\n{_render(mod)}")
        return mod


@dataclass(frozen=True)
class ApplyPassToFunction(ModulePass):
    """Run `transform` on the functions whose name fully matches `func_name_regex` only.

    The matching functions form a sub-module that `transform` sees alone; its result
    replaces them (functions it adds are added, functions it drops are dropped), and
    the other functions stay as they are.

    Example:
        >>> only_main = ApplyPassToFunction(PrintIR("main"), "main")
        >>> m = IRModule()
        >>> only_main(m) is m
        True
    """

    transform: Pass
    func_name_regex: str
    error_if_no_function_matches_regex: bool = False

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        pattern = re.compile(self.func_name_regex)
        subset = [gv for gv in mod.functions if pattern.fullmatch(gv.name_hint)]
        if not subset:
            if self.error_if_no_function_matches_regex:
                have = ", ".join(gv.name_hint for gv in mod.functions) or "none"
                raise ValueError(f"no function matches {self.func_name_regex!r} (have: {have})")
            return mod
        sub = IRModule({gv: mod.functions[gv] for gv in subset}, attrs=mod.attrs)
        out = self.transform(sub)
        if out is sub:
            return mod
        new = mod.copy()
        for gv in subset:
            if gv.name_hint not in out:
                new.remove(gv)
        for gv, func in out.functions.items():
            new[gv.name_hint] = func
        return new


def _render(mod: IRModule) -> str:
    try:
        return mod.script()
    except Exception:  # noqa: BLE001 - printing must not fail a pipeline
        return repr(mod)


def get_pass(name: str, required_by: str | None = None) -> Pass:
    """Create the pass called `name` (a pass class or a decorated pass).

    Example:
        >>> get_pass("PrintIR").info.name
        'PrintIR'
    """
    factory = _PASSES.get(name)
    if factory is None:
        who = f"pass {required_by} requires " if required_by else ""
        raise UnknownNameError(f"{who}unknown pass {name!r}; define it or import its module first")
    try:
        return factory()
    except TypeError as err:
        raise TypeError(f"pass {name!r} cannot be created without arguments: {err}") from None


# -- decorators ---------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class _WrappedPass(Pass, register=False):
    """A pass made by `module_pass` / `function_pass` from a function or an instance."""

    run: Callable[..., Any]
    pass_info: PassInfo
    function_kind: type[BaseFunc] | None = None
    """None for a module pass; else the kind of function `run` is applied to."""
    inner: object = None

    @property
    def info(self) -> PassInfo:
        return self.pass_info

    def _transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        if self.function_kind is None:
            return self.run(mod, ctx)
        return mod.map_functions(self.function_kind, lambda f: self.run(f, mod, ctx))

    def __getattr__(self, name: str) -> Any:
        inner = object.__getattribute__(self, "inner")
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)


def module_pass(
    pass_func: Callable[..., Any] | type | None = None,
    opt_level: int | None = None,
    name: str | None = None,
    required: Sequence[str] | None = None,
) -> Any:
    """Make a module pass from `fn(mod, ctx) -> mod`, or from a class with `transform_module`.

    On a function it returns the pass; on a class it returns a factory: calling it with
    the class's arguments creates the pass. Usable bare or with arguments.

    Example:
        >>> @module_pass(opt_level=2, name="Noop")
        ... def noop(mod, ctx):
        ...     return mod
        >>> noop.info.name, noop.info.opt_level
        ('Noop', 2)
    """
    return _decorate(pass_func, PassInfo(opt_level or 0, name or "", tuple(required or ())), None)


def function_pass(
    pass_func: Callable[..., Any] | type | None = None,
    opt_level: int | None = None,
    name: str | None = None,
    required: Sequence[str] | None = None,
    function_kind: type[BaseFunc] = BaseFunc,
) -> Any:
    """Make a per-function pass from `fn(func, mod, ctx) -> func` or from a class with
    `transform_function`; only functions of `function_kind` are visited. See `module_pass`.

    Layers bind `function_kind` for their own spelling, e.g. tir's `prim_func_pass`.

    Example:
        >>> @function_pass(opt_level=0)
        ... def keep(func, mod, ctx):
        ...     return func
        >>> keep.info.name
        'keep'
    """
    info = PassInfo(opt_level or 0, name or "", tuple(required or ()))
    return _decorate(pass_func, info, function_kind)


def _decorate(
    target: Callable[..., Any] | type | None, info: PassInfo, kind: type[BaseFunc] | None
) -> Any:
    if not isinstance(info.opt_level, int) or isinstance(info.opt_level, bool):
        raise TypeError(f"opt_level must be an int, got {type(info.opt_level).__name__}")

    def wrap(obj: Callable[..., Any] | type) -> Any:
        named = info if info.name else PassInfo(info.opt_level, obj.__name__, info.required)
        if isinstance(obj, type):
            return _class_factory(obj, named, kind)
        if not callable(obj):
            raise TypeError(f"module_pass/function_pass decorates a function or class, got {obj!r}")
        made = _WrappedPass(obj, named, kind)
        _PASSES[named.name] = lambda: made
        return made

    return wrap if target is None else wrap(target)


def _class_factory(cls: type, info: PassInfo, kind: type[BaseFunc] | None) -> Callable[..., Pass]:
    method = "transform_module" if kind is None else "transform_function"
    if not hasattr(cls, method):
        raise TypeError(f"class {cls.__name__} decorated as a pass must define {method}")

    @functools.wraps(cls, updated=())
    def create(*args: Any, **kwargs: Any) -> Pass:
        inst = cls(*args, **kwargs)
        return _WrappedPass(getattr(inst, method), info, kind, inst)

    _PASSES[info.name] = create
    return create
