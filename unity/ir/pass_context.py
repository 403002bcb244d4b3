"""`PassContext`: the settings passes run under, and the declared config keys.

A context is a context manager; contexts nest and the innermost one applies (TVM's
semantics: an inner context does not inherit from the outer one). Config keys are
declared once with their type (`register_config`); unknown keys and values of the
wrong type fail when the context is created.

Example:
    >>> register_config("example.max_depth", int, 4)
    >>> with PassContext(opt_level=3, config={"example.max_depth": 8}) as ctx:
    ...     ctx.opt_level, ctx.get_config("example.max_depth")
    (3, 8)
"""

from __future__ import annotations

import difflib
import importlib
import threading
from types import MappingProxyType
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from unity.ir.module import IRModule
    from unity.ir.transform import PassInfo

__all__ = ["PassContext", "UnknownNameError", "list_configs", "register_config"]

_MISSING: Any = object()


class UnknownNameError(KeyError):
    """A `KeyError` (unknown config key or pass name) whose text is the plain message.

    Example:
        >>> str(UnknownNameError("unknown pass 'Foo'"))
        "unknown pass 'Foo'"
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


_CONFIGS: dict[str, tuple[type, Any]] = {}
"""Declared config keys: key -> (type, default)."""


def register_config(key: str, value_type: type, default: Any = None) -> None:
    """Declare the `PassContext` config key `key`, the type of its values and its default.

    Declaring a key again with the same type is allowed (module reloads); a different type
    is an error.

    Example:
        >>> register_config("example.unroll", int, 16)
        >>> with PassContext(config={"example.unroll": 4}) as ctx:
        ...     ctx.get_config("example.unroll")
        4
    """
    known = _CONFIGS.get(key)
    if known is not None and known[0] is not value_type:
        raise ValueError(
            f"config key {key!r} is already declared with type {known[0].__name__}, "
            f"not {value_type.__name__}"
        )
    _CONFIGS[key] = (value_type, default)


def list_configs() -> dict[str, tuple[type, Any]]:
    """All declared config keys with their (type, default).

    Example:
        >>> "example.unroll" in list_configs()  # doctest: +SKIP
        True
    """
    return dict(_CONFIGS)


_DECLARING_PACKAGES = ("unity.codegen", "unity.relax.transform")
"""Packages whose modules declare config keys when imported; `import unity` leaves them
unimported (the compiler loads lazily), so an unknown key imports them and looks again."""


def _check_config(config: Mapping[str, Any]) -> dict[str, Any]:
    checked: dict[str, Any] = {}
    if any(key not in _CONFIGS for key in config):
        for package in _DECLARING_PACKAGES:
            importlib.import_module(package)
    for key, value in config.items():
        if key not in _CONFIGS:
            close = difflib.get_close_matches(str(key), _CONFIGS, n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise UnknownNameError(
                f"PassContext: unknown config key {key!r}{hint} "
                "(declare it with unity.transform.register_config)"
            )
        checked[key] = _coerce(key, value, _CONFIGS[key][0])
    return checked


def _coerce(key: str, value: Any, value_type: type) -> Any:
    if value_type is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    is_bool_for_int = value_type is int and isinstance(value, bool)
    if not isinstance(value, value_type) or is_bool_for_int:
        raise TypeError(
            f"PassContext: config {key!r} expects {value_type.__name__}, "
            f"got {type(value).__name__} {value!r}"
        )
    return value


class _Stack(threading.local):
    def __init__(self) -> None:
        self.contexts: list[PassContext] = []


_STACK = _Stack()


class PassContext:
    """The settings passes run under; a context manager, nestable (the innermost wins).

    Args:
        opt_level: passes with a higher `opt_level` are skipped unless required.
        required_pass: names of passes that run whatever their level.
        disabled_pass: names of passes that never run.
        config: values for keys declared with `register_config`.
        instruments: `PassInstrument`s called around every pass.

    Example:
        >>> with PassContext(opt_level=3, disabled_pass=["FoldConstant"]) as ctx:
        ...     PassContext.current() is ctx
        True
    """

    def __init__(
        self,
        opt_level: int = 2,
        required_pass: Sequence[str] = (),
        disabled_pass: Sequence[str] = (),
        config: Mapping[str, Any] | None = None,
        instruments: Sequence[Any] = (),
    ) -> None:
        if not isinstance(opt_level, int) or isinstance(opt_level, bool):
            raise TypeError(f"PassContext: opt_level must be an int, got {opt_level!r}")
        for names, what in ((required_pass, "required_pass"), (disabled_pass, "disabled_pass")):
            if isinstance(names, str):
                raise TypeError(f"PassContext: {what} is a list of pass names, not a string")
        self.opt_level = opt_level
        self.required_pass = tuple(required_pass)
        self.disabled_pass = tuple(disabled_pass)
        self.config: Mapping[str, Any] = MappingProxyType(_check_config(config or {}))
        self.instruments: tuple[Any, ...] = tuple(instruments)

    @staticmethod
    def current() -> PassContext:
        """The innermost active context (a default `PassContext()` outside any).

        Example:
            >>> PassContext.current().opt_level
            2
        """
        if not _STACK.contexts:
            _STACK.contexts.append(PassContext())
        return _STACK.contexts[-1]

    def __enter__(self) -> PassContext:
        entered: list[Any] = []
        try:
            for inst in self.instruments:
                inst.enter_pass_ctx()
                entered.append(inst)
        except BaseException:
            for inst in reversed(entered):
                inst.exit_pass_ctx()
            raise
        PassContext.current()  # make sure the default context stays at the bottom
        _STACK.contexts.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if _STACK.contexts and _STACK.contexts[-1] is self:
            _STACK.contexts.pop()
        for inst in self.instruments:
            inst.exit_pass_ctx()

    list_configs = staticmethod(list_configs)

    def get_config(self, key: str, default: Any = _MISSING) -> Any:
        """The value of config `key`: set here, else `default`, else the declared default.

        Example:
            >>> PassContext().get_config("example.unroll")  # doctest: +SKIP
            16
        """
        if key in self.config:
            return self.config[key]
        if default is not _MISSING:
            return default
        if key not in _CONFIGS:
            raise UnknownNameError(f"PassContext: unknown config key {key!r}")
        return _CONFIGS[key][1]

    def pass_enabled(self, info: PassInfo) -> bool:
        """Whether a pass described by `info` runs here (TVM's rules, see module doc).

        Example:
            >>> from unity.ir.transform import PassInfo
            >>> PassContext(opt_level=1).pass_enabled(PassInfo(2, "P"))
            False
        """
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return info.opt_level <= self.opt_level

    def override_instruments(self, instruments: Sequence[Any]) -> None:
        """Replace the instruments (old ones get `exit_pass_ctx`, new `enter_pass_ctx`).

        Example:
            >>> from unity.ir.instrument import PassInstrument
            >>> ctx = PassContext()
            >>> ctx.override_instruments([PassInstrument()])
            >>> len(ctx.instruments)
            1
        """
        for inst in self.instruments:
            inst.exit_pass_ctx()
        self.instruments = tuple(instruments)
        for inst in self.instruments:
            inst.enter_pass_ctx()

    def instrument_before_pass(self, mod: IRModule, info: PassInfo) -> bool:
        """Ask instruments `should_run` (not for required passes); if so, `run_before_pass`.

        Example:
            >>> from unity.ir.module import IRModule
            >>> from unity.ir.transform import PassInfo
            >>> PassContext().instrument_before_pass(IRModule(), PassInfo(0, "Simplify"))
            True
        """
        if not self.instruments:
            return True
        should_run = True
        if info.name not in self.required_pass:
            for inst in self.instruments:
                should_run = bool(inst.should_run(mod, info)) and should_run
        if should_run:
            for inst in self.instruments:
                inst.run_before_pass(mod, info)
        return should_run

    def instrument_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        """Call `run_after_pass` on every instrument.

        Example:
            >>> from unity.ir.module import IRModule
            >>> from unity.ir.transform import PassInfo
            >>> PassContext().instrument_after_pass(IRModule(), PassInfo(0, "Simplify"))
        """
        for inst in self.instruments:
            inst.run_after_pass(mod, info)
