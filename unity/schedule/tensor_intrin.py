"""`TensorIntrin`: a registered pair of PrimFuncs, what a hardware instruction computes
(`desc`) and how to call it (`impl`), used by `Schedule.tensorize`.

Both functions take the same buffers in the same order.  `desc` is a loop nest with
one block (the computation to recognise); `impl` is any body that computes the same
on its parameter buffers, which `tensorize` binds to the matched regions.

Example:
    >>> TensorIntrin.register("dot_4x4", desc_func, impl_func)  # doctest: +SKIP
    >>> sch.tensorize(ii, "dot_4x4")  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from unity.tir.function import PrimFunc


@dataclass(frozen=True)
class TensorIntrin:
    """A tensor intrinsic: `desc` (what it computes) and `impl` (how).

    Example:
        >>> from unity import tir
        >>> A = tir.decl_buffer((4,), "float32", "A")
        >>> desc = tir.PrimFunc([A], tir.Evaluate(tir.const(0)))
        >>> intrin = TensorIntrin.register("example_noop_4", desc, desc, override=True)
        >>> TensorIntrin.get("example_noop_4") is intrin
        True
    """

    name: str
    desc: PrimFunc
    impl: PrimFunc
    _registry: ClassVar[dict[str, TensorIntrin]] = {}

    @staticmethod
    def register(name: str, desc: PrimFunc, impl: PrimFunc, override: bool = False) -> TensorIntrin:
        """Register `desc`/`impl` under `name`.

        Raises:
            ValueError: the name is taken (without `override`) or the two functions take
                different numbers of buffers.

        Example:
            >>> TensorIntrin.register("dot_4x4", desc_func, impl_func)  # doctest: +SKIP
        """
        if name in TensorIntrin._registry and not override:
            raise ValueError(f"tensor intrinsic {name!r} is already registered")
        if len(desc.buffer_params()) != len(impl.buffer_params()):
            msg = f"tensor intrinsic {name!r}: desc takes {len(desc.buffer_params())} buffers, impl {len(impl.buffer_params())}"
            raise ValueError(msg)
        intrin = TensorIntrin(name, desc, impl)
        TensorIntrin._registry[name] = intrin
        return intrin

    @staticmethod
    def get(name: str) -> TensorIntrin:
        """The intrinsic registered as `name`; KeyError lists the known names.

        Example:
            >>> TensorIntrin.get("dot_4x4").name  # doctest: +SKIP
            'dot_4x4'
        """
        try:
            return TensorIntrin._registry[name]
        except KeyError:
            have = ", ".join(sorted(TensorIntrin._registry)) or "none"
            raise KeyError(f"no tensor intrinsic {name!r} (registered: {have})") from None
