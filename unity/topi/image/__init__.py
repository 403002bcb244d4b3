"""Image operators on TE.

Example:
    >>> from unity import te, topi
    >>> x = te.placeholder((1, 1, 2, 2), name="x")
    >>> topi.image.resize2d(x, (4, 4)).shape[2].value
    4
"""

from unity.topi.image.grid_sample import grid_sample
from unity.topi.image.resize import resize, resize2d
from unity.topi.image.roi_align import roi_align

__all__ = ["grid_sample", "resize", "resize2d", "roi_align"]
