"""add and mul, with the static ranges that let an add stay in int32."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    impl,
    register_impls,
)
from xdsl.ir import SSAValue

from dg.dialects import dghw
from dg.runtime.kernels.common import (
    INT32_MAX,
    INT32_MIN,
    KernelFunctions,
    check_int32,
    defined_by_constant,
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
