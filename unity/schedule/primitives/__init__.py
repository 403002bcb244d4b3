"""The schedule primitives, one per file; `Schedule` calls them with its state."""

from unity.schedule.primitives.add_unit_loop import add_unit_loop
from unity.schedule.primitives.annotate import annotate, unannotate
from unity.schedule.primitives.blockize import blockize
from unity.schedule.primitives.cache import cache_read, cache_write
from unity.schedule.primitives.compute_at import compute_at, reverse_compute_at
from unity.schedule.primitives.compute_inline import compute_inline, reverse_compute_inline
from unity.schedule.primitives.decompose_reduction import decompose_reduction
from unity.schedule.primitives.fuse import fuse
from unity.schedule.primitives.lookup import (
    get_block,
    get_child_blocks,
    get_consumers,
    get_loops,
    get_producers,
)  # fmt: skip
from unity.schedule.primitives.loop_kind import bind, parallel, unroll, vectorize
from unity.schedule.primitives.pad_einsum import pad_einsum
from unity.schedule.primitives.reindex import reindex
from unity.schedule.primitives.reorder import reorder
from unity.schedule.primitives.rfactor import rfactor
from unity.schedule.primitives.set_scope import set_scope
from unity.schedule.primitives.split import split
from unity.schedule.primitives.storage_align import storage_align
from unity.schedule.primitives.tensorize import tensorize
from unity.schedule.primitives.transform_block_layout import transform_block_layout
from unity.schedule.primitives.transform_layout import transform_layout

__all__ = [
    "add_unit_loop",
    "annotate",
    "bind",
    "blockize",
    "cache_read",
    "cache_write",
    "compute_at",
    "compute_inline",
    "decompose_reduction",
    "fuse",
    "get_block",
    "get_child_blocks",
    "get_consumers",
    "get_loops",
    "get_producers",
    "pad_einsum",
    "parallel",
    "reindex",
    "reorder",
    "reverse_compute_at",
    "reverse_compute_inline",
    "rfactor",
    "set_scope",
    "split",
    "storage_align",
    "tensorize",
    "transform_block_layout",
    "transform_layout",
    "unannotate",
    "unroll",
    "vectorize",
]  # fmt: skip
