"""DgQuantizer: the frozen graph has exactly the hardware's quantization scheme."""

from __future__ import annotations

import pytest
import torch
from graph_queries import DEQUANTIZE_PER_TENSOR, QUANTIZE, aten, attr, calls, only_user, qd
from slice_models import frozen_slice_net, prepared_slice_net
from torchao.quantization.pt2e import (
    DerivedObserverOrFakeQuantize,
    FusedMovingAvgObsFakeQuantize,
    HistogramObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    PerChannelMinMaxObserver,
)

MODES = ["qat", "ptq"]
WEIGHT_OPS = (aten.conv2d.default, aten.linear.default)


@pytest.fixture
def prepared_qat() -> torch.fx.GraphModule:
    return prepared_slice_net("qat")


def _batch_norms(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    return [n for n in gm.graph.nodes if n.op == "call_function" and "batch_norm" in str(n.target)]


def test_qat_prepared_graph_still_trains_batch_norm(prepared_qat):
    # What the frozen graph folds away is really there during QAT.
    assert len(_batch_norms(prepared_qat)) == 2


@pytest.mark.parametrize("mode", MODES)
def test_batch_norm_folds_into_conv(mode):
    frozen = frozen_slice_net(mode)
    assert _batch_norms(frozen) == []
    block_conv, conv, proj = calls(frozen, aten.conv2d.default)
    # conv -> bn -> relu became conv -> relu; bias-free conv -> bn became a conv with a bias.
    assert only_user(block_conv).target == aten.relu.default
    assert only_user(proj).target in QUANTIZE
    assert len(proj.args) > 2 and proj.args[2] is not None


@pytest.mark.parametrize("mode", MODES)
def test_fused_partitions_have_no_qdq_inside(mode):
    frozen = frozen_slice_net(mode)
    relus = calls(frozen, aten.relu.default)
    anchors = [relu.args[0].target for relu in relus]
    assert anchors == [
        aten.conv2d.default,
        aten.conv2d.default,
        aten.add.Tensor,
        aten.linear.default,
    ]
    for relu in relus:
        assert only_user(relu).target in QUANTIZE
    for node in calls(frozen, *WEIGHT_OPS, aten.add.Tensor):
        tensor_inputs = node.all_input_nodes
        assert all(
            a.target in (*DEQUANTIZE_PER_TENSOR, qd.dequantize_per_channel.default)
            for a in tensor_inputs
        )


@pytest.mark.parametrize("mode", MODES)
def test_bias_is_int32_with_derived_scale(mode):
    frozen = frozen_slice_net(mode)
    weight_ops = calls(frozen, *WEIGHT_OPS)
    assert len(weight_ops) == 5
    for op in weight_ops:
        act_dq, weight_dq, bias_dq = op.args[:3]
        assert bias_dq.target == qd.dequantize_per_channel.default
        q_bias, scales, zero_points, axis, qmin, qmax, dtype = bias_dq.args
        assert attr(frozen, q_bias).dtype == torch.int32
        assert (axis, qmin, qmax, dtype) == (0, -(2**31), 2**31 - 1, torch.int32)
        assert torch.count_nonzero(attr(frozen, zero_points)) == 0
        act_scale = act_dq.args[1]
        weight_scales = attr(frozen, weight_dq.args[1])
        torch.testing.assert_close(
            attr(frozen, scales).double(), act_scale * weight_scales.double(), rtol=1e-6, atol=0
        )


@pytest.mark.parametrize("mode", MODES)
def test_weights_are_per_channel_symmetric_int8(mode):
    frozen = frozen_slice_net(mode)
    for op in calls(frozen, *WEIGHT_OPS):
        weight_dq = op.args[1]
        assert weight_dq.target == qd.dequantize_per_channel.default
        q_weight, scales, zero_points, axis, qmin, qmax, dtype = weight_dq.args
        weight = attr(frozen, q_weight)
        assert (axis, qmin, qmax, dtype) == (0, -127, 127, torch.int8)
        assert weight.dtype == torch.int8 and int(weight.min()) >= -127
        assert attr(frozen, scales).shape == (weight.shape[0],)
        assert torch.count_nonzero(attr(frozen, zero_points)) == 0
        if mode == "ptq":
            # Min/max per output channel: every channel's largest |w| maps to 127.
            per_channel_max = weight.flatten(1).abs().amax(dim=1)
            assert per_channel_max.tolist() == [127] * weight.shape[0]


@pytest.mark.parametrize("mode", MODES)
def test_activations_are_per_tensor_affine_int8(mode):
    frozen = frozen_slice_net(mode)
    quantizes = calls(frozen, *QUANTIZE)
    assert quantizes
    for q in quantizes:
        _, scale, _, qmin, qmax, dtype = q.args
        assert (qmin, qmax, dtype) == (-128, 127, torch.int8) and scale > 0
    # Affine, not symmetric: a ReLU output's zero point sits at the bottom of the range.
    assert {q.args[2] for q in quantizes if q.args[0].target == aten.relu.default} == {-128}


@pytest.mark.parametrize("mode", MODES)
def test_graph_input_is_quantized(mode):
    frozen = frozen_slice_net(mode)
    (x,) = frozen.graph.find_nodes(op="placeholder")
    (q,) = [u for u in x.users if u.op == "call_function"]
    assert q.target in QUANTIZE


@pytest.mark.parametrize("mode", MODES)
def test_flatten_shares_its_input_quantization(mode):
    frozen = frozen_slice_net(mode)
    (flatten,) = calls(frozen, aten.flatten.using_ints)
    dq_in = flatten.args[0]
    q_out = only_user(flatten)
    assert dq_in.target in DEQUANTIZE_PER_TENSOR and q_out.target in QUANTIZE
    assert dq_in.args[1:] == q_out.args[1:]


def test_qat_uses_moving_average_fake_quantizers(prepared_qat):
    fake_quants = [
        m for m in prepared_qat.modules() if isinstance(m, FusedMovingAvgObsFakeQuantize)
    ]
    observers = {type(fq.activation_post_process) for fq in fake_quants}
    assert observers == {MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver}
    derived = [m for m in prepared_qat.modules() if isinstance(m, DerivedObserverOrFakeQuantize)]
    assert len(derived) == 5  # one int32 bias per weight op


def test_ptq_uses_histogram_and_per_channel_min_max_observers():
    prepared = prepared_slice_net("ptq")
    types = {type(m) for m in prepared.modules()}
    assert {HistogramObserver, PerChannelMinMaxObserver, DerivedObserverOrFakeQuantize} <= types
    assert FusedMovingAvgObsFakeQuantize not in types
