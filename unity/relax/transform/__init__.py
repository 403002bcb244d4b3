"""Relax passes, one per file.

Example:
    >>> from unity.relax.transform import Normalize
    >>> Normalize().__class__.__name__
    'Normalize'
"""

from unity.relax.transform.call_tir_rewrite import CallTIRRewrite
from unity.relax.transform.legalize import LegalizeOps
from unity.relax.transform.normalize import Normalize
from unity.relax.transform.to_non_dataflow import ToNonDataflow

__all__ = ["CallTIRRewrite", "LegalizeOps", "Normalize", "ToNonDataflow"]
from unity.relax.transform.fold_constant import FoldConstant

__all__ += ["FoldConstant"]
from unity.relax.transform.canonicalize_bindings import CanonicalizeBindings
from unity.relax.transform.dead_code_elimination import DeadCodeElimination
from unity.relax.transform.eliminate_common_subexpr import EliminateCommonSubexpr

__all__ += ["CanonicalizeBindings", "DeadCodeElimination", "EliminateCommonSubexpr"]
from unity.relax.transform.bind_params import BindParams
from unity.relax.transform.bind_symbolic_vars import BindSymbolicVars

__all__ += ["BindParams", "BindSymbolicVars"]
from unity.relax.transform.annotate_tir_op_pattern import AnnotateTIROpPattern
from unity.relax.transform.fuse_ops import FuseOps
from unity.relax.transform.fuse_tir import FuseTIR

__all__ += ["AnnotateTIROpPattern", "FuseOps", "FuseTIR"]
from unity.relax.transform.fuse_ops_by_pattern import FuseOpsByPattern, FusionPattern

__all__ += ["FuseOpsByPattern", "FusionPattern"]
from unity.relax.transform.decompose_ops import DecomposeOpsForInference

__all__ += ["DecomposeOpsForInference"]
from unity.relax.transform.lambda_lift import LambdaLift
from unity.relax.transform.remove_unused_parameters import RemoveUnusedParameters

__all__ += ["LambdaLift", "RemoveUnusedParameters"]
from unity.relax.transform.lift_transform_params import LiftTransformParams

__all__ += ["LiftTransformParams"]
from unity.relax.transform.to_mixed_precision import ToMixedPrecision

__all__ += ["ToMixedPrecision"]
