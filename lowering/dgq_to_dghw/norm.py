"""The norm family: `dgq.norm` (dg.Norm, issue 4) -> `dghw.norm`.

eps, gamma and beta move onto the integer grids (`norm_parameters`); a norm
whose parameters the device's integers cannot hold fails the pass with the
reason `NormParameterError` carries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseArrayBase, IntegerAttr, i32, i64
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw, dgq
from dg.lowering.dgq_to_dghw.common import (
    PASS_NAME,
    Emitter,
    device_result,
    i32_array,
    lowered_i8,
)
from dg.lowering.diagnostics import ExplainingPattern, LoweringProblem, Reason, raise_problems

NORM_EPS_TOO_LARGE = Reason(
    "dghw-norm-eps-too-large",
    "eps {eps} is {eps_steps:.3g} squared input steps, more than the device's variance sum "
    "holds for a row of {n} ({limit:.3g}); use a smaller eps",
)
NORM_WEIGHT_TOO_LARGE = Reason(
    "dghw-norm-weight-too-large",
    "weight (up to {g_max:.3g} output steps) or bias (up to {b_max:.3g} output steps) is too "
    "large for the norm's 22-bit multiplier and 61-bit bias; a norm whose outputs are this "
    "far outside the output grid saturates: check the weight and bias",
)
NORM_WEIGHT_SPREAD = Reason(
    "dghw-norm-weight-spread",
    "weight up to {g_max:.3g} output steps spreads the normalized values (up to sqrt({n}) = "
    "{sqrt_n:.3g}) over {spread:.3g} output steps, more than the {max_spread} for which the "
    "device's fixed-point rsqrt stays within one step of the float norm; the output grid is far "
    "finer than this norm's outputs: calibrate on data that exercises the norm, or scale its "
    "weight down",
)


@dataclass(frozen=True)
class NormParameters:
    """`dghw.norm`'s integer parameters for one `dgq.norm` (docs/dghw.md)."""

    eps: int
    multiplier: np.ndarray
    """int32 per channel: round(gamma / scale_out * 2^(shift - 21)), signed."""
    bias: np.ndarray
    """int64 per channel: round(beta / scale_out * 2^shift)."""
    shift: int


class NormParameterError(ValueError):
    """A norm's eps, weight or bias that `dghw.norm`'s integers cannot hold; says why.

    It carries the `Reason` and its fields, so the pass reports it as a problem of the op.
    """

    def __init__(self, reason: Reason, **fields: object):
        super().__init__(reason.message.format(**fields))
        self.reason = reason
        self.fields = fields

    def at(self, op: Operation) -> LoweringProblem:
        """This error as the problem of `op`, the norm it was found in."""
        return self.reason.at(op, **self.fields)


def norm_parameters(
    eps: float, gamma: np.ndarray, beta: np.ndarray, input_scale: float, output_scale: float
) -> NormParameters:
    """The integer parameters of a norm with real `eps`, `gamma`, `beta` from grid
    `input_scale` to grid `output_scale` (`NormParameterError` if there are none).

    eps moves to the device's variance sum D = V * 2^20 (V = n^2 var in units
    of the input step squared); gamma and beta to the output grid with one
    shared shift, the largest that keeps |multiplier| < 2^31 and |bias| <= 2^60
    (2^61 is the verifier's bound; the margin absorbs the rounding).
    """
    n = len(gamma)
    eps_steps = eps / (input_scale * input_scale)
    device_eps = max(1, round(n * n * eps_steps * 2.0**dghw.NORM_EPS_BITS))
    if device_eps > dghw.NORM_MAX_EPS:
        limit = dghw.NORM_MAX_EPS / (n * n * 2.0**dghw.NORM_EPS_BITS)
        raise NormParameterError(NORM_EPS_TOO_LARGE, eps=eps, eps_steps=eps_steps, n=n, limit=limit)
    gamma = np.asarray(gamma, dtype=np.float64) / output_scale
    beta = np.asarray(beta, dtype=np.float64) / output_scale
    g_max, b_max = float(np.abs(gamma).max(initial=0)), float(np.abs(beta).max(initial=0))
    shift = _norm_shift(g_max, b_max)
    _check_norm_precision(g_max, n)
    z_scale = 2.0 ** (shift - dghw.NORM_Z_BITS)
    return NormParameters(
        device_eps,
        np.rint(gamma * z_scale).astype(np.int32),
        np.rint(beta * 2.0**shift).astype(np.int64),
        shift,
    )


NORM_MULTIPLIER_LIMIT = 1 << 22
"""The bound on a norm's |multiplier| the lowering keeps below: 22 bits and the sign, while
the op takes 31. The normalized value Z carries a relative error of about 2^-20 (the
fixed-point rsqrt, docs/dghw.md), so more multiplier bits add nothing to the one-step
promise; fewer keep Z m and the shifted output window within 2^53 for any weight of at
least one output step, where the device model computes the norm in float64."""


def _norm_shift(g_max: float, b_max: float) -> int:
    """The largest shift whose multiplier (gamma, up to `g_max` output steps) stays below
    `NORM_MULTIPLIER_LIMIT` and whose bias (up to `b_max` output steps) fits the verifier's
    bound with margin."""
    lo_shift, hi_shift = dghw.SHIFT_RANGE
    for shift in range(hi_shift, lo_shift - 1, -1):
        z_scale = 2.0 ** (shift - dghw.NORM_Z_BITS)
        if g_max * z_scale < NORM_MULTIPLIER_LIMIT and b_max * 2.0**shift <= dghw.NORM_MAX_BIAS / 2:
            return shift
    raise NormParameterError(NORM_WEIGHT_TOO_LARGE, g_max=g_max, b_max=b_max)


def _check_norm_precision(g_max: float, n: int) -> None:
    """Refuse a norm outside the range where docs/dghw.md proves the one-step promise.

    The normalized value reaches sqrt(n); the fixed-point rsqrt's relative error
    (about 2^-20) times `g_max * sqrt(n)` output steps must stay well below a step.
    """
    spread = g_max * math.sqrt(n)
    if spread > dghw.NORM_MAX_SPREAD:
        raise NormParameterError(
            NORM_WEIGHT_SPREAD,
            g_max=g_max,
            n=n,
            sqrt_n=math.sqrt(n),
            spread=spread,
            max_spread=dghw.NORM_MAX_SPREAD,
        )


def _i64_bytes_array(values: np.ndarray) -> DenseArrayBase:
    return DenseArrayBase(i64, BytesAttr(np.ascontiguousarray(values, dtype="<i8").tobytes()))


class LowerNorm(ExplainingPattern):
    """`dgq.norm` -> `dghw.norm`: eps, gamma and beta moved onto the integer grids."""

    reasons = (NORM_EPS_TOO_LARGE, NORM_WEIGHT_TOO_LARGE, NORM_WEIGHT_SPREAD)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.NormOp, rewriter: PatternRewriter) -> None:
        source = lowered_i8(op.input)
        if source is None:
            return
        result = dgq.per_tensor_element(op.result.type, "result")
        try:
            parameters = norm_parameters(
                op.eps.value.data,
                np.asarray(op.gamma.get_values(), dtype=np.float64),
                np.asarray(op.beta.get_values(), dtype=np.float64),
                source.element.scale,
                result.scale,
            )
        except NormParameterError as error:
            raise_problems(PASS_NAME, [error.at(op)])
        emitter = Emitter(op, rewriter)
        norm = dghw.NormOp.build(
            operands=[source.value],
            properties={
                "kind": op.kind,
                "input_zp": IntegerAttr(source.element.zero_point, i32),
                "output_zp": IntegerAttr(result.zero_point, i32),
                "eps": IntegerAttr(parameters.eps, i64),
                "multiplier": i32_array(parameters.multiplier),
                "bias": _i64_bytes_array(parameters.bias),
                "shift": IntegerAttr(parameters.shift, i32),
            },
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(norm))
