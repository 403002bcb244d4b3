"""The schedule primitives, one per file; `Schedule` calls them with its state."""

from unity.schedule.primitives.add_unit_loop import add_unit_loop
from unity.schedule.primitives.annotate import annotate, unannotate
from unity.schedule.primitives.cache import cache_read, cache_write
from unity.schedule.primitives.compute_at import compute_at, reverse_compute_at
from unity.schedule.primitives.compute_inline import compute_inline, reverse_compute_inline
from unity.schedule.primitives.decompose_reduction import decompose_reduction
from unity.schedule.primitives.fuse import fuse
from unity.schedule.primitives.lookup import (
    get_block, get_child_blocks, get_consumers, get_loops, get_producers,
)  # fmt: skip
from unity.schedule.primitives.loop_kind import bind, parallel, unroll, vectorize
from unity.schedule.primitives.reorder import reorder
from unity.schedule.primitives.set_scope import set_scope
from unity.schedule.primitives.split import split

__all__ = [
    "add_unit_loop", "annotate", "bind", "cache_read", "cache_write", "compute_at",
    "compute_inline", "decompose_reduction", "fuse", "get_block", "get_child_blocks",
    "get_consumers", "get_loops", "get_producers", "parallel", "reorder",
    "reverse_compute_at", "reverse_compute_inline", "set_scope", "split", "unannotate",
    "unroll", "vectorize",
]  # fmt: skip
