"""Accumulate ops with their requantization as one step (`requantized_accumulate`): the
rescale of bias-less sums with the bias folded in (`SumRequantization`) at its
bounds and one past them, and the fused step against the op-by-op walk and the reference,
on both GEMM paths (`both_gemm_paths`)."""

from __future__ import annotations

import math

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from interpreter_cases import EXAMPLES, int8_zero_points
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation

from dg.dialects import dghw
from dg.runtime import threads as threads_module
from dg.runtime.exact import F32_EXACT_LIMIT, FLOAT_INT8_GEMM_MACS, INT32_MAX
from dg.runtime.interpreter import DeviceModel
from dg.runtime.kernels import gemm as gemm_module
from dg.runtime.kernels import patches as patches_module
from dg.runtime.kernels import requantization
from dg.runtime.kernels import weights as weights_module
from dg.runtime.kernels.common import BLOCK_ELEMENTS, TORCH_MIN_ELEMENTS
from dg.runtime.kernels.gemm import SCALED_GEMM_MAX_K, SCALED_GEMM_SMALL_RESULT
from dg.runtime.kernels.quantization import clip_window
from dg.runtime.kernels.requantization import (
    ScaledGemm,
    SmallSumRequantization,
    SumRequantization,
)
from dg.runtime.kernels.weights import (
    ACCUMULATE_THEN_RESCALE,
    WeightsFunctions,
    requantized_accumulate,
)

pytestmark = pytest.mark.usefixtures("both_gemm_paths")

F64_LIMIT = 1 << 53
SUM_BOUND = F32_EXACT_LIMIT - 1
"""The largest |sum| of a one-chunk GEMM or of float depthwise taps."""


def rescale_op(
    multiplier: int, shift: int, output_zp: int = 0, clamp_min: int = -128
) -> dghw.RescaleOp:
    x_type, y_type = build.batched(32, (1, 1)), build.batched(8, (1, 1))
    module = build.function_module(
        [x_type],
        lambda args: [
            build.rescale(args[0], y_type, [multiplier], [shift], 0, output_zp, clamp_min, 127)
        ],
    )
    return next(op for op in module.walk() if isinstance(op, dghw.RescaleOp))


def check_sums(op: dghw.RescaleOp, bias: int, sums: list[int]) -> None:
    """`SumRequantization` of `op` with `bias` on float32 `sums`, in torch's passes and in
    numpy's (`SmallSumRequantization`): the reference's rescale of bias + sums."""
    plan = SumRequantization.prepare(op, np.array([bias]), F32_EXACT_LIMIT)
    assert plan is not None
    g = np.array(sums, dtype=np.int64)[:, None]
    m, s = op.multiplier.get_values()[0], op.shift.get_values()[0]
    expected = ref.rescale(g + bias, [m], [s], 0, op.output_zp.value.data, -128, 127, 8)
    np.testing.assert_array_equal(plan.apply_in_torch(g.astype(np.float32)), expected)
    np.testing.assert_array_equal(plan.small.apply(g.astype(np.float32)), expected)


def sums_around(*values: int) -> list[int]:
    """Every sum within +-2 of `values` and the sums' extremes, those a GEMM can form."""
    near = {v + d for v in values for d in range(-2, 3)} | {-SUM_BOUND, SUM_BOUND, 0}
    return sorted(v for v in near if abs(v) <= SUM_BOUND)


@pytest.mark.parametrize("past", [0, 1])
def test_sums_clip_bound_at_2_to_the_24_and_one_past(past):
    """low - bias = 2^24: every sum lies below the clip, all give clamp_min (float32 holds
    2^24); one more and the bound is no float32 integer: refused."""
    op = rescale_op(1 << 28, 38)
    low, _ = clip_window(op, 1 << 28, 38) or (0, 0)
    bias = low - F32_EXACT_LIMIT - past
    if past:
        assert SumRequantization.prepare(op, np.array([bias]), F32_EXACT_LIMIT) is None
    else:
        check_sums(op, bias, sums_around(0))


@pytest.mark.parametrize("past", [0, 1])
def test_sums_product_bound_at_2_to_the_53_and_one_past(past):
    """The clipped sum times m reaches 2^53 exactly (|sum| = 2^24 at the clip, m = 2^29);
    with m one larger it passes 2^53 while the folded offset stays below it: refused."""
    multiplier = (1 << 29) + past
    op = rescale_op(multiplier, 37)
    window = clip_window(op, multiplier, 37)
    assert window is not None
    bias = window[0] + F32_EXACT_LIMIT  # low - bias = -2^24
    if past:
        assert SumRequantization.prepare(op, np.array([bias]), F32_EXACT_LIMIT) is None
    else:
        check_sums(op, bias, sums_around(window[0] - bias, window[1] - bias))


@pytest.mark.parametrize("past", [0, 1])
def test_sums_folded_offset_at_2_to_the_53_and_one_past(past):
    """offset + bias * m = 2^53 exactly (m = 2^29, x0 * m + offset = 0 for
    x0 = -2^(s-30) - output_zp * 2^(s-29), bias = x0 + 2^24); one more unit of bias
    passes it: refused."""
    output_zp, shift = 5, 37
    op = rescale_op(1 << 29, shift, output_zp)
    x0 = -(1 << (shift - 30)) - (output_zp << (shift - 29))
    bias = x0 + F32_EXACT_LIMIT + past
    if past:
        assert SumRequantization.prepare(op, np.array([bias]), F32_EXACT_LIMIT) is None
    else:
        window = clip_window(op, 1 << 29, shift)
        assert window is not None
        check_sums(op, bias, sums_around(window[0] - bias, window[1] - bias))


@st.composite
def requantized_cases(draw, size: int = 8):
    """An accumulate op (conv2d, depthwise, FC) on constant weights with its rescale."""
    kind = draw(st.sampled_from(["conv2d", "depthwise", "fc"]))
    channels, out_channels = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pad = draw(st.tuples(*[st.integers(0, 1)] * 4))
    height, width = draw(st.integers(3, size)), draw(st.integers(3, size))
    x = draw(arrays(np.int8, (draw(st.integers(1, 3)), height, width, channels)))
    if kind == "depthwise":
        out_channels = channels
    w_shape = {
        "conv2d": (out_channels, *kernel, channels),
        "depthwise": (*kernel, channels),
        "fc": (out_channels, channels),
    }[kind]
    w = draw(arrays(np.int8, w_shape))
    b = draw(arrays(np.int32, out_channels, elements=st.integers(-(1 << 20), 1 << 20)))
    # weight_zp 0 (dg's symmetric weights) half the time: the int8 GEMMs take only those.
    weight_zp = 0 if draw(st.booleans()) else draw(int8_zero_points(False))
    zps = draw(int8_zero_points(False)), weight_zp
    count = out_channels if draw(st.booleans()) else 1
    multipliers = draw(st.lists(st.integers(1 << 28, INT32_MAX), min_size=count, max_size=count))
    shifts = draw(st.lists(st.integers(31, 40), min_size=count, max_size=count))
    output_zp, relu = draw(st.integers(-128, 127)), draw(st.booleans())
    rescale = (multipliers, shifts, output_zp, output_zp if relu else -128)
    return kind, x, w, b, stride, pad, zps, rescale


def accumulate_op(case, x, w, b, result_type) -> dghw.AccumulateOp:
    kind, _, _, _, stride, pad, (input_zp, weight_zp), _ = case
    if kind == "fc":
        return build.fully_connected(x, w, b, result_type, input_zp, weight_zp)
    if kind == "conv2d":
        return build.conv2d(x, w, b, result_type, stride, pad, input_zp, weight_zp)
    return build.depthwise_conv2d(x, w, b, result_type, stride, pad, input_zp, weight_zp)


def accumulate_reference(case) -> np.ndarray:
    kind, x, w, b, stride, pad, (input_zp, weight_zp), _ = case
    if kind == "fc":
        return ref.fully_connected(x, w, b, input_zp, weight_zp)
    if kind == "conv2d":
        return ref.conv2d(x, w, b, stride, pad, input_zp, weight_zp)
    return ref.depthwise_conv2d(x, w, b, stride, pad, input_zp, weight_zp)


def result_shape(case) -> tuple[int, ...]:
    kind, x, w, _, stride, pad, _, _ = case
    if kind == "fc":
        return (*x.shape[:-1], w.shape[0])
    kh, kw = w.shape[1:3] if kind == "conv2d" else w.shape[:2]
    oh = (x.shape[1] + pad[0] + pad[1] - kh) // stride[0] + 1
    ow = (x.shape[2] + pad[2] + pad[3] - kw) // stride[1] + 1
    return (x.shape[0], oh, ow, w.shape[0] if kind == "conv2d" else w.shape[-1])


def requantized_module(case):
    """The case's accumulate op, its weights and bias as constants, then its rescale."""
    _, x, w, b, _, _, _, (multipliers, shifts, output_zp, clamp_min) = case
    shape = result_shape(case)

    def ops(args) -> list[Operation]:
        wc, bc = build.constant(w), build.constant(b)
        acc = accumulate_op(case, args[0], wc.result, bc.result, build.batched(32, shape))
        out = build.rescale(
            acc.result, build.batched(8, shape), multipliers, shifts, 0, output_zp, clamp_min, 127
        )
        return [wc, bc, acc, out]

    return build.function_module([build.batched(8, x.shape)], ops)


@pytest.mark.parametrize("kind", ["fc", "conv2d"])
@pytest.mark.parametrize("elements", [TORCH_MIN_ELEMENTS - 1, TORCH_MIN_ELEMENTS])
def test_the_fused_step_requantizes_in_numpy_below_torch_min_elements(
    monkeypatch, spy, kind, elements
):
    """An FC or a padded 3x3 conv of `elements` results: below `TORCH_MIN_ELEMENTS` the
    step requantizes the GEMM's sums with numpy's passes, from it on with torch's; the
    integers agree with the op-by-op walk and the reference. (Without the form folded into
    small weights, `ScaledGemm`, which would take the FC.)"""
    monkeypatch.setattr(gemm_module.PreparedGemm, "scaled", lambda self, requantize: None)
    in_numpy = spy(SmallSumRequantization, "apply", lambda self, sums: sums.size)
    rng = np.random.default_rng(5)
    if kind == "fc":  # 32767 = 4681 rows of 7 outputs, 32768 = 4096 rows of 8
        outputs = 7 if elements % 2 else 8
        x = rng.integers(-128, 128, (elements // outputs, 1, 1, 16), dtype=np.int8)
        w = rng.integers(-128, 128, (outputs, 16), dtype=np.int8)
    else:  # one output channel: 32767 = 7 * 31 * 151 (N, H, W), 32768 = 8 * 64 * 64
        n, h, width = (7, 31, 151) if elements % 2 else (8, 64, 64)
        x = rng.integers(-128, 128, (n, h, width, 3), dtype=np.int8)
        w = rng.integers(-128, 128, (1, 3, 3, 3), dtype=np.int8)
    b = rng.integers(-1000, 1000, len(w), dtype=np.int32)
    case = (kind, x, w, b, (1, 1), (1, 1, 1, 1) if kind == "conv2d" else (0, 0, 0, 0))
    case += ((3, 0), ([1 << 20], [26], -5, -128))
    assert math.prod(result_shape(case)) == elements
    fused, op_by_op = fused_and_op_by_op(requantized_module(case), x)
    np.testing.assert_array_equal(fused, op_by_op)
    acc = accumulate_reference(case)
    np.testing.assert_array_equal(fused, ref.rescale(acc, [1 << 20], [26], 0, -5, -128, 127, 8))
    assert in_numpy == ([elements] if elements < TORCH_MIN_ELEMENTS else [])


def fused_and_op_by_op(module, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The planned run (one fused step) and the observed one (every op seen)."""
    model = DeviceModel(module)
    (fused,) = model([x])
    steps = model.interpreter._plan(model.function.body.block).steps
    assert [step.external for step in steps].count(ACCUMULATE_THEN_RESCALE) == 1
    (op_by_op,) = model([x], [Interpreter.Listener()])
    return fused, op_by_op


@EXAMPLES
@given(requantized_cases())
def test_fused_step_matches_reference(case):
    fused, op_by_op = fused_and_op_by_op(requantized_module(case), case[1])
    multipliers, shifts, output_zp, clamp_min = case[-1]
    acc = accumulate_reference(case)
    expected = ref.rescale(acc, multipliers, shifts, 0, output_zp, clamp_min, 127, 8)
    np.testing.assert_array_equal(fused, expected)
    np.testing.assert_array_equal(op_by_op, expected)


def one_chunk_bound_case(kind: str, past: int):
    """Weights whose sums reach -(2^24 - 1) = -255 * (258 * 255 + 3) in channel 0 (258
    terms of 255 and one of 3, inputs all -255), and one unit past it in channel 1 when
    `past`: a GEMM of two chunks / integer depthwise taps, so no fused rescale."""
    centered = np.zeros((259, 2), dtype=np.int64)
    centered[:258] = 255
    centered[258] = (3, 3 + past)
    w = (centered - 128).astype(np.int8)  # weight_zp = -128
    x = np.full((2, 1, 1, 259) if kind == "fc" else (2, 7, 37, 2), -128, dtype=np.int8)
    if kind == "fc":
        return kind, x, np.ascontiguousarray(w.T), w.T[0] * 0
    return kind, x, w.reshape(7, 37, 2), w[0] * 0


@pytest.mark.parametrize("kind", ["fc", "depthwise"])
@pytest.mark.parametrize("past", [0, 1])
def test_fused_step_at_the_one_chunk_bound_and_one_past(kind, past):
    """At the sums' bound the rescale runs on the float32 sums (`sum_requantization`),
    one past it on the int32 accumulator; both give the reference's integers. The bias
    brings the accumulator near 0 and the rescale halves it (m = 2^28, s = 29): one
    unit of error in the sums would change the result."""
    kind, x, w, _ = one_chunk_bound_case(kind, past)
    b = np.array([(1 << 24) - 1 + 9, (1 << 24) + 250], dtype=np.int32)
    case = (kind, x, w, b, (1, 1), (0, 0, 0, 0), (127, -128), ([1 << 28], [29], 0, -128))
    module = requantized_module(case)
    fused, op_by_op = fused_and_op_by_op(module, x)
    acc = accumulate_reference(case)
    np.testing.assert_array_equal(fused, ref.rescale(acc, [1 << 28], [29], 0, 0, -128, 127, 8))
    np.testing.assert_array_equal(fused, op_by_op)
    assert fused.ravel()[0] == 5  # acc = 9: floor((9 + 1) / 2)
    ops = list(next(o for o in module.walk() if o.name == "func.func").walk())
    accumulate = next(o for o in ops if isinstance(o, dghw.AccumulateOp))
    rescale = requantized_accumulate(accumulate)
    assert rescale is not None
    args = (x, w, b)
    requantize = WeightsFunctions().sum_requantization(accumulate, rescale, args)
    assert (requantize is None) == bool(past)


@pytest.mark.parametrize("weight_zp", [0, 2])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kind", ["conv2d", "conv2d-3x3-s2", "depthwise", "depthwise-3x3-s2", "fc"])
def test_fused_step_over_many_blocks(monkeypatch, spy, kind, threads, weight_zp, both_gemm_paths):
    """Maps of several `BLOCK_ELEMENTS` blocks, the last one partial, per-channel
    multipliers: the fused step gives the op-by-op walk's integers, on one caller's thread
    and on two, where the blocks (`SUM_BLOCK`, a GEMM's `FUSED_BLOCK` and a depthwise
    conv's `DEPTHWISE_BLOCK`, made short here so that the map spans many, each item's
    last one partial) are split over the threads (`PARALLEL_WORK`). A weight zero point
    of 0 lets the int8 GEMM path take its int8 weights; 2 keeps float32 weights on either
    path."""
    monkeypatch.setattr(requantization, "SUM_BLOCK", 1 << 15)
    monkeypatch.setattr(gemm_module, "FUSED_BLOCK", 1 << 14)
    monkeypatch.setattr(weights_module, "DEPTHWISE_BLOCK", 1 << 12)
    monkeypatch.setattr(threads_module, "PARALLEL_WORK", 1 << 16)  # the map takes the threads
    blocks = spy(gemm_module.PreparedGemm, "block_gemm", returns=True)
    strided = kind.endswith("-s2")
    tap_sums = spy(  # (items, output rows) of each
        weights_module.DepthwiseWeights,
        "tap_sums_into",
        lambda self, x, s, acc: tuple(acc.shape[:2]),
    )
    saved_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        check_many_blocks(kind, weight_zp)
    finally:
        torch.set_num_threads(saved_threads)
    # A GEMM's sums went block by block, on either GEMM path; depthwise taps are no GEMM.
    int8 = both_gemm_paths == "int8-gemms" and weight_zp == 0
    sums = torch.int32 if int8 else torch.float32
    depthwise = kind.startswith("depthwise")
    assert [form and form[2] for form in blocks] == ([] if depthwise else [sums])
    if depthwise:
        # The fused step's taps went an item's block of output rows at a time (2 or 3 rows
        # of 61 or 51 columns of 24 channels), the op-by-op walk's over the whole map.
        items, rows, block = (3, 48, 3) if strided else (2, 57, 2)
        fused_blocks = [r for n, r in tap_sums if n == 1]
        assert sum(fused_blocks) == items * rows and max(fused_blocks) == block
        assert [shape for shape in tap_sums if shape[0] != 1] == [(items, rows)]


@pytest.mark.parametrize("kind", ["conv2d", "fc"])
def test_float32_blocks_need_ieee_matmul(monkeypatch, spy, kind):
    """With torch's float32 matmul precision lowered (bf16 may round the operands), a float32
    GEMM takes no blocks of torch.mm: the whole map's sums come from `float_gemm`, which
    then takes numpy's. The same integers as the op-by-op walk. (The case's weight zero
    point, 2, keeps float32 weights on either GEMM path.)"""
    monkeypatch.setattr(requantization, "SUM_BLOCK", 1 << 15)
    monkeypatch.setattr(gemm_module, "FUSED_BLOCK", 1 << 14)
    blocks = spy(gemm_module.PreparedGemm, "block_gemm", returns=True)
    saved = torch.backends.mkldnn.matmul.fp32_precision  # type: ignore[attr-defined]
    torch.backends.mkldnn.matmul.fp32_precision = "bf16"  # type: ignore[attr-defined]
    try:
        check_many_blocks(kind)
    finally:
        torch.backends.mkldnn.matmul.fp32_precision = saved  # type: ignore[attr-defined]
    assert [form is not None for form in blocks] == [False]


def check_many_blocks(kind: str, weight_zp: int = 2) -> None:
    """`kind`: "conv2d" (1x1, the rows are x's own), "conv2d-3x3-s2" (padded, 3 items: the
    blocks of patches start and end inside output rows and items), "depthwise",
    "depthwise-3x3-s2" or "fc"."""
    rng = np.random.default_rng(3)
    channels = 24
    strided = kind.endswith("-s2")
    x_shape = (3, 95, 101, channels) if strided else (2, 57, 61, channels)
    x = rng.integers(-128, 128, x_shape, dtype=np.int8)
    w_shape = {
        "conv2d": (40, 1, 1, channels),
        "conv2d-3x3-s2": (40, 3, 3, channels),
        "depthwise": (3, 3, channels),
        "depthwise-3x3-s2": (3, 3, channels),
        "fc": (40, channels),
    }
    w = rng.integers(-128, 128, w_shape[kind], dtype=np.int8)
    out = channels if kind.startswith("depthwise") else 40
    b = rng.integers(-(1 << 16), 1 << 16, out, dtype=np.int32)
    multipliers = [int(m) for m in rng.integers(1 << 30, 1 << 31, out)]
    shifts = [int(s) for s in rng.integers(36, 40, out)]
    padded = kind in ("depthwise", "conv2d-3x3-s2", "depthwise-3x3-s2")
    pad = (1, 1, 1, 1) if padded else (0, 0, 0, 0)
    stride = (2, 2) if strided else (1, 1)
    kind = kind.split("-")[0]
    case = (kind, x, w, b, stride, pad, (-3, weight_zp), (multipliers, shifts, -128, -128))
    fused, op_by_op = fused_and_op_by_op(requantized_module(case), x)
    assert fused.size > 4 * BLOCK_ELEMENTS
    assert fused.size > 4 * max(requantization.SUM_BLOCK, gemm_module.FUSED_BLOCK)
    np.testing.assert_array_equal(fused, op_by_op)
    if padded and kind == "conv2d" and weight_zp == 0 and torch.get_num_threads() == 1:
        # The scalar reference once per GEMM path (seconds): the op-by-op walk, which
        # makes the whole map's patches, is the check of every other case.
        expected = ref.rescale(
            accumulate_reference(case), multipliers, shifts, 0, -128, -128, 127, 8
        )
        np.testing.assert_array_equal(fused, expected)


@st.composite
def windowed_maps(draw):
    """A small NHWC int8 map, a window, stride and padding that fit it, and a range of the
    im2col rows [start, end) (empty, one row, within or across output rows and items)."""
    n, h, w, c = (draw(st.integers(1, limit)) for limit in (3, 9, 9, 4))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    pad = tuple(draw(st.integers(0, 2)) for _ in range(4))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    assume(h + pad[0] + pad[1] >= kh and w + pad[2] + pad[3] >= kw)
    x = draw(arrays(np.int8, (n, h, w, c)))
    oh = (h + pad[0] + pad[1] - kh) // stride[0] + 1
    ow = (w + pad[2] + pad[3] - kw) // stride[1] + 1
    start = draw(st.integers(0, n * oh * ow))
    end = draw(st.integers(start, n * oh * ow))
    return x, (kh, kw), stride, pad, start, end


@EXAMPLES
@given(windowed_maps(), st.booleans(), st.integers(-128, 127))
def test_copy_patches_are_the_im2col_rows(case, centered, input_zp):
    """Any range of im2col rows copied from the windows (`copy_patches`) is that range of the
    whole patches' rows, int8 padded with the zero point or float32 centred."""
    x, kernel, stride, pad, start, end = case
    windows = patches_module.conv_windows(x, input_zp, kernel, stride, pad, centered)
    patches = patches_module.conv_patches(windows)
    block = np.empty((end - start, patches.shape[1]), patches.dtype)
    patches_module.copy_patches(windows, block, start)
    np.testing.assert_array_equal(block, patches[start:end])


def fc_module(constant: bool, out_bits: int, uses: int = 1):
    """fully_connected [1, 3] x [2, 3] then `uses` rescales of its result onto `out_bits`."""
    x_type, w, b = build.batched(8, (1, 3)), np.ones((2, 3), np.int8), np.zeros(2, np.int32)
    y_type = build.batched(out_bits, (1, 2))
    arg_types = [x_type] if constant else [x_type, build.tensor(8, 2, 3), build.tensor(32, 2)]

    def ops(args) -> list[Operation]:
        defs = [build.constant(w), build.constant(b)] if constant else []
        wv, bv = (defs[0].result, defs[1].result) if constant else (args[1], args[2])
        acc = build.fully_connected(args[0], wv, bv, build.batched(32, (1, 2)), 0, 0)
        outs = [build.rescale(acc.result, y_type, [1], [31], 0, 0, -128, 127) for _ in range(uses)]
        return [*defs, acc, *outs]

    module = build.function_module(arg_types, ops)
    return next(o for o in module.walk() if isinstance(o, dghw.AccumulateOp))


def test_only_a_sole_int8_rescale_of_constant_weights_fuses():
    """`requantized_accumulate` takes the accumulate op's result only when a rescale to
    int8 is its one use and the weights and bias are constants."""
    assert requantized_accumulate(fc_module(True, 8)) is not None
    assert requantized_accumulate(fc_module(True, 32)) is None
    assert requantized_accumulate(fc_module(True, 8, uses=2)) is None
    assert requantized_accumulate(fc_module(False, 8)) is None


def scaled_bound_case(past: int, clamp_min: int) -> tuple[SumRequantization, np.ndarray, int]:
    """An FC's requantization (m = 2^30, s = 40, K = 500 weights of 127) with the bias whose
    terms reach 2^53 on the 2^-40 grid exactly: 128 * 127 * 500 * 2^30 + |offset + bias *
    m| + |clamp_min| 2^40 = 2^53, for int8 rows (|x| <= 128); `past` adds one unit of bias,
    2^30 more. Returns the requantization, the weights [K, 1] and the bias."""
    m, s, k = 1 << 30, 40, 500
    op = rescale_op(m, s, clamp_min=clamp_min)
    offset = (1 << 53) - 128 * 127 * k * m - (abs(clamp_min) << s)
    bias, rest = divmod(offset - (1 << (s - 1)), m)  # less the rounding term (output_zp 0)
    assert rest == 0
    requantize = SumRequantization.prepare(op, np.array([bias + past]), k * (1 << 14))
    assert requantize is not None and requantize.integers[0][2] == offset + past * m
    return requantize, np.full((k, 1), 127, np.float32), bias + past


@pytest.mark.parametrize("clamp_min", [-128, 3])
@pytest.mark.parametrize("past", [0, 1])
def test_scaled_gemm_at_its_bound_and_one_past(past, clamp_min):
    """`ScaledGemm` takes a requantization whose terms reach 2^53 on its grid and refuses
    one unit of bias more. At the bound, rows from the extremes to those whose results
    cross the clamps (the sums run over the whole window) give the reference's integers."""
    requantize, w, bias = scaled_bound_case(past, clamp_min)
    scaled = ScaledGemm.prepare(requantize, np.asfortranarray(w), 128)
    assert (scaled is None) == bool(past)
    if scaled is None:
        return
    assert scaled.matrix.flags.c_contiguous  # OpenBLAS's faster operand order
    m, s, offset = requantize.integers[0]
    # x * 127 * 500 + bias: the accumulator; the result is 0 where acc m + 2^39 = 0 mod 2^40
    # near acc = -bias, so rows of x = t around -bias / 63500 sweep the window.
    centre = -bias // (127 * 500)
    values = [-128, 127, *range(max(-128, centre - 3), min(127, centre + 3) + 1)]
    rows = np.repeat(np.array(values, np.int8)[:, None], 500, axis=1)
    expected = ref.rescale(
        rows.astype(np.int64) @ w.astype(np.int64) + bias, [m], [s], 0, 0, clamp_min, 127, 8
    )
    np.testing.assert_array_equal(scaled.apply(rows), expected)


@pytest.mark.parametrize(
    "k, past", [(SCALED_GEMM_MAX_K, 0), (SCALED_GEMM_MAX_K, 1), (SCALED_GEMM_MAX_K + 1, 0)]
)
def test_fused_fc_takes_the_scaled_gemm_up_to_small_gemm_macs(scaled_gemm_calls, k, past):
    """An FC of `FLOAT_INT8_GEMM_MACS` multiply-adds and `SCALED_GEMM_MAX_K` terms runs as one
    `ScaledGemm`; one row more, or one term more, as the GEMM then `SumRequantization`; all
    give the op-by-op walk's and the reference's integers, with a ReLU's clamp (clamp_min
    = output_zp) and per-channel multipliers."""
    n = 32
    rows = FLOAT_INT8_GEMM_MACS // (k * n) + past
    rng = np.random.default_rng(past)
    x = rng.integers(-128, 128, (rows, 1, 1, k), dtype=np.int8)
    x[0] = -128
    w = rng.integers(-128, 128, (n, k), dtype=np.int8)
    w[0] = 127
    b = rng.integers(-(1 << 16), 1 << 16, n, dtype=np.int32)
    multipliers = rng.integers(1 << 30, INT32_MAX, n).tolist()
    shifts = rng.integers(36, 40, n).tolist()
    case = ("fc", x, w, b, (1, 1), (0, 0, 0, 0), (-7, 0), (multipliers, shifts, -9, -9))
    fused, op_by_op = fused_and_op_by_op(requantized_module(case), x)
    acc = accumulate_reference(case)
    expected = ref.rescale(acc, multipliers, shifts, 0, -9, -9, 127, 8)
    np.testing.assert_array_equal(fused, expected)
    np.testing.assert_array_equal(op_by_op, expected)
    assert len(set(fused.ravel().tolist())) > 100  # the results spread over the range
    assert scaled_gemm_calls == ([] if past or k > SCALED_GEMM_MAX_K else [(rows, n)])


@pytest.mark.parametrize("past", [0, 1])
def test_a_small_result_takes_the_scaled_gemm_at_any_row_length(scaled_gemm_calls, past):
    """An FC of rows longer than `SCALED_GEMM_MAX_K` whose result has at most
    `SCALED_GEMM_SMALL_RESULT` elements runs as one `ScaledGemm` (a classifier head); one
    row more, as the GEMM then `SumRequantization`; both give the reference's integers."""
    k, n = SCALED_GEMM_MAX_K + 32, 32  # within FLOAT_INT8_GEMM_MACS either way
    rows = SCALED_GEMM_SMALL_RESULT // n + past
    assert rows * k * n <= FLOAT_INT8_GEMM_MACS
    rng = np.random.default_rng(past)
    x = rng.integers(-128, 128, (rows, 1, 1, k), dtype=np.int8)
    w = rng.integers(-128, 128, (n, k), dtype=np.int8)
    b = rng.integers(-(1 << 16), 1 << 16, n, dtype=np.int32)
    multipliers = rng.integers(1 << 30, INT32_MAX, n).tolist()
    shifts = rng.integers(38, 42, n).tolist()
    case = ("fc", x, w, b, (1, 1), (0, 0, 0, 0), (5, 0), (multipliers, shifts, 3, -128))
    fused, op_by_op = fused_and_op_by_op(requantized_module(case), x)
    expected = ref.rescale(accumulate_reference(case), multipliers, shifts, 0, 3, -128, 127, 8)
    np.testing.assert_array_equal(fused, expected)
    np.testing.assert_array_equal(op_by_op, expected)
    assert len(set(fused.ravel().tolist())) > 100  # the results spread over the range
    assert scaled_gemm_calls == ([] if past else [(rows, n)])


@pytest.mark.parametrize("scaled", [True, False], ids=["scaled-gemm", "sums-then-requantize"])
def test_fused_fc_floors_values_one_grid_unit_from_an_integer(
    monkeypatch, scaled_gemm_calls, scaled
):
    """m = 2^30 - 1, s = 31: an odd accumulator 2u - 1 rescales to u - (2u - 1) 2^-31, one
    grid unit or a few from an integer, so the least error in the sums' scaling moves the
    floor. The accumulators run over every odd value in [-255, 255], each the difference of
    a sum near 2^20 (63 terms of 126 * 127) and a bias near -2^20: the step's integers are
    the reference's, through `ScaledGemm` and without it."""
    if not scaled:
        monkeypatch.setattr(gemm_module.PreparedGemm, "scaled", lambda self, requantize: None)
    x = np.full((256, 1, 1, 64), 127, dtype=np.int8)
    x[:, 0, 0, 0] = np.arange(-128, 128)
    w = np.full((1, 64), 126, dtype=np.int8)
    w[0, 0] = 2
    b = np.array([1 - 126 * 127 * 63], dtype=np.int32)  # acc = 2 x0 + 1
    case = ("fc", x, w, b, (1, 1), (0, 0, 0, 0), (0, 0), ([(1 << 30) - 1], [31], 0, -128))
    module = requantized_module(case)
    fused, _ = fused_and_op_by_op(module, x)
    acc = accumulate_reference(case)
    assert sorted(acc.ravel().tolist()) == list(range(-255, 256, 2))
    expected = ref.rescale(acc, [(1 << 30) - 1], [31], 0, 0, -128, 127, 8)
    np.testing.assert_array_equal(fused, expected)
    assert scaled_gemm_calls == ([(256, 1)] if scaled else [])
