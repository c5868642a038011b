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
- ops that only move, pick or average values (flatten, view, reshape,
  dropout, max/avg/adaptive pooling, zero padding, nearest resizing,
  transpose, slice) share the quantization of their input
  (`SharedQuantizationSpec`), so the device never requantizes them;
- torch.cat: all inputs and the output share one quantization, so the
  device copies and never rescales;
- softmax and sigmoid: the output is pinned to the fixed grid scale 1/256,
  zero point -128 (`FixedQParamsQuantizationSpec`), in QAT and PTQ alike, so
  training already sees the grid the device computes on;
- Linear -> BatchNorm(-> ReLU) is one partition (like Conv -> BatchNorm):
  dg.export folds the batch norm into the Linear (in PTQ, torchao's
  `prepare_pt2e` already folds it in float);
- `dg.Flatten` (permute + flatten) is one partition sharing its input's
  quantization.
- `dg.Norm` is one partition: int8 per-tensor input and output, nothing
  inside quantized (its weight and bias stay float; dg folds them into the
  device's requantization).
- torch.matmul / bmm / mm of two activations, with its score scale (`* s`,
  `/ d`, a Python number) when one follows: one partition, so the scale
  never has a grid of its own (dg folds it into the requantization);
- activation x constant tensor (`torch.mul(x, table)`, RoPE's cos/sin): the
  constant is quantized int8 per tensor, symmetric in [-127, 127] (one scale
  for the whole table), and the product gets its own output grid.

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
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    ObserverOrFakeQuantize,
    PerChannelMinMaxObserver,
)
from torchao.quantization.pt2e.quantizer import (
    DerivedQuantizationSpec,
    FixedQParamsQuantizationSpec,
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

from dg.dialects.dgq import FIXED_GRID_SCALE, FIXED_GRID_ZERO_POINT
from dg.frontend.modules import inside_flatten, norm_path
from dg.frontend.ops import MATMUL_OPS, SCORE_SCALE_OPS, targets
from dg.lowering import registry

aten = torch.ops.aten

ACT_QMIN, ACT_QMAX = -128, 127
WEIGHT_QMIN, WEIGHT_QMAX = -127, 127
BIAS_QMIN, BIAS_QMAX = -(2**31), 2**31 - 1
OBSERVER_EPS = 2**-12
"""Smallest scale an observer may produce (as in torchao's XNNPACK config)."""

CONV_OPS = targets(registry.CONV2D)
LINEAR_OPS = targets(registry.LINEAR)
ADD_OPS = targets(*registry.rows_with_rule(registry.QuantRule.RESIDUAL))
BATCH_NORM_OPS = frozenset({aten.batch_norm.default})
"""torch.export (training IR) keeps batch norm as one `aten.batch_norm` node."""
RELU_OPS = targets(*registry.rows_with_rule(registry.QuantRule.FUSION_TAIL))
SHARING_OPS = targets(*registry.rows_with_rule(registry.QuantRule.SHARED_GRID))
"""Ops whose output holds (some of, the maximum of, or the mean of) their input's values:
the output shares the input's quantization instead of being requantized."""
CONCAT_OPS = targets(*registry.rows_with_rule(registry.QuantRule.CONCAT_GRID))
FIXED_GRID_OPS = targets(*registry.rows_with_rule(registry.QuantRule.FIXED_GRID))
"""Ops whose output lies in [0, 1]: pinned to the fixed grid the device computes them on."""
PERMUTE_OPS = frozenset({aten.permute.default})
MUL_OPS = frozenset({aten.mul.Tensor})
"""Activation x constant tensor (RoPE's cos/sin tables); other muls dg rejects at export."""

FIXED_GRID_QSPEC = FixedQParamsQuantizationSpec(
    dtype=torch.int8,
    scale=FIXED_GRID_SCALE,
    zero_point=FIXED_GRID_ZERO_POINT,
    quant_min=ACT_QMIN,
    quant_max=ACT_QMAX,
    qscheme=torch.per_tensor_affine,
)
"""The output grid of softmax and sigmoid: int8, scale 1/256, zero point -128 (TFLite's)."""


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
    FusionPattern("linear_bn_relu", LINEAR_OPS, (BATCH_NORM_OPS, RELU_OPS)),
    FusionPattern("linear_bn", LINEAR_OPS, (BATCH_NORM_OPS,)),
    FusionPattern("linear_relu", LINEAR_OPS, (RELU_OPS,)),
    FusionPattern("linear", LINEAR_OPS),
    FusionPattern("add_relu", ADD_OPS, (RELU_OPS,)),
    FusionPattern("add", ADD_OPS),
    FusionPattern("matmul_scale", MATMUL_OPS, (SCORE_SCALE_OPS,)),
    FusionPattern("matmul", MATMUL_OPS),
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
        _untie_reused_parameters(model)
        _add_zero_bias_before_batch_norm(model)
        model.recompile()  # once, after both graph edits
        return model

    def annotate(self, model: GraphModule) -> GraphModule:
        self._annotate_graph_inputs(model)
        # In graph order: an op on its input's grid needs that input's
        # annotation first. A partition starts at its anchor, so no partition
        # can claim a node a later one would want.
        for node in list(model.graph.nodes):
            if node.op != "call_function" or _is_annotated(node):
                continue
            if (path := norm_path(node)) is not None:
                self._annotate_norm(model, path)
                continue
            chain = next((c for c in (p.match(node) for p in PATTERNS) if c is not None), None)
            if chain is not None:
                if not any(_is_annotated(n) for n in chain):
                    self._annotate_partition(chain)
            elif node.target in PERMUTE_OPS:
                self._annotate_channels_last_flatten(node)
            elif node.target in FIXED_GRID_OPS:
                self._annotate_fixed_grid(node)
            elif node.target in CONCAT_OPS:
                self._annotate_concat(node)
            elif node.target in SHARING_OPS:
                self._annotate_sharing(node)
            elif node.target in MUL_OPS:
                self._annotate_mul_constant(node)
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
        inputs: dict[Node, QuantizationSpecBase | None] = {}
        if anchor.target in MATMUL_OPS:
            operands = anchor.args[:2]
            if not all(_is_float_tensor(a) for a in operands):
                return
            if len(chain) > 1 and not _is_number(chain[1].args[1]):
                self._annotate_partition(chain[:1])  # a non-constant scale: dg rejects it
                return
            inputs.update({a: self._input_qspec(a) for a in operands})  # type: ignore[arg-type, misc]
            partition = list(chain)
        elif anchor.target in ADD_OPS:
            operands = anchor.args[:2]
            if not all(_is_float_tensor(a) for a in operands):
                return  # e.g. x + 1.0: not an add of two activation streams
            inputs.update({a: self._input_qspec(a) for a in operands})  # type: ignore[arg-type, misc]
            partition = list(chain)
        else:
            act, weight = anchor.args[0], anchor.args[1]
            bias = anchor.args[2] if len(anchor.args) > 2 else None
            assert isinstance(act, Node) and isinstance(weight, Node)
            inputs[act] = self._input_qspec(act)
            inputs[weight] = get_weight_qspec(self.config)
            partition = [*chain, weight]
            if isinstance(bias, Node):
                inputs[bias] = bias_qspec(act, weight, anchor)
                partition.append(bias)
        for node, qspec in inputs.items():
            annotate_input_qspec_map(anchor, node, qspec)
        annotate_output_qspec(output, get_output_act_qspec(self.config))
        _mark_annotated(partition)

    def _input_qspec(self, source: Node) -> QuantizationSpecBase:
        """The spec of an input edge: on `source`'s own grid, so nothing requantizes.

        Sharing `source`'s output keeps even a fixed grid (a sigmoid's); an
        unannotated source gets an activation observer on the edge.
        """
        if _has_output_qspec(source):
            return SharedQuantizationSpec(source)
        return get_input_act_qspec(self.config)

    def _annotate_sharing(self, node: Node) -> None:
        source = node.args[0]
        if not _is_float_tensor(source):
            return
        assert isinstance(source, Node)
        if not _depends_on_input(source):
            # A slice/reshape of a model constant (Llama's `self.cos[:seq_len]`) is
            # constant too: it stays float, convert_pt2e folds it into the constant,
            # and the op that reads it quantizes the result as its own operand.
            return
        node.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            input_qspec_map={source: self._input_qspec(source)},
            output_qspec=SharedQuantizationSpec((source, node)),
            _annotated=True,
        )

    def _annotate_concat(self, node: Node) -> None:
        """All inputs and the output of a concatenation share the first input's quantization."""
        inputs = list(node.args[0])  # type: ignore[arg-type]
        if not inputs or not all(_is_float_tensor(x) for x in inputs):
            return
        if not any(_depends_on_input(x) for x in inputs):  # type: ignore[arg-type]
            return  # constants only: left float and folded, as in `_annotate_sharing`
        first = inputs[0]
        shared = SharedQuantizationSpec((first, node))
        qspecs: dict[Node, QuantizationSpecBase | None] = dict.fromkeys(inputs, shared)
        qspecs[first] = self._input_qspec(first)
        node.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            input_qspec_map=qspecs, output_qspec=shared, _annotated=True
        )

    def _annotate_fixed_grid(self, node: Node) -> None:
        source = node.args[0]
        if not _is_float_tensor(source):
            return
        assert isinstance(source, Node)
        node.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            input_qspec_map={source: self._input_qspec(source)},
            output_qspec=FIXED_GRID_QSPEC,
            _annotated=True,
        )

    def _annotate_mul_constant(self, node: Node) -> None:
        """activation x constant tensor: the constant per-tensor int8, the output its own grid.

        A bare scalar or a product of two activations is left alone (dg rejects them).
        """
        operands = node.args[:2]
        if not all(_is_float_tensor(a) for a in operands):
            return
        activations = [a for a in operands if _depends_on_input(a)]  # type: ignore[arg-type]
        if len(activations) != 1:
            return
        (activation,) = activations
        (constant,) = [a for a in operands if a is not activation]
        assert isinstance(activation, Node) and isinstance(constant, Node)
        if constant.meta["val"].dim() == 0:
            return
        node.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            input_qspec_map={
                activation: self._input_qspec(activation),
                constant: constant_tensor_qspec(self.config.is_qat),
            },
            output_qspec=get_output_act_qspec(self.config),
            _annotated=True,
        )

    def _annotate_channels_last_flatten(self, permute: Node) -> None:
        """`dg.Flatten`'s permute -> flatten is one partition on its input's grid.

        Other permutes are left alone (dg rejects them).
        """
        users = list(permute.users)
        if not (inside_flatten(permute) and len(users) == 1 and inside_flatten(users[0])):
            return
        (flatten,) = users
        source = permute.args[0]
        if flatten.target not in targets(registry.FLATTEN) or not _is_float_tensor(source):
            return
        assert isinstance(source, Node)
        permute.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            input_qspec_map={source: self._input_qspec(source)}, _annotated=True
        )
        flatten.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
            output_qspec=SharedQuantizationSpec((source, permute)), _annotated=True
        )

    def _annotate_norm(self, model: GraphModule, path: str) -> None:
        """A `dg.Norm` (the module at `path`) is one partition: its int8 input and output.

        The device computes the whole body as one op, so nothing inside gets a
        grid: its weight and bias stay float (dg folds them into the
        requantization), and every edge from the input shares one observer.
        """
        body = [n for n in model.graph.nodes if n.op == "call_function" and norm_path(n) == path]
        inside = set(body)
        first_edge: dict[Node, tuple[Node, Node]] = {}
        for node in body:
            qspecs: dict[Node, QuantizationSpecBase | None] = {}
            for source in node.all_input_nodes:
                if source in inside or not _is_float_tensor(source) or source.op == "get_attr":
                    continue
                if source in first_edge:
                    qspecs[source] = SharedQuantizationSpec(first_edge[source])
                else:
                    first_edge[source] = (source, node)
                    qspecs[source] = self._input_qspec(source)
            node.meta[Q_ANNOTATION_KEY] = QuantizationAnnotation(
                input_qspec_map=qspecs, _annotated=True
            )
        if body:
            body[-1].meta[Q_ANNOTATION_KEY].output_qspec = get_output_act_qspec(self.config)


def _is_number(arg: object) -> bool:
    return isinstance(arg, (int, float)) and not isinstance(arg, bool)


def _depends_on_input(node: Node) -> bool:
    """Whether a graph input reaches `node`: an activation, not a constant of the model."""
    seen: set[Node] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        if current.op == "placeholder":
            return True
        if current not in seen:
            seen.add(current)
            pending.extend(current.all_input_nodes)
    return False


def constant_tensor_qspec(is_qat: bool) -> QuantizationSpec:
    """int8 per-tensor symmetric in [-127, 127] (zero point 0) for a multiplied constant.

    The observer sees the constant itself, so its range is exact.
    """
    ctr = FusedMovingAvgObsFakeQuantize if is_qat else MinMaxObserver
    extra: dict[str, object] = {"eps": OBSERVER_EPS}
    if is_qat:
        extra["observer"] = MovingAverageMinMaxObserver
    return QuantizationSpec(
        dtype=torch.int8,
        quant_min=WEIGHT_QMIN,
        quant_max=WEIGHT_QMAX,
        qscheme=torch.per_tensor_symmetric,
        observer_or_fake_quant_ctr=ctr.with_args(**extra),
    )


def _untie_reused_parameters(model: GraphModule) -> None:
    """Give each op that reads a reused parameter (a module called twice) its own read.

    Annotations are per node: with one weight/bias node for two Linears,
    torchao quantizes the bias once, derived from the first call's input
    scale, and the second call's int32 bias would be on the wrong scale. One
    `get_attr` per user quantizes the same tensor per call (the weight gets the
    same int8 values each time; each bias gets its own call's scale).
    """
    for node in list(model.graph.find_nodes(op="get_attr")):
        for user in list(node.users)[1:]:
            with model.graph.inserting_before(user):
                own = model.graph.get_attr(str(node.target))
            own.meta = dict(node.meta)
            user.replace_input_with(node, own)


def _add_zero_bias_before_batch_norm(model: GraphModule) -> None:
    """Give a bias-free conv or linear that feeds a batch norm an explicit zero bias.

    Folding the batch norm creates a bias; when the conv already has a
    (quantized) bias node, torchao's QAT folding updates that node, so the
    folded bias is quantized to int32 like every other bias. Likewise
    dg.export folds a linear's batch norm into the linear's int32 bias.
    """
    new_attr_name = get_new_attr_name_with_prefix("_dg_zero_bias_")
    weight_ops = CONV_OPS | LINEAR_OPS
    for node in list(model.graph.nodes):
        chain = FusionPattern("weight_bn", weight_ops, (BATCH_NORM_OPS,)).match(node)
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
