"""Quantize a PyTorch model for dg with torchao PT2E.

    prepared = prepare_qat(model, example_inputs)   # or prepare_ptq
    ...train (QAT) or run calibration batches (PTQ) through `prepared`...
    frozen = freeze_quantization(prepared)

Models are captured with `torch.export` with a dynamic batch axis, so the
prepared and frozen models accept any batch size, like the device does.
Before inserting anything, `prepare_qat` / `prepare_ptq` run the checks of
`dg.export` on the captured model and raise `ExportError` listing every
problem: nobody should train for hours a model that cannot be compiled.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.export import Dim
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e import (
    allow_exported_model_train_eval,
    move_exported_model_to_eval,
    move_exported_model_to_train,
)
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e

from dg.frontend import pattern_cache
from dg.frontend.errors import ExportError, Problem
from dg.frontend.idioms import rewrite_idioms
from dg.frontend.importer import collect_problems
from dg.frontend.ops import targets
from dg.frontend.quantizer import DgQuantizer
from dg.frontend.source import keep_user_frames
from dg.lowering import registry

qd = torch.ops.quantized_decomposed  # registered by importing torchao.quantization.pt2e
PER_TENSOR_QUANTIZE = frozenset({qd.quantize_per_tensor.default, qd.quantize_per_tensor.tensor})
PER_TENSOR_DEQUANTIZE = frozenset(
    {qd.dequantize_per_tensor.default, qd.dequantize_per_tensor.tensor}
)

pattern_cache.apply()  # torchao re-exports its rewrite patterns on every call otherwise

BATCH_AXIS = 0

BATCH_SPECIALIZED = Problem(
    "torch.export",
    "the model fixes its batch size (axis 0 of its inputs) to a constant, but dg compiles "
    "for any batch size",
    fix="do not hard-code the batch size: e.g. x.flatten(1) or x.view(x.size(0), -1) "
    "instead of x.view(4, -1)",
)


def export_with_dynamic_batch(
    model: torch.nn.Module, example_inputs: Sequence[object] | torch.Tensor, *, train: bool
) -> GraphModule:
    """`torch.export` `model` in train or eval mode, axis 0 of every tensor input dynamic.

    All tensor inputs share one batch dimension. The user's model is left in
    the mode it was in. A model that fixes its batch size raises `ExportError`.
    Everyday idioms are rewritten into the rows they stand for (`rewrite_idioms`).
    """
    args = _unaliased(tuple(_traceable_example(x) for x in example_tuple(example_inputs)))
    batch = Dim("batch")
    dynamic_shapes = tuple(
        {BATCH_AXIS: batch} if isinstance(x, torch.Tensor) and x.dim() > 0 else None for x in args
    )
    was_training = model.training
    model.train(train)
    keep_user_frames(model)
    try:
        exported = torch.export.export(model, args, dynamic_shapes=dynamic_shapes)
    except torch._dynamo.exc.UserError as error:
        if "Constraints violated" not in str(error):
            raise
        raise ExportError([BATCH_SPECIALIZED]) from error
    finally:
        model.train(was_training)
    gm = exported.module()
    rewrite_idioms(gm)
    return gm


def _unaliased(args: tuple[object, ...]) -> tuple[object, ...]:
    """`args` with every tensor that shares memory with an earlier one copied.

    torch.export traces tensors that alias as one input (`dg.prepare_ptq(m, (x, x))`
    would leave the second input unread), but each is a model input of its own.
    """
    seen: set[int] = set()
    result = []
    for x in args:
        if isinstance(x, torch.Tensor):
            if x.untyped_storage().data_ptr() in seen:
                x = x.clone()
            seen.add(x.untyped_storage().data_ptr())
        result.append(x)
    return tuple(result)


EXAMPLE_DTYPES = (torch.float32, torch.int32, torch.int8)
"""What an example input tensor may be: float32 for a quantized model, int32 or int8 for an
integer logic layer (`dg.LogicLayer`)."""


def example_tuple(example_inputs: object) -> tuple[object, ...]:
    """`example_inputs` as the tuple of positional inputs dg's entry points take.

    A bare tensor is taken as the one-tuple `(tensor,)`. Anything else but a tuple or
    list, and a tensor of a dtype dg does not compile for, is a TypeError saying so.
    """
    if isinstance(example_inputs, torch.Tensor):
        return (example_inputs,)
    if not isinstance(example_inputs, (tuple, list)):
        raise TypeError(
            "example_inputs must be a tuple of example inputs, one per forward argument "
            f"(e.g. (x,)), got {type(example_inputs).__name__}"
        )
    for i, x in enumerate(example_inputs):
        if isinstance(x, torch.Tensor) and x.dtype not in EXAMPLE_DTYPES:
            cast = "x.float()" if x.is_floating_point() else "x.int() for a logic layer"
            raise TypeError(
                f"example input #{i} is {x.dtype}: dg compiles float32 models (and int32 or "
                f"int8 inputs of logic layers); convert it, e.g. {cast}"
            )
    return tuple(example_inputs)


def _traceable_example(x: object) -> object:
    # torch.export specializes a size-1 axis to the constant 1 (and then
    # rejects the dynamic-dim request), so trace with a batch of two copies.
    if isinstance(x, torch.Tensor) and x.dim() > 0 and x.shape[BATCH_AXIS] == 1:
        return torch.cat([x, x], dim=BATCH_AXIS)
    return x


def check_exported(exported: GraphModule) -> None:
    """Raise `ExportError` with every problem dg finds in the float graph `exported`."""
    problems = collect_problems(exported, require_quantized=False)
    if problems:
        raise ExportError(problems)


def prepare_qat(
    model: torch.nn.Module, example_inputs: Sequence[object] | torch.Tensor
) -> GraphModule:
    """Export `model` and insert dg's fake quantization for quantization-aware training.

    `example_inputs` is a tuple with one example per forward argument (a bare tensor is
    taken as `(tensor,)`): float32 tensors, or int32 / int8 for logic layers; another
    dtype is a TypeError, not a silent cast. The result is in train mode; `.train()` /
    `.eval()` on it switch batch norm and dropout as on the original model. Raises
    `ExportError` when dg could not compile the model.
    """
    exported = export_with_dynamic_batch(model, example_inputs, train=True)
    check_exported(exported)
    prepared = prepare_qat_pt2e(exported, DgQuantizer(is_qat=True))
    allow_exported_model_train_eval(prepared)
    move_exported_model_to_train(prepared)
    return prepared


def prepare_ptq(
    model: torch.nn.Module, example_inputs: Sequence[object] | torch.Tensor
) -> GraphModule:
    """Export `model` in eval mode and insert dg's observers for post-training quantization.

    Calibrate by calling the result on representative inputs. Conv -> batch
    norm is folded here already (torchao does it before observing). Raises
    `ExportError` when dg could not compile the model.
    """
    exported = export_with_dynamic_batch(model, example_inputs, train=False)
    check_exported(exported)
    prepared = prepare_pt2e(exported, DgQuantizer(is_qat=False))
    allow_exported_model_train_eval(prepared)
    return prepared


def freeze_quantization(prepared: GraphModule) -> GraphModule:
    """Fix the quantization parameters learnt by `prepared`: the frozen model for `dg.export`.

    `convert_pt2e` folds conv -> batch norm (QAT) and turns weights and biases
    into integer constants; the frozen model is in eval mode, and has no
    dropout left (an identity at inference). Like torchao's `convert_pt2e`,
    this converts `prepared` in place.
    """
    _require_observed_data(prepared)
    frozen = convert_pt2e(prepared)
    move_exported_model_to_eval(frozen)
    remove_dropout(frozen)
    allow_exported_model_train_eval(frozen)
    return frozen


NEVER_OBSERVED_FIX = (
    "run the prepared model on representative data before freezing: train it (QAT) "
    "or call it on calibration batches (PTQ)"
)


def _require_observed_data(prepared: GraphModule) -> None:
    """Refuse to freeze observers that never saw a value.

    torchao then falls back to default parameters (scale 1, one channel), and the
    model would fail later with an error about shapes that says nothing useful.
    """
    unobserved = [name for name, module in prepared.named_modules() if _never_observed(module)]
    if unobserved:
        shown = ", ".join(unobserved[:3]) + (", ..." if len(unobserved) > 3 else "")
        raise ExportError(
            [
                Problem(
                    op="dg.freeze_quantization",
                    reason=f"{len(unobserved)} observers have seen no data ({shown})",
                    fix=NEVER_OBSERVED_FIX,
                )
            ]
        )


def _never_observed(module: torch.nn.Module) -> bool:
    """A min/max style observer whose running range is still empty (+inf / no channels)."""
    min_val = getattr(module, "min_val", None)
    if not isinstance(min_val, torch.Tensor):
        return False
    return min_val.numel() == 0 or bool(torch.isinf(min_val).any())


def remove_dropout(frozen: GraphModule) -> None:
    """Remove every dropout of a frozen graph, whatever mode it was traced in.

    Dropout shares its input's quantization, so it sits between a dequantize
    and a quantize with the same parameters; without it, that pair is the
    identity on the integers and goes too.
    """
    graph = frozen.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target in targets(registry.DROPOUT):
            node.replace_all_uses_with(node.args[0])
            graph.erase_node(node)
    for quantize in list(graph.nodes):
        dequantize = quantize.args[0] if quantize.args else None
        if isinstance(dequantize, Node) and _is_round_trip(dequantize, quantize):
            quantize.replace_all_uses_with(dequantize.args[0])
            graph.erase_node(quantize)
            if not dequantize.users:
                graph.erase_node(dequantize)
    frozen.recompile()


def _is_round_trip(dequantize: Node, quantize: Node) -> bool:
    """quantize(dequantize(q)) with the same parameters: q itself."""
    return (
        quantize.op == "call_function"
        and quantize.target in PER_TENSOR_QUANTIZE
        and dequantize.op == "call_function"
        and dequantize.target in PER_TENSOR_DEQUANTIZE
        and not dequantize.kwargs
        and tuple(dequantize.args[1:6]) == tuple(quantize.args[1:6])
    )
