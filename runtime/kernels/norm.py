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
    clip_in_place,
    dense_array_values,
    runs_in_torch,
)
from dg.runtime.kernels.quantization import F64_EXACT_LIMIT
from dg.runtime.threads import run_blocks_in_parts

NORM_BLOCK = 1 << 17
"""Elements `NormPlan.apply` handles at a time (whole rows), its int64 temporaries (1 MB each)
in a core's L2 cache. Measured on Llama s256 at batch 32 (1 / 2 threads): whole maps
159 / 170 ms, blocks of 2^15 141 / 160 (each row's few-element passes cost Python calls),
2^17 111 / 71."""

NORM_FLOAT_MIN_ELEMENTS = 1 << 11
"""Elements from which `NormPlan` takes the float64 form where it is exact: below, its few
more row-level calls cost more than its passes save (alone, against int64: rows of 32, 8
rows 1.07 of the time, 32 rows 1.00, 64 rows 0.95, 256 rows 0.83; rows of 192 and 128, 8
rows 0.98 and 1.00, 64 rows 0.77 and 0.82, 197 rows 0.86 and 0.73)."""

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
    # einsum: twice as fast as np.add.reduce over 256 rows of 32 (SIMD over the row)
    total = np.einsum("...i->...", centered)[..., None] if kind == "layer" else None
    t, r = row_scales(n, squares, total, eps)
    offset = _ROUNDING_TERMS.take(t)  # the rounding term 2^(t-1); 0 for t = 0
    if total is not None:
        offset -= total * r
    centered *= n * r
    centered += offset
    shift_right(centered, t)
    return centered


def row_scales(
    n: int, squares: np.ndarray, total: np.ndarray | None, eps: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's shift t and root R from its int64 Σx² and Σx (None for rms), [..., 1]."""
    v = n * squares if total is None else n * squares - total * total
    d = (v << dghw.NORM_EPS_BITS) + eps
    # max(0, ceil(bitlen / 2) - 11) = max(0, floor((bitlen - 21) / 2))
    t = norm_shift(d)
    return t, root_of_quotient((1 << 62) // (d >> (2 * t)))


_INVERSE_POWERS = np.ldexp(1.0, -np.arange(len(_SHIFT_THRESHOLDS) + 1))
"""2^-t for each shift t that `norm_shift` gives."""

_HALVES = np.array([0.0] + [0.5] * len(_SHIFT_THRESHOLDS))
"""2^(t-1) 2^-t, the rounding term on the 2^-t grid: 1/2, 0 for t = 0."""


def normalized_in_float64(x: np.ndarray, kind: str, input_zp: int, eps: int) -> np.ndarray:
    """`normalized_fixed_point` as float64, the same integers Z (docs/dghw.md, "The device
    model's float64 norm"): each step is exact. x - zp (|x - zp| <= 255) and the sums
    (Σx² < 2^28) are integers below 2^53; t and R come from them as in int64
    (`row_scales`); then, on the grid 2^-t, x n R 2^-t (|x n R| < 2^51) plus (h - (Σx)
    R) 2^-t (below 2^52 units, h = 2^(t-1)) is (A R + h) 2^-t exactly, whose floor is
    (A R + h) >> t. numpy vectorizes these float64 passes; int64's per-row shift it does
    not."""
    centered = np.subtract(x, input_zp, dtype=np.float64)
    n = centered.shape[-1]
    squares = np.einsum("...i,...i->...", centered, centered)[..., None].astype(np.int64)
    total = None
    if kind == "layer":
        total = np.einsum("...i->...", centered)[..., None].astype(np.int64)
    t, r = row_scales(n, squares, total, eps)
    root = r * _INVERSE_POWERS.take(t)  # R 2^-t
    offset = _HALVES.take(t)
    if total is not None:
        offset -= total * root
    centered *= n * root
    centered += offset
    return np.floor(centered, out=centered)


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
class FloatNormTail:
    """The output from float64 Z (`normalized_in_float64`) in float64, where that is exact:
    per channel, with offset = bias + 2^(s-1) + (output_zp + 128) 2^s,

        out + 128 = clamp(floor((Z m + offset) 2^-s), 0, 255)

    as fl(fl(Z m 2^-s) + offset 2^-s), clamped to [0, 255], truncated to uint8, its top bit
    flipped (the subtraction of 128 as an int8 pattern). `prepare` takes it only where 2^(s
    + 8) + |m| + |offset| <= 2^53 (docs/dghw.md, "The device model's float64 norm"): then
    every Z whose exact value lies in [-1, 257) is computed without rounding, and as both
    steps are monotone in Z, a Z below (above) the window gets a value below 0 (at least
    256), which the clamp makes 0 (255), as the definition does.
    """

    factor: np.ndarray
    """m 2^-s per channel, float64 [n], exact."""
    offset: np.ndarray
    """offset 2^-s per channel, float64 [n], exact."""

    @staticmethod
    def prepare(
        multiplier: Sequence[int], bias: Sequence[int], shift: int, output_zp: int
    ) -> FloatNormTail | None:
        offsets = [b + (1 << (shift - 1)) + ((output_zp + 128) << shift) for b in bias]
        reach = 1 << (shift + 8)
        for m, offset in zip(multiplier, offsets, strict=True):
            if reach + abs(m) + abs(offset) > F64_EXACT_LIMIT:
                return None
        return FloatNormTail(
            np.ldexp(np.array(multiplier, np.float64), -shift),
            np.ldexp(np.array(offsets, np.float64), -shift),  # integers <= 2^53: exact
        )

    def apply(self, z: np.ndarray) -> np.ndarray:
        """The int8 outputs of float64 Z [..., n] (overwritten)."""
        z *= self.factor
        z += self.offset
        clip_in_place(z, 0.0, 255.0)
        out = z.astype(np.uint8)  # the floor of a value in [0, 255]
        out ^= 0x80
        return out.view(np.int8)


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
    float_tail: FloatNormTail | None
    """The float64 form (`FloatNormTail`), where it is exact."""

    @staticmethod
    def prepare(op: dghw.NormOp) -> NormPlan:
        shift, output_zp = op.shift.value.data, op.output_zp.value.data
        multiplier = dense_array_values(op.multiplier, "<i4", np.int64)
        bias = dense_array_values(op.bias, "<i8").tolist()
        rounded = [b + (1 << (shift - 1)) for b in bias]
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
            float_tail=FloatNormTail.prepare(multiplier.tolist(), bias, shift, output_zp),
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

        def normalize(start: int, end: int, _: None) -> None:
            out[start:end] = self.apply_to_rows(rows[start:end])

        run_blocks_in_parts(len(rows), step, normalize, lambda: None, x.size, numpy=True)
        return out.reshape(x.shape)

    def apply_to_rows(self, x: np.ndarray) -> np.ndarray:
        """The norm of rows x: in float64 (`FloatNormTail`) where it is exact and there are
        at least `NORM_FLOAT_MIN_ELEMENTS` elements, else in int64. The same integers."""
        if self.float_tail is not None and x.size >= NORM_FLOAT_MIN_ELEMENTS:
            z = normalized_in_float64(x, self.kind, self.input_zp, self.eps)
            return self.float_tail.apply(z)
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
