"""What the default rules read from a PrimFunc: its blocks, their loops and roles.

Every rule decides from structure only (iteration types, how loop variables index the
buffers), never from a block or function name.  `block_infos` lists the blocks of the
root scope with the loops above each; a function whose blocks do not each sit alone
under their own perfect loop nest (one already scheduled by hand, say) gets no
`BlockInfo` list at all, and only the fallback rule applies to it.

Example:
    >>> infos = block_infos(func)  # doctest: +SKIP
    >>> [(b.name, b.is_reduction) for b in infos]  # doctest: +SKIP
    [('T_pad_data', False), ('T_conv2d', True)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from unity.ir.structural import structural_equal
from unity.schedule.analysis import as_int, child_realizes, linear, used_vars
from unity.tir.buffer import Buffer
from unity.tir.expr import Add, BufferLoad, Cast, IterType, Mul, PrimExpr, Var
from unity.tir.function import PrimFunc
from unity.tir.functor import post_order_visit
from unity.tir.stmt import Block, BlockRealize, BufferStore, For, ForKind

__all__ = [
    "BlockInfo",
    "RuleContext",
    "block_infos",
    "const_extent",
    "loads_of",
    "root_block",
    "rows_fusable",
    "stride_in",
    "strip_casts",
    "vector_registers",
    "work_size",
]


@dataclass
class BlockInfo:
    """One block of the root scope and the loops directly above it.

    Attributes:
        name: The block's name (used only to get a handle, never to choose a rule).
        realize: Its `BlockRealize`.
        loops: The loops above it in the root scope, outermost first.
        loop_kinds: Per loop, `"S"` (feeds only spatial iter vars), `"R"` (feeds a
            reduction iter var) or `"O"` (feeds none: a unit or unused loop).

    Example:
        >>> info = block_infos(func)[0]; info.name, info.loop_kinds  # doctest: +SKIP
        ('C', ['S', 'S', 'R'])
    """

    name: str
    realize: BlockRealize
    loops: list[For]
    loop_kinds: list[str]

    @property
    def block(self) -> Block:
        """The `Block` itself."""
        return self.realize.block

    @property
    def is_reduction(self) -> bool:
        """True when the block has a reduction (or opaque) iteration variable."""
        return any(iv.iter_type is not IterType.SPATIAL for iv in self.block.iter_vars)

    @property
    def store(self) -> BufferStore | None:
        """The block body's single `BufferStore`, or None when the body is anything else."""
        body = self.block.body
        return body if isinstance(body, BufferStore) else None

    @property
    def output(self) -> Buffer | None:
        """The one buffer the block writes (None when it writes several)."""
        writes = {r.buffer for r in self.block.writes}
        return next(iter(writes)) if len(writes) == 1 else None

    def loop_of(self, iter_var: Var) -> int | None:
        """Index of the loop an iteration variable is bound to directly, if any.

        Example:
            >>> info.loop_of(info.block.iter_vars[0].var)  # doctest: +SKIP
            0
        """
        for iv, value in zip(self.block.iter_vars, self.realize.iter_values):
            if iv.var is iter_var and isinstance(value, Var):
                for n, loop in enumerate(self.loops):
                    if loop.loop_var is value:
                        return n
        return None

    def iter_var(self, loop: For) -> Var | None:
        """The iteration variable bound to exactly `loop`'s variable, if any.

        Example:
            >>> info.iter_var(info.loops[-1]).name  # doctest: +SKIP
            'v_i1'
        """
        for iv, value in zip(self.block.iter_vars, self.realize.iter_values):
            if value is loop.loop_var:
                return iv.var
        return None

    def trivial_binding(self) -> bool:
        """True when every iteration variable is bound to exactly one loop var, in order.

        Example:
            >>> info.trivial_binding()  # doctest: +SKIP
            True
        """
        loop_vars = [loop.loop_var for loop in self.loops]
        values = list(self.realize.iter_values)
        if len(values) != len(loop_vars) or not all(isinstance(v, Var) for v in values):
            return False
        return all(v is lv for v, lv in zip(values, loop_vars)) and _unit_min(self.loops)


def _unit_min(loops: list[For]) -> bool:
    return all(as_int(loop.min) == 0 and loop.kind is ForKind.SERIAL for loop in loops)


def root_block(func: PrimFunc) -> Block | None:
    """The root block of `func` (the block its body realizes), or None.

    Example:
        >>> root_block(func).name_hint  # doctest: +SKIP
        'root'
    """
    body = func.body
    if isinstance(body, BlockRealize):
        return body.block
    return None


def block_infos(func: PrimFunc) -> list[BlockInfo] | None:
    """The blocks of the root scope, each with its loop nest; None if not in canonical form.

    Canonical: the root scope holds a sequence of perfect loop nests, each ending in
    exactly one block (no `init` sharing, no loop above two blocks), every loop serial.

    Example:
        >>> [b.name for b in block_infos(func)]  # doctest: +SKIP
        ['T_add']
    """
    root = root_block(func)
    scope = root.body if root is not None else func.body
    realizes = child_realizes(scope)
    infos: list[BlockInfo] = []
    for realize in realizes:
        loops = _loops_above(scope, realize)
        if loops is None:
            return None
        infos.append(BlockInfo(realize.block.name_hint, realize, loops, _kinds(realize, loops)))
    names = [b.name for b in infos]
    if len(set(names)) != len(names):
        return None
    return infos


def _loops_above(scope, realize: BlockRealize) -> list[For] | None:
    from unity.schedule.tree import find_path
    from unity.tir.stmt import SeqStmt

    path = find_path(scope, lambda s: s is realize)
    if path is None:
        return None
    loops: list[For] = []
    for s in path[:-1]:
        if isinstance(s, For):
            if s.kind is not ForKind.SERIAL or s.thread_binding is not None:
                return None
            loops.append(s)
        elif isinstance(s, SeqStmt):
            if loops:  # a loop over several statements: not a perfect nest
                return None
        elif s is not scope:
            return None
    return loops


def _kinds(realize: BlockRealize, loops: list[For]) -> list[str]:
    kinds = []
    for loop in loops:
        kind = "O"
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if loop.loop_var in used_vars(value):
                kind = "S" if iv.iter_type is IterType.SPATIAL and kind != "R" else "R"
        kinds.append(kind)
    return kinds


def const_extent(loop: For) -> int | None:
    """The loop's extent as an int, or None when symbolic.

    Example:
        >>> const_extent(loop)  # doctest: +SKIP
        16
    """
    return as_int(loop.extent)


def work_size(info: BlockInfo) -> int | None:
    """Iterations of the block's loop nest, or None when an extent is symbolic.

    Example:
        >>> work_size(info)  # doctest: +SKIP
        4096
    """
    total = 1
    for loop in info.loops:
        extent = const_extent(loop)
        if extent is None:
            return None
        total *= extent
    return total


def loads_of(expr_or_stmt) -> list[BufferLoad]:
    """Every `BufferLoad` in an expression or statement, in visiting order.

    Example:
        >>> [l.buffer.name for l in loads_of(info.store.value)]  # doctest: +SKIP
        ['A', 'B']
    """
    out: list[BufferLoad] = []
    post_order_visit(expr_or_stmt, lambda n: out.append(n) if isinstance(n, BufferLoad) else None)
    return out


def stride_in(indices: tuple[PrimExpr, ...], var: Var) -> int | None:
    """Coefficient of `var` in the LAST index, if it appears only there (else None).

    A result of 1 means consecutive `var` values touch consecutive elements.

    Example:
        >>> stride_in((i, j), j)  # doctest: +SKIP
        1
    """
    if not indices:
        return None
    for index in indices[:-1]:
        if var in used_vars(index):
            return None
    lin = linear(indices[-1])
    if lin is None:
        return None
    return lin[0].get(var, 0)


def rows_fusable(info: BlockInfo) -> bool:
    """Whether the block's two innermost loops walk every buffer it touches as one run:
    each access reads ``[..., outer, inner]`` of a buffer whose rows are as long as the
    inner loop (the store too), or uses neither (a broadcast).  Fused, they are one
    contiguous loop: an NCHW image's 14x14 pixels as 196, not rows of 14.

    Example:
        >>> rows_fusable(info)  # doctest: +SKIP
        True
    """
    if len(info.loops) < 2 or info.store is None:
        return False
    outer, inner = info.iter_var(info.loops[-2]), info.iter_var(info.loops[-1])
    if outer is None or inner is None:
        return False
    for access in [info.store, *loads_of(info.store.value)]:
        indices, shape = access.indices, access.buffer.shape
        used = [k for k, index in enumerate(indices) if used_vars(index) & {outer, inner}]
        if not used:
            continue
        if used != [len(indices) - 2, len(indices) - 1]:
            return False
        if indices[-2] is not outer or indices[-1] is not inner:
            return False
        if not structural_equal(shape[-1], info.loops[-1].extent, map_free_vars=False):
            return False
    return True


def strip_casts(expr: PrimExpr) -> PrimExpr:
    """`expr` without the casts around it (``float32(float16 x)`` -> ``x``).

    Example:
        >>> from unity.tir.expr import Cast, Var
        >>> x = Var("x", "float16")
        >>> strip_casts(Cast("float32", x)) is x
        True
    """
    while isinstance(expr, Cast):
        expr = expr.value
    return expr


def multiply_accumulate(info: BlockInfo) -> tuple[PrimExpr, PrimExpr] | None:
    """The two factors of a reduction block ``Y[i] = Y[i] + a * b`` bound to its own loops
    (casts stripped; three loads in all), else None.

    Example:
        >>> from unity import te
        >>> A = te.placeholder((4, 3), name="A")
        >>> k = te.reduce_axis((0, 3), name="k")
        >>> B = te.compute((4,), lambda i: te.sum(A[i, k] * A[i, k], axis=k), name="B")
        >>> [f.buffer.name for f in multiply_accumulate(block_infos(te.create_prim_func([A, B]))[0])]
        ['A', 'A']
    """
    store = info.store
    if store is None or not info.is_reduction or not info.trivial_binding():
        return None
    value = store.value
    if not (isinstance(value, Add) and isinstance(value.a, BufferLoad)):
        return None
    acc, prod = value.a, strip_casts(value.b)
    if acc.buffer is not store.buffer or not isinstance(prod, Mul) or len(loads_of(value)) != 3:
        return None
    if any(a is not b for a, b in zip(acc.indices, store.indices)):
        return None
    return strip_casts(prod.a), strip_casts(prod.b)


def vector_registers(lanes: int) -> int:
    """Vector registers of a target whose float32 vectors have `lanes` lanes: 32 with
    AVX-512 (16 lanes), else 16 (AVX2, SSE).

    Example:
        >>> vector_registers(16), vector_registers(8)
        (32, 16)
    """
    return 32 if lanes >= 16 else 16


@dataclass(frozen=True)
class RuleContext:
    """What the rules know about the target.

    Attributes:
        lanes: float32 lanes of one vector register (16 with AVX-512, 8 with AVX2).
        num_cores: Threads a parallel loop runs on.
        knobs: Tuner settings that replace a rule's choice (see `knob`).
        parallel_min_work: Loop-nest iterations below which a nest stays serial (a
            parallel launch costs more than it saves).  With workers that spin ~1 ms
            and are bound to their cores, a launch costs ~1 us: 2^13 against the
            2^18 chosen for sleeping workers made ShuffleNet 6-8% faster, Inception v2
            and SqueezeNet 1-6% (same-process A/B, interleaved).
        parallel_min_copy: Elements below which an injective nest (a copy, an
            elementwise op, a concat, padding) stays serial: it moves memory at a cycle
            or so an element, and a second thread that first pulls its half of the
            operands from the other core's cache loses to one that streams them all
            (concat + relu on Zen 3: 26K elements 2.1x and 53K 1.5x faster serial,
            175K 1.3x faster parallel; ShuffleNet, SqueezeNet, DenseNet-121 and
            Inception v2 0.4-5% faster in same-process A/B against 2^13).

    Example:
        >>> RuleContext(lanes=8).lanes
        8
    """

    lanes: int = 16
    num_cores: int = 2
    parallel_min_work: int = 1 << 13
    parallel_min_copy: int = 1 << 16
    knobs: tuple[tuple[str, Any], ...] = ()
    """Choices a tuner fixes in place of a rule's own (``("conv.tile", (32, 8))``, ...)."""

    def knob(self, name: str, default: Any = None) -> Any:
        """The value a tuner set for `name`, else `default`.

        Example:
            >>> RuleContext(knobs=(("conv.tile", (32, 8)),)).knob("conv.tile")
            (32, 8)
        """
        return dict(self.knobs).get(name, default)

    @property
    def vector_registers(self) -> int:
        """Vector registers of the target: 32 with AVX-512, else 16 (AVX2, SSE).

        Example:
            >>> RuleContext(lanes=8).vector_registers
            16
        """
        return vector_registers(self.lanes)

    @staticmethod
    def for_target(target=None) -> RuleContext:
        """The context of an `llvm` target (the host CPU when None).

        Example:
            >>> RuleContext.for_target("llvm -mattr=+avx2,-avx512f").lanes in (8, 16)
            True
        """
        from unity.target import Target

        t = Target(target if target is not None else "llvm")
        if t.kind != "llvm":
            raise ValueError(f"default schedules: only llvm (CPU) targets are supported, got {t}")
        lanes = 16 if t.has_feature("avx512f") else 8 if t.has_feature("avx") else 4
        return RuleContext(lanes=lanes, num_cores=max(1, t.num_cores))
