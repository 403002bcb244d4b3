"""Legalize the signal-processing ops of `relax.op.signal` to `topi.signal` kernels.

Example:
    >>> from unity.relax.op import signal as S
    >>> S.dft.get_attr("legalize").__name__
    'legalize_dft'
"""

from __future__ import annotations

from unity import topi
from unity.relax.op import signal as S
from unity.relax.transform.legalize_ops.common import attrs_rule, register_legalize

register_legalize(S.dft, attrs_rule(topi.signal.dft, lambda a: {
    "axis": a.axis, "length": a.length, "inverse": a.inverse, "onesided": a.onesided}))
register_legalize(S.stft, attrs_rule(topi.signal.stft, lambda a: {
    "frame_step": a.frame_step, "frame_length": a.frame_length, "onesided": a.onesided}))
register_legalize(S.mel_weight_matrix, attrs_rule(topi.signal.mel_weight_matrix, lambda a: {
    "num_mel_bins": a.num_mel_bins, "dft_length": a.dft_length, "dtype": a.dtype}))
