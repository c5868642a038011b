"""The elementwise family: add, and mul by a constant."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw, dgq
from dg.dialects.dgq import constant_values
from dg.lowering.dgq_to_dghw.common import (
    RESCALE_FACTOR,
    TO_NHWC,
    Emitter,
    Lowered,
    constant_operand,
    device_shape,
    integer_tensor,
    lowered,
    lowered_i8,
)
from dg.lowering.diagnostics import ExplainingPattern, LoweringProblem, Reason

ADD_GRID_BITS = 20
"""`dgq.add` sums on a grid 2^20 times finer than twice its larger input scale
(TFLite's scheme): fine enough that rounding the inputs onto it costs nothing
measurable, coarse enough that two rescaled i8 values still add within int32."""

I32_LIMITS = (-(1 << 31), (1 << 31) - 1)

MUL_CONSTANT_OPERANDS = Reason(
    "dghw-mul-constant-operands",
    "input and constant must be i8 and the constant a dgq.constant: the device multiplies "
    "stored i8 integers",
)


class LowerAdd(ExplainingPattern):
    """`dgq.add` -> rescale both operands to i32 on a common fine grid, `dghw.add`, rescale.

    The common grid has scale 2 * max(lhs scale, rhs scale) / 2^20 (TFLite):
    i8 operands land on it within 2^-19 of their own step, so the only
    rounding that matters is the final one onto the output grid.
    """

    reasons = (RESCALE_FACTOR,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.AddOp, rewriter: PatternRewriter) -> None:
        lhs, rhs = lowered(op.lhs), lowered(op.rhs)
        if lhs is None or rhs is None:
            return
        result = dgq.per_tensor_element(op.result.type, "result")
        common_scale = 2 * max(lhs.element.scale, rhs.element.scale) / 2**ADD_GRID_BITS
        wide = integer_tensor(32, device_shape(lhs.shape))
        emitter = Emitter(op, rewriter)

        def to_common_grid(operand: Lowered) -> SSAValue:
            return emitter.rescale(
                operand.value,
                wide,
                operand.element.scale / common_scale,
                input_zp=operand.element.zero_point,
                output_zp=0,
                clamp=I32_LIMITS,
            )

        total = emitter.emit(
            dghw.AddOp.build(
                operands=[to_common_grid(lhs), to_common_grid(rhs)], result_types=[wide]
            )
        )
        factor = common_scale / result.scale
        emitter.replace_source(emitter.requantize(total, result, factor, op.fused_activation.data))


def device_constant_layout(values: np.ndarray, rank: int) -> np.ndarray:
    """A constant that broadcasts to a rank-`rank` torch-layout value, in device layout.

    Leading 1s give it the value's rank (numpy broadcasting aligns trailing
    axes); a rank-4 constant is then transposed to NHWC like the value.
    """
    values = values.reshape((1,) * (rank - values.ndim) + values.shape)
    return values.transpose(TO_NHWC) if rank == 4 else values


def _mul_operands(op: dgq.MulConstantOp) -> tuple[Lowered, dgq.ConstantOp] | None:
    """The lowered i8 input and the i8 `dgq.constant` of `op`, or None."""
    source, constant = lowered_i8(op.input), constant_operand(op.constant)
    if source is None or constant is None:
        return None
    factor = dgq.per_tensor_element(constant.result.type, "constant")
    return (source, constant) if factor.storage.width.data == 8 else None


class LowerMulConstant(ExplainingPattern):
    """`dgq.mul_constant` -> `dghw.mul` (exact i32 product of centred integers) + rescale.

    The product of (x - x_zp) and (c - c_zp) lies on the grid scale_x * scale_c;
    one rescale takes it to the result grid.
    """

    reasons = (MUL_CONSTANT_OPERANDS, RESCALE_FACTOR)

    def explain(self, op: Operation) -> LoweringProblem | None:
        if isinstance(op, dgq.MulConstantOp) and lowered(op.input) is not None:
            return MUL_CONSTANT_OPERANDS.at(op)
        return None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.MulConstantOp, rewriter: PatternRewriter) -> None:
        operands = _mul_operands(op)
        if operands is None:
            return
        source, constant = operands
        factor = dgq.per_tensor_element(constant.result.type, "constant")
        result = dgq.per_tensor_element(op.result.type, "result")
        shape = device_shape(source.shape)
        emitter = Emitter(op, rewriter)
        values = device_constant_layout(constant_values(constant.value), len(shape))
        product = emitter.emit(
            dghw.MulOp.build(
                operands=[source.value, emitter.constant(values)],
                properties={
                    "input_zp": IntegerAttr(source.element.zero_point, i32),
                    "constant_zp": IntegerAttr(factor.zero_point, i32),
                },
                result_types=[integer_tensor(32, shape)],
            )
        )
        factors = source.element.scale * factor.scale / result.scale
        emitter.replace_source(emitter.requantize(product, result, factors))
