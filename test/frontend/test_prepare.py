"""prepare_qat / prepare_ptq / freeze_quantization: dynamic batch, modes, conv-bn folding."""

from __future__ import annotations

import pytest
import torch
from slice_models import (
    SliceNet,
    calibrate,
    frozen_slice_net,
    prepared_slice_net,
    slice_inputs,
)
from torch import nn

from dg.frontend.errors import ExportError
from dg.frontend.prepare import export_with_dynamic_batch, freeze_quantization, prepare_ptq

BATCH_SIZES = [1, 3, 7]


@pytest.fixture(params=["qat", "ptq"])
def prepared(request) -> torch.fx.GraphModule:
    return prepared_slice_net(request.param)


@pytest.mark.parametrize("batch", BATCH_SIZES)
def test_prepared_model_accepts_any_batch_size(prepared, batch):
    assert prepared(slice_inputs(batch)).shape == (batch, 3)


@pytest.mark.parametrize("mode", ["qat", "ptq"])
def test_frozen_model_accepts_any_batch_size(mode):
    frozen = frozen_slice_net(mode)
    x = slice_inputs(max(BATCH_SIZES), seed=1)
    whole = frozen(x)
    for batch in BATCH_SIZES:
        # Each sample is computed on its own: slicing the batch slices the result.
        torch.testing.assert_close(frozen(x[:batch]), whole[:batch], rtol=0, atol=0)


def test_batch_of_one_example_still_exports_a_dynamic_batch():
    torch.manual_seed(0)
    prepared = prepare_ptq(SliceNet(), (slice_inputs(1),))
    assert prepared(slice_inputs(5)).shape == (5, 3)


def _batch_norm_training_flags(gm: torch.fx.GraphModule) -> list[bool]:
    return [n.args[5] for n in gm.graph.nodes if n.target == torch.ops.aten.batch_norm.default]


def test_qat_model_switches_between_train_and_eval():
    prepared = prepared_slice_net("qat")
    assert _batch_norm_training_flags(prepared) == [True, True]
    prepared.eval()  # batch norm switches to its running statistics
    assert _batch_norm_training_flags(prepared) == [False, False]
    prepared.train()
    assert _batch_norm_training_flags(prepared) == [True, True]


@pytest.mark.parametrize("train", [True, False])
def test_export_uses_the_requested_mode_and_restores_the_users(train):
    model = SliceNet().train(not train)
    gm = export_with_dynamic_batch(model, (slice_inputs(2),), train=train)
    assert _batch_norm_training_flags(gm) == [train, train]
    assert model.training is not train


def test_frozen_model_is_in_eval_mode_and_stays_close_to_prepared():
    torch.manual_seed(0)
    prepared = prepare_ptq(SliceNet(), (slice_inputs(4),))
    calibrate(prepared, train=False)
    x = slice_inputs(6, seed=5)
    with torch.no_grad():
        expected = prepared(x)
    frozen = freeze_quantization(prepared)
    frozen.eval()  # allowed, and a no-op
    # Integer weights and activations: close to the observed float model, not equal.
    assert torch.allclose(frozen(x), expected, atol=0.05)


class FixedBatch(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x.view(4, 64))


def test_a_model_with_a_fixed_batch_size_is_a_clear_error():
    with pytest.raises(ExportError) as info:
        prepare_ptq(FixedBatch(), (slice_inputs(4),))
    (problem,) = info.value.problems
    assert "batch size" in problem.reason and "x.view(x.size(0), -1)" in problem.fix


def test_freezing_a_model_that_never_saw_data_says_to_calibrate():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 6 * 6, 3))
    prepared = prepare_ptq(model, (slice_inputs(2),))
    with pytest.raises(ExportError) as info:
        freeze_quantization(prepared)
    (problem,) = info.value.problems
    assert "have seen no data" in problem.reason
    assert problem.fix is not None and "calibration" in problem.fix
    prepared(slice_inputs(4))
    assert freeze_quantization(prepared)(slice_inputs(3)).shape == (3, 3)
