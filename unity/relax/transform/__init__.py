"""Relax passes, one per file.

Example:
    >>> from unity.relax.transform import Normalize
    >>> Normalize().__class__.__name__
    'Normalize'
"""

from unity.relax.transform.alter_conv_layout import AlterConvLayout
from unity.relax.transform.annotate_tir_op_pattern import AnnotateTIROpPattern
from unity.relax.transform.bind_params import BindParams
from unity.relax.transform.bind_symbolic_vars import BindSymbolicVars
from unity.relax.transform.call_tir_rewrite import CallTIRRewrite
from unity.relax.transform.canonicalize_bindings import CanonicalizeBindings
from unity.relax.transform.conv2d_winograd import Conv2dWinograd
from unity.relax.transform.convert_layout import ConvertLayout
from unity.relax.transform.convert_to_dataflow import ConvertToDataflow
from unity.relax.transform.dead_code_elimination import DeadCodeElimination
from unity.relax.transform.decompose_conv_transpose import DecomposeConvTranspose
from unity.relax.transform.decompose_ops import DecomposeOpsForInference
from unity.relax.transform.eliminate_common_subexpr import EliminateCommonSubexpr
from unity.relax.transform.fold_constant import FoldConstant
from unity.relax.transform.fold_scale_axis import FoldScaleAxis
from unity.relax.transform.fuse_ops import FuseOps
from unity.relax.transform.fuse_ops_by_pattern import FuseOpsByPattern, FusionPattern
from unity.relax.transform.fuse_tir import FuseTIR
from unity.relax.transform.kill_after_last_use import KillAfterLastUse
from unity.relax.transform.lambda_lift import LambdaLift
from unity.relax.transform.legalize import LegalizeOps
from unity.relax.transform.lift_transform_params import LiftTransformParams
from unity.relax.transform.normalize import Normalize
from unity.relax.transform.remove_unused_parameters import RemoveUnusedParameters
from unity.relax.transform.static_plan_block_memory import StaticPlanBlockMemory
from unity.relax.transform.to_mixed_precision import ToMixedPrecision
from unity.relax.transform.to_non_dataflow import ToNonDataflow
from unity.relax.transform.split_conv_by_live_taps import SplitConvByLiveTaps
from unity.relax.transform.trim_conv_taps import TrimConvTaps
from unity.relax.transform.trim_conv_taps_by_size import TrimConvTapsBySize

__all__ = [
    "AlterConvLayout",
    "AnnotateTIROpPattern",
    "BindParams",
    "BindSymbolicVars",
    "CallTIRRewrite",
    "CanonicalizeBindings",
    "Conv2dWinograd",
    "ConvertLayout",
    "ConvertToDataflow",
    "DeadCodeElimination",
    "DecomposeConvTranspose",
    "DecomposeOpsForInference",
    "EliminateCommonSubexpr",
    "FoldConstant",
    "FoldScaleAxis",
    "FuseOps",
    "FuseOpsByPattern",
    "FuseTIR",
    "FusionPattern",
    "KillAfterLastUse",
    "LambdaLift",
    "LegalizeOps",
    "LiftTransformParams",
    "Normalize",
    "RemoveUnusedParameters",
    "SplitConvByLiveTaps",
    "StaticPlanBlockMemory",
    "ToMixedPrecision",
    "ToNonDataflow",
    "TrimConvTaps",
    "TrimConvTapsBySize",
]
