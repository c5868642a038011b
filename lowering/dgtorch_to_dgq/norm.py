"""Norm: a `dg.Norm` body (`dgtorch.norm`) partition -> `dgq.norm`.

The norm's float weight and bias become per-channel `gamma` / `beta`
properties (dghw folds them into its requantization).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseArrayBase, FloatAttr, f64
from xdsl.ir import Attribute, Operation

from dg.dialects import dgq, dgtorch
from dg.lowering.dgtorch_to_dgq.common import (
    LegalizePartition,
    feeds_only,
    float_constant,
    per_tensor_source,
)
from dg.lowering.diagnostics import LoweringProblem, Reason

NORM_OPERANDS = Reason(
    "norm-operands",
    "a norm's input must be a per-tensor quantized value, its result quantized "
    "once (dg's quantizer annotates dg.Norm so), and its weight and bias float "
    "constants",
)
NORM_PARAMETER = Reason(
    "norm-parameter", "a parameter of a norm that could not be legalized (see its error)"
)


def _f64_array(values: np.ndarray) -> DenseArrayBase:
    return DenseArrayBase(f64, BytesAttr(np.ascontiguousarray(values, dtype="<f8").tobytes()))


class LegalizeNorm(LegalizePartition):
    """`norm` partition (a `dg.Norm` body) -> `dgq.norm` with its float weight and bias
    as per-channel `gamma` / `beta` (dghw folds them into its requantization).

    It explains a norm left over and the constants only norms read.
    """

    source = dgtorch.NormOp
    reasons = (NORM_OPERANDS, NORM_PARAMETER)

    def explain(self, op: Operation) -> LoweringProblem | None:
        if isinstance(op, dgtorch.NormOp):
            return NORM_OPERANDS.at(op)
        if isinstance(op, dgtorch.ConstantOp) and feeds_only(op, dgtorch.NormOp):
            return NORM_PARAMETER.at(op)
        return None

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.NormOp)
        source = per_tensor_source(op.input)
        gamma = float_constant(op.weight)
        if activation != "none" or source is None or gamma is None:
            return None
        beta = np.zeros_like(gamma) if op.bias is None else float_constant(op.bias)
        if beta is None:
            return None
        return dgq.NormOp.build(
            operands=[source[0]],
            properties={
                "kind": op.kind,
                "eps": FloatAttr(op.eps.value.data, f64),
                "gamma": _f64_array(gamma.reshape(-1)),
                "beta": _f64_array(beta.reshape(-1)),
            },
            result_types=[result_type],
        )
