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
