"""Facts about a whole frozen graph that the import driver checks around its node walk.

Which nodes run at all, how the model returns its outputs, whether it is a
graph of logic layers only, and whether the example inputs fit its inputs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch.fx import GraphModule, Node
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

from dg.dialects.common import OUTPUT_STRUCTURE_ATTR
from dg.frontend.errors import Problem

aten = torch.ops.aten

SKIPPED_OPS = frozenset(
    {
        aten._assert_tensor_metadata.default,
        aten._assert_scalar.default,
        aten._assert_async.msg,
        aten.sym_constrain_range.default,
        aten.sym_constrain_range_for_size.default,
    }
)
"""Runtime checks torch.export inserts; they compute nothing on the device."""

INPUT_DTYPES = (torch.float32, torch.int32)
"""Graph inputs: float32 for the quantized model, int32 for logic layers. (int8 logic
tensors exist in dghw, but an i8 @main boundary without host qparams would be ambiguous
with a quantized one that lost them, so int8 model inputs are not accepted yet.)"""

LOGIC_DTYPES = (torch.int32, torch.int8)


def read_attribute(module: object, target: str) -> object:
    """The attribute a get_attr node reads (``"block.conv.weight"``)."""
    for name in target.split("."):
        module = getattr(module, name)
    return module


def live_nodes(gm: GraphModule) -> set[Node]:
    """Nodes the graph outputs depend on; the rest (e.g. guard inputs) never runs on the device."""
    live: set[Node] = set()
    pending = [gm.graph.output_node()]
    while pending:
        node = pending.pop()
        if node not in live:
            live.add(node)
            pending.extend(node.all_input_nodes)
    return live


def is_skipped(node: Node) -> bool:
    """Runtime asserts and symbolic-shape arithmetic (`sym_size`, ...) carry no tensor computation.

    (Nodes without a traced value, like torchao's q/dq, are not skipped.)
    """
    shape_scalar = (int, float, bool, torch.SymInt, torch.SymFloat, torch.SymBool)
    return node.target in SKIPPED_OPS or isinstance(node.meta.get("val"), shape_scalar)


def output_structure(gm: GraphModule) -> str | None:
    """How `gm` returns its outputs: "single" (one tensor), "tuple" (a flat tuple/list), or
    the JSON tree of `dg.dialects.common.nest_outputs` (nested tuples and lists, dicts).

    None for anything else (a dict with keys that are not strings, a None output).
    """
    spec = getattr(gm, "_out_spec", None)
    if spec is None:
        outputs = gm.graph.output_node().args[0]
        return "tuple" if isinstance(outputs, (tuple, list)) else "single"
    if spec.is_leaf():
        return "single"
    if spec.type in (tuple, list) and all(child.is_leaf() for child in spec.children()):
        return "tuple"
    counter = iter(range(spec.num_leaves))
    tree = _structure_tree(spec, counter)
    return None if tree is None else json.dumps(tree, separators=(",", ":"))


def _structure_tree(spec: Any, counter: Iterator[int]) -> object:
    if spec.is_leaf():
        return next(counter)
    children = [_structure_tree(child, counter) for child in spec.children()]
    if any(child is None for child in children):
        return None
    if spec.type is dict and all(isinstance(key, str) for key in spec.context):
        return {"dict": [[key, child] for key, child in zip(spec.context, children, strict=True)]}
    if isinstance(spec.type, type) and issubclass(spec.type, (tuple, list)) and children:
        return {"list" if issubclass(spec.type, list) else "tuple": children}
    return None


def module_output_structure(module: ModuleOp) -> str:
    """The output structure recorded on `@main` by `import_graph`."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "main":
            attr = op.attributes.get(OUTPUT_STRUCTURE_ATTR)
            if isinstance(attr, StringAttr):
                return attr.data
            return "single" if len(op.function_type.outputs) == 1 else "tuple"
    raise ValueError("module has no func.func @main")


def is_logic_only(gm: GraphModule) -> bool:
    """A graph whose every input is int32: it runs logic layers only and has nothing to quantize."""
    vals = [n.meta.get("val") for n in gm.graph.find_nodes(op="placeholder")]
    return bool(vals) and all(isinstance(v, torch.Tensor) and v.dtype in LOGIC_DTYPES for v in vals)


def example_problems(gm: GraphModule, example_inputs: Sequence[object]) -> list[Problem]:
    """How `example_inputs` do not fit `gm`'s inputs (their count, their shapes after axis 0)."""
    placeholders = list(gm.graph.find_nodes(op="placeholder"))
    examples = list(example_inputs)
    if not examples:
        return []
    if len(examples) != len(placeholders):
        return [
            Problem(
                "",
                f"the model takes {len(placeholders)} inputs, but "
                f"{len(examples)} example inputs were given",
            )
        ]
    problems = []
    for index, (example, node) in enumerate(zip(examples, placeholders, strict=True)):
        val = node.meta.get("val")
        if not isinstance(example, torch.Tensor) or not isinstance(val, torch.Tensor):
            continue
        if example.dim() != val.dim() or any(
            not isinstance(d, torch.SymInt) and int(d) != e
            for d, e in zip(val.shape[1:], example.shape[1:], strict=False)
        ):
            problems.append(
                Problem(
                    "",
                    f"example input {index} has shape {list(example.shape)}, but the "
                    f"model was exported for {list(val.shape)}",
                )
            )
    return problems
