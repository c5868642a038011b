"""The integer logic layers end to end: the device gives torch's own int32 results, bit for bit.

A logic layer takes an int32 tensor (a model input or another logic layer's
output) and is never quantized. Models here: logic layers only on an int32
input (with `Tensor.repeat` inside a `dg.LogicLayer`), logic on two int32
tensors (`x & y`, `x > y`), and a quantized Linear next to a logic branch,
where the float output keeps its one-step standard.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from harness import line_of
from torch import nn

import dg
from dg.frontend.importer import (
    LOGIC_BROADCAST_FIX,
    LOGIC_INPUT_FIX,
    LOGIC_OPERANDS_FIX,
    REPEAT_OUTSIDE_LOGIC_FIX,
)
from dg.frontend.logic import BitShift, Bitwise, Compare, LogicLayer
from dg.lowering.registry import REPEAT

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def int32_inputs(*shape: int, seed: int = 0) -> torch.Tensor:
    """Random int32 values over the whole range, with the extremes and small values mixed in."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randint(INT32_MIN, INT32_MAX, shape, dtype=torch.int32, generator=generator)
    flat = x.view(-1)
    edges = torch.tensor([INT32_MIN, INT32_MAX, 0, -1, 1, -2, 7], dtype=torch.int32)
    flat[: len(edges)] = edges[: flat.numel()]
    return x


class TileThenMask(LogicLayer):
    """A user's own logic layer: `Tensor.repeat` is legal in its forward."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.repeat(1, 2, 3) ^ 0x5A5A


class LogicOnly(nn.Module):
    """Every logic layer, on an int32 input of shape [N, 3, 4]."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            BitShift(5, "left"),
            BitShift(3, "right"),
            Bitwise("and", 0x7FFF00FF),
            Bitwise("or", -(1 << 20)),
            BitShift(31, "right"),
            Bitwise("xor", INT32_MIN),
            TileThenMask(),
            BitShift(0, "left"),
            Compare("gt", -(1 << 30)),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class RawOperators(nn.Module):
    """The same ops written as operators, outside any dg module."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.bitwise_left_shift(x, 31) | 0x0F0F
        z = torch.bitwise_xor((y >> 1) & -16, 3)
        return (z <= 12345).to(torch.int32) ^ 1


def compile_logic(model: nn.Module, x: torch.Tensor) -> tuple[dg.Program, nn.Module]:
    prepared = dg.prepare_ptq(model, (x,))
    prepared(x)
    frozen = dg.freeze_quantization(prepared)
    return dg.export(frozen, (x,)), frozen


@pytest.mark.parametrize("model_type", [LogicOnly, RawOperators])
def test_logic_model_on_an_int32_input_is_bit_identical_to_torch(model_type):
    model = model_type().eval()
    program, frozen = compile_logic(model, int32_inputs(2, 3, 4))
    x = int32_inputs(5, 3, 4, seed=1)  # another batch size than the example
    expected = model(x)
    result = program.run(x)
    assert result.dtype == torch.int32
    assert torch.equal(result, expected)
    assert torch.equal(frozen(x), expected)
    # run_int passes the int32 arrays through as is.
    np.testing.assert_array_equal(program.run_int(x.numpy()), expected.numpy())


def test_logic_only_model_compiles_to_logic_ops_only():
    program, _ = compile_logic(LogicOnly(), int32_inputs(2, 3, 4))
    text = program.mlir("dghw")
    assert text.count("dghw.shift") == 4
    assert text.count("dghw.bitwise") == 4
    assert text.count("dghw.tile") == 1
    assert text.count("dghw.compare") == 1
    assert "dghw.rescale" not in text and "dghw.scale" not in text
    # dgq has nothing to add to integer tensors: the logic ops are dghw already there.
    assert "dgq." not in program.mlir("dgq")


def test_repeat_inside_a_logic_layer_tiles_like_torch():
    program, _ = compile_logic(TileThenMask(), int32_inputs(2, 3, 4))
    x = int32_inputs(3, 3, 4, seed=2)
    result = program.run(x)
    assert result.shape == (3, 6, 12)
    assert torch.equal(result, x.repeat(1, 2, 3) ^ 0x5A5A)


class QuantizedAndLogic(nn.Module):
    """A quantized Linear on a float input, and a logic branch on an int32 input."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 4)
        self.shift = BitShift(2, "right")
        self.mask = Bitwise("xor", -7)

    def forward(self, x: torch.Tensor, m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.relu(self.fc(x)), self.mask(self.shift(m))


def test_quantizer_leaves_logic_layers_unannotated_next_to_a_quantized_layer():
    x, m = torch.randn(8, 6), int32_inputs(8, 5)
    model = QuantizedAndLogic().eval()
    prepared = dg.prepare_ptq(model, (x, m))
    logic_nodes = [n for n in prepared.graph.nodes if "shift" in str(n.target) or "xor" in str(n)]
    assert logic_nodes
    for node in logic_nodes:  # no observer reads or feeds a logic op
        neighbours = [*node.all_input_nodes, *node.users]
        assert all(n.op != "call_module" for n in neighbours), node
    prepared(x, m)
    frozen = dg.freeze_quantization(prepared)
    program = dg.export(frozen, (x, m))
    x2, m2 = torch.randn(5, 6), int32_inputs(5, 5, seed=3)
    (y, z), (fy, fz) = program.run(x2, m2), frozen(x2, m2)
    assert torch.equal(z, model(x2, m2)[1]) and torch.equal(z, fz)
    ((scale, _), integer) = program.output_qparams
    assert integer is None
    assert float((y - fy).abs().max()) <= scale * 1.0001


class RepeatOutsideLogic(nn.Module):
    def forward(self, m: torch.Tensor) -> torch.Tensor:
        return m.repeat(1, 2) & 3


def test_repeat_outside_a_logic_layer_is_an_error_with_file_and_line():
    (problem,) = dg.check(RepeatOutsideLogic(), (int32_inputs(2, 3),))
    assert problem.op.startswith("Tensor.repeat")
    assert problem.reason == REPEAT.reason
    assert problem.fix == REPEAT_OUTSIDE_LOGIC_FIX
    line = line_of(RepeatOutsideLogic.forward, "m.repeat(1, 2)")
    assert problem.location == f"{__file__}:{line}"


class RepeatBatch(LogicLayer):
    def forward(self, m: torch.Tensor) -> torch.Tensor:
        return m.repeat(2, 1)


def test_repeat_of_the_batch_axis_is_an_error():
    (problem,) = dg.check(RepeatBatch(), (int32_inputs(2, 3),))
    assert "cannot repeat along the batch axis" in problem.reason


class Int64Logic(nn.Module):
    def forward(self, m: torch.Tensor) -> torch.Tensor:
        return (m.to(torch.int64) >> 2).to(torch.int32)


def test_logic_layers_take_int32_tensors_only():
    problems = dg.check(Int64Logic(), (int32_inputs(2, 3),))
    (shift,) = [p for p in problems if "aten.__rshift__.Scalar" in p.op]
    assert shift.reason == "logic layers take int32 or int8 tensors, got tensor<?x3xi64>"
    assert shift.fix == LOGIC_INPUT_FIX
    conversions = [p for p in problems if "aten.to.dtype" in p.op]
    assert len(conversions) == 2 and len(problems) == 3


def test_a_tensor_shift_amount_is_an_error():
    class TensorShift(nn.Module):
        def forward(self, m: torch.Tensor) -> torch.Tensor:
            return (m & (m >> 1)) << m  # a tensor second operand is fine for &, not for <<

    (problem,) = dg.check(TensorShift(), (int32_inputs(2, 3),))
    assert problem.reason == "the shift amount must be a Python int constant, got a tensor"


def test_shift_amount_out_of_range_is_an_error():
    class Shift32(nn.Module):
        def forward(self, m: torch.Tensor) -> torch.Tensor:
            return m >> 32

    (problem,) = dg.check(Shift32(), (int32_inputs(2, 3),))
    assert "shift amount must be in [0, 31], got 32" in problem.reason


@pytest.mark.parametrize("kind", ["gt", "ge", "lt", "le", "eq", "ne"])
def test_every_compare_kind_thresholds_like_torch(kind):
    program, _ = compile_logic(Compare(kind, 7), int32_inputs(2, 9))
    x = torch.arange(-40, 41, dtype=torch.int32).view(9, 9)  # 7 itself included
    expected = getattr(torch, kind)(x, 7).to(torch.int32)
    assert torch.equal(program.run(x), expected)


class BoolOutput(nn.Module):
    def forward(self, m: torch.Tensor) -> torch.Tensor:
        return m > 3


def test_a_comparison_must_become_int32_right_away():
    (problem,) = dg.check(BoolOutput(), (int32_inputs(2, 3),))
    assert problem.reason == "its bool result must be converted to int32 right away"
    assert "to(torch.int32)" in (problem.fix or "")


def test_logic_layers_check_their_arguments():
    with pytest.raises(ValueError, match="shift must be an int in"):
        BitShift(32)
    with pytest.raises(ValueError, match="direction must be one of left, right"):
        BitShift(1, "up")
    with pytest.raises(ValueError, match="kind must be one of and, or, xor"):
        Bitwise("nand", 1)
    with pytest.raises(ValueError, match="value must be an int fitting int32"):
        Bitwise("and", 1 << 31)
    with pytest.raises(ValueError, match="kind must be one of gt, ge, lt, le, eq, ne"):
        Compare(">", 1)


def test_a_saved_logic_program_runs_the_same(tmp_path):
    program, _ = compile_logic(LogicOnly(), int32_inputs(2, 3, 4))
    path = tmp_path / "logic.mlir"
    program.save(path)
    loaded = dg.load(path)
    assert loaded.input_qparams == [None] and loaded.output_qparams == [None]
    x = int32_inputs(3, 3, 4, seed=4)
    assert torch.equal(loaded.run(x), LogicOnly()(x))
    with pytest.raises(TypeError, match="expected a torch.int32 torch tensor"):
        loaded.run(x.float())


# -- logic on two tensors -------------------------------------------------------------------


class TwoTensors(nn.Module):
    """Every bitwise kind on two int32 inputs, as dg layers and as operators."""

    def __init__(self) -> None:
        super().__init__()
        self.both = Bitwise("and")
        self.either = Bitwise("or")
        self.greater = Compare("gt")

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        a = self.both(x, y) ^ y
        b = self.either(a, x >> 3)
        return (b <= x).to(torch.int32) | self.greater(b, a) << 1 | (x != y).to(torch.int32) << 2


def compile_logic2(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dg.Program:
    prepared = dg.prepare_ptq(model, (x, y))
    prepared(x, y)
    return dg.export(dg.freeze_quantization(prepared), (x, y))


def test_two_int32_inputs_give_torchs_bits():
    model = TwoTensors().eval()
    program = compile_logic2(model, int32_inputs(2, 3, 4), int32_inputs(2, 3, 4, seed=1))
    text = program.mlir("dghw")
    assert text.count("dghw.bitwise_tensor") == 5 and text.count("dghw.compare_tensor") == 3
    x, y = int32_inputs(6, 3, 4, seed=2), int32_inputs(6, 3, 4, seed=3)
    y[0] = x[0]  # equal operands, where the comparisons flip
    y[1] = -x[1]
    result = program.run(x, y)
    assert result.dtype == torch.int32
    assert torch.equal(result, model(x, y))


def test_a_logic_layer_defined_in_a_function_may_repeat():
    """A local class has no importable name (``...<locals>.Tiled``); it is a logic layer all the
    same, so its repeat is legal."""

    class Tiled(dg.LogicLayer):
        def forward(self, x, y):
            return (x ^ y).repeat(1, 2, 1) >> 1

    x, y = int32_inputs(2, 3, 4), int32_inputs(2, 3, 4, seed=1)
    program = compile_logic2(Tiled(), x, y)
    assert torch.equal(program.run(x, y), Tiled()(x, y))


@pytest.mark.parametrize("kind", ["gt", "ge", "lt", "le", "eq", "ne"])
def test_every_compare_kind_of_two_tensors_like_torch(kind):
    program = compile_logic2(Compare(kind), int32_inputs(2, 9), int32_inputs(2, 9, seed=1))
    x = torch.arange(-40, 41, dtype=torch.int32).view(9, 9)
    y = torch.full_like(x, 7)
    y[::2] = torch.tensor([INT32_MIN, -1, 0, 1, INT32_MAX, 7, 8, 6, -40], dtype=torch.int32)
    expected = getattr(torch, kind)(x, y).to(torch.int32)
    assert torch.equal(program.run(x, y), expected)
    assert torch.equal(Compare(kind)(x, y), expected)


class MaskByColumnPairs(LogicLayer):
    """A user's logic layer mixing tensor-tensor ops with constant ones and `Tensor.repeat`:
    `y` has half of `x`'s columns and is tiled to match them (dg does not broadcast)."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        mask = y.repeat(1, 1, 2) << 4
        kept = (x ^ mask) & 0x0FF0FF0F
        return kept | (x > mask).to(torch.int32) | (mask == -16).to(torch.int32) << 31


class MixedLogic(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mask = MaskByColumnPairs()
        self.shift = BitShift(1, "right")

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.shift(self.mask(x, y))


def test_tensor_ops_constant_ops_and_repeat_in_one_logic_layer_give_torchs_bits():
    model = MixedLogic().eval()
    program = compile_logic2(model, int32_inputs(2, 3, 4), int32_inputs(2, 3, 2, seed=1))
    x, y = int32_inputs(5, 3, 4, seed=4), int32_inputs(5, 3, 2, seed=5)
    y[0, 0] = -1  # mask == -16
    result = program.run(x, y)
    assert result.shape == (5, 3, 4)
    assert torch.equal(result, model(x, y))
    text = program.mlir("dghw")
    for op in ("dghw.tile", "dghw.bitwise_tensor", "dghw.compare_tensor", "dghw.bitwise "):
        assert op in text, op


class Broadcasting(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x & y  # y: [N, 3, 1]


def test_broadcasting_two_tensors_is_an_error_with_file_line_and_fix():
    (problem,) = dg.check(Broadcasting(), (int32_inputs(2, 3, 4), int32_inputs(2, 3, 1)))
    assert "aten.__and__.Tensor" in problem.op
    assert problem.reason == (
        "operands must have the same shape (no broadcasting), got [3, 4] and [3, 1] after the "
        "batch axis"
    )
    assert problem.fix == LOGIC_BROADCAST_FIX
    assert problem.location == f"{__file__}:{line_of(Broadcasting.forward, 'x & y')}"


class FloatOperand(nn.Module):
    def forward(self, m: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
        return (m > f).to(torch.int32)


def test_a_float_operand_is_an_error_with_file_line_and_fix():
    (problem,) = dg.check(FloatOperand(), (int32_inputs(2, 3), torch.randn(2, 3)))
    assert problem.reason == "logic layers take int32 or int8 tensors, got tensor<?x3xf32>"
    assert problem.fix == LOGIC_INPUT_FIX
    assert problem.location == f"{__file__}:{line_of(FloatOperand.forward, 'm > f')}"


class QuantizedCompare(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        return (self.fc(x) < m).to(torch.int32)


def test_a_quantized_operand_is_an_export_error():
    """A quantized layer's output compared with an int32 tensor: rejected before calibration."""
    x, m = torch.randn(4, 3), int32_inputs(4, 3)
    with pytest.raises(dg.ExportError) as error:
        dg.prepare_ptq(QuantizedCompare().eval(), (x, m))
    (problem,) = error.value.problems
    assert "aten.lt.Tensor" in problem.op
    assert problem.reason == "logic layers take int32 or int8 tensors, got tensor<?x3xf32>"
    assert problem.fix == LOGIC_INPUT_FIX
    assert problem.location == f"{__file__}:{line_of(QuantizedCompare.forward, 'self.fc(x) < m')}"


class ConstantTensorOperand(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("bits", torch.tensor([1, 2, 4], dtype=torch.int32))

    def forward(self, m: torch.Tensor) -> torch.Tensor:
        return m ^ self.bits


def test_a_constant_tensor_operand_is_an_error_pointing_to_the_constant_forms():
    (problem,) = dg.check(ConstantTensorOperand(), (int32_inputs(2, 3),))
    assert problem.reason == (
        "a logic op on two tensors takes tensors computed from the model's inputs, but the "
        "second operand is the parameter/constant 'bits'"
    )
    assert problem.fix == LOGIC_OPERANDS_FIX


class BoolOfTwo(nn.Module):
    def forward(self, m: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        return m >= n


def test_a_comparison_of_two_tensors_must_become_int32_right_away():
    (problem,) = dg.check(BoolOfTwo(), (int32_inputs(2, 3), int32_inputs(2, 3)))
    assert problem.reason == "its bool result must be converted to int32 right away"


def test_logic_layers_take_the_second_operand_as_built():
    x = int32_inputs(2, 3)
    with pytest.raises(TypeError, match="built without a value: call it with two tensors"):
        Bitwise("and")(x)
    with pytest.raises(TypeError, match="built with the constant threshold=3: call it with one"):
        Compare("gt", 3)(x, x)
    assert repr(Bitwise("xor")) == "Bitwise(kind='xor')"
    assert repr(Compare("ne", -1)) == "Compare(kind='ne', threshold=-1)"
