"""`convert-dghw-to-tosa`, sequence family: matmul, and softmax decomposed into TOSA ops."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

import numpy as np
from xdsl.dialects import tosa as xtosa
from xdsl.dialects.builtin import TensorType, i1, i8, i32
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw
from dg.dialects import tosa as tosa1
from dg.dialects.dgq import FIXED_GRID_ZERO_POINT
from dg.lowering.dghw_to_tosa.common import (
    IDENTITY_MULTIPLIER,
    IDENTITY_SHIFT,
    DghwToTosaPattern,
    TosaBuilder,
    static_type,
)

SOFTMAX_FRACTION_BITS = 8
"""The softmax result is 256 e / sum rounded: 8 quotient bits after the integer bit."""


class MatmulToTosa(DghwToTosaPattern):
    """`dghw.matmul` -> `tosa.matmul`; rank-4 operands fold their two leading axes."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.MatmulOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        result_type = b.result_type()
        lhs = static_type(op.lhs.type, self.batch).get_shape()
        rhs = static_type(op.rhs.type, self.batch).get_shape()
        items = prod(lhs[:-2])
        (m, k), n = lhs[-2:], rhs[-1]
        matmul = tosa1.MatmulOp.build(
            operands=[
                b.reshape(op.lhs, [items, m, k]),
                b.reshape(op.rhs, [items, k, n]),
                b.scalar(op.lhs_zp.value.data, i8),
                b.scalar(op.rhs_zp.value.data, i8),
            ],
            result_types=[TensorType(i32, [items, m, n])],
        )
        out = b.reshape(b.emit(matmul), result_type.get_shape())
        rewriter.replace(op, [], [out])


class SoftmaxToTosa(DghwToTosaPattern):
    """`dghw.softmax` decomposed into TOSA ops computing the same integers (TOSA has none).

        m   = REDUCE_MAX(x)                       (i8, along axis)
        d   = CAST(m) - CAST(x)                   (i32, in [0, 255])
        e   = GATHER(exp_table, d)                (i32)
        sum = REDUCE_SUM(e)                       (i32)
        q   = floor(256 e / sum + 1/2)            (bit-serial division, below)
        out = RESCALE(q, by 1, output_zp -128)    (saturates q - 128 to i8)

    `floor((512 e + sum) / (2 sum))` needs 40 bits, so it is a restoring long
    division in int32 instead: e <= sum (e is one term of the sum), the integer
    bit is `e >= sum`; each of 8 fraction bits doubles the remainder `rem < sum`,
    compared as `rem >= sum - rem` and formed as `(rem - (sum - rem)) + (0 or sum)`,
    so that no intermediate leaves (-sum, sum); a last such comparison rounds half up.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.SoftmaxOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        axis = op.axis.value.data
        x = op.input
        shape = static_type(x.type, self.batch).get_shape()
        row_max = b.reduce(xtosa.ReduceMaxOp, x, axis)
        distance = b.binary(xtosa.SubOp, b.cast(row_max, i32), b.cast(x, i32), i32)
        exp = self.gather_exp(b, op, distance, shape)
        total = b.reduce(xtosa.ReduceSumOp, exp, axis)
        quotient = self.rounded_quotient(b, exp, total)
        out = b.rescale(
            quotient,
            [IDENTITY_MULTIPLIER],
            [IDENTITY_SHIFT],
            (0, FIXED_GRID_ZERO_POINT),
            b.result_type(),
        )
        rewriter.replace(op, [], [out])

    @staticmethod
    def gather_exp(
        b: TosaBuilder, op: dghw.SoftmaxOp, distance: SSAValue, shape: Sequence[int]
    ) -> SSAValue:
        table = np.array(op.exp_table.get_values(), dtype=np.int32)
        count = prod(shape)
        gather = tosa1.GatherOp.build(
            operands=[b.const(table.reshape(1, -1, 1)), b.reshape(distance, [1, count])],
            result_types=[TensorType(i32, [1, count, 1])],
        )
        return b.reshape(b.emit(gather), shape)

    @staticmethod
    def rounded_quotient(b: TosaBuilder, numerator: SSAValue, denominator: SSAValue) -> SSAValue:
        """floor(2^8 numerator / denominator + 1/2) for 0 <= numerator <= denominator."""

        def at_least(lhs: SSAValue, rhs: SSAValue) -> SSAValue:
            return b.binary(tosa1.GreaterEqualOp, lhs, rhs, i1)

        bit = at_least(numerator, denominator)
        remainder = b.select(bit, b.binary(xtosa.SubOp, numerator, denominator, i32), numerator)
        quotient = b.cast(bit, i32)
        zero = b.splat(0, numerator)
        for _ in range(SOFTMAX_FRACTION_BITS):
            gap = b.binary(xtosa.SubOp, denominator, remainder, i32)
            bit = at_least(remainder, gap)
            # 2 rem - sum if that is >= 0, else 2 rem = (2 rem - sum) + sum: SELECT computes
            # both sides everywhere, so neither side may leave int32 (rem + rem could).
            addend = b.select(bit, zero, denominator)
            remainder = b.binary(
                xtosa.AddOp, b.binary(xtosa.SubOp, remainder, gap, i32), addend, i32
            )
            doubled = b.binary(xtosa.AddOp, quotient, quotient, i32)
            quotient = b.binary(xtosa.AddOp, doubled, b.cast(bit, i32), i32)
        round_up = at_least(remainder, b.binary(xtosa.SubOp, denominator, remainder, i32))
        return b.binary(xtosa.AddOp, quotient, b.cast(round_up, i32), i32)
