"""DgQuantizer and the importer on the CNN rows: fixed grids, shared grids, fused batch norms,
no dropout, and the dgtorch op of every row."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from cnn_models import cnn_inputs, frozen_cnn_ptq, prepared_cnn_qat
from graph_queries import DEQUANTIZE_PER_TENSOR, QUANTIZE, aten, calls, only_user
from torch import nn
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e import FixedQParamsFakeQuantize
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
from xdsl.dialects.builtin import ModuleOp

import dg
from dg.dialects import dgtorch
from dg.dialects.dgq import FIXED_GRID_SCALE, FIXED_GRID_ZERO_POINT
from dg.frontend.importer import GraphImporter, import_graph
from dg.frontend.prepare import export_with_dynamic_batch
from dg.frontend.quantizer import DgQuantizer

FIXED_GRID = (FIXED_GRID_SCALE, FIXED_GRID_ZERO_POINT, -128, 127, torch.int8)
SHARING = (
    aten.max_pool2d.default,
    aten.avg_pool2d.default,
    aten.adaptive_avg_pool2d.default,
    aten.pad.default,
    aten.upsample_nearest2d.vec,
)


def _qparams(node: Node) -> tuple[object, ...]:
    """(scale, zero point, qmin, qmax, dtype) of a per-tensor q or dq node."""
    return tuple(node.args[1:6])


def _output_qparams(node: Node) -> tuple[object, ...]:
    quantize = only_user(node)
    assert quantize.target in QUANTIZE, quantize
    return _qparams(quantize)


def _input_qparams(node: Node, index: int = 0) -> tuple[object, ...]:
    dequantize = node.all_input_nodes[index]
    assert dequantize.target in DEQUANTIZE_PER_TENSOR, dequantize
    return _qparams(dequantize)


# -- fixed grid --------------------------------------------------------------------


def test_softmax_and_sigmoid_outputs_are_on_the_fixed_grid_ptq():
    frozen = frozen_cnn_ptq()
    pinned = calls(frozen, aten.softmax.int, aten.sigmoid.default)
    assert len(pinned) == 2
    for node in pinned:
        assert _output_qparams(node) == FIXED_GRID
        assert _input_qparams(node) != FIXED_GRID  # the input keeps its own grid


def _fake_quantizer_of(prepared: GraphModule, node: Node) -> torch.nn.Module:
    user = only_user(node)
    assert user.op == "call_module", user
    return prepared.get_submodule(str(user.target))


def test_softmax_and_sigmoid_outputs_are_pinned_during_qat():
    prepared = prepared_cnn_qat()
    for node in calls(prepared, aten.softmax.int, aten.sigmoid.default):
        fake_quant = _fake_quantizer_of(prepared, node)
        assert isinstance(fake_quant, FixedQParamsFakeQuantize)
        scale, zero_point = fake_quant.calculate_qparams()
        assert (float(scale), int(zero_point)) == (FIXED_GRID_SCALE, FIXED_GRID_ZERO_POINT)
        # Training already sees the grid: the forward pass rounds onto it.
        assert (fake_quant.quant_min, fake_quant.quant_max) == (-128, 127)


class SoftmaxHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return torch.sigmoid(self.fc(x)), F.softmax(self.fc(x), dim=-1)


def test_qat_frozen_fixed_grid():
    torch.manual_seed(0)
    prepared = dg.prepare_qat(SoftmaxHead(), (torch.randn(4, 8),))
    prepared(torch.randn(4, 8))[0].sum().backward()
    frozen = dg.freeze_quantization(prepared)
    pinned = calls(frozen, aten.softmax.int, aten.sigmoid.default)
    assert [_output_qparams(n) for n in pinned] == [FIXED_GRID, FIXED_GRID]


# -- shared grids ---------------------------------------------------------------------


def test_pooling_padding_and_resizing_share_their_input_grid():
    frozen = frozen_cnn_ptq()
    nodes = calls(frozen, *SHARING)
    assert {n.target for n in nodes} == set(SHARING)
    for node in nodes:
        assert _input_qparams(node) == _output_qparams(node), node


def test_cat_inputs_and_output_share_one_grid():
    frozen = frozen_cnn_ptq()
    cats = calls(frozen, aten.cat.default)
    assert len(cats) == 2
    for cat in cats:
        inputs = cat.args[0]
        grids = {_qparams(x) for x in inputs} | {_output_qparams(cat)}
        assert len(grids) == 1
    # The grid reaches back to the ops producing the inputs: nothing rescales for the copy.
    (mix,) = [n for n in calls(frozen, aten.conv2d.default) if n.args[0].args[0].args[0] in cats]
    assert _output_qparams(only_user(mix)) == _output_qparams(cats[0])


def test_dg_flatten_is_one_partition_sharing_the_fixed_grid_of_its_input():
    frozen = frozen_cnn_ptq()
    (permute,) = calls(frozen, aten.permute.default)
    flatten = only_user(permute)
    assert flatten.target == aten.flatten.using_ints  # no q/dq between them
    (sigmoid,) = calls(frozen, aten.sigmoid.default)
    assert _input_qparams(permute) == _output_qparams(flatten) == FIXED_GRID
    assert permute.all_input_nodes[0].args[0] is only_user(sigmoid)  # sigmoid's own quantize


# -- batch norm and dropout -------------------------------------------------------------


def _batch_norms(gm: GraphModule) -> list[Node]:
    return [n for n in gm.graph.nodes if n.op == "call_function" and "batch_norm" in str(n.target)]


def test_no_batch_norm_is_left_after_freeze_ptq():
    frozen = frozen_cnn_ptq()
    assert _batch_norms(frozen) == []
    depthwise, linear = calls(frozen, aten.conv2d.default)[1], calls(frozen, aten.linear.default)[0]
    assert depthwise.args[-1] == 4  # groups: the depthwise conv, its batch norm folded
    # torchao's PTQ prepare folds Linear -> BatchNorm in float already.
    assert only_user(depthwise).target == only_user(linear).target == aten.relu.default


def test_linear_batch_norm_relu_is_one_qat_partition():
    prepared = prepared_cnn_qat()
    batch_norms = calls(prepared, aten.batch_norm.default)
    assert len(batch_norms) == 2  # QAT trains both, the conv's and the linear's
    (batch_norm,) = [n for n in batch_norms if n.args[0].target == aten.linear.default]
    assert len(batch_norm.args[0].users) == 1  # no fake quantizer between linear and bn
    relu = only_user(batch_norm)
    assert relu.target == aten.relu.default
    assert only_user(relu).op == "call_module"  # quantized only after the ReLU


def test_dropout_is_gone_after_freeze():
    frozen = frozen_cnn_ptq()
    assert calls(frozen, aten.dropout.default) == []
    # Nor is the identity requantization it sat in left over: no value is requantized at all.
    for quantize in calls(frozen, *QUANTIZE):
        assert quantize.args[0].target not in DEQUANTIZE_PER_TENSOR


class DropoutNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.5)
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        return self.out(self.drop(F.relu(self.fc(x))))


def test_dropout_is_gone_in_qat_too():
    torch.manual_seed(0)
    prepared = dg.prepare_qat(DropoutNet(), (torch.randn(4, 8),))
    assert calls(prepared, aten.dropout.default)  # it trains with dropout
    prepared(torch.randn(4, 8)).sum().backward()
    frozen = dg.freeze_quantization(prepared)
    assert calls(frozen, aten.dropout.default) == []


def test_dropout_traced_in_train_mode_imports_as_nothing():
    # torchao used directly: captured in train mode, converted without moving to eval.
    torch.manual_seed(0)
    exported = export_with_dynamic_batch(DropoutNet(), (torch.randn(4, 8),), train=True)
    prepared = prepare_qat_pt2e(exported, DgQuantizer(is_qat=True))
    prepared(torch.randn(4, 8))
    frozen = convert_pt2e(prepared)
    (dropout,) = calls(frozen, aten.dropout.default)
    assert dropout.args[2] is True  # still in training mode
    names = [op.name for op in import_graph(frozen, (torch.randn(2, 8),)).walk()]
    assert not any("dropout" in name for name in names)
    # The dequantize -> quantize with equal parameters around it went too.
    assert names.count("dgtorch.quantize_per_tensor") == 3  # input, fc + relu, out
    assert names.count("dgtorch.dequantize_per_tensor") == 3


# -- the importer ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def cnn_module() -> ModuleOp:
    return import_graph(frozen_cnn_ptq(), (cnn_inputs(2),))


def _ops(module: ModuleOp, op_type: type) -> list:
    return [op for op in module.walk() if isinstance(op, op_type)]


def _props(op) -> dict[str, str]:
    return {name: str(value) for name, value in op.properties.items()}


def test_imported_pooling_ops(cnn_module):
    max_pools = _ops(cnn_module, dgtorch.MaxPool2dOp)
    assert len(max_pools) == 2
    assert _props(max_pools[0])["kernel"] == "array<i64: 2, 2>"
    (avg_pool,) = _ops(cnn_module, dgtorch.AvgPool2dOp)
    assert _props(avg_pool) == {
        "kernel": "array<i64: 3, 3>",
        "stride": "array<i64: 2, 2>",
        "padding": "array<i64: 0, 0>",
        "ceil_mode": "true",
        "count_include_pad": "true",
    }
    (adaptive,) = _ops(cnn_module, dgtorch.AdaptiveAvgPool2dOp)
    assert _props(adaptive)["output_size"] == "array<i64: 2, 2>"


def test_imported_shape_and_elementwise_ops(cnn_module):
    pads = _ops(cnn_module, dgtorch.PadOp)
    assert [_props(p)["pad"] for p in pads] == ["array<i64: 1, 1, 1, 1>", "array<i64: 1, 0, 1, 0>"]
    assert [len(op.inputs) for op in _ops(cnn_module, dgtorch.CatOp)] == [2, 2]
    (upsample,) = _ops(cnn_module, dgtorch.UpsampleNearest2dOp)
    assert upsample.mode.data == "nearest"
    assert str(upsample.result.type) == "tensor<?x4x4x4xf32>"
    (permute,) = _ops(cnn_module, dgtorch.PermuteOp)
    assert _props(permute)["dims"] == "array<i64: 0, 2, 3, 1>"
    (softmax,) = _ops(cnn_module, dgtorch.SoftmaxOp)
    assert softmax.dim.value.data == 1
    assert len(_ops(cnn_module, dgtorch.SigmoidOp)) == 1
    depthwise = [op for op in _ops(cnn_module, dgtorch.Conv2dOp) if op.groups.value.data == 4]
    assert len(depthwise) == 1


def test_cnn_compiles_and_matches_the_frozen_model(cnn_module):
    frozen = frozen_cnn_ptq()
    program = dg.export(frozen, (cnn_inputs(2),))
    x = cnn_inputs(5, seed=7)
    step = FIXED_GRID_SCALE  # the softmax output's grid
    assert (program.run(x) - frozen(x)).abs().max() <= step * 1.001


class NearestExact(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)

    def forward(self, x):
        return F.interpolate(self.conv(x), scale_factor=2, mode="nearest-exact")


def _float_module(model: nn.Module, example: torch.Tensor, decompose: bool = False) -> ModuleOp:
    gm = export_with_dynamic_batch(model, (example,), train=False)
    if decompose:
        gm = torch.export.export(gm, (example,)).run_decompositions({}).module()
    importer = GraphImporter(gm, require_quantized=False)
    module = importer.run()
    assert importer.problems == [] and module is not None
    return module


def test_nearest_exact_mode():
    (upsample,) = _ops(
        _float_module(NearestExact(), torch.randn(2, 1, 4, 4)), dgtorch.UpsampleNearest2dOp
    )
    assert upsample.mode.data == "nearest-exact"
    assert str(upsample.result.type) == "tensor<?x2x8x8xf32>"


class LinearBatchNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6)
        self.bn = nn.BatchNorm1d(6, affine=False)

    def forward(self, x):
        return F.softmax(F.relu(self.bn(self.fc(x))), dim=-1)


@pytest.mark.parametrize("decompose", [False, True], ids=["batch_norm", "native_batch_norm"])
def test_batch_norm_after_linear_imports_with_identity_affine(decompose):
    model = LinearBatchNorm().eval()
    module = _float_module(model, torch.randn(2, 8), decompose)
    (batch_norm,) = _ops(module, dgtorch.BatchNormOp)
    assert batch_norm.eps.value.data == pytest.approx(1e-5)
    assert batch_norm.input.owner.name == "dgtorch.linear"
    weight, bias = (op.value for op in (batch_norm.weight.owner, batch_norm.bias.owner))
    assert weight.get_values() == (1.0,) * 6 and bias.get_values() == (0.0,) * 6
    assert [op.name for op in module.walk()][-3:] == [
        "dgtorch.relu",
        "dgtorch.softmax",
        "func.return",
    ]
