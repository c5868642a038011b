"""Activations family: ReLU (fused into the op before it) and sigmoid."""

from __future__ import annotations

import operator

from torch.fx import Node
from xdsl.ir import SSAValue

from dg.dialects import dgtorch
from dg.frontend.importer.common import (
    import_unary,
    is_call,
)
from dg.frontend.importer.core import (
    GraphImporter,
    NodeProblem,
    handles,
)
from dg.frontend.ops import targets
from dg.lowering import registry
from dg.lowering.registry.table import OpNames

FUSION_ANCHORS = targets(registry.CONV2D, registry.LINEAR, registry.ADD)
"""The ops a ReLU can be fused into (also through a batch norm that folds into them)."""


def _is_fusion_anchor(source: object) -> bool:
    """A ReLU fuses into `source`: a conv, linear or add (or a batch norm folding into one)
    whose only user is the ReLU."""
    if not (isinstance(source, Node) and len(source.users) == 1):
        return False
    if is_call(source, {operator.getitem}) and source.args[1] == 0:
        source = source.args[0]  # output 0 of `_native_batch_norm_legit_no_training`
        assert isinstance(source, Node)
    if is_call(source, targets(registry.BATCH_NORM)):
        anchor = source.args[0]
        return is_call(anchor, FUSION_ANCHORS) and len(anchor.users) == 1  # type: ignore[union-attr]
    return is_call(source, FUSION_ANCHORS)


@handles(*targets(registry.RELU))
def _relu(imp: GraphImporter, node: Node) -> SSAValue:
    source = node.args[0]
    if not _is_fusion_anchor(source):
        raise NodeProblem(registry.STANDALONE_RELU.reason, registry.STANDALONE_RELU.fix)
    op = dgtorch.ReluOp(operands=[imp.operand(source)], result_types=[imp.result_type(node)])
    return imp.emit(node, op)


@handles(*targets(registry.SIGMOID))
def _sigmoid(imp: GraphImporter, node: Node) -> SSAValue:
    return import_unary(imp, node, dgtorch.SigmoidOp)


RELU6_REASON = "clips at 0 and 6 (ReLU6), and dg's activations are relu, sigmoid and softmax only"
RELU6_FIX = (
    "replace it with nn.ReLU (F.relu) and retrain (QAT) or recalibrate (PTQ): dg fuses a ReLU "
    "into the Conv2d, Linear or add before it, and the quantizer's output range then plays "
    "the part of the clip at 6"
)
SMOOTH_ACTIVATION_FIX = (
    "replace it with nn.ReLU (F.relu) right after the Conv2d, Linear or residual add, where dg "
    "fuses it as the op's fusion tail, and retrain (QAT) or recalibrate (PTQ)"
)
CLIP_TO_RELU6 = (0.0, 6.0)
"""hardtanh's (min_val, max_val) that make it ReLU6."""

_aten = OpNames("aten")
_OTHER = registry.OTHER_ACTIVATIONS
_RELU6_NAMES = {_aten.relu6.default, _aten.hardtanh.default, _aten.hardtanh_.default}
_SMOOTH_NAMES = {
    _aten.gelu.default,
    _aten.gelu_.default,
    _aten.silu.default,
    _aten.silu_.default,
    _aten.hardswish.default,
    _aten.hardswish_.default,
}


@handles(*(t for t in targets(_OTHER) if str(t) in _RELU6_NAMES | _SMOOTH_NAMES))
def _other_activation(imp: GraphImporter, node: Node) -> SSAValue:
    """The "Other activations" row, with the fix that fits what the user wrote."""
    if str(node.target) in _SMOOTH_NAMES:
        raise NodeProblem(_OTHER.reason, SMOOTH_ACTIVATION_FIX)
    args = imp.arguments(node)
    bounds = (float(args.get("min_val", 0.0)), float(args.get("max_val", 6.0)))
    if bounds == CLIP_TO_RELU6:
        raise NodeProblem(RELU6_REASON, RELU6_FIX)
    raise NodeProblem(_OTHER.reason, _OTHER.fix)
