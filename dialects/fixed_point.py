"""Fixed-point arithmetic of dghw, shared by the lowerings and the device model.

Real scales as TOSA multiplier/shift pairs, and TOSA's reciprocal scales.

`dghw.rescale` (TOSA 1.0 RESCALE, SINGLE_ROUND) multiplies by an integer
``multiplier`` and shifts right by ``shift``, so a real factor ``r`` is encoded
as ``r ~= multiplier * 2**-shift``. Every function here works on whole channel
vectors with numpy, because conv and linear rescale once per output channel.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dg.dialects.dghw import SHIFT_RANGE

MULTIPLIER_BITS = 31
"""The multiplier is an int32 in [2^30, 2^31) unless the factor is too small for that."""

MIN_SHIFT, MAX_SHIFT = SHIFT_RANGE


class QuantMathError(ValueError):
    """A real factor that dghw.rescale cannot represent."""


def quantize_multiplier(
    factors: float | Sequence[float] | np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Encode each real factor r > 0 as (multiplier, shift) with r ~= multiplier * 2**-shift.

    The multiplier is the nearest integer to r * 2**shift, normally in
    [2^30, 2^31), which keeps 31 significant bits. When r is so small that
    this would need a shift above 62, the shift is pinned to 62 and the
    multiplier shrinks instead (it rounds to 0 only for r <= 2^-63, where every
    int32 input rescales to 0 anyway). Factors whose multiplier at shift 2
    would round to 2^31 (r >= 2^29 - 2^-3) need a shift below 2 and raise
    QuantMathError.

    Returns two int32 arrays with the shape of `factors`.
    """
    r = np.asarray(factors, dtype=np.float64)
    if not np.all(np.isfinite(r)) or np.any(r <= 0):
        raise QuantMathError(f"rescale factors must be finite and positive, got {r.tolist()}")
    # r = mantissa * 2**exponent with mantissa in [0.5, 1): scaling the mantissa by
    # 2^31 is exact in float64, so rint rounds r * 2**shift to nearest in one step.
    mantissa, exponent = np.frexp(r)
    multiplier = np.rint(np.ldexp(mantissa, MULTIPLIER_BITS))
    shift = MULTIPLIER_BITS - exponent.astype(np.int64)
    # A mantissa just below 1 can round up to 2^31, which does not fit an int32.
    overflow = multiplier == 2.0**MULTIPLIER_BITS
    multiplier = np.where(overflow, 2.0 ** (MULTIPLIER_BITS - 1), multiplier)
    shift = np.where(overflow, shift - 1, shift)
    if np.any(shift < MIN_SHIFT):
        raise QuantMathError(
            f"rescale factor {float(r.max())} is too large: dghw.rescale encodes factors "
            f"up to (2^{MULTIPLIER_BITS} - 1) * 2^-{MIN_SHIFT} only"
        )
    # Tiny factors: keep the largest legal shift and give up leading multiplier bits.
    tiny = shift > MAX_SHIFT
    multiplier = np.where(tiny, np.rint(np.ldexp(r, MAX_SHIFT)), multiplier)
    shift = np.where(tiny, MAX_SHIFT, shift)
    return multiplier.astype(np.int32), shift.astype(np.int32)


MAX_DIVISOR = (1 << 31) - 1
"""Largest divisor `reciprocal_scale` takes: TOSA's avg-pool count fits int32."""


def reciprocal_scale(divisor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TOSA's `reciprocal_scale(d)` for every d in 1..2^31 - 1: (multiplier, shift), int64.

        k = ceil(log2(d))   (2^(k-1) < d <= 2^k; k = 0 for d = 1)
        multiplier = floor(((2^30 + 1) << k) / d),   shift = 30 + k

    k is the bit length of d - 1, which `frexp` returns exactly for integers below 2^53.
    """
    d = divisor.astype(np.int64)
    k = np.frexp((d - 1).astype(np.float64))[1].astype(np.int64)
    return (((1 << 30) + 1) << k) // d, 30 + k
