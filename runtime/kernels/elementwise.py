"""add and mul, with the static ranges that let an add stay in int32, and the plan's groups
of rescaled products (`pair_tables`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    impl,
    impl_external,
    register_impls,
)
from xdsl.ir import Operation, SSAValue

from dg.dialects import dghw
from dg.runtime.kernels.common import (
    INT32_MAX,
    INT32_MIN,
    KernelFunctions,
    check_int32,
    defined_by_constant,
)
from dg.runtime.kernels.pair_tables import (
    MUL_THEN_RESCALE,
    PRODUCT_PAIR,
    ProductPair,
    ProductTable,
)
from dg.runtime.kernels.quantization import static_range


def sum_fits_int32(lhs: SSAValue, rhs: SSAValue) -> bool:
    """Whether lhs + rhs provably fits int32 for every run (`static_range` of both).

    Then an int32 add cannot wrap and equals the int64 sum `dghw.add` defines,
    and its range check cannot fail.
    """
    lhs_range, rhs_range = static_range(lhs), static_range(rhs)
    if lhs_range is None or rhs_range is None:
        return False
    return lhs_range[0] + rhs_range[0] >= INT32_MIN and lhs_range[1] + rhs_range[1] <= INT32_MAX


@register_impls
@dataclass
class ElementwiseFunctions(KernelFunctions):
    """The elementwise family's dghw ops."""

    @impl(dghw.AddOp)
    def run_add(
        self, interpreter: Interpreter, op: dghw.AddOp, args: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray]:
        lhs, rhs = args
        if self.planned(op, lambda op: sum_fits_int32(op.lhs, op.rhs)):
            return (np.add(lhs, rhs, dtype=np.int32),)
        total = lhs.astype(np.int64) + rhs
        check_int32(total, op)
        return (total.astype(np.int32),)

    @impl(dghw.MulOp)
    def run_mul(
        self, interpreter: Interpreter, op: dghw.MulOp, args: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray]:
        x, constant = args
        input_zp = self.planned(op, lambda op: op.input_zp.value.data)

        def centre_constant() -> np.ndarray:
            return np.subtract(constant, op.constant_zp.value.data, dtype=np.int32)

        if defined_by_constant(op.constant):
            centred_c = self.cached(op, centre_constant)
        else:
            centred_c = centre_constant()
        # |x - zp| and |c - zp| are at most 255: the product always fits int32.
        # The constant's extents are 1 or x's, so the product has x's shape: in place.
        product = np.subtract(x, input_zp, dtype=np.int32)
        product *= centred_c
        return (product,)

    @impl_external(MUL_THEN_RESCALE)
    def run_mul_then_rescale(
        self, interpreter: Interpreter, op: Operation, args: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray]:
        """`op`, the rescale of a `product_table_group`, of its mul's operands `args`."""
        rescale = cast(dghw.RescaleOp, op)
        x, constant = args
        mul = cast(dghw.MulOp, rescale.input.owner)
        # Keyed by the rescale: this family's plan of the mul is its op-by-op form.
        table = self.planned(rescale, lambda r: ProductTable.prepare(mul, r, constant))
        return (table.apply(x),)

    @impl_external(PRODUCT_PAIR)
    def run_product_pair(
        self, interpreter: Interpreter, op: Operation, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        """`op`, the final rescale of a `product_pair_group`, of its muls' operands `args`
        (x, c1, y, c2)."""
        x, first_constant, y, second_constant = args
        constants = (first_constant, second_constant)
        pair = self.planned(op, lambda final: ProductPair.prepare(interpreter, final, constants))
        return (pair.apply(x, y),)
