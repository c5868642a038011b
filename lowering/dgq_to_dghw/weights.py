"""The weights family: conv2d (dense and depthwise) and linear, with their folds.

Conv and linear accumulate centred products in i32 on the grid input scale x
weight scale, then one per-channel rescale takes the sums onto the result grid.

Flatten before Linear: `dgq.reshape` follows torch's row-major order over NCHW,
so on the device it becomes `transpose(NHWC -> NCHW)` + `reshape`. When that
reshape flattens C, H, W straight into a fully connected layer,
`FoldFlattenReorderIntoFullyConnected` instead permutes the weight's columns at
compile time from CHW to HWC order and drops the transpose: the device reads
the NHWC feature map as it lies in memory.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw, dgq
from dg.dialects.common import int_array, located, shape_of
from dg.dialects.dgq import UniformQuantizedType, constant_values
from dg.lowering.dgq_to_dghw.common import (
    RESCALE_FACTOR,
    TO_NCHW,
    Emitter,
    Lowered,
    constant_operand,
    device_shape,
    integer_tensor,
    lowered,
)
from dg.lowering.diagnostics import ExplainingPattern, LoweringProblem, Reason

WEIGHT_NOT_CONSTANT = Reason(
    "dghw-weight-not-constant", "weight and bias must be dgq.constant values"
)


def _weight_problem(op: dgq.Conv2dOp | dgq.LinearOp) -> LoweringProblem | None:
    """Why the weight or bias of `op` cannot be stored on the device, or None."""
    if constant_operand(op.weight) is None or (
        op.bias is not None and constant_operand(op.bias) is None
    ):
        return WEIGHT_NOT_CONSTANT.at(op)
    return None


def _weight_scales(weight: dgq.ConstantOp, channels: int) -> np.ndarray:
    """One weight scale per output channel (a per-tensor scale is broadcast)."""
    element = dgq.quantized_element(weight.result.type, "weight")
    return np.broadcast_to(np.asarray(element.scale_values, dtype=np.float64), (channels,))


def _bias_values(bias: SSAValue | None, channels: int) -> np.ndarray | None:
    """The i32 bias, zeros when absent; None when the bias is not a constant."""
    if bias is None:
        return np.zeros(channels, dtype=np.int32)
    constant = constant_operand(bias)
    return None if constant is None else constant_values(constant.value)


def _weight_op_parts(
    op: dgq.Conv2dOp | dgq.LinearOp,
) -> tuple[Lowered, np.ndarray, np.ndarray, np.ndarray, UniformQuantizedType] | None:
    """Lowered input, int weights, int bias, weight scales and result quantization."""
    source = lowered(op.input)
    weight = constant_operand(op.weight)
    if source is None or weight is None:
        return None
    weights = constant_values(weight.value)
    channels = weights.shape[0]
    bias = _bias_values(op.bias, channels)
    if bias is None:
        return None
    result = dgq.per_tensor_element(op.result.type, "result")
    return source, weights, bias, _weight_scales(weight, channels), result


def _accumulate_properties(source: Lowered) -> dict[str, Attribute]:
    # dgq weights are symmetric (zero point 0), checked by its verifier.
    return {
        "input_zp": IntegerAttr(source.element.zero_point, i32),
        "weight_zp": IntegerAttr(0, i32),
    }


class LowerConv2d(ExplainingPattern):
    """`dgq.conv2d` -> `dghw.conv2d` (NHWC, OHWI weight, i32 bias) + per-channel rescale.

    A depthwise convolution (groups = channels, OIHW weight [C, 1, kh, kw])
    becomes `dghw.depthwise_conv2d` with its weight as [kh, kw, C].
    """

    reasons = (WEIGHT_NOT_CONSTANT, RESCALE_FACTOR)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return _weight_problem(op) if isinstance(op, dgq.Conv2dOp) else None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.Conv2dOp, rewriter: PatternRewriter) -> None:
        parts = _weight_op_parts(op)
        if parts is None:
            return
        source, weights, bias, weight_scales, result = parts
        emitter = Emitter(op, rewriter)
        # dgq's verifier allows groups = 1 (dense) or groups = channels (depthwise) only.
        if op.groups is not None and op.groups.value.data != 1:
            conv, device_weights = dghw.DepthwiseConv2dOp, weights[:, 0].transpose(1, 2, 0)
        else:
            conv, device_weights = dghw.Conv2dOp, weights.transpose(0, 2, 3, 1)
        accumulator = emitter.emit(
            conv.build(
                operands=[source.value, emitter.constant(device_weights), emitter.constant(bias)],
                properties={"stride": op.stride, "pad": op.pad, **_accumulate_properties(source)},
                result_types=[integer_tensor(32, device_shape(shape_of(op.result)))],
            )
        )
        factors = source.element.scale * weight_scales / result.scale
        emitter.replace_source(
            emitter.requantize(accumulator, result, factors, op.fused_activation.data)
        )


class LowerLinear(ExplainingPattern):
    """`dgq.linear` -> `dghw.fully_connected` + per-channel rescale.

    Linear acts on torch's last axis, so a rank-4 input is brought back to
    NCHW for it and the result returned to NHWC.
    """

    reasons = (WEIGHT_NOT_CONSTANT, RESCALE_FACTOR)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return _weight_problem(op) if isinstance(op, dgq.LinearOp) else None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.LinearOp, rewriter: PatternRewriter) -> None:
        parts = _weight_op_parts(op)
        if parts is None:
            return
        source, weights, bias, weight_scales, result = parts
        shape = shape_of(op.result)
        emitter = Emitter(op, rewriter)
        accumulator = emitter.emit(
            dghw.FullyConnectedOp.build(
                operands=[
                    emitter.to_torch_layout(source.value, len(source.shape)),
                    emitter.constant(weights),
                    emitter.constant(bias),
                ],
                properties=_accumulate_properties(source),
                result_types=[integer_tensor(32, shape)],
            )
        )
        factors = source.element.scale * weight_scales / result.scale
        rescaled = emitter.requantize(accumulator, result, factors, op.fused_activation.data)
        emitter.replace_source(emitter.to_device_layout(rescaled, len(shape)))


class FoldFlattenReorderIntoFullyConnected(ExplainingPattern):
    """`fully_connected(reshape(transpose NHWC->NCHW (x)))` -> `fully_connected(reshape(x))`.

    The reshape flattens C, H, W into the feature axis, so feature k of the
    torch order is (c, h, w) with k = (c*H + h)*W + w. Reordering the weight's
    columns to HWC order gives the same sums on the untransposed NHWC data.
    It rewrites dghw ops only, which are legal: it has nothing to explain.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.FullyConnectedOp, rewriter: PatternRewriter) -> None:
        reshape = op.input.owner
        if not isinstance(reshape, dghw.ReshapeOp) or not reshape.result.has_one_use():
            return
        transpose = reshape.input.owner
        if not isinstance(transpose, dghw.TransposeOp):
            return
        if int_array(transpose.perm, "perm") != TO_NCHW:
            return
        weight = op.weight.owner
        if not isinstance(weight, dghw.ConstantOp):
            return
        nhwc = transpose.input
        batch, height, width, channels = shape_of(nhwc)
        flat_shape = shape_of(reshape.result)
        features = height * width * channels
        if len(flat_shape) != 2 or flat_shape[1] != features:
            return
        weights = constant_values(weight.value)
        # A view: `constant` copies it a block at a time (a reshape here would copy it whole).
        hwc_weights = weights.reshape(-1, channels, height, width).transpose(0, 2, 3, 1)
        # The new ops stand for the flatten and the weight: keep their source locations.
        flat = Emitter(reshape, rewriter).reshape(nhwc, flat_shape)
        permuted = Emitter(weight, rewriter).constant(hwc_weights, (len(hwc_weights), features))
        folded = dghw.FullyConnectedOp.build(
            operands=[flat, permuted, op.bias],
            properties={"input_zp": op.input_zp, "weight_zp": op.weight_zp},
            result_types=[op.result.type],
        )
        rewriter.replace(op, located(folded, op))
