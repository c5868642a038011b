"""Weights: conv2d (dense and depthwise) and linear partitions, and a batch norm folded into
the linear before it.

A conv2d or linear partition becomes `dgq.conv2d` / `dgq.linear` on the
quantized input, weight and bias. A `batch_norm(linear)` (Linear ->
BatchNorm1d) becomes one linear with rescaled weights and bias before that;
a batch norm after a conv2d must already have been folded by torchao.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IntegerType,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dgq, dgtorch
from dg.dialects.common import int_array, is_depthwise, located, shape_of
from dg.lowering.dgtorch_to_dgq.common import (
    LegalizePartition,
    feeds_only,
    float_constant,
    fused_activation,
    per_tensor_source,
    quantized_operands,
    quantized_source,
    symmetric_pad,
)
from dg.lowering.diagnostics import ExplainingPattern, LoweringProblem, Reason
from dg.lowering.pad_folding import where

CONV2D_GROUPS = Reason(
    "conv2d-groups",
    "groups = {groups} with {in_channels} input and {out_channels} output channels is not "
    "supported: only dense (groups = 1) or depthwise (groups = in_channels = out_channels) "
    "convolution is",
)
CONV2D_DILATION = Reason(
    "conv2d-dilation", "dilation {dilation} is not supported: dilation must be 1"
)


def _conv_problem(op: dgtorch.Conv2dOp) -> LoweringProblem | None:
    """Why `op` has no dgq form (grouped but not depthwise, dilated), or None."""
    groups = op.groups.value.data
    in_channels, out_channels = shape_of(op.input)[1], shape_of(op.weight)[0]
    if groups != 1 and not is_depthwise(groups, in_channels, out_channels):
        return CONV2D_GROUPS.at(
            op, groups=groups, in_channels=in_channels, out_channels=out_channels
        )
    dilation = int_array(op.dilation, "dilation")
    if dilation != (1, 1):
        return CONV2D_DILATION.at(op, dilation=list(dilation))
    return None


class LegalizeConv2d(LegalizePartition):
    """`conv2d` partition -> `dgq.conv2d`; torch's symmetric `[ph, pw]` padding becomes
    dgq's `[top, bottom, left, right]`. Dense and depthwise (groups = in = out channels)
    convolutions are supported; other groups and dilated convolutions stay illegal."""

    source = dgtorch.Conv2dOp
    reasons = (CONV2D_GROUPS, CONV2D_DILATION)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return _conv_problem(op) if isinstance(op, dgtorch.Conv2dOp) else None

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.Conv2dOp)
        if _conv_problem(op) is not None:
            return None
        operands = quantized_operands(op.input, op.weight, op.bias)
        if operands is None:
            return None
        groups: dict[str, Attribute] = {} if op.groups.value.data == 1 else {"groups": op.groups}
        return dgq.Conv2dOp.build(
            operands=[operands[0], operands[1], operands[2]],
            properties={
                "stride": op.stride,
                "pad": symmetric_pad(op.padding),
                **groups,
                **fused_activation(activation),
            },
            result_types=[result_type],
        )


class LegalizeLinear(LegalizePartition):
    """`linear` partition -> `dgq.linear`."""

    source = dgtorch.LinearOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.LinearOp)
        operands = quantized_operands(op.input, op.weight, op.bias)
        if operands is None:
            return None
        return dgq.LinearOp.build(
            operands=[operands[0], operands[1], operands[2]],
            properties=fused_activation(activation),
            result_types=[result_type],
        )


# -- batch norm after linear ---------------------------------------------------------------

BATCH_NORM_AFTER_CONV2D = Reason(
    "batch-norm-after-conv2d",
    "a batch_norm after a conv2d must already be folded into it: torchao folds "
    "Conv2d -> BatchNorm2d when the model is prepared (dg.prepare_qat / dg.prepare_ptq)",
)
BATCH_NORM_PLACEMENT = Reason(
    "batch-norm-placement",
    "batch_norm after {producer} is not supported: a batch_norm must directly "
    "follow a linear (Linear -> BatchNorm1d, folded here) or a conv2d (Conv2d -> "
    "BatchNorm2d, folded by torchao when the model is prepared)",
)
LINEAR_BATCH_NORM_NOT_FOLDED = Reason(
    "linear-batch-norm-not-folded",
    "its result feeds a batch_norm that could not be folded into it (see its error)",
)
BATCH_NORM_PARAMETER = Reason(
    "batch-norm-parameter",
    "a parameter of a batch_norm that could not be folded (see its error)",
)
_CANNOT_FOLD = "cannot fold into the '{linear}'{where}: "
BATCH_NORM_SHARED_LINEAR = Reason(
    "batch-norm-shared-linear",
    _CANNOT_FOLD + "a batch_norm folds into a linear only as its only user, but the "
    "linear's result has {uses} uses",
)
BATCH_NORM_RANK = Reason(
    "batch-norm-rank",
    _CANNOT_FOLD + "batch_norm normalizes axis 1, the linear's output features only "
    "for a rank-2 result [batch, features]",
)
BATCH_NORM_UNQUANTIZED_LINEAR = Reason(
    "batch-norm-unquantized-linear",
    _CANNOT_FOLD + "its input, weight and bias must be quantized (a torchao partition)",
)
BATCH_NORM_FLOAT_PARAMETERS = Reason(
    "batch-norm-float-parameters",
    _CANNOT_FOLD + "weight, bias, running_mean and running_var must be float constants",
)
BATCH_NORM_NEGATIVE_FACTOR = Reason(
    "batch-norm-negative-factor",
    _CANNOT_FOLD + "negative batch_norm factors need weights in [{low}, {high}] to negate them",
)
BATCH_NORM_BIAS_RANGE = Reason(
    "batch-norm-bias-range",
    _CANNOT_FOLD + "the folded bias does not fit int32 on the grid input scale x weight scale",
)


@dataclass(frozen=True)
class FoldedLinear:
    """The weight and bias of `batch_norm(linear(x, w, b))` as one linear's."""

    weight: np.ndarray
    weight_element: dgq.UniformQuantizedType
    bias: np.ndarray
    bias_element: dgq.UniformQuantizedType


def _quantized_constant(value: SSAValue | None) -> dgq.ConstantOp | None:
    """The `dgq.constant` that `value` dequantizes, if it is one."""
    source = None if value is None else quantized_source(value)
    owner = None if source is None else source.owner
    return owner if isinstance(owner, dgq.ConstantOp) else None


def _cannot_fold(op: dgtorch.BatchNormOp, reason: Reason, **fields: object) -> LoweringProblem:
    """`reason` for `op`, naming the linear before it that it does not fold into."""
    linear = op.input.owner
    assert isinstance(linear, Operation)
    return reason.at(op, linear=linear.name, where=where(linear), **fields)


def fold_batch_norm(op: dgtorch.BatchNormOp) -> FoldedLinear | LoweringProblem:
    """The linear that `batch_norm(linear)` folds into, or why there is none.

    y = a * (W x + b - mean) + beta with a = gamma / sqrt(var + eps), per
    output feature c. Row c of W keeps its integers and takes the weight
    scale |a_c| * s_c, negating the integers where a_c < 0 (weights are
    symmetric); the real bias a * (b - mean) + beta is requantized to int32
    on the new bias grid, input scale * new weight scale.
    """
    linear = op.input.owner
    assert isinstance(linear, dgtorch.LinearOp)
    uses = linear.result.uses.get_length()
    if uses != 1:
        return _cannot_fold(op, BATCH_NORM_SHARED_LINEAR, uses=uses)
    if len(shape_of(linear.result)) != 2:
        return _cannot_fold(op, BATCH_NORM_RANK)
    source, weight = per_tensor_source(linear.input), _quantized_constant(linear.weight)
    bias = _quantized_constant(linear.bias)
    if source is None or weight is None or (linear.bias is not None and bias is None):
        return _cannot_fold(op, BATCH_NORM_UNQUANTIZED_LINEAR)
    gamma, beta, mean, var = (
        float_constant(v) for v in (op.weight, op.bias, op.running_mean, op.running_var)
    )
    if gamma is None or beta is None or mean is None or var is None:
        return _cannot_fold(op, BATCH_NORM_FLOAT_PARAMETERS)
    factor = gamma / np.sqrt(var + op.eps.value.data)
    return _fold_into_weights(op, factor, beta, mean, source[1], weight, bias)


def _fold_into_weights(
    op: dgtorch.BatchNormOp,
    factor: np.ndarray,
    beta: np.ndarray,
    mean: np.ndarray,
    input_element: dgq.UniformQuantizedType,
    weight: dgq.ConstantOp,
    bias: dgq.ConstantOp | None,
) -> FoldedLinear | LoweringProblem:
    element = dgq.quantized_element(weight.result.type, "weight")
    integers = dgq.constant_values(weight.value)
    channels = integers.shape[0]
    scales = np.broadcast_to(np.asarray(element.scale_values, dtype=np.float64), (channels,))
    sign = np.sign(factor).astype(np.int64)
    folded = integers.astype(np.int64) * sign[:, None]
    lo, hi = element.limits
    if folded.min(initial=0) < lo or folded.max(initial=0) > hi:
        return _cannot_fold(op, BATCH_NORM_NEGATIVE_FACTOR, low=-hi, high=hi)
    # A zero factor zeroes the row; it keeps its scale, which must stay positive.
    folded_scales = np.where(factor == 0, scales, scales * np.abs(factor))
    real_bias = np.zeros(channels)
    if bias is not None:
        bias_element = dgq.quantized_element(bias.result.type, "bias")
        bias_scales = np.asarray(bias_element.scale_values, dtype=np.float64)
        real_bias = dgq.constant_values(bias.value).astype(np.float64) * bias_scales
    bias_scales = input_element.scale * folded_scales
    folded_bias = np.rint((factor * (real_bias - mean) + beta) / bias_scales)
    if np.abs(folded_bias).max(initial=0) > np.iinfo(np.int32).max:
        return _cannot_fold(op, BATCH_NORM_BIAS_RANGE)
    zeros = [0] * channels
    return FoldedLinear(
        folded.astype(integers.dtype),
        dgq.UniformQuantizedType(
            element.storage, folded_scales, zeros, axis=0, storage_min=lo, storage_max=hi
        ),
        folded_bias.astype(np.int32),
        dgq.UniformQuantizedType(IntegerType(32), bias_scales, zeros, axis=0),
    )


def _dequantized_parameter(
    values: np.ndarray,
    element: dgq.UniformQuantizedType,
    like: Operation,
    name: dgq.ConstantOp | None,
) -> list[Operation]:
    """`dgq.dequantize(dgq.constant)` holding `values` at the location of `like`, the
    constant named like the parameter `name` it replaces."""
    storage = IntegerType(values.dtype.itemsize * 8)
    dense = DenseIntOrFPElementsAttr(
        TensorType(storage, values.shape),
        BytesAttr(np.ascontiguousarray(values, dtype=f"<i{values.dtype.itemsize}").tobytes()),
    )
    constant = dgq.ConstantOp.build(
        properties={"value": dense}, result_types=[TensorType(element, values.shape)]
    )
    if name is not None:
        constant.result.name_hint = name.result.name_hint
    dequantize = dgq.DequantizeOp.build(
        operands=[constant.result], result_types=[TensorType(f32, values.shape)]
    )
    return [located(constant, like), located(dequantize, like)]


def _producer(value: SSAValue) -> str:
    """What computes `value`, seen through the dequantize of an already legalized op."""
    owner = value.owner
    if isinstance(owner, dgq.DequantizeOp):
        return _producer(owner.input)
    if isinstance(owner, dgq.QuantizeOp) and isinstance(owner.input, BlockArgument):
        return "a graph input"
    return f"'{owner.name}'" if isinstance(owner, Operation) else "a graph input"


def _explain_batch_norm(op: dgtorch.BatchNormOp) -> LoweringProblem | None:
    """Why a batch norm did not fold: the linear's problem, or where the batch norm sits."""
    if isinstance(op.input.owner, dgtorch.LinearOp):
        folded = fold_batch_norm(op)
        return folded if isinstance(folded, LoweringProblem) else None
    if isinstance(op.input.owner, dgtorch.Conv2dOp):
        return BATCH_NORM_AFTER_CONV2D.at(op)
    return BATCH_NORM_PLACEMENT.at(op, producer=_producer(op.input))


class FoldBatchNormIntoLinear(ExplainingPattern):
    """`batch_norm(linear(x, w, b))` -> `linear(x, w', b')` (see `fold_batch_norm`).

    The linear must have the batch norm as its only user: its own result
    would otherwise still be needed unnormalized. It explains a batch norm left
    over, the linear it did not fold into, and the batch norm's parameters.
    """

    reasons = (
        BATCH_NORM_SHARED_LINEAR,
        BATCH_NORM_RANK,
        BATCH_NORM_UNQUANTIZED_LINEAR,
        BATCH_NORM_FLOAT_PARAMETERS,
        BATCH_NORM_NEGATIVE_FACTOR,
        BATCH_NORM_BIAS_RANGE,
        BATCH_NORM_AFTER_CONV2D,
        BATCH_NORM_PLACEMENT,
        LINEAR_BATCH_NORM_NOT_FOLDED,
        BATCH_NORM_PARAMETER,
    )

    def explain(self, op: Operation) -> LoweringProblem | None:
        match op:
            case dgtorch.BatchNormOp():
                return _explain_batch_norm(op)
            case dgtorch.LinearOp() if any(
                isinstance(use.operation, dgtorch.BatchNormOp) for use in op.result.uses
            ):
                return LINEAR_BATCH_NORM_NOT_FOLDED.at(op)
            case dgtorch.ConstantOp() if feeds_only(op, dgtorch.BatchNormOp):
                return BATCH_NORM_PARAMETER.at(op)
        return None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgtorch.BatchNormOp, rewriter: PatternRewriter) -> None:
        linear = op.input.owner
        if not isinstance(linear, dgtorch.LinearOp):
            return
        folded = fold_batch_norm(op)
        if isinstance(folded, LoweringProblem):
            return
        weight = _dequantized_parameter(
            folded.weight, folded.weight_element, linear, _quantized_constant(linear.weight)
        )
        bias = _dequantized_parameter(
            folded.bias, folded.bias_element, linear, _quantized_constant(linear.bias)
        )
        new_linear = dgtorch.LinearOp.build(
            operands=[linear.input, weight[-1].results[0], bias[-1].results[0]],
            result_types=[op.result.type],
        )
        rewriter.replace(op, [*weight, *bias, located(new_linear, linear)])
