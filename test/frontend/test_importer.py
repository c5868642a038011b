"""import_graph: the dgtorch module mirrors the frozen graph, with sources and exact constants."""

from __future__ import annotations

import io

import numpy as np
import pytest
import slice_models
import torch
import torch.nn.functional as F
from graph_queries import QDQ, aten, attr, calls, line_of, qd
from slice_models import ConvBlock, SliceNet, frozen_slice_net, slice_inputs
from torch import nn
from xdsl.context import Context
from xdsl.dialects.builtin import DYNAMIC_INDEX, Builtin, ModuleOp, TensorType
from xdsl.dialects.func import Func, FuncOp
from xdsl.parser import Parser
from xdsl.printer import Printer

from dg.dialects import dgtorch
from dg.frontend.importer import OUTPUT_STRUCTURE_ATTR, GraphImporter, import_graph
from dg.frontend.prepare import export_with_dynamic_batch, freeze_quantization, prepare_ptq

EXPECTED_OP = {
    qd.quantize_per_tensor.default: "dgtorch.quantize_per_tensor",
    qd.dequantize_per_tensor.default: "dgtorch.dequantize_per_tensor",
    qd.dequantize_per_channel.default: "dgtorch.dequantize_per_channel",
    aten.conv2d.default: "dgtorch.conv2d",
    aten.linear.default: "dgtorch.linear",
    aten.relu.default: "dgtorch.relu",
    aten.add.Tensor: "dgtorch.add",
    aten.flatten.using_ints: "dgtorch.flatten",
}

_NUMPY_DTYPE = {torch.int8: np.int8, torch.int32: np.int32, torch.float32: np.float32}


@pytest.fixture(scope="module", params=["qat", "ptq"])
def frozen(request) -> torch.fx.GraphModule:
    return frozen_slice_net(request.param)


@pytest.fixture(scope="module")
def module(frozen) -> ModuleOp:
    return import_graph(frozen, (slice_inputs(2),))


def _main(module: ModuleOp) -> FuncOp:
    (main,) = module.ops
    assert isinstance(main, FuncOp) and main.sym_name.data == "main"
    return main


def _debug_text(module: ModuleOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream, print_debuginfo=True).print_op(module)
    return stream.getvalue()


def test_module_is_one_verified_main_with_a_dynamic_batch(module):
    module.verify()
    main = _main(module)
    assert [str(t) for t in main.function_type.inputs] == ["tensor<?x1x8x8xf32>"]
    assert [str(t) for t in main.function_type.outputs] == ["tensor<?x3xf32>"]
    assert main.attributes[OUTPUT_STRUCTURE_ATTR].data == "single"
    for op in main.body.walk():
        if isinstance(op, dgtorch.ConstantOp):
            continue
        for value in (*op.operands, *op.results):
            if isinstance(value.type, TensorType) and value.type.get_shape()[0] == DYNAMIC_INDEX:
                continue
            # Only constants and their dequantized values have a static axis 0.
            assert value.owner.name in ("dgtorch.constant", "dgtorch.dequantize_per_channel")


def test_ops_are_those_of_the_frozen_graph_in_order(frozen, module):
    # Every q/dq and compute node, except the input dequantize only torch's guard reads.
    expected = [
        EXPECTED_OP[n.target]
        for n in calls(frozen, *EXPECTED_OP)
        if not all(u.op == "call_module" for u in n.users)
    ]
    imported = [op.name for op in _main(module).body.ops]
    assert [name for name in imported if name not in ("dgtorch.constant", "func.return")] == (
        expected
    )
    weights_and_biases = calls(frozen, qd.dequantize_per_channel.default)
    assert imported.count("dgtorch.constant") == len(weights_and_biases) == 10


def test_ops_carry_the_users_source_location(module):
    text = _debug_text(module)
    file = slice_models.__file__
    block_conv = line_of(ConvBlock.forward, "self.conv(x)")
    fc1 = line_of(SliceNet.forward, "self.fc1(y)")
    add = line_of(SliceNet.forward, "y + z")
    conv_lines = [line for line in text.splitlines() if "dgtorch.conv2d" in line]
    assert f'loc("block.conv"("{file}":{block_conv}:0))' in conv_lines[0]
    linear_lines = [line for line in text.splitlines() if "dgtorch.linear" in line]
    assert f'loc("fc1"("{file}":{fc1}:0))' in linear_lines[0]
    (add_line,) = [line for line in text.splitlines() if "dgtorch.add" in line]
    assert f'loc("{file}":{add}:0)' in add_line
    # torchao's q/dq ops belong to the op they convert for: the weight dequantize of fc1.
    assert text.count(f'"fc1"("{file}":{fc1}:0)') >= 5


def test_constants_are_the_frozen_tensors_bit_for_bit(frozen, module):
    frozen_tensors = [
        attr(frozen, dq.args[0]) for dq in calls(frozen, qd.dequantize_per_channel.default)
    ]
    constants = [op for op in _main(module).body.ops if isinstance(op, dgtorch.ConstantOp)]
    assert len(constants) == len(frozen_tensors)
    for constant, tensor in zip(constants, frozen_tensors, strict=True):
        values = np.frombuffer(constant.value.data.data, dtype=_NUMPY_DTYPE[tensor.dtype])
        assert constant.value.get_type().get_shape() == tuple(tensor.shape)
        np.testing.assert_array_equal(values.reshape(tensor.shape), tensor.numpy())


def test_printed_module_parses_back_to_the_same_constants(module):
    ctx = Context()
    for dialect in (Builtin, Func, dgtorch.DgTorch):
        ctx.load_dialect(dialect)
    text = _debug_text(module)
    parsed = Parser(ctx, text).parse_module()
    parsed.verify()
    original = [op.value for op in module.walk() if isinstance(op, dgtorch.ConstantOp)]
    reparsed = [op.value for op in parsed.walk() if isinstance(op, dgtorch.ConstantOp)]
    assert [a.data.data for a in original] == [b.data.data for b in reparsed]


class FloatLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def test_float_constants_keep_every_bit():
    model = FloatLinear()
    special = torch.tensor([-0.0, 1e-45, -3.4e38, float("inf"), 1 / 3, -1e-40, 7.0, 0.1])
    with torch.no_grad():
        model.fc.weight.view(-1)[: special.numel()] = special
    gm = export_with_dynamic_batch(model, (torch.randn(2, 4),), train=False)
    importer = GraphImporter(gm, require_quantized=False)
    module = importer.run()
    assert importer.problems == [] and module is not None
    weight, bias = [op.value for op in module.walk() if isinstance(op, dgtorch.ConstantOp)]
    stored = np.frombuffer(weight.data.data, dtype=np.float32).view(np.uint32)
    np.testing.assert_array_equal(stored, model.fc.weight.detach().numpy().view(np.uint32).ravel())
    np.testing.assert_array_equal(
        np.frombuffer(bias.data.data, dtype=np.float32), model.fc.bias.detach().numpy()
    )


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.head_a = nn.Linear(8, 2)
        self.head_b = nn.Linear(8, 3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = self.drop(F.relu(self.body(x)))
        return self.head_a(y), self.head_b(y).view(x.size(0), 3, 1)


def test_tuple_outputs_and_eval_dropout():
    torch.manual_seed(0)
    prepared = prepare_ptq(TwoHeads(), (torch.randn(4, 4),))
    for batch in (2, 5):
        prepared(torch.randn(batch, 4))
    frozen = freeze_quantization(prepared)
    assert calls(frozen, aten.dropout.default) == []  # removed: identity at inference
    module = import_graph(frozen, (torch.randn(3, 4),))
    main = _main(module)
    assert main.attributes[OUTPUT_STRUCTURE_ATTR].data == "tuple"
    assert [str(t) for t in main.function_type.outputs] == [
        "tensor<?x2xf32>",
        "tensor<?x3x1xf32>",
    ]
    names = [op.name for op in main.body.ops]
    assert "dgtorch.reshape" in names and not any("dropout" in n for n in names)


def test_unused_graph_nodes_are_not_imported(frozen, module):
    # The input's extra dequantize feeds only torch.export's guard function.
    (x,) = frozen.graph.find_nodes(op="placeholder")
    (q,) = [u for u in x.users if u.target in QDQ]
    assert len(q.users) == 2
    main = _main(module)
    (arg,) = main.body.block.args
    (quantize,) = arg.uses
    assert len(list(quantize.operation.results[0].uses)) == 1
