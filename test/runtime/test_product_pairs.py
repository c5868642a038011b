"""A residual add of two rescaled products with constants (RoPE's x cos + rotate(x) sin) as
one step of the plan (`product_pair_group`, `ProductPair`): against the reference and the
op-by-op walk, on every (constant, input) pair of both products."""

from __future__ import annotations

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerAttr, i32

from dg.dialects import dghw
from dg.runtime.interpreter import DeviceModel, ValueRecorder
from dg.runtime.kernels.pair_tables import MUL_THEN_RESCALE, PRODUCT_GROUP, PRODUCT_PAIR

INT8_VALUES = np.arange(-128, 128, dtype=np.int8)
WIDE = (-(2**31), 2**31 - 1)


def mul(x, constant, input_zp: int, constant_zp: int) -> dghw.MulOp:
    return dghw.MulOp.build(
        operands=[x, constant],
        properties={
            "input_zp": IntegerAttr(input_zp, i32),
            "constant_zp": IntegerAttr(constant_zp, i32),
        },
        result_types=[build.batched(32, x.type.get_shape())],
    )


def product_pair_module(products, sides, out, also_return_a_product: bool = False):
    """int8 x, y [?, 256, 3] -> rescale(mul(x, c1)), rescale(mul(y, c2)) to int8 -> rescale
    each to int32 -> add -> rescale to int8. c1 and c2 [1, 256, 1] hold every int8 value.

    `products`: per product (input_zp, constant_zp, multiplier, shift, output_zp); `sides`:
    per side of the add (multiplier, shift, input_zp); `out`: (multiplier, shift, output_zp).
    """
    shape = (0, 256, 3)  # batched: the first extent is the runtime batch
    i8, i32_type = build.batched(8, shape), build.batched(32, shape)
    constants = (INT8_VALUES.reshape(1, 256, 1), INT8_VALUES[::-1].reshape(1, 256, 1).copy())

    def ops(args):
        made = []
        scaled = []
        for x, constant, (in_zp, c_zp, m, s, out_zp), (side_m, side_s, side_zp) in zip(
            args, constants, products, sides, strict=True
        ):
            c = build.constant(constant)
            product = mul(x, c.result, in_zp, c_zp)
            rescaled = build.rescale(product.result, i8, [m], [s], 0, out_zp, -128, 127)
            side = build.rescale(rescaled.result, i32_type, [side_m], [side_s], side_zp, 0, *WIDE)
            made += [c, product, rescaled, side]
            scaled.append(side)
        total = build.add(scaled[0].result, scaled[1].result)
        final = build.rescale(total.result, i8, [out[0]], [out[1]], 0, out[2], -128, 127)
        return [*made, total, final]

    def results(ops):
        returned = [ops[-1].results[0]]
        return [*returned, ops[2].results[0]] if also_return_a_product else returned

    return build.function_module([i8, i8], ops, results)


def every_pair_inputs() -> tuple[np.ndarray, np.ndarray]:
    """x, y [256, 256, 3]: x[i, j] = value i against c1[j], so every (c1, x) pair; y another
    arrangement of the values against c2, and a second and third channel of each."""
    x = np.broadcast_to(INT8_VALUES[:, None, None], (256, 256, 3)).copy()
    x[:, :, 1] = x[::-1, :, 1]
    y = np.broadcast_to(INT8_VALUES[None, :, None], (256, 256, 3)).copy()
    y[:, :, 2] = np.roll(x[:, :, 0], 7, axis=0)
    return x, y


ROPE_LIKE = (
    [(1, 0, 1_174_253_685, 37, -5), (-3, 2, 1_518_500_250, 38, 4)],
    [(1 << 30, 10, -5), (1_518_500_250, 11, 4)],
    (1 << 30, 40, -2),
)
EXTREME = (
    [(-128, 127, 2**31 - 1, 2, 127), (127, -128, 1, 40, 0)],
    [(2**31 - 1, 2, -128), (1, 2, 127)],
    (2**31 - 1, 62, 5),
)


@pytest.mark.usefixtures("numpy_parts")
@pytest.mark.parametrize("case", [ROPE_LIKE, EXTREME], ids=["rope-like", "extreme"])
def test_a_residual_add_of_two_products_is_one_step_equal_to_its_ops(case) -> None:
    """The plan runs the nine ops as one `PRODUCT_PAIR` step, a group of batch items at a
    time (two groups, the second partial, on one thread and split over two). On every
    (constant, input) pair of both products it gives the reference's integers and the
    op-by-op walk's, also for x a transposed view (walked in its memory order) beside a
    contiguous y."""
    module = product_pair_module(*case)
    device = DeviceModel(module)
    x, y = every_pair_inputs()
    assert PRODUCT_GROUP < x.size < 2 * PRODUCT_GROUP
    (expected,) = ref.run_module(module, [x, y])
    x_view = np.ascontiguousarray(x.transpose(0, 2, 1)).transpose(0, 2, 1)
    for lhs, rhs in ((x, y), (x_view, y), (x_view, np.ascontiguousarray(y[:, ::-1])[:, ::-1])):
        np.testing.assert_array_equal(device([lhs, rhs])[0], expected)
    (plan,) = device.interpreter._plans.values()
    assert [step.external for step in plan.steps] == [PRODUCT_PAIR, None]  # + return
    np.testing.assert_array_equal(device([x, y], [ValueRecorder()])[0], expected)


def test_a_product_read_elsewhere_keeps_its_own_step() -> None:
    """A product that is also returned is not the group's alone: the products run as their
    own lookups (`MUL_THEN_RESCALE`), the add as a pair table."""
    module = product_pair_module(*ROPE_LIKE, also_return_a_product=True)
    device = DeviceModel(module)
    x, y = every_pair_inputs()
    expected = ref.run_module(module, [x, y])
    for got, want in zip(device([x, y]), expected, strict=True):
        np.testing.assert_array_equal(got, want)
    (plan,) = device.interpreter._plans.values()
    steps = [(step.external, step.pair_table is not None) for step in plan.steps]
    assert steps == [(MUL_THEN_RESCALE, False)] * 2 + [(None, True), (None, False)]
