"""dghw.add on the device model: against the reference, in int32 exactly when the operand ranges
prove it, and fused with its rescales into a pair table."""

from __future__ import annotations

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
from hypothesis import given
from interpreter_cases import (
    EXAMPLES,
    INT32_MAX,
    INT32_MIN,
    add_cases,
    assert_matches_reference,
    module_zp,
    pair_table_module,
    run_one,
)

from dg.dialects import dghw
from dg.runtime.interpreter import DeviceModel, ValueRecorder
from dg.runtime.kernels.elementwise import sum_fits_int32
from dg.runtime.kernels.pair_tables import PAIR_BLOCK


@EXAMPLES
@given(add_cases())
def test_add_matches_reference(case):
    a, b = case
    t = build.batched(32, a.shape)
    module = build.function_module([t, t], lambda args: [build.add(*args)])
    assert_matches_reference(lambda: run_one(module, a, b), lambda: ref.add(a, b))


def residual_add_module(i8_input: bool, multiplier: int, shift: int, clamp: tuple[int, int]):
    """Two rescales onto int32 (the residual pattern), then their `dghw.add`."""
    bits = 8 if i8_input else 32
    x_type, y_type = build.batched(bits, (1, 3)), build.batched(32, (1, 3))
    zp = -128 if i8_input else 0

    def ops(args):
        a = build.rescale(args[0], y_type, [multiplier], [shift], zp, 0, *clamp)
        b = build.rescale(args[1], y_type, [multiplier], [shift], zp, 0, *clamp)
        return [a, b, build.add(a.result, b.result)]

    return build.function_module([x_type, x_type], ops)


@pytest.mark.parametrize(
    ("i8_input", "multiplier", "shift", "clamp", "in_int32"),
    [
        # clamps whose sum fits: the int32 add
        (False, 2**30, 30, (-(2**30), 2**30 - 1), True),
        # one more at the top: the sum could reach 2^31, so int64 and the range check
        (False, 2**30, 30, (-(2**30), 2**30), False),
        (False, 2**30, 30, (INT32_MIN, INT32_MAX), False),
        # int8 inputs: the table's range, however wide the clamp
        (True, 2**30, 8, (INT32_MIN, INT32_MAX), True),  # |255 * 2^22| * 2 < 2^31
        (True, 2**31 - 1, 8, (INT32_MIN, INT32_MAX), False),  # 255 * 2^23 each: 2^31 and up
    ],
)
def test_add_in_int32_exactly_when_the_operand_ranges_prove_it(
    i8_input, multiplier, shift, clamp, in_int32
):
    module = residual_add_module(i8_input, multiplier, shift, clamp)
    add_op = next(o for o in module.walk() if isinstance(o, dghw.AddOp))
    assert sum_fits_int32(add_op.lhs, add_op.rhs) == in_int32
    dtype = np.int8 if i8_input else np.int32
    info = np.iinfo(dtype)
    extremes = np.array([[info.min, info.max, 0], [info.max, info.max, info.min]], dtype=dtype)
    for lhs, rhs in [(extremes, extremes), (extremes, extremes[::-1].copy())]:

        def reference(lhs=lhs, rhs=rhs):
            a = ref.rescale(lhs, [multiplier], [shift], module_zp(i8_input), 0, *clamp, 32)
            b = ref.rescale(rhs, [multiplier], [shift], module_zp(i8_input), 0, *clamp, 32)
            return ref.add(a, b)

        assert_matches_reference(lambda lhs=lhs, rhs=rhs: run_one(module, lhs, rhs), reference)


def every_int8_pair() -> tuple[np.ndarray, np.ndarray]:
    """[256, 256] arrays holding each of the 65536 (a, b) pairs once."""
    values = np.arange(-128, 128, dtype=np.int8)
    return np.repeat(values[:, None], 256, axis=1), np.tile(values, (256, 1))


@pytest.mark.parametrize(
    "lhs, rhs, out",
    [
        ((1 << 30, 10, -3), (1518500250, 11, 7), (1 << 30, 50, -128, -128)),  # TFLite-like
        ((2**31 - 1, 2, -128), (1, 2, 127), (2**31 - 1, 62, 5, -128)),  # extreme parameters
        ((1 << 30, 30, 0), (1 << 30, 30, 0), (1 << 30, 30, 0, 0)),  # a ReLU clamp
    ],
)
def test_a_residual_add_as_a_pair_table_equals_its_ops(lhs, rhs, out) -> None:
    """The planned walk replaces rescale(add(rescale a, rescale b)) by one lookup; on all
    65536 input pairs it gives the reference's integers and the op-by-op walk's."""
    module = pair_table_module(lhs, rhs, out)
    device = DeviceModel(module)
    a, b = every_int8_pair()
    (planned,) = device([a, b])
    (plan,) = device.interpreter._plans.values()
    assert [step.pair_table is not None for step in plan.steps] == [True, False]  # + return
    (observed,) = device([a, b], [ValueRecorder()])
    (expected,) = ref.run_module(module, [a, b])
    np.testing.assert_array_equal(planned, expected)
    np.testing.assert_array_equal(observed, expected)


def test_a_per_channel_rescale_keeps_the_residual_add_unfused() -> None:
    i8, i32 = build.batched(8, [0, 2]), build.batched(32, [0, 2])

    def ops(args):
        a = build.rescale(args[0], i32, [1 << 30, 1 << 29], [30, 30], 0, 0, -(2**31), 2**31 - 1)
        b = build.rescale(args[1], i32, [1 << 30], [30], 0, 0, -(2**31), 2**31 - 1)
        total = build.add(a.result, b.result)
        return [a, b, total, build.rescale(total.result, i8, [1 << 30], [30], 0, 0, -128, 127)]

    device = DeviceModel(build.function_module([i8, i8], ops))
    x = np.array([[-128, 127], [5, -6]], dtype=np.int8)
    device([x, x])
    (plan,) = device.interpreter._plans.values()
    assert all(step.pair_table is None for step in plan.steps) and len(plan.steps) == 5


def test_pair_tables_can_be_turned_off() -> None:
    """bench/interpreter_floor.py replays recorded results: its walk must not fuse."""
    from dg.runtime.interpreter import DeviceInterpreter, register_device_functions

    module = pair_table_module((1 << 30, 10, -3), (1 << 30, 10, 7), (1 << 30, 40, 0, -128))
    interpreter = DeviceInterpreter(module, fuse_groups=False)
    register_device_functions(interpreter)
    a, b = every_int8_pair()
    (result,) = interpreter.call_op("main", (a, b))
    (plan,) = interpreter._plans.values()
    assert all(step.pair_table is None for step in plan.steps) and len(plan.steps) == 5
    np.testing.assert_array_equal(result, ref.run_module(module, [a, b])[0])


@pytest.mark.usefixtures("numpy_parts")
def test_a_pair_table_over_several_blocks_equals_its_ops() -> None:
    """Operands longer than two `PAIR_BLOCK`s are looked up block by block (on two threads
    too): every pair, repeated over five copies of all 65536 (the last block partial),
    gives the integers of the reference on that pair."""
    module = pair_table_module((1 << 30, 10, -3), (1518500250, 11, 7), (1 << 30, 50, -128, -128))
    a, b = every_int8_pair()
    (expected,) = ref.run_module(module, [a, b])
    copies = 5
    assert a.size * copies > 2 * PAIR_BLOCK and (a.size * copies) % PAIR_BLOCK
    (planned,) = DeviceModel(module)([np.tile(a, (copies, 1)), np.tile(b, (copies, 1))])
    np.testing.assert_array_equal(planned, np.tile(expected, (copies, 1)))


def test_pair_table_on_transposed_views() -> None:
    """Operands that are transposed views of one layout are looked up in memory order (the
    result keeps the views' axis order); of different layouts, as they are."""
    module = pair_table_module((1 << 30, 10, -3), (1518500250, 11, 7), (1 << 30, 50, -128, -128))
    device = DeviceModel(module)
    a, b = every_int8_pair()
    a_view, b_view = np.ascontiguousarray(a.T).T, np.ascontiguousarray(b.T).T
    assert not a_view.flags.c_contiguous and a_view.strides == b_view.strides
    (expected,) = ref.run_module(module, [a, b])
    for lhs, rhs in ((a_view, b_view), (a_view, b), (a, b_view)):
        np.testing.assert_array_equal(device([lhs, rhs])[0], expected)
