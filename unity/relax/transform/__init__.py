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
