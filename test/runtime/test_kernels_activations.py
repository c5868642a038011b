"""Tables (sigmoid) and softmax on the device model: against the reference, the compiler's tables
against the doc, and float sigmoid/softmax within one step."""

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
    FEW_EXAMPLES,
    INT32_MAX,
    assert_matches_reference,
    run_one,
    single_op_module,
)
from xdsl.dialects.builtin import IntegerType
from xdsl.utils.exceptions import InterpretationError

from dg.runtime.program import torch_quant_ops


def all_int8_values() -> np.ndarray:
    """Every int8 value once, in order, as a [1, 256] array."""
    return np.arange(-128, 128, dtype=np.int8).reshape(1, 256)


@EXAMPLES
@given(
    arrays(np.int8, 256, elements=st.integers(-128, 127)),
    st.lists(st.integers(1, 4), min_size=1, max_size=3),
    st.data(),
)
def test_table_matches_reference(entries, item_shape, data):
    x = data.draw(arrays(np.int8, (2, *item_shape), elements=st.integers(-128, 127)))
    module = single_op_module([x], lambda args: build.table(args[0], entries))
    assert_matches_reference(lambda: run_one(module, x), lambda: ref.table(x, entries))
    everything = all_int8_values()
    module = single_op_module([everything], lambda args: build.table(args[0], entries))
    np.testing.assert_array_equal(run_one(module, everything)[0], entries)


def exp_table(scale: float, fraction_bits: int = 16) -> np.ndarray:
    """docs/dghw.md: exp_table[k] = round(2^F exp(-k * s_in)), F = 16 unless said otherwise."""
    return np.rint(2.0**fraction_bits * np.exp(-np.arange(256) * scale)).astype(np.int32)


def sigmoid_entries(scale: float, zero_point: int) -> np.ndarray:
    """docs/dghw.md: table[j] = clamp(rint(sigmoid((j - 128 - zp) * s) * 256) - 128)."""
    real = (np.arange(-128, 128) - zero_point) * scale
    return np.clip(np.rint(256 / (1 + np.exp(-real))) - 128, -128, 127).astype(np.int8)


@FEW_EXAMPLES
@given(st.floats(1e-3, 1.0), st.integers(-128, 127), st.integers(1, 5000))
def test_compiler_tables_follow_the_doc(scale, zero_point, row_length):
    from dg.dialects.dgq import FIXED_GRID_SCALE, FIXED_GRID_ZERO_POINT, UniformQuantizedType
    from dg.lowering.convert_dgq_to_dghw import sigmoid_table, softmax_exp_table

    bits = min(30, 31 - row_length.bit_length())
    table = softmax_exp_table(scale, row_length)
    np.testing.assert_array_equal(table, exp_table(scale, bits))
    assert row_length * int(table.max()) < 2**31
    source = UniformQuantizedType(IntegerType(8), [scale], [zero_point])
    fixed = UniformQuantizedType(IntegerType(8), [FIXED_GRID_SCALE], [FIXED_GRID_ZERO_POINT])
    np.testing.assert_array_equal(sigmoid_table(source, fixed), sigmoid_entries(scale, zero_point))


def torch_fixed_grid(p) -> np.ndarray:
    """torch's quantize_per_tensor of probabilities onto the fixed grid (1/256, -128)."""
    import torch

    quantize, _ = torch_quant_ops()
    return quantize(p, 1 / 256, -128, -128, 127, torch.int8).numpy()


def torch_dequantize(x: np.ndarray, scale: float, zero_point: int):
    import torch

    _, dequantize = torch_quant_ops()
    return dequantize(torch.tensor(x), scale, zero_point, -128, 127, torch.int8)


@EXAMPLES
@given(st.floats(1e-3, 1.0), st.integers(-128, 127))
def test_sigmoid_tables_match_float_sigmoid(scale, zero_point):
    import torch

    everything = all_int8_values()
    exact = torch_fixed_grid(torch.sigmoid(torch_dequantize(everything, scale, zero_point)))
    # The table of the frozen model's own float ops is bit-exact by construction; one built
    # in float64 (numpy) is within one step of torch's float32 sigmoid.
    float64_table = sigmoid_entries(scale, zero_point)
    for entries, tolerance in ((exact[0], 0), (float64_table, 1)):
        module = single_op_module([everything], lambda args, t=entries: build.table(args[0], t))
        difference = run_one(module, everything).astype(int) - exact
        assert np.abs(difference).max() <= tolerance


@st.composite
def softmax_cases(draw):
    rank = draw(st.integers(2, 4))
    shape = draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    axis = draw(st.integers(1, rank - 1))
    kind = draw(st.sampled_from(["random", "identical", "one huge", "extremes"]))
    if kind == "random":
        x = draw(arrays(np.int8, shape, elements=st.integers(-128, 127)))
    elif kind == "identical":
        x = np.full(shape, draw(st.integers(-128, 127)), dtype=np.int8)
    else:
        x = draw(arrays(np.int8, shape, elements=st.sampled_from([-128, 127])))
        if kind == "one huge":  # one 127 per row, every other element -128
            x[...] = -128
            index = [slice(None)] * rank
            index[axis] = draw(st.integers(0, shape[axis] - 1))
            x[tuple(index)] = 127
    if draw(st.booleans()):
        table = exp_table(draw(st.floats(1e-3, 2.0)))
    else:  # any table the verifier accepts: entries >= 0, sums within int32
        bound = INT32_MAX // shape[axis]
        table = draw(arrays(np.int32, 256, elements=st.integers(0, bound)))
        table[0] = draw(st.integers(1, bound))
    return x, table, axis


@EXAMPLES
@given(softmax_cases())
def test_softmax_matches_reference(case):
    x, table, axis = case
    module = single_op_module([x], lambda args: build.softmax(args[0], table, axis))
    assert_matches_reference(lambda: run_one(module, x), lambda: ref.softmax(x, table, axis))


@EXAMPLES
@given(
    # (row length, table fraction bits F): docs/dghw.md proves one step for length < 2^(F-7).
    st.sampled_from([(2, 16), (10, 16), (64, 16), (511, 16), (1000, 21), (4095, 19)]),
    st.floats(1e-3, 1.0),
    st.integers(-128, 127),
    st.sampled_from(["random", "identical", "one huge", "one huge over a level", "narrow"]),
    st.integers(0, 2**32 - 1),
)
def test_softmax_is_float_softmax_within_one_step(row, scale, zero_point, kind, seed):
    import torch

    (length, fraction_bits), rng = row, np.random.default_rng(seed)
    x = rng.integers(-128, 128, (3, length), dtype=np.int8)
    if kind == "identical":
        x[...] = x[:, :1]
    elif kind.startswith("one huge"):  # every other element shares one table entry's error
        x[...] = -128 if kind == "one huge" else rng.integers(-128, 127)
        x[:, rng.integers(length)] = 127
    elif kind == "narrow":  # close logits: every exp term counts
        x = rng.integers(100, 128, (3, length), dtype=np.int8)
    expected = torch_fixed_grid(torch.softmax(torch_dequantize(x, scale, zero_point), dim=1))
    table = exp_table(scale, fraction_bits)
    module = single_op_module([x], lambda args: build.softmax(args[0], table, 1))
    actual = run_one(module, x)
    assert np.abs(actual.astype(int) - expected).max() <= 1


def test_softmax_row_whose_exp_sum_is_zero_is_reported():
    table = np.zeros(256, dtype=np.int32)  # entry 0 is 0: a row of equal values sums to 0
    x = np.zeros((1, 4), dtype=np.int8)
    module = single_op_module([x], lambda args: build.softmax(args[0], table, 1))
    with pytest.raises(ref.ReferenceOverflow):
        ref.softmax(x, table, 1)
    with pytest.raises(InterpretationError, match=r"exp sums 0\.\.0 leave \[1, 2\^31 - 1\]"):
        run_one(module, x)
