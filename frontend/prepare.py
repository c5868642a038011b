"""Quantize a PyTorch model for dg with torchao PT2E.

    prepared = prepare_qat(model, example_inputs)   # or prepare_ptq
    ...train (QAT) or run calibration batches (PTQ) through `prepared`...
    frozen = freeze_quantization(prepared)

Models are captured with `torch.export` with a dynamic batch axis, so the
prepared and frozen models accept any batch size, like the device does.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.export import Dim
from torch.fx import GraphModule
from torchao.quantization.pt2e import (
    allow_exported_model_train_eval,
    move_exported_model_to_eval,
    move_exported_model_to_train,
)
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e

from dg.frontend.errors import ExportError, Problem
from dg.frontend.quantizer import DgQuantizer

BATCH_AXIS = 0

BATCH_SPECIALIZED = Problem(
    "torch.export",
    "the model fixes its batch size (axis 0 of its inputs) to a constant, but dg compiles "
    "for any batch size",
    fix="do not hard-code the batch size: e.g. x.flatten(1) or x.view(x.size(0), -1) "
    "instead of x.view(4, -1)",
)


def export_with_dynamic_batch(
    model: torch.nn.Module, example_inputs: Sequence[object], *, train: bool
) -> GraphModule:
    """`torch.export` `model` in train or eval mode, axis 0 of every tensor input dynamic.

    All tensor inputs share one batch dimension. The user's model is left in
    the mode it was in. A model that fixes its batch size raises `ExportError`.
    """
    args = tuple(_traceable_example(x) for x in example_inputs)
    batch = Dim("batch")
    dynamic_shapes = tuple(
        {BATCH_AXIS: batch} if isinstance(x, torch.Tensor) and x.dim() > 0 else None for x in args
    )
    was_training = model.training
    model.train(train)
    try:
        exported = torch.export.export(model, args, dynamic_shapes=dynamic_shapes)
    except torch._dynamo.exc.UserError as error:
        if "Constraints violated" not in str(error):
            raise
        raise ExportError([BATCH_SPECIALIZED]) from error
    finally:
        model.train(was_training)
    return exported.module()


def _traceable_example(x: object) -> object:
    # torch.export specializes a size-1 axis to the constant 1 (and then
    # rejects the dynamic-dim request), so trace with a batch of two copies.
    if isinstance(x, torch.Tensor) and x.dim() > 0 and x.shape[BATCH_AXIS] == 1:
        return torch.cat([x, x], dim=BATCH_AXIS)
    return x


def prepare_qat(model: torch.nn.Module, example_inputs: Sequence[object]) -> GraphModule:
    """Export `model` and insert dg's fake quantization for quantization-aware training.

    The result is in train mode; `.train()` / `.eval()` on it switch batch
    norm and dropout as on the original model.
    """
    exported = export_with_dynamic_batch(model, example_inputs, train=True)
    prepared = prepare_qat_pt2e(exported, DgQuantizer(is_qat=True))
    allow_exported_model_train_eval(prepared)
    move_exported_model_to_train(prepared)
    return prepared


def prepare_ptq(model: torch.nn.Module, example_inputs: Sequence[object]) -> GraphModule:
    """Export `model` in eval mode and insert dg's observers for post-training quantization.

    Calibrate by calling the result on representative inputs. Conv -> batch
    norm is folded here already (torchao does it before observing).
    """
    exported = export_with_dynamic_batch(model, example_inputs, train=False)
    prepared = prepare_pt2e(exported, DgQuantizer(is_qat=False))
    allow_exported_model_train_eval(prepared)
    return prepared


def freeze_quantization(prepared: GraphModule) -> GraphModule:
    """Fix the quantization parameters learnt by `prepared`: the frozen model for `dg.export`.

    `convert_pt2e` folds conv -> batch norm (QAT) and turns weights and biases
    into integer constants; the frozen model is in eval mode. Like torchao's
    `convert_pt2e`, this converts `prepared` in place.
    """
    frozen = convert_pt2e(prepared)
    move_exported_model_to_eval(frozen)
    allow_exported_model_train_eval(frozen)
    return frozen
