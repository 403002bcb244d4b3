"""`Target`: what to compile for (`llvm` = the host CPU with its features, or `cuda`).

Spellings follow TVM: `Target("llvm")`, `Target("llvm -mcpu=znver4 -num-cores=2")`,
`Target("llvm -mattr=+avx2,+fma")`, `Target("cuda -arch=sm_90")`, or a dict
`{"kind": "llvm", "mcpu": "skylake-avx512"}`.

Example:
    >>> from unity.target import Target
    >>> Target("cuda -arch=sm_90").arch
    'sm_90'
    >>> Target("llvm -num-cores=4").num_cores
    4
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_KEYS: dict[str, dict[str, type]] = {
    "llvm": {"mcpu": str, "mattr": str, "mtriple": str, "num-cores": int, "opt-level": int},
    "cuda": {"arch": str, "max-threads-per-block": int, "max-shared-memory-per-block": int},
}
"""Options each target kind accepts, with their types."""


class Target:
    """A compilation target: `kind` plus typed options.

    Attributes:
        kind: `"llvm"` or `"cuda"`.
        options: The options given (`{"mcpu": "znver4", "num-cores": 2}`).

    Example:
        >>> t = Target({"kind": "llvm", "num-cores": 2})
        >>> t.kind, str(t)
        ('llvm', 'llvm -num-cores=2')
    """

    __slots__ = ("kind", "options")

    def __init__(self, spec: Target | str | Mapping[str, Any]) -> None:
        if isinstance(spec, Target):
            kind, options = spec.kind, dict(spec.options)
        elif isinstance(spec, str):
            kind, options = _parse(spec)
        elif isinstance(spec, Mapping):
            options = {str(k).replace("_", "-"): v for k, v in spec.items()}
            kind = str(options.pop("kind", ""))
        else:
            raise TypeError(f"Target: expected a string or dict, got {type(spec).__name__}")
        if kind not in _KEYS:
            raise ValueError(f"Target: unknown kind {kind!r}; expected one of {sorted(_KEYS)}")
        self.kind = kind
        self.options = {key: _check(kind, key, value) for key, value in options.items()}

    def __str__(self) -> str:
        return " ".join([self.kind, *(f"-{k}={v}" for k, v in self.options.items())])

    def __repr__(self) -> str:
        return f'Target("{self}")'

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Target) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    # -- llvm ------------------------------------------------------------------------------
    @property
    def mcpu(self) -> str:
        """The CPU name for LLVM: `-mcpu`, else the host's (e.g. `"znver4"`)."""
        return self.options.get("mcpu") or _host()[0]

    @property
    def features(self) -> str:
        """LLVM feature string: the host's features (when no `-mcpu` is given) plus `-mattr`.

        Example:
            >>> "+avx2" in Target("llvm -mattr=+avx2").features
            True
        """
        base = _host()[1] if "mcpu" not in self.options else ""
        extra = self.options.get("mattr", "")
        if self.triple.startswith(("x86_64", "i686")) and "sse4a" not in extra:
            extra = ",".join(part for part in (_NO_SSE4A, extra) if part)
        return ",".join(part for part in (base, extra) if part)

    @property
    def triple(self) -> str:
        """The LLVM target triple (`-mtriple`, else the process's)."""
        return self.options.get("mtriple") or _host()[2]

    @property
    def num_cores(self) -> int:
        """Cores to run parallel loops on (`-num-cores`, else this machine's)."""
        from unity.runtime.thread_pool import num_cores

        return int(self.options.get("num-cores") or num_cores())

    @property
    def opt_level(self) -> int:
        """LLVM optimization level (default 3)."""
        return int(self.options.get("opt-level", 3))

    def has_feature(self, name: str) -> bool:
        """True when the feature string enables `name` (`"avx512f"`).

        Example:
            >>> Target("llvm -mcpu=x86-64 -mattr=+avx2").has_feature("avx2")
            True
        """
        state = False
        for part in self.features.split(","):  # the last mention wins, as in LLVM
            if part[1:] == name:
                state = part[0] == "+"
        return state

    # -- cuda ------------------------------------------------------------------------------
    @property
    def arch(self) -> str | None:
        """The CUDA architecture (`"sm_90"`), or None when not given."""
        return self.options.get("arch")


_NO_SSE4A = "-sse4a"
"""Turned off on x86 unless `-mattr` names it: LLVM lowers some `<N x i1>` masks (a
vectorized pad's border test) with SSE4a's `insertq`, which on Zen 3 made a 3x3
depthwise conv's pad copy 15x slower (0.29 ms against 0.019 ms without it)."""


def _parse(text: str) -> tuple[str, dict[str, Any]]:
    kind, *flags = text.split()
    options: dict[str, Any] = {}
    for flag in flags:
        if not flag.startswith("-") or "=" not in flag:
            raise ValueError(f"Target({text!r}): expected -key=value, got {flag!r}")
        key, value = flag.lstrip("-").split("=", 1)
        options[key] = value
    return kind, options


def _check(kind: str, key: str, value: Any) -> Any:
    expected = _KEYS[kind].get(key)
    if expected is None:
        raise ValueError(
            f"Target {kind}: unknown option -{key}; expected one of "
            f"{', '.join('-' + k for k in _KEYS[kind])}"
        )
    try:
        return expected(value)
    except ValueError:
        raise ValueError(f"Target {kind}: -{key}={value} is not a {expected.__name__}") from None


_HOST: tuple[str, str, str] | None = None


def _host() -> tuple[str, str, str]:
    """(cpu name, feature string, triple) of this machine, from llvmlite (cached)."""
    global _HOST
    if _HOST is None:
        import llvmlite.binding as llvm

        _HOST = (
            llvm.get_host_cpu_name(),
            llvm.get_host_cpu_features().flatten(),
            llvm.get_process_triple(),
        )
    return _HOST
