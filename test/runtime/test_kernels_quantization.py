"""dghw.rescale on the device model: against the reference, its prepared forms (folded zero
points, clipped float) at their bounds, and its static ranges."""

from __future__ import annotations

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from interpreter_cases import (
    EXAMPLES,
    INT32_MAX,
    INT32_MIN,
    assert_matches_reference,
    int32_elements,
    rescale_cases,
    run_one,
)
from xdsl.dialects.builtin import ModuleOp

from dg.dialects import dghw
from dg.runtime.interpreter import DeviceModel
from dg.runtime.kernels.common import BLOCK_ELEMENTS, channel_blocks
from dg.runtime.kernels.quantization import ClippedFloatRescale, FoldedRescale, static_range


@EXAMPLES
@given(rescale_cases())
def test_rescale_matches_reference(case):
    x, multipliers, shifts, input_zp, output_zp, (cmin, cmax), out_bits = case
    result_type = build.batched(out_bits, x.shape)
    module = build.function_module(
        [build.batched(x.dtype.itemsize * 8, x.shape)],
        lambda args: [
            build.rescale(
                args[0], result_type, multipliers, shifts, input_zp, output_zp, cmin, cmax
            )
        ],
    )
    assert_matches_reference(
        lambda: run_one(module, x),
        lambda: ref.rescale(x, multipliers, shifts, input_zp, output_zp, cmin, cmax, out_bits),
    )


def rescale_module(case) -> ModuleOp:
    x, multipliers, shifts, input_zp, output_zp, (cmin, cmax), out_bits = case
    return build.function_module(
        [build.batched(x.dtype.itemsize * 8, x.shape)],
        lambda args: [
            build.rescale(
                args[0],
                build.batched(out_bits, x.shape),
                multipliers,
                shifts,
                input_zp,
                output_zp,
                cmin,
                cmax,
            )
        ],
    )


@EXAMPLES
@given(rescale_cases(), st.data())
def test_rescale_prepared_forms_hold_across_calls_and_batches(case, data):
    """One device model, several batch sizes: the tiled parameters and the table offsets
    are prepared per item shape once, and every call still equals the reference."""
    x, multipliers, shifts, input_zp, output_zp, (cmin, cmax), out_bits = case
    device = DeviceModel(rescale_module(case))
    for batch in data.draw(st.lists(st.sampled_from([0, 1, 2, 5]), min_size=2, max_size=4)):
        xb = np.resize(x, (batch, *x.shape[1:])).astype(x.dtype)
        (got,) = device([xb])
        expected = ref.rescale(xb, multipliers, shifts, input_zp, output_zp, cmin, cmax, out_bits)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@EXAMPLES
@given(rescale_cases())
def test_rescale_results_lie_in_their_static_range(case):
    """`static_range` (what lets `dghw.add` add in int32) bounds every result, here on
    inputs that include the extremes of the input type."""
    x = case[0]
    info = np.iinfo(x.dtype)
    x = np.concatenate([x.reshape(-1), [info.min, info.max, 0]]).astype(x.dtype)
    x = x.reshape(-1, 1) if len(case[1]) == 1 else np.resize(x, (x.size, *case[0].shape[1:]))
    case = (x, *case[1:])
    module = rescale_module(case)
    op = next(o for o in module.walk() if isinstance(o, dghw.RescaleOp))
    bounds = static_range(op.result)
    assert bounds is not None
    got = run_one(module, x.astype(case[0].dtype))
    assert got.size == 0 or (bounds[0] <= got.min() and got.max() <= bounds[1])
    if x.dtype == np.int8 and len(case[1]) == 1 and case[-1] == 32:  # the table's range, attained
        every = np.arange(-128, 128, dtype=np.int8).reshape(-1, *[1] * (x.ndim - 1))
        every = np.broadcast_to(every, (256, *x.shape[1:])).copy()
        all_results = run_one(module, every)
        assert (int(all_results.min()), int(all_results.max())) == bounds


def test_rescale_folds_zero_points_only_when_int64_holds_every_step():
    def rescale_op(shift: int, output_zp: int):
        x_type, y_type = build.batched(32, (2,)), build.batched(8, (2,))
        module = build.function_module(
            [x_type],
            lambda args: [
                build.rescale(args[0], y_type, [2**31 - 1], [shift], 0, output_zp, -128, 127)
            ],
        )
        return next(op for op in module.walk() if op.name == "dghw.rescale")

    assert FoldedRescale.prepare(rescale_op(31, -128)) is not None
    # 127 << 62 leaves int64: the step-by-step definition (which never forms it) runs instead.
    assert FoldedRescale.prepare(rescale_op(62, 127)) is None


@st.composite
def requantization_cases(draw):
    """int32 accumulators onto int8 as a conv or FC layer's rescale has them: per-channel
    multipliers below 2^31 (down to 1), shifts 31..44 (so m < 2^s), any output zero
    point, the full int8 clamp or a ReLU's."""
    channels = draw(st.integers(1, 5))
    multipliers = draw(
        st.lists(
            st.one_of(st.sampled_from([1, 2**30, 2**31 - 1]), st.integers(1, 2**31 - 1)),
            min_size=channels,
            max_size=channels,
        )
    )
    shifts = draw(
        st.lists(
            st.one_of(st.sampled_from([31, 44]), st.integers(31, 44)),
            min_size=channels,
            max_size=channels,
        )
    )
    output_zp = draw(st.one_of(st.sampled_from([-128, 127]), st.integers(-128, 127)))
    clamp = draw(st.sampled_from([(-128, 127), (output_zp, 127)]))
    return multipliers, shifts, output_zp, clamp


@EXAMPLES
@given(requantization_cases(), st.data())
def test_clipped_float_rescale_at_its_clip_bounds_and_int32_extremes(case, data):
    """The clip-then-float64 form (`ClippedFloatRescale`) is what runs for requantizations,
    and equals the reference on the int32 extremes and on every channel's clip bounds
    and their neighbours, where the clip and the clamp must agree to the last step."""
    multipliers, shifts, output_zp, (cmin, cmax) = case
    channels = len(multipliers)
    x_type, y_type = build.batched(32, (1, channels)), build.batched(8, (1, channels))
    module = build.function_module(
        [x_type],
        lambda args: [
            build.rescale(args[0], y_type, multipliers, shifts, 0, output_zp, cmin, cmax)
        ],
    )
    op = next(o for o in module.walk() if isinstance(o, dghw.RescaleOp))
    plan = ClippedFloatRescale.prepare(op)
    assert plan is not None
    per_channel = [np.broadcast_to(bound, channels) for bound in (plan.low, plan.high)]
    values = {INT32_MIN, INT32_MAX, 0, -1, 1}
    for bound in np.concatenate(per_channel).tolist():
        values.update(bound + d for d in (-1, 0, 1))
    values.update(data.draw(st.lists(int32_elements(), max_size=8)))
    column = np.clip(sorted(values), INT32_MIN, INT32_MAX)
    x = np.repeat(column[:, None], channels, axis=1).astype(np.int32)
    expected = ref.rescale(x, multipliers, shifts, 0, output_zp, cmin, cmax, 8)
    np.testing.assert_array_equal(run_one(module, x), expected)
    np.testing.assert_array_equal(plan.apply(x), expected)


def test_clipped_float_rescale_only_where_float64_is_exact():
    def rescale_op(multiplier: int, shift: int, output_zp: int, out_bits: int = 8):
        x_type, y_type = build.batched(32, (2,)), build.batched(out_bits, (2,))
        lo, hi = (-128, 127) if out_bits == 8 else (INT32_MIN, INT32_MAX)
        module = build.function_module(
            [x_type],
            lambda args: [
                build.rescale(args[0], y_type, [multiplier], [shift], 0, output_zp, lo, hi)
            ],
        )
        return next(op for op in module.walk() if op.name == "dghw.rescale")

    assert ClippedFloatRescale.prepare(rescale_op(2**31 - 1, 44, -128)) is not None
    # |x * m| reaches 2^53 + 2^45 at the clip bound of shift 46: past float64's integers.
    assert ClippedFloatRescale.prepare(rescale_op(2**30, 45, 0)) is not None
    assert ClippedFloatRescale.prepare(rescale_op(2**30, 46, 0)) is None
    assert ClippedFloatRescale.prepare(rescale_op(2**30, 47, 0)) is None
    # m > 2^s: results jump by more than one step, the clamp bound may be skipped.
    assert ClippedFloatRescale.prepare(rescale_op(2**31 - 1, 8, 0)) is None
    # onto int32: the clamp spans 2^32 steps, so x * m reaches far past 2^53.
    assert ClippedFloatRescale.prepare(rescale_op(2**30, 31, 0, 32)) is None
    assert ClippedFloatRescale.prepare(rescale_op(0, 31, 0)) is None


@pytest.mark.usefixtures("numpy_parts")
@pytest.mark.parametrize("per_channel", [True, False])
def test_clipped_float_rescale_over_several_blocks(per_channel):
    """A map longer than two blocks (`BLOCK_ELEMENTS`: it runs blocked, on two threads too),
    with 7 channels (the block, a multiple of 7, ends mid-row): every element gets its own
    channel's parameters in every block, the last one partial, as the reference computes
    them."""
    channels = 7
    rng = np.random.default_rng(5)
    multipliers = [int(m) for m in rng.integers(1 << 30, 1 << 31, channels if per_channel else 1)]
    shifts = [int(s) for s in rng.integers(36, 42, channels if per_channel else 1)]
    x_type, y_type = build.batched(32, (1, 5000, channels)), build.batched(8, (1, 5000, channels))
    module = build.function_module(
        [x_type],
        lambda args: [build.rescale(args[0], y_type, multipliers, shifts, 0, -3, -128, 127)],
    )
    op = next(o for o in module.walk() if isinstance(o, dghw.RescaleOp))
    plan = ClippedFloatRescale.prepare(op)
    assert plan is not None
    x = rng.integers(-(1 << 16), 1 << 16, (2, 5000, channels), dtype=np.int32)
    x[0, :5] = INT32_MIN
    x[1, -5:] = INT32_MAX
    assert x.size > 2 * BLOCK_ELEMENTS and x.size % channel_blocks(channels, ())[0] != 0
    expected = ref.rescale(x, multipliers, shifts, 0, -3, -128, 127, 8)
    np.testing.assert_array_equal(plan.apply(x), expected)
    np.testing.assert_array_equal(run_one(module, x), expected)


@pytest.mark.parametrize(
    ("bits", "multiplier", "shift", "input_zp"),
    [(8, 1 << 30, 31, -3), (32, (1 << 31) - 1, 40, 0), (32, 1 << 30, 60, 0)],
)
def test_per_tensor_rescale_of_a_transposed_view(bits, multiplier, shift, input_zp):
    """A per-tensor rescale walks a transposed input in its memory order
    (`in_memory_order`): the table, the clipped float64 and the folded forms give the
    reference's integers, in the input's axis order, and agree with the same input made
    contiguous."""
    dtype = {8: np.int8, 32: np.int32}[bits]
    info = np.iinfo(dtype)
    base = np.random.default_rng(11).integers(
        info.min, info.max, (2, 5, 3, 7), dtype=dtype, endpoint=True
    )
    x = base.transpose(0, 1, 3, 2)  # [2, 5, 7, 3], not contiguous
    x_type, y_type = build.batched(bits, x.shape), build.batched(8, x.shape)
    module = build.function_module(
        [x_type],
        lambda args: [
            build.rescale(args[0], y_type, [multiplier], [shift], input_zp, 5, -128, 127)
        ],
    )
    expected = ref.rescale(x, [multiplier], [shift], input_zp, 5, -128, 127, 8)
    np.testing.assert_array_equal(run_one(module, x), expected)
    np.testing.assert_array_equal(run_one(module, np.ascontiguousarray(x)), expected)
