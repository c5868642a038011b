"""`DgQuantizer`: the dg accelerator's quantization rules as a torchao PT2E quantizer.

The hardware computes a weight op (conv, linear) or a residual add together
with its fused tail (batch norm folded into the weights, ReLU) in one step:
int8 activations in, int32 accumulation, one requantization to int8 at the
end. So each such chain is annotated as one partition: its inputs and its
final output are quantized, nothing inside it is.

- activations: int8 per-tensor affine in [-128, 127];
- weights: int8 per-output-channel symmetric in [-127, 127] (axis 0);
- bias: int32, scale = input scale * weight scale per channel, zero point 0,
  exactly what the accumulator adds;
- shape ops (flatten, view, reshape) and dropout share the quantization of
  their input, so they never requantize.

The observers are the ones torchao's XNNPACK quantizer uses for each mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e import (
    FusedMovingAvgObsFakeQuantize,
    HistogramObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    ObserverOrFakeQuantize,
    PerChannelMinMaxObserver,
)
from torchao.quantization.pt2e.quantizer import (
    DerivedQuantizationSpec,
    QuantizationAnnotation,
    QuantizationConfig,
    QuantizationSpec,
    QuantizationSpecBase,
    Quantizer,
    SharedQuantizationSpec,
    annotate_input_qspec_map,
    annotate_output_qspec,
    get_input_act_qspec,
    get_output_act_qspec,
    get_weight_qspec,
)
from torchao.quantization.pt2e.quantizer.quantizer import Q_ANNOTATION_KEY
from torchao.quantization.pt2e.utils import get_new_attr_name_with_prefix

aten = torch.ops.aten

ACT_QMIN, ACT_QMAX = -128, 127
WEIGHT_QMIN, WEIGHT_QMAX = -127, 127
BIAS_QMIN, BIAS_QMAX = -(2**31), 2**31 - 1
OBSERVER_EPS = 2**-12
"""Smallest scale an observer may produce (as in torchao's XNNPACK config)."""

CONV_OPS = frozenset({aten.conv2d.default})
LINEAR_OPS = frozenset({aten.linear.default})
ADD_OPS = frozenset({aten.add.Tensor, aten.add_.Tensor})
BATCH_NORM_OPS = frozenset({aten.batch_norm.default})
"""torch.export (training IR) keeps batch norm as one `aten.batch_norm` node."""
RELU_OPS = frozenset({aten.relu.default, aten.relu_.default})
SHARING_OPS = frozenset(
    {
        aten.flatten.using_ints,
        aten.view.default,
        aten.reshape.default,
        aten._unsafe_view.default,
        aten.dropout.default,
    }
)
"""Ops whose output holds (some of) their input's values, unchanged in eval mode: the
output shares the input's quantization instead of being requantized."""


def get_dg_quantization_config(is_qat: bool) -> QuantizationConfig:
    """The dg hardware's activation and weight specs for QAT or PTQ.

    The bias spec is derived per op (it depends on that op's input and weight
    observers), so the config's `bias` is None and `DgQuantizer` adds it.
    """
    act_extra: dict[str, object] = {"eps": OBSERVER_EPS}
    weight_extra: dict[str, object] = {"eps": OBSERVER_EPS}
    if is_qat:
        act_ctr = FusedMovingAvgObsFakeQuantize
        act_extra["observer"] = MovingAverageMinMaxObserver
        weight_ctr = FusedMovingAvgObsFakeQuantize
        weight_extra["observer"] = MovingAveragePerChannelMinMaxObserver
    else:
        act_ctr = HistogramObserver
        weight_ctr = PerChannelMinMaxObserver
    act = QuantizationSpec(
        dtype=torch.int8,
        quant_min=ACT_QMIN,
        quant_max=ACT_QMAX,
        qscheme=torch.per_tensor_affine,
        observer_or_fake_quant_ctr=act_ctr.with_args(**act_extra),
    )
    weight = QuantizationSpec(
        dtype=torch.int8,
        quant_min=WEIGHT_QMIN,
        quant_max=WEIGHT_QMAX,
        qscheme=torch.per_channel_symmetric,
        ch_axis=0,
        observer_or_fake_quant_ctr=weight_ctr.with_args(**weight_extra),
    )
    return QuantizationConfig(act, act, weight, None, is_qat)


def _derive_bias_qparams(
    obs_or_fqs: list[ObserverOrFakeQuantize],
) -> tuple[torch.Tensor, torch.Tensor]:
    """Bias scale = input scale * weight scale (per output channel), zero point 0."""
    act_obs, weight_obs = obs_or_fqs
    act_scale, _ = act_obs.calculate_qparams()
    weight_scale, _ = weight_obs.calculate_qparams()
    scale = (act_scale * weight_scale).to(torch.float32)
    return scale, torch.zeros_like(scale, dtype=torch.int32)


def bias_qspec(act: Node, weight: Node, op: Node) -> DerivedQuantizationSpec:
    """The int32 bias spec of weight op `op`, derived from its input and weight edges."""
    return DerivedQuantizationSpec(
        derived_from=[(act, op), (weight, op)],
        derive_qparams_fn=_derive_bias_qparams,
        dtype=torch.int32,
        quant_min=BIAS_QMIN,
        quant_max=BIAS_QMAX,
        qscheme=torch.per_channel_symmetric,
        ch_axis=0,
    )


@dataclass(frozen=True)
class FusionPattern:
    """An anchor op followed by a chain of single-use ops, all executed as one partition."""

    name: str
    anchor_ops: frozenset[torch._ops.OpOverload]
    tail: tuple[frozenset[torch._ops.OpOverload], ...] = ()

    def match(self, anchor: Node) -> list[Node] | None:
        """The nodes [anchor, *tail] of the chain starting at `anchor`, or None."""
        if anchor.op != "call_function" or anchor.target not in self.anchor_ops:
            return None
        chain = [anchor]
        for ops in self.tail:
            # An intermediate value with other users would have to exist
            # outside the partition, so it cannot be fused away.
            users = list(chain[-1].users)
            if len(users) != 1:
                return None
            (user,) = users
            if (
                user.op != "call_function"
                or user.target not in ops
                or user.args[0] is not chain[-1]
            ):
                return None
            chain.append(user)
        return chain


PATTERNS: tuple[FusionPattern, ...] = (
    # Longest chains first: a node joins the first partition that claims it.
    FusionPattern("conv_bn_relu", CONV_OPS, (BATCH_NORM_OPS, RELU_OPS)),
    FusionPattern("conv_bn", CONV_OPS, (BATCH_NORM_OPS,)),
    FusionPattern("conv_relu", CONV_OPS, (RELU_OPS,)),
    FusionPattern("conv", CONV_OPS),
    FusionPattern("linear_relu", LINEAR_OPS, (RELU_OPS,)),
    FusionPattern("linear", LINEAR_OPS),
    FusionPattern("add_relu", ADD_OPS, (RELU_OPS,)),
    FusionPattern("add", ADD_OPS),
)


def _is_annotated(node: Node) -> bool:
    annotation = node.meta.get(Q_ANNOTATION_KEY)
    return annotation is not None and annotation._annotated


def _mark_annotated(nodes: Sequence[Node]) -> None:
    for node in nodes:
        annotation = node.meta.setdefault(Q_ANNOTATION_KEY, QuantizationAnnotation())
        annotation._annotated = True


def _is_float_tensor(arg: object) -> bool:
    val = arg.meta.get("val") if isinstance(arg, Node) else None
    return isinstance(val, torch.Tensor) and val.dtype == torch.float32


def _has_output_qspec(node: Node) -> bool:
    annotation = node.meta.get(Q_ANNOTATION_KEY)
    return annotation is not None and annotation.output_qspec is not None


class DgQuantizer(Quantizer):
    """Annotates a `torch.export` graph with the dg accelerator's quantization rules.

    Use through `dg.frontend.prepare.prepare_qat` / `prepare_ptq`, or directly
    with torchao's `prepare_qat_pt2e` / `prepare_pt2e` (pass ``is_qat``
    accordingly).
    """

    def __init__(self, is_qat: bool = True):
        super().__init__()
        self.config = get_dg_quantization_config(is_qat)

    def transform_for_annotation(self, model: GraphModule) -> GraphModule:
        _add_zero_bias_before_batch_norm(model)
        return model

    def annotate(self, model: GraphModule) -> GraphModule:
        self._annotate_graph_inputs(model)
        for pattern in PATTERNS:
            for node in list(model.graph.nodes):
                chain = pattern.match(node)
                if chain is not None and not any(_is_annotated(n) for n in chain):
                    self._annotate_partition(chain)
        self._share_through_sharing_ops(model)
        return model

    def validate(self, model: GraphModule) -> None:
        # Ops outside dg's slice are reported by the importer with their source
        # location; failing here would only give a less helpful message.
        pass

    def _annotate_graph_inputs(self, model: GraphModule) -> None:
        """Float graph inputs are quantized right at the boundary, as the device receives int8."""
        for node in model.graph.find_nodes(op="placeholder"):
            if _is_float_tensor(node):
                annotate_output_qspec(node, get_input_act_qspec(self.config))
                _mark_annotated([node])

    def _annotate_partition(self, chain: list[Node]) -> None:
        anchor, output = chain[0], chain[-1]
        act_qspec = get_input_act_qspec(self.config)
        inputs: dict[Node, QuantizationSpecBase | None] = {}
        if anchor.target in ADD_OPS:
            operands = anchor.args[:2]
            if not all(_is_float_tensor(a) for a in operands):
                return  # e.g. x + 1.0: not an add of two activation streams
            inputs.update(dict.fromkeys(operands, act_qspec))  # type: ignore[arg-type]
            partition = list(chain)
        else:
            act, weight = anchor.args[0], anchor.args[1]
            bias = anchor.args[2] if len(anchor.args) > 2 else None
            assert isinstance(act, Node) and isinstance(weight, Node)
            inputs[act] = act_qspec
            inputs[weight] = get_weight_qspec(self.config)
            partition = [*chain, weight]
            if isinstance(bias, Node):
                inputs[bias] = bias_qspec(act, weight, anchor)
                partition.append(bias)
        for node, qspec in inputs.items():
            annotate_input_qspec_map(anchor, node, qspec)
        annotate_output_qspec(output, get_output_act_qspec(self.config))
        _mark_annotated(partition)

    def _share_through_sharing_ops(self, model: GraphModule) -> None:
        for node in model.graph.nodes:
            if node.op != "call_function" or node.target not in SHARING_OPS or _is_annotated(node):
                continue
            source = node.args[0]
            if not isinstance(source, Node) or not _has_output_qspec(source):
                continue
            shared = SharedQuantizationSpec(source)
            node.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
                input_qspec_map={source: shared}, output_qspec=shared, _annotated=True
            )


def _add_zero_bias_before_batch_norm(model: GraphModule) -> None:
    """Give a bias-free conv that feeds a batch norm an explicit zero bias.

    Folding the batch norm creates a bias; when the conv already has a
    (quantized) bias node, torchao's QAT folding updates that node, so the
    folded bias is quantized to int32 like every other bias.
    """
    new_attr_name = get_new_attr_name_with_prefix("_dg_zero_bias_")
    for node in list(model.graph.nodes):
        chain = FusionPattern("conv_bn", CONV_OPS, (BATCH_NORM_OPS,)).match(node)
        if chain is None or (len(node.args) > 2 and node.args[2] is not None):
            continue
        weight = node.args[1]
        assert isinstance(weight, Node)
        out_channels = weight.meta["val"].shape[0]
        name = new_attr_name(model)
        # A parameter, not a buffer: torchao's folding re-registers the bias as one.
        model.register_parameter(
            name, torch.nn.Parameter(torch.zeros(out_channels), requires_grad=False)
        )
        with model.graph.inserting_before(node):
            bias = model.graph.get_attr(name)
        bias.meta["val"] = weight.meta["val"].new_zeros(out_channels)
        node.args = (node.args[0], weight, bias, *node.args[3:])
    model.recompile()
