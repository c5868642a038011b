"""The device model against the TOSA reference model, bit for bit, op by op.

Each case is a small dghw module exported by `convert-dghw-to-tosa`, validated
by tosa-opt for the integer profile and run by `tosa_reference_model` (the
tosa-tools package). One run covers random and worst-case inputs at once: they
are the items of one batch (all -128, all 127, alternating extremes, random).
Parameters are chosen where TOSA defines the result (no int32 overflow, the
RESCALE input inside +-2^(shift-1)); docs/tosa.md says where dghw goes beyond.
"""

from __future__ import annotations

import dghw_testing as build
import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i32, i64

from dg.dialects import dghw
from dg.lowering.convert_dgq_to_dghw import softmax_exp_table
from dg.runtime.tosa_reference import (
    TosaReferenceError,
    cross_check,
    run_tosa_reference,
    tosa_tool,
)

RNG = np.random.default_rng(20261202)
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def int8_batch(shape: tuple[int, ...], random_items: int = 3) -> np.ndarray:
    """Items: all -128, all 127, alternating -128/127, then random int8."""
    low = np.full(shape, -128, dtype=np.int8)
    high = np.full(shape, 127, dtype=np.int8)
    alternating = np.where(np.indices(shape).sum(axis=0) % 2 == 0, -128, 127).astype(np.int8)
    random = RNG.integers(-128, 128, (random_items, *shape), dtype=np.int8)
    return np.concatenate([np.stack([low, high, alternating]), random])


def int32_batch(shape: tuple[int, ...], bound: int = INT32_MAX) -> np.ndarray:
    """Items: all -bound - 1 (or INT32_MIN), all bound, 0 / -1 / 1 pattern, then random int32."""
    lo = max(-bound - 1, INT32_MIN)
    extremes = [np.full(shape, lo), np.full(shape, bound), RNG.choice([0, -1, 1], shape)]
    random = RNG.integers(lo, bound, (3, *shape), endpoint=True)
    return np.concatenate([np.stack(extremes), random]).astype(np.int32)


def assert_bit_identical(module: ModuleOp, *arrays: np.ndarray) -> None:
    check = cross_check(module, arrays)
    assert not check.mismatches(), "\n".join(check.mismatches())


def random_i8(*shape: int) -> np.ndarray:
    return RNG.integers(-128, 128, shape, dtype=np.int8)


def extreme_i8(*shape: int) -> np.ndarray:
    """Weights at the extremes -128 / 127 (the worst case for the accumulators)."""
    return RNG.choice(np.array([-128, 127], dtype=np.int8), shape)


def rescaled(acc, channels: int) -> dghw.RescaleOp:
    """A per-channel i32 -> i8 rescale with a ReLU-like clamp (both TOSA ops appear)."""
    shape = acc.type.get_shape()
    return build.rescale(
        acc,
        build.tensor(8, *shape),
        [int(m) for m in RNG.integers(1 << 30, 1 << 31, channels)],
        [int(s) for s in RNG.integers(36, 44, channels)],
        0,
        -7,
        -7,
        127,
    )


def accumulate_then_rescale(make, channels: int):
    """ops: the accumulating op, its rescale; the module returns both (i32 and i8)."""

    def ops(args):
        first = make(args)
        acc = first[-1]
        return [*first, rescaled(acc.result, channels)]

    return ops, lambda ops: [ops[-2].results[0], ops[-1].results[0]]


# -- accumulating ops ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x_shape", "stride", "pad", "weights"),
    [
        ((7, 6, 3), (2, 2), (1, 0, 2, 1), "random"),  # floor mode drops padding and rows
        ((5, 5, 4), (1, 1), (1, 1, 1, 1), "extreme"),
        ((9, 4, 2), (3, 1), (0, 0, 0, 0), "random"),
    ],
)
def test_conv2d_and_rescale(x_shape, stride, pad, weights) -> None:
    h, w, c = x_shape
    oc, k = 4, 3
    weight = (extreme_i8 if weights == "extreme" else random_i8)(oc, k, k, c)
    bias = RNG.integers(-50000, 50000, oc).astype(np.int32)
    out_h = (h + pad[0] + pad[1] - k) // stride[0] + 1
    out_w = (w + pad[2] + pad[3] - k) // stride[1] + 1
    acc_type = build.batched(32, (0, out_h, out_w, oc))

    def conv(args):
        wc, bc = build.constant(weight), build.constant(bias)
        return [wc, bc, build.conv2d(args[0], wc.result, bc.result, acc_type, stride, pad, -128, 3)]

    ops, results = accumulate_then_rescale(conv, oc)
    module = build.function_module([build.batched(8, (0, *x_shape))], ops, results)
    assert_bit_identical(module, int8_batch(x_shape))


def test_depthwise_conv2d() -> None:
    x_shape, k, stride, pad = (8, 7, 5), (3, 2), (2, 2), (1, 1, 0, 1)
    weight = extreme_i8(*k, 5)
    bias = RNG.integers(-1000, 1000, 5).astype(np.int32)
    out_h = (8 + 2 - 3) // 2 + 1
    out_w = (7 + 1 - 2) // 2 + 1
    acc_type = build.batched(32, (0, out_h, out_w, 5))

    def conv(args):
        wc, bc = build.constant(weight), build.constant(bias)
        return [
            wc,
            bc,
            build.depthwise_conv2d(args[0], wc.result, bc.result, acc_type, stride, pad, 5, -128),
        ]

    ops, results = accumulate_then_rescale(conv, 5)
    module = build.function_module([build.batched(8, (0, *x_shape))], ops, results)
    assert_bit_identical(module, int8_batch(x_shape))


@pytest.mark.parametrize("x_shape", [(300,), (3, 40)])
def test_fully_connected(x_shape) -> None:
    n, k = 6, x_shape[-1]
    weight = extreme_i8(n, k)
    bias = RNG.integers(-(2**20), 2**20, n).astype(np.int32)
    acc_type = build.batched(32, (0, *x_shape[:-1], n))

    def fc(args):
        wc, bc = build.constant(weight), build.constant(bias)
        return [wc, bc, build.fully_connected(args[0], wc.result, bc.result, acc_type, 127, -2)]

    ops, results = accumulate_then_rescale(fc, n)
    module = build.function_module([build.batched(8, (0, *x_shape))], ops, results)
    assert_bit_identical(module, int8_batch(x_shape))


@pytest.mark.parametrize(
    ("lhs", "rhs"), [((4, 70), (70, 5)), ((2, 3, 6), (2, 6, 4))], ids=["rank3", "rank4"]
)
def test_matmul(lhs, rhs) -> None:
    result_type = build.batched(32, (0, *lhs[:-1], rhs[-1]))

    def ops(args):
        properties = {"lhs_zp": IntegerAttr(-128, i32), "rhs_zp": IntegerAttr(127, i32)}
        return [
            dghw.MatmulOp.build(operands=args, properties=properties, result_types=[result_type])
        ]

    module = build.function_module([build.batched(8, (0, *lhs)), build.batched(8, (0, *rhs))], ops)
    assert_bit_identical(module, int8_batch(lhs), int8_batch(rhs))


def test_mul_by_a_broadcast_constant() -> None:
    x_shape, constant = (4, 3, 5), extreme_i8(1, 4, 1, 5)

    def ops(args):
        c = build.constant(constant)
        product = dghw.MulOp.build(
            operands=[args[0], c.result],
            properties={"input_zp": IntegerAttr(-128, i32), "constant_zp": IntegerAttr(127, i32)},
            result_types=[build.batched(32, (0, *x_shape))],
        )
        return [c, product]

    module = build.function_module([build.batched(8, (0, *x_shape))], ops)
    assert_bit_identical(module, int8_batch(x_shape))


# -- rescale and add on i32 ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("multiplier", "shift", "output_bits", "clamp"),
    [
        ([2**31 - 1], [40], 8, (-128, 127)),  # the largest multiplier
        ([2**31 - 1, 1 << 30, 12345, 0], [32, 62, 33, 40], 8, (-20, 100)),  # per channel
        ([(1 << 30) + 7], [33], 32, (INT32_MIN, INT32_MAX)),  # i32 -> i32
        ([2**31 - 1], [33], 32, (-1000, 2**28)),  # i32 -> i32, clamped (no i32 CLAMP in TOSA)
    ],
)
def test_rescale_of_i32(multiplier, shift, output_bits, clamp) -> None:
    shape = (3, 4)

    def ops(args):
        result_type = build.batched(output_bits, (0, *shape))
        return [build.rescale(args[0], result_type, multiplier, shift, 0, 0, *clamp)]

    module = build.function_module([build.batched(32, (0, *shape))], ops)
    assert_bit_identical(module, int32_batch(shape))


def test_rescale_of_i8_with_zero_points() -> None:
    shape = (2, 3, 5)

    def ops(args):
        result_type = build.batched(8, (0, *shape))
        return [build.rescale(args[0], result_type, [1518500250], [30], 127, -128, -128, 127)]

    module = build.function_module([build.batched(8, (0, *shape))], ops)
    assert_bit_identical(module, int8_batch(shape))


def test_add() -> None:
    shape = (4, 3)
    module = build.function_module(
        [build.batched(32, (0, *shape))] * 2, lambda args: [build.add(args[0], args[1])]
    )
    bound = 2**30 - 1  # the sum must stay in int32 (TOSA REQUIREs it)
    assert_bit_identical(module, int32_batch(shape, bound), int32_batch(shape, bound))


# -- data movement --------------------------------------------------------------------------


def test_transpose_reshape_slice_concat() -> None:
    def ops(args):
        t = build.transpose(args[0], build.batched(8, (0, 5, 3, 4)), [0, 3, 1, 2])
        r = build.reshape(t.result, build.batched(8, (0, 15, 4)))
        s = build.slice_op(r.result, build.batched(8, (0, 6, 4)), 1, 7, 13)
        c = build.concat([s.result, s.result, r.result], build.batched(8, (0, 27, 4)), 1)
        return [t, r, s, c]

    module = build.function_module([build.batched(8, (0, 3, 4, 5))], ops)
    assert_bit_identical(module, int8_batch((3, 4, 5)))


@pytest.mark.parametrize(
    ("in_hw", "out_hw", "mode"),
    [((3, 4), (7, 8), "nearest"), ((5, 6), (3, 6), "nearest-exact"), ((4, 2), (8, 7), "nearest")],
)
def test_resize_nearest(in_hw, out_hw, mode) -> None:
    def ops(args):
        return [build.resize_nearest(args[0], build.batched(8, (0, *out_hw, 2)), mode)]

    module = build.function_module([build.batched(8, (0, *in_hw, 2))], ops)
    assert_bit_identical(module, int8_batch((*in_hw, 2)))


# -- pooling --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("in_hw", "kernel", "stride", "out_hw"),
    [((7, 8), (2, 2), (2, 2), (3, 4)), ((8, 10), (3, 2), (2, 3), (4, 4))],
    ids=["floor-drops-a-row", "ceil-overhang"],
)
def test_max_pool2d(in_hw, kernel, stride, out_hw) -> None:
    def ops(args):
        return [build.max_pool2d(args[0], build.batched(8, (0, *out_hw, 3)), kernel, stride)]

    module = build.function_module([build.batched(8, (0, *in_hw, 3))], ops)
    assert_bit_identical(module, int8_batch((*in_hw, 3)))


@pytest.mark.parametrize(
    ("in_hw", "kernel", "stride", "pad", "out_hw", "count_include_pad", "divisor_override"),
    [
        ((7, 7), (3, 3), (2, 2), (1, 1, 1, 1), (4, 4), False, None),
        ((7, 7), (3, 3), (2, 2), (1, 1, 1, 1), (4, 4), True, None),
        ((7, 7), (3, 2), (2, 2), (1, 0, 0, 1), (4, 4), True, None),  # ceil overhang
        ((7, 7), (3, 2), (2, 2), (1, 0, 0, 1), (4, 4), False, None),
        ((8, 8), (2, 2), (2, 2), (0, 0, 0, 0), (4, 4), False, None),
        ((7, 6), (3, 3), (2, 2), (1, 1, 1, 1), (4, 3), False, 5),
        ((5, 5), (5, 5), (1, 1), (0, 0, 0, 0), (1, 1), False, 1000),
    ],
)
def test_avg_pool2d(in_hw, kernel, stride, pad, out_hw, count_include_pad, divisor_override):
    def ops(args):
        result_type = build.batched(8, (0, *out_hw, 3))
        return [
            build.avg_pool2d(
                args[0],
                result_type,
                kernel,
                stride,
                pad,
                count_include_pad,
                divisor_override,
                9,
                -4,
            )
        ]

    module = build.function_module([build.batched(8, (0, *in_hw, 3))], ops)
    assert_bit_identical(module, int8_batch((*in_hw, 3)))


# -- lookups --------------------------------------------------------------------------------


def test_table() -> None:
    entries = RNG.integers(-128, 128, 256)
    module = build.function_module(
        [build.batched(8, (0, 3, 7))], lambda args: [build.table(args[0], entries)]
    )
    assert_bit_identical(module, int8_batch((3, 7)))


@pytest.mark.parametrize(
    ("shape", "axis", "input_scale"),
    [((4, 10), 2, 0.05), ((6, 3, 2), 1, 0.01), ((200,), 1, 1.0), ((2, 2, 300), 3, 0.003)],
)
def test_softmax(shape, axis, input_scale) -> None:
    table = softmax_exp_table(input_scale, shape[axis - 1])
    module = build.function_module(
        [build.batched(8, (0, *shape))], lambda args: [build.softmax(args[0], table, axis)]
    )
    # One dominant element over a common level, besides the extremes and random rows.
    dominant = np.full((1, *shape), -100, dtype=np.int8)
    dominant[(0, *([0] * len(shape)))] = 127
    assert_bit_identical(module, np.concatenate([int8_batch(shape), dominant]))


# -- integer logic ops ----------------------------------------------------------------------


SHIFTS = [("left", 0), ("left", 7), ("left", 31), ("right", 0), ("right", 5), ("right", 31)]
BITWISE = [("and", 255), ("or", -256), ("xor", INT32_MIN)]
COMPARE_KINDS = ["gt", "ge", "lt", "le", "eq", "ne"]


def logic_op(op_type, *operands, result_shape=None, **properties):
    shape = result_shape or operands[0].type.get_shape()[1:]
    return op_type.build(
        operands=list(operands),
        result_types=[build.batched(32, (0, *shape))],
        properties=properties,
    )


def test_integer_logic_ops() -> None:
    """Every shift, bitwise and compare variant and a tile: one module, one output each."""

    def ops(args):
        x = args[0]
        shifts = [
            logic_op(dghw.ShiftOp, x, direction=StringAttr(d), shift=IntegerAttr(k, i64))
            for d, k in SHIFTS
        ]
        bitwise = [
            logic_op(dghw.BitwiseOp, x, kind=StringAttr(kind), value=IntegerAttr(v, i64))
            for kind, v in BITWISE
        ]
        compares = [
            logic_op(dghw.CompareOp, x, kind=StringAttr(kind), value=IntegerAttr(0, i64))
            for kind in COMPARE_KINDS
        ]
        tile = logic_op(dghw.TileOp, x, result_shape=(6, 12), multiples=build.i64_array([1, 2, 3]))
        return [*shifts, *bitwise, *compares, tile]

    module = build.function_module(
        [build.batched(32, (0, 3, 4))], ops, lambda ops: [op.results[0] for op in ops]
    )
    assert_bit_identical(module, int32_batch((3, 4)))


def test_integer_logic_ops_on_two_tensors() -> None:
    """Every bitwise and compare kind on two tensors: one module, one output each.

    Batch items of (x, y): (INT32_MIN, INT32_MAX), (INT32_MAX, INT32_MIN), the same 0/-1/1
    pattern twice, random pairs, and a random pair made equal at every other element."""

    def ops(args):
        x, y = args
        bitwise = [
            logic_op(dghw.BitwiseTensorOp, x, y, kind=StringAttr(kind)) for kind, _ in BITWISE
        ]
        compares = [
            logic_op(dghw.CompareTensorOp, x, y, kind=StringAttr(kind)) for kind in COMPARE_KINDS
        ]
        return [*bitwise, *compares]

    module = build.function_module(
        [build.batched(32, (0, 3, 4))] * 2, ops, lambda ops: [op.results[0] for op in ops]
    )
    x = int32_batch((3, 4))
    y = np.concatenate([x[[1, 0, 2]], int32_batch((3, 4))[3:]])
    y[-1] = np.where(np.indices((3, 4)).sum(axis=0) % 2 == 0, x[-1], y[-1])
    assert_bit_identical(module, x, y)


# -- the harness itself ----------------------------------------------------------------------


def test_a_required_int32_overflow_is_reported_not_compared() -> None:
    """TOSA REQUIREs that ADD does not overflow; the reference model's exit code 1 says so."""
    module = build.function_module(
        [build.batched(32, (0, 2))] * 2, lambda args: [build.add(args[0], args[1])]
    )
    full = np.full((1, 2), INT32_MAX, dtype=np.int32)
    with pytest.raises(TosaReferenceError, match="REQUIRE"):
        run_tosa_reference(module, [full, full])


def test_a_missing_tool_names_the_package_to_install() -> None:
    with pytest.raises(TosaReferenceError, match=r"'no-such-tosa-tool' was not found.*tosa-tools"):
        tosa_tool("no-such-tosa-tool")
