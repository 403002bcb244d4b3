"""Analyses of relax functions.

Example:
    >>> from unity.relax.analysis import well_formed
    >>> from unity.ir import IRModule
    >>> well_formed(IRModule())
    True
"""

from unity.relax.analysis.well_formed import check_well_formed, well_formed
