"""dghw.norm: integer square roots and the normalized fixed-point form."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from xdsl.interpreter import (
    Interpreter,
    impl,
    register_impls,
)

from dg.dialects import dghw
from dg.runtime.kernels.common import (
    INT64_MAX,
    KernelFunctions,
    dense_array_values,
    runs_in_torch,
)
from dg.runtime.threads import run_numpy_in_parts

NORM_BLOCK = 1 << 17
"""Elements `NormPlan.apply` handles at a time (whole rows), its int64 temporaries (1 MB each)
in a core's L2 cache. Measured on Llama s256 at batch 32 (1 / 2 threads): whole maps
159 / 170 ms, blocks of 2^15 141 / 160 (each row's few-element passes cost Python calls),
2^17 111 / 71."""

_SHIFT_THRESHOLDS = np.left_shift(np.int64(1), np.arange(22, 63, 2, dtype=np.int64))
"""2^22, 2^24, ..., 2^62: D reaches 2^(20 + 2k) exactly when t >= k (`norm_shift`)."""

_ROUNDING_TERMS = np.array([(1 << t) >> 1 for t in range(len(_SHIFT_THRESHOLDS) + 1)], np.int64)
"""2^(t-1) for each shift t that `norm_shift` gives, 0 for t = 0: one lookup per row."""


def norm_shift(d: np.ndarray) -> np.ndarray:
    """t = max(0, floor((bitlen(d) - 21) / 2)) of non-negative int64 `d`, exactly: t >= k
    iff bitlen(d) >= 21 + 2k iff d >= 2^(20 + 2k), so t counts the thresholds at or
    below d (one comparison search, no float rounding)."""
    return _SHIFT_THRESHOLDS.searchsorted(d, side="right")


def root_of_quotient(q: np.ndarray) -> np.ndarray:
    """R = isqrt(q) for int64 q <= 2^42, as the truncated float64 square root; for any q
    <= 2^62 a value <= 2^31 (docs/dghw.md, "dghw.norm").

    q <= 2^42 < 2^53 converts exactly and its root k = isqrt(q) is at most 2^21;
    sqrt(q) < k + 1 - 1 / (2 (k + 1)), a gap above 2^-23, while the correctly rounded
    square root errs by at most 2^-32 there, so it truncates to k. A row with V = 0
    has A = 0 and Z = 0 whatever R, and q <= 2^62 converts to at most 2^62, whose
    root is 2^31.
    """
    return np.sqrt(q).astype(np.int64)  # numpy's sqrt of int64 converts it to float64


def normalized_fixed_point(x: np.ndarray, kind: str, input_zp: int, eps: int) -> np.ndarray:
    """`dghw.norm`'s Z = round(z * 2^21) per element, z the normalized value (docs/dghw.md).

    Every step is exact int64 arithmetic for rows of up to MAX_NORM_EXTENT:
    |A| < 2^20, V * 2^20 < 2^60, D < 2^62, R <= 2^31. The per-element part runs
    in place on the centered input, as Z = (n R x + (h - (Σx) R)) >> t, h the
    rounding term: n R x - (Σx) R is A R (layer; rms has no Σx term), and each
    term stays below 2^52 (n R |x| <= 2^12 * 2^31 * 255, |Σx| R <= 2^20 * 2^31).
    """
    centered = np.subtract(x, input_zp, dtype=np.int64)
    n = centered.shape[-1]
    squares = np.einsum("...i,...i->...", centered, centered)[..., None]  # < 2^28: exact
    if kind == "layer":
        # einsum: twice as fast as np.add.reduce over 256 rows of 32 (SIMD over the row)
        total = np.einsum("...i->...", centered)[..., None]  # exact int64
        v = n * squares - total * total
    else:
        v = n * squares
    d = (v << dghw.NORM_EPS_BITS) + eps
    # max(0, ceil(bitlen / 2) - 11) = max(0, floor((bitlen - 21) / 2))
    t = norm_shift(d)
    r = root_of_quotient((1 << 62) // (d >> (2 * t)))
    offset = _ROUNDING_TERMS.take(t)  # the rounding term 2^(t-1); 0 for t = 0
    if kind == "layer":
        offset -= total * r
    centered *= n * r
    centered += offset
    shift_right(centered, t)
    return centered


def shift_right(z: np.ndarray, shift: np.ndarray | int) -> None:
    """z >>= shift in place (int64, arithmetic), by one shift or one per row: torch's from
    `TORCH_MIN_ELEMENTS`, several times faster than numpy's broadcast shift (not vectorized),
    numpy's below it, whose call costs less. The same integers."""
    if not runs_in_torch(z.size):
        np.right_shift(z, shift, out=z)
        return
    by = torch.from_numpy(shift) if isinstance(shift, np.ndarray) else shift
    torch.from_numpy(z).bitwise_right_shift_(by)


def clamped_to_int8(z: np.ndarray) -> np.ndarray:
    """int64 `z` clamped to int8's range (in place), as int8: in torch's passes from
    `TORCH_MIN_ELEMENTS` (about twice as fast as numpy's), numpy's below it."""
    if not runs_in_torch(z.size):
        np.maximum(z, -128, out=z)
        np.minimum(z, 127, out=z)
        return z.astype(np.int8)
    return torch.from_numpy(z).clamp_(-128, 127).to(torch.int8).numpy()


@dataclass(frozen=True)
class NormPlan:
    """A `dghw.norm`'s properties, read once, with its zero point folded when int64 allows.

        ((Z m + bias + 2^(s-1)) >> s) + output_zp = (Z m + offset) >> s,
        offset = bias + 2^(s-1) + (output_zp << s)

    (adding k 2^s before a floor division by 2^s adds k after it). |Z| < 2^28
    (docs/dghw.md) and |m| < 2^31, so |Z m| < 2^59; the zero point is folded
    only when 2^59 + max |offset| stays in int64, else added after the shift.
    """

    kind: str
    """"layer" or "rms"."""
    input_zp: int
    eps: int
    multiplier: np.ndarray
    """int64 [n]."""
    offset: np.ndarray
    """int64 [n]: bias + 2^(shift-1), plus output_zp << shift when folded."""
    shift: int
    output_zp: int
    """What is left to add after the shift: 0 when folded into `offset`."""

    @staticmethod
    def prepare(op: dghw.NormOp) -> NormPlan:
        shift, output_zp = op.shift.value.data, op.output_zp.value.data
        multiplier = dense_array_values(op.multiplier, "<i4", np.int64)
        rounded = [int(b) + (1 << (shift - 1)) for b in dense_array_values(op.bias, "<i8")]
        folded = [b + (output_zp << shift) for b in rounded]
        fits = (1 << 59) + max((abs(b) for b in folded), default=0) <= INT64_MAX
        return NormPlan(
            kind=op.kind.data,
            input_zp=op.input_zp.value.data,
            eps=op.eps.value.data,
            multiplier=multiplier,
            offset=np.array(folded if fits else rounded, dtype=np.int64),
            shift=shift,
            output_zp=0 if fits else output_zp,
        )

    def apply(self, x: np.ndarray) -> np.ndarray:
        """The norm of x. A map of more than two `NORM_BLOCK`s goes a block of whole rows at
        a time (each row's result depends on that row alone), its int64 temporaries in
        cache, the blocks split over the caller's threads (`PARALLEL_NUMPY_WORK`)."""
        if x.size <= 2 * NORM_BLOCK:
            return self.apply_to_rows(x)
        n = x.shape[-1]
        rows = x.reshape(-1, n)
        out = np.empty(rows.shape, np.int8)
        step = max(1, NORM_BLOCK // n)

        def normalize(starts: Sequence[int]) -> None:
            for start in starts:
                out[start : start + step] = self.apply_to_rows(rows[start : start + step])

        run_numpy_in_parts(normalize, range(0, len(rows), step), x.size)
        return out.reshape(x.shape)

    def apply_to_rows(self, x: np.ndarray) -> np.ndarray:
        z = normalized_fixed_point(x, self.kind, self.input_zp, self.eps)
        z *= self.multiplier
        z += self.offset
        shift_right(z, self.shift)
        if self.output_zp:
            z += self.output_zp
        return clamped_to_int8(z)


@register_impls
@dataclass
class NormFunctions(KernelFunctions):
    """The norm family's dghw ops."""

    @impl(dghw.NormOp)
    def run_norm(
        self, interpreter: Interpreter, op: dghw.NormOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (self.planned(op, NormPlan.prepare).apply(x),)
