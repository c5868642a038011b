"""Reshape, transpose, slice, constant, concat and nearest resize on the device model, against the
reference and torch."""

from __future__ import annotations

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from interpreter_cases import (
    EXAMPLES,
    assert_matches_reference,
    concat_cases,
    int32_elements,
    movement_cases,
    run_one,
    single_op_module,
)

from dg.runtime.interpreter import DeviceModel, ValueRecorder
from dg.runtime.kernels.layout import CONCAT_OF_SLICES, VIEW_CHAIN


@EXAMPLES
@given(movement_cases(), st.data())
def test_reshape_matches_reference(case, data):
    x, bits = case
    item = list(x.shape[1:])
    target = data.draw(st.one_of(st.permutations(item), st.just([int(np.prod(item))])))
    result_type = build.tensor(bits, build.BATCH, *target)
    module = build.function_module(
        [build.batched(bits, x.shape)], lambda args: [build.reshape(args[0], result_type)]
    )
    assert_matches_reference(lambda: run_one(module, x), lambda: ref.reshape(x, target))


@EXAMPLES
@given(movement_cases(), st.data())
def test_transpose_matches_reference(case, data):
    x, bits = case
    perm = [0, *data.draw(st.permutations(range(1, x.ndim)))]
    result_type = build.tensor(bits, build.BATCH, *[x.shape[p] for p in perm[1:]])
    module = build.function_module(
        [build.batched(bits, x.shape)], lambda args: [build.transpose(args[0], result_type, perm)]
    )
    assert_matches_reference(lambda: run_one(module, x), lambda: ref.transpose(x, perm))


@EXAMPLES
@given(movement_cases(), st.data())
def test_slice_matches_reference(case, data):
    x, bits = case
    axis = data.draw(st.integers(1, x.ndim - 1))
    start = data.draw(st.integers(0, x.shape[axis] - 1))
    end = data.draw(st.integers(start + 1, x.shape[axis]))
    shape = list(x.shape)
    shape[axis] = end - start
    result_type = build.tensor(bits, build.BATCH, *shape[1:])
    module = build.function_module(
        [build.batched(bits, x.shape)],
        lambda args: [build.slice_op(args[0], result_type, axis, start, end)],
    )
    assert_matches_reference(
        lambda: run_one(module, x), lambda: ref.slice_axis(x, axis, start, end)
    )


@EXAMPLES
@given(st.sampled_from([8, 32]), st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_constant_matches_reference(bits, shape, data):
    dtype = np.int8 if bits == 8 else np.int32
    elements = st.integers(-128, 127) if bits == 8 else int32_elements()
    value = data.draw(arrays(dtype, shape, elements=elements))
    op = build.constant(value)
    module = build.function_module([], lambda args: [op])
    assert_matches_reference(
        lambda: run_one(module), lambda: ref.constant(op.value.data.data, shape, bits)
    )


@EXAMPLES
@given(concat_cases())
def test_concat_matches_reference(case):
    inputs, axis = case
    shape = list(inputs[0].shape)
    shape[axis] = sum(a.shape[axis] for a in inputs)
    result_type = build.batched(8, shape)
    module = single_op_module(inputs, lambda args: build.concat(args, result_type, axis))
    assert_matches_reference(lambda: run_one(module, *inputs), lambda: ref.concat(inputs, axis))


@EXAMPLES
@given(
    st.tuples(st.integers(1, 6), st.integers(1, 6)),
    st.tuples(st.integers(1, 13), st.integers(1, 13)),
    st.sampled_from(["nearest", "nearest-exact"]),
    st.data(),
)
def test_resize_nearest_matches_reference(in_hw, out_hw, mode, data):
    x = data.draw(arrays(np.int8, (2, *in_hw, 2), elements=st.integers(-128, 127)))
    result_type = build.tensor(8, build.BATCH, *out_hw, 2)
    module = single_op_module([x], lambda args: build.resize_nearest(args[0], result_type, mode))
    assert_matches_reference(
        lambda: run_one(module, x), lambda: ref.resize_nearest(x, out_hw, mode)
    )


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize(
    ("in_hw", "out_hw"), [((3, 5), (6, 15)), ((4, 4), (12, 4)), ((8, 6), (4, 2)), ((7, 5), (7, 5))]
)
def test_resize_nearest_is_torchs_for_whole_factors(mode, in_hw, out_hw):
    # Whole up- and down-scaling factors: torch's float32 index arithmetic is exact.
    import torch

    x = np.random.default_rng(5).integers(-128, 128, (2, *in_hw, 3), dtype=np.int8)
    xt = torch.tensor(x, dtype=torch.float32).permute(0, 3, 1, 2)
    expected = torch.nn.functional.interpolate(xt, size=out_hw, mode=mode)
    result_type = build.tensor(8, build.BATCH, *out_hw, 3)
    module = single_op_module([x], lambda args: build.resize_nearest(args[0], result_type, mode))
    np.testing.assert_array_equal(
        run_one(module, x), expected.permute(0, 2, 3, 1).numpy().astype(np.int8)
    )


def sliced_concat_module(pieces, concat_axis: int, also_return_a_slice: bool = False):
    """int8 x [?, 6, 4] -> one dghw.slice per (axis, start, end) of `pieces` -> dghw.concat of
    them along `concat_axis`."""
    x_type = build.batched(8, (0, 6, 4))

    def ops(args):
        made = []
        for axis, start, end in pieces:
            shape = [0, 6, 4]
            shape[axis] = end - start
            made.append(build.slice_op(args[0], build.batched(8, shape), axis, start, end))
        shape = list(made[0].result.type.get_shape())
        shape[concat_axis] = sum(piece.result.type.get_shape()[concat_axis] for piece in made)
        joined = build.concat([p.result for p in made], build.batched(8, shape), concat_axis)
        return [*made, joined]

    def results(ops):
        return [ops[-1].result, ops[0].result] if also_return_a_slice else [ops[-1].result]

    return build.function_module([x_type], ops, results)


@pytest.mark.parametrize(
    "pieces, axis",
    [
        ([(1, 3, 6), (1, 0, 3)], 1),  # RoPE's halves, swapped
        ([(2, 1, 4), (2, 0, 1), (2, 2, 3)], 2),  # three pieces, one index twice
    ],
)
def test_a_concat_of_slices_of_one_value_is_one_step(pieces, axis) -> None:
    """The plan runs the slices and their concat as one step (`CONCAT_OF_SLICES`); its
    result is the reference's and the op-by-op walk's, also on a transposed view."""
    module = sliced_concat_module(pieces, axis)
    device = DeviceModel(module)
    x = np.arange(2 * 6 * 4, dtype=np.int8).reshape(2, 6, 4) - 24
    (expected,) = ref.run_module(module, [x])
    for source in (x, np.ascontiguousarray(x.transpose(0, 2, 1)).transpose(0, 2, 1)):
        np.testing.assert_array_equal(device([source])[0], expected)
    (plan,) = device.interpreter._plans.values()
    assert [step.external for step in plan.steps] == [CONCAT_OF_SLICES, None]  # + return
    np.testing.assert_array_equal(device([x], [ValueRecorder()])[0], expected)


@pytest.mark.parametrize(
    "pieces, axis, also_return_a_slice",
    [
        ([(1, 3, 6), (1, 0, 3)], 1, True),  # a slice read elsewhere
        ([(2, 0, 2), (2, 2, 4)], 1, False),  # slices along another axis than the concat's
    ],
)
def test_a_concat_of_slices_read_elsewhere_or_across_keeps_its_ops(
    pieces, axis, also_return_a_slice
) -> None:
    module = sliced_concat_module(pieces, axis, also_return_a_slice)
    device = DeviceModel(module)
    x = np.arange(2 * 6 * 4, dtype=np.int8).reshape(2, 6, 4) - 24
    for got, want in zip(device([x]), ref.run_module(module, [x]), strict=True):
        np.testing.assert_array_equal(got, want)
    (plan,) = device.interpreter._plans.values()
    assert all(step.external is None for step in plan.steps) and len(plan.steps) == 4


def head_views_module(also_return_the_middle: bool = False):
    """int8 x [?, 8, 32] -> reshape [?, 8, 2, 16] -> transpose [?, 2, 8, 16] -> reshape
    [?, 2, 128]: an attention's heads split, then flattened."""

    def ops(args):
        split = build.reshape(args[0], build.batched(8, (0, 8, 2, 16)))
        heads = build.transpose(split.result, build.batched(8, (0, 2, 8, 16)), [0, 2, 1, 3])
        flat = build.reshape(heads.result, build.batched(8, (0, 2, 128)))
        return [split, heads, flat]

    def results(ops):
        return [ops[-1].result, ops[1].result] if also_return_the_middle else [ops[-1].result]

    return build.function_module([build.batched(8, (0, 8, 32))], ops, results)


@pytest.mark.parametrize("also_return_the_middle", [False, True])
def test_a_chain_of_reshapes_and_transposes_is_one_step(also_return_the_middle) -> None:
    """The plan runs reshape, transpose, reshape as one step (`VIEW_CHAIN`); with the
    transpose's result read elsewhere too, as two (the reshape and transpose, then the
    reshape alone). Each gives the reference's values, also on a transposed input (whose
    reshape copies), and the op-by-op walk's."""
    module = head_views_module(also_return_the_middle)
    device = DeviceModel(module)
    x = (np.arange(3 * 8 * 32) % 251 - 125).astype(np.int8).reshape(3, 8, 32)
    expected = ref.run_module(module, [x])
    for source in (x, np.ascontiguousarray(x.transpose(0, 2, 1)).transpose(0, 2, 1)):
        for got, want in zip(device([source]), expected, strict=True):
            np.testing.assert_array_equal(got, want)
    (plan,) = device.interpreter._plans.values()
    chains = [VIEW_CHAIN, "dghw.reshape"] if also_return_the_middle else [VIEW_CHAIN]
    assert [step.external or step.op.name for step in plan.steps] == [*chains, "func.return"]
    for got, want in zip(device([x], [ValueRecorder()]), expected, strict=True):
        np.testing.assert_array_equal(got, want)
