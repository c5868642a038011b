"""Rescales of int32 inputs with a small static range as tables (`RangeTable`): after a
`dghw.mul`, whose `product_range` bounds every product, and at the table's entry limit; a
rescaled product with a constant as one lookup of its int8 pair (`ProductTable`)."""

from __future__ import annotations

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from interpreter_cases import EXAMPLES, run_one
from test_mul_matmul_interpreter import mul_module

from dg.runtime.interpreter import DeviceModel, ValueRecorder
from dg.runtime.kernels.pair_tables import (
    MUL_THEN_RESCALE,
    PRODUCT_GROUP,
    ProductTable,
    product_table_group,
)
from dg.runtime.kernels.quantization import (
    RANGE_TABLE_ENTRIES,
    RangeTable,
    product_range,
    rescale_parameters,
)

INT8_VALUES = np.arange(-128, 128, dtype=np.int8)


def mul_then_rescale(constant, input_zp, constant_zp, multiplier, shift, output_zp, clamp):
    x_shape = (256, *constant.shape[1:-1], 3)
    module = mul_module(x_shape, constant, input_zp, constant_zp)
    product = module.body.block.first_op.body.block.last_op.operands[0].owner
    rescale = build.rescale(
        product.result,
        build.batched(8, x_shape),
        [multiplier],
        [shift],
        0,
        output_zp,
        *clamp,
    )
    product.parent_block().insert_op_after(rescale, product)
    product.parent_block().last_op.operands = (rescale.result,)
    return module, product, rescale


@EXAMPLES
@given(
    st.integers(1, 5),
    st.sampled_from([-128, -2, 0, 127]),
    st.sampled_from([-128, 0, 127]),
    st.sampled_from([1, 2**30, 2**31 - 1]),
    st.integers(2, 40),
    st.integers(-128, 127),
    st.sampled_from([(-128, 127), (0, 127), (-5, 5)]),
    st.data(),
)
def test_rescale_after_mul_is_a_table_of_every_product(
    length, input_zp, constant_zp, multiplier, shift, output_zp, clamp, data
):
    """x takes every int8 value against every constant entry: the products reach both
    ends of `product_range`, and each rescaled product is the reference's."""
    entries = st.sampled_from([-128, 127]) | st.integers(-128, 127)
    constant = np.array(data.draw(st.lists(entries, min_size=length, max_size=length)))
    constant = constant.astype(np.int8).reshape(1, length, 1)
    args = (constant, input_zp, constant_zp, multiplier, shift, output_zp, clamp)
    module, product, rescale = mul_then_rescale(*args)
    plan = RangeTable.prepare(rescale, rescale_parameters(rescale))
    assert plan is not None
    x = np.broadcast_to(INT8_VALUES[:, None, None], (256, length, 3)).copy()
    products = ref.mul(x, constant, input_zp, constant_zp)
    assert (int(products.min()), int(products.max())) == product_range(product)
    expected = ref.rescale(products, [multiplier], [shift], 0, output_zp, *clamp, 8)
    np.testing.assert_array_equal(run_one(module, x), expected)


def chained_rescales(first_clamp: tuple[int, int]):
    """x (int32) -> identity rescale clamped to `first_clamp` -> rescale to int8: the first
    one's clip interval and the second one's static range are both `first_clamp`."""
    shape = (2, 8)

    def ops(args):
        first = build.rescale(
            args[0], build.batched(32, shape), [1 << 30], [30], 0, 0, *first_clamp
        )
        second = build.rescale(
            first.result, build.batched(8, shape), [3 << 27], [40], 0, 3, -128, 127
        )
        return [first, second]

    module = build.function_module([build.batched(32, shape)], ops)
    second = module.body.block.first_op.body.block.last_op.operands[0].owner
    return module, second.input.owner, second


@pytest.mark.parametrize("extra", [0, 1])
def test_range_table_at_its_entry_limit_and_one_past(extra) -> None:
    """Intervals of exactly `RANGE_TABLE_ENTRIES` values are tables, one more are not;
    inputs at the int32 extremes (clipped to the first table's ends) and at both ends."""
    low = -70000
    high = low + RANGE_TABLE_ENTRIES - 1 + extra
    module, first, second = chained_rescales((low, high))
    for op in (first, second):
        assert (RangeTable.prepare(op, rescale_parameters(op)) is not None) == (extra == 0)
    x = np.array(
        [[-(2**31), 2**31 - 1, low - 1, low, low + 1, high - 1, high, high + 1]] * 2,
        dtype=np.int32,
    )
    x[1] = np.linspace(low, high, 8).astype(np.int32)
    first_result = ref.rescale(x, [1 << 30], [30], 0, 0, low, high, 32)
    expected = ref.rescale(first_result, [3 << 27], [40], 0, 3, -128, 127, 8)
    np.testing.assert_array_equal(run_one(module, x), expected)


def test_requantization_clip_interval_as_a_table() -> None:
    """An int8 requantization of an int32 block argument (no static range): its clip
    interval (`ClippedFloatRescale`) is the table's; every int32 outside it, down to the
    extremes, takes its nearer end's result."""
    shape = (1, 12)
    multiplier, shift, output_zp = 1_518_500_250, 38, -11
    module = build.function_module(
        [build.batched(32, shape)],
        lambda args: [
            build.rescale(
                args[0], build.batched(8, shape), [multiplier], [shift], 0, output_zp, -128, 127
            )
        ],
    )
    op = module.body.block.first_op.body.block.first_op
    plan = RangeTable.prepare(op, rescale_parameters(op))
    assert plan is not None
    low, high = plan.low, plan.low + plan.table.size - 1
    x = np.array(
        [
            [
                -(2**31),
                low - 2,
                low - 1,
                low,
                low + 1,
                0,
                high - 1,
                high,
                high + 1,
                high + 2,
                2**31 - 1,
                7,
            ]
        ],
        dtype=np.int32,
    )
    expected = ref.rescale(x, [multiplier], [shift], 0, output_zp, -128, 127, 8)
    np.testing.assert_array_equal(run_one(module, x), expected)
    assert expected[0, 2] == -128 and expected[0, 3] == -128 and expected[0, 8] == 127


def test_per_channel_rescale_takes_no_range_table() -> None:
    module, product, rescale = mul_then_rescale(
        np.ones((1, 2, 1), np.int8), 0, 0, 1 << 30, 30, 0, (-128, 127)
    )
    per_channel = build.rescale(
        product.result, rescale.result.type, [1 << 30] * 3, [30] * 3, 0, 0, -128, 127
    )
    assert RangeTable.prepare(per_channel, rescale_parameters(per_channel)) is None
    assert RangeTable.prepare(rescale, rescale_parameters(rescale)) is not None


@pytest.mark.usefixtures("numpy_parts")
@pytest.mark.parametrize(
    "input_zp, constant_zp, multiplier, shift, output_zp, clamp",
    [
        (1, 0, 1_174_253_685, 37, -5, (-128, 127)),  # RoPE-like
        (-128, 127, 2**31 - 1, 2, 127, (-128, 127)),  # extreme: most products clamp
        (127, -128, 1, 40, 0, (0, 127)),  # a ReLU clamp, results near 0
    ],
)
def test_rescaled_product_as_one_lookup_on_every_pair(
    input_zp, constant_zp, multiplier, shift, output_zp, clamp
) -> None:
    """The planned walk runs rescale(mul(x, c)) as one `ProductTable` lookup; every one of
    the 65536 (c, x) pairs gives the reference's integer and the op-by-op walk's, also
    for x a transposed view (the lookups in its memory order). The 256 items go in two
    groups (`PRODUCT_GROUP`), the second partial, on one thread and split over two."""
    constant = INT8_VALUES.reshape(1, 256, 1)
    args = (constant, input_zp, constant_zp, multiplier, shift, output_zp, clamp)
    module, product, rescale = mul_then_rescale(*args)
    assert product_table_group(product) is rescale
    device = DeviceModel(module)
    rows = np.broadcast_to(INT8_VALUES[:, None, None], (256, 3, 256)).copy()
    rows[:, 1] = rows[:, 1, ::-1]  # the second channel pairs each c with another x
    x = rows.transpose(0, 2, 1)  # [256, 256, 3], not C-contiguous
    assert PRODUCT_GROUP < x.size < 2 * PRODUCT_GROUP
    expected = ref.rescale(
        ref.mul(x, constant, input_zp, constant_zp), [multiplier], [shift], 0, output_zp, *clamp, 8
    )
    for arrays in ([x], [np.ascontiguousarray(x)]):
        np.testing.assert_array_equal(device(arrays)[0], expected)
    (plan,) = device.interpreter._plans.values()
    assert [step.external for step in plan.steps] == [MUL_THEN_RESCALE, None]  # + return
    np.testing.assert_array_equal(device([x], [ValueRecorder()])[0], expected)


def test_a_constant_of_few_patterns_has_a_row_per_pattern(spy) -> None:
    """A constant of five distinct patterns, repeated and out of order (the extremes among
    them, as RoPE's cos and sin repeat theirs), gives a table of their five rows alone;
    every x with every position gives the reference's integer and the op-by-op walk's."""
    patterns = np.array([127, -3, -128, 0, 90], np.int8)
    constant = patterns[[4, 1, 1, 0, 2, 3, 2, 4]].reshape(1, 8, 1)
    args = (constant, -7, 2, 1_174_253_685, 37, -5, (-128, 127))
    module, _, _ = mul_then_rescale(*args)
    tables = spy(ProductTable, "prepare", returns=True)
    device = DeviceModel(module)
    x = np.broadcast_to(INT8_VALUES[:, None, None], (256, 8, 3)).copy()
    expected = ref.rescale(ref.mul(x, constant, -7, 2), [1_174_253_685], [37], 0, -5, -128, 127, 8)
    np.testing.assert_array_equal(device([x])[0], expected)
    np.testing.assert_array_equal(device([x], [ValueRecorder()])[0], expected)
    assert [table.table.shape for table in tables] == [(5 * 256,)]


def test_per_channel_or_non_constant_products_keep_their_ops() -> None:
    module, product, rescale = mul_then_rescale(
        np.ones((1, 2, 1), np.int8), 0, 0, 1 << 30, 30, 0, (-128, 127)
    )
    per_channel = build.rescale(
        product.result, rescale.result.type, [1 << 30] * 3, [30] * 3, 0, 0, -128, 127
    )
    rescale.detach()
    rescale.erase(safe_erase=False)
    product.parent_block().insert_op_after(per_channel, product)
    assert product_table_group(product) is None
    module, product, rescale = mul_then_rescale(
        np.ones((1, 2, 1), np.int8), 0, 0, 1 << 30, 30, 0, (-128, 127)
    )
    product.operands = (product.input, product.input)  # the "constant" is x itself
    assert product_table_group(product) is None
