"""Relax pass pipelines, read top to bottom like a recipe.

Example:
    >>> from unity.relax.pipeline import get_pipeline
    >>> [type(p).__name__ for p in get_pipeline("default", opt_level=0).passes]
    ['Normalize', 'LegalizeOps', 'ToNonDataflow', 'CallTIRRewrite']
"""

from __future__ import annotations

from unity.ir.transform import Pass, Sequential
from unity.relax.transform import (
    AlterConvLayout, AnnotateTIROpPattern, CallTIRRewrite, CanonicalizeBindings, Conv2dWinograd,
    DeadCodeElimination, DecomposeConvTranspose, DecomposeOpsForInference, EliminateCommonSubexpr, FoldConstant,
    FoldScaleAxis, FuseOps, FuseTIR, KillAfterLastUse, LegalizeOps, Normalize,
    SplitConvByLiveTaps, StaticPlanBlockMemory, ToNonDataflow, TrimConvTaps, TrimConvTapsBySize,
)  # fmt: skip
from unity.relax.transform.default_gpu_schedules import DefaultGPUSchedules
from unity.relax.transform.default_schedules import DefaultSchedules


def default_pipeline(opt_level: int = 2, target: object = None) -> Sequential:
    """Everything `unity.compile` runs before VM codegen.

    Fusion and memory planning run from `opt_level >= 1`, graph simplification from
    `opt_level >= 2`.  For a ``cuda`` target the default GPU schedules replace the CPU
    ones and run at every opt level (host code may only launch kernels).

    Example:
        >>> [type(p).__name__ for p in default_pipeline(0).passes]
        ['Normalize', 'LegalizeOps', 'ToNonDataflow', 'CallTIRRewrite']
    """
    passes: list[Pass] = [Normalize()]  # struct info everywhere, A-normal form
    if opt_level >= 2:
        passes += [
            DecomposeOpsForInference(),  # batch_norm -> scale and shift
            DecomposeConvTranspose(),  # transposed convs -> one conv over the output phases
            TrimConvTaps(),  # kernel rows/columns that only read padding (wide dilations) dropped
            FoldConstant(),  # ops on constants -> constants
            FoldScaleAxis(),  # per-channel scale and shift -> conv/matmul weights and bias
            TrimConvTapsBySize(),  # atrous convs over a symbolic size: trimmed ones chosen at run time
            SplitConvByLiveTaps(),  # convs reading mostly padding: tap by tap, over the outputs each reaches
            FoldConstant(),  # the trimmed kernels
        ]
        if not _is_cuda(target):
            lanes = _vector_lanes(target)
            passes += [
                AlterConvLayout(lanes),  # convs on NCHW16c data
                Conv2dWinograd(lanes),  # 3x3 / 5x5 stride-1 convs as Winograd F(m x m, r x r)
                FoldConstant(),  # biases padded to whole channel blocks
            ]
        passes += [
            EliminateCommonSubexpr(),  # identical bindings -> one
            CanonicalizeBindings(),  # `y = x` aliases -> x
            DeadCodeElimination(),  # unused bindings and functions dropped
        ]
    passes.append(LegalizeOps())  # op calls -> call_tir of TOPI PrimFuncs
    if opt_level >= 1:
        passes += [
            AnnotateTIROpPattern(),  # op_pattern of every PrimFunc, read from its blocks
            FuseOps(),  # dominator-based groups -> Primitive functions
            FuseTIR(),  # each group -> one PrimFunc
        ]
        if not _is_cuda(target):
            passes += [
                DefaultSchedules(),  # CPU schedule rules for every unscheduled PrimFunc
                DeadCodeElimination(),  # constants that are now passed prepacked
            ]
    if _is_cuda(target):
        passes.append(DefaultGPUSchedules())  # blocks/threads for every unscheduled PrimFunc
    passes += [
        ToNonDataflow(),  # dataflow blocks -> plain binding blocks
        CallTIRRewrite(),  # call_tir -> alloc_tensor + kernel call
    ]
    if opt_level >= 1:
        passes += [
            StaticPlanBlockMemory(),  # intermediates share storage when lifetimes allow
            KillAfterLastUse(),  # kill_tensor / kill_storage after each last use
        ]
    return Sequential(passes, name="relax.default_pipeline")


_PIPELINES = {"default": default_pipeline}


def get_pipeline(name: str = "default", opt_level: int = 2, target: object = None) -> Sequential:
    """The pipeline `name` (`"default"`) for `opt_level` and `target` (None: the CPU).

    Example:
        >>> get_pipeline("default").name
        'relax.default_pipeline'
    """
    if name not in _PIPELINES:
        raise ValueError(f"get_pipeline: unknown pipeline {name!r}; known: {sorted(_PIPELINES)}")
    if target is None:
        return _PIPELINES[name](opt_level)
    return _PIPELINES[name](opt_level, target)


def _vector_lanes(target: object) -> int:
    """float32 lanes of the CPU target's vectors (16 with AVX-512, 8 with AVX2)."""
    from unity.schedule.default.analysis import RuleContext

    return RuleContext.for_target(target).lanes


def _is_cuda(target: object) -> bool:
    """True when `target` (a string, dict or `Target`) is a cuda target."""
    if target is None:
        return False
    from unity.target import Target

    return Target(target).kind == "cuda"
