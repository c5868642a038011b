"""Import a frozen torchao PT2E graph into the `dgtorch` dialect.

The result is one ``builtin.module`` with one ``func.func @main``: graph
inputs become block arguments, every computing node becomes the `dgtorch` op
of the same name (see docs/architecture.md), the graph outputs are returned.
Axis 0 of every activation is the batch axis and is dynamic (``?``).

Ops are imported by the handlers of `HANDLERS` (ATen op -> handler), which
are registered per row of dg's op registry (`dg.lowering.registry`). A node
that cannot be imported is not an exception but a `Problem`; the importer
carries on, so that `ExportError` lists every problem of the model at once.
Ops without a handler get the reason and fix of the registry row that
rejects them, or, for ops dg does not know at all, a message naming them.

The same importer vets a float model before quantization
(`require_quantized=False`, used by `dg.check` and `dg.prepare_*`): every
check that does not depend on quantization runs the same way, so a model
that passes will not fail at export for an op it uses.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.fx import GraphModule, Node
from torch.fx.operator_schemas import normalize_function
from torchao.quantization.pt2e import FakeQuantizeBase, ObserverBase
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    AnyFloat,
    Attribute,
    BoolAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    UnrealizedConversionCastOp,
    f32,
    f64,
    i8,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import VerifyException

from dg.dialects import dgq, dgtorch
from dg.dialects.common import (
    MAX_NORM_EXTENT,
    NORM_FEATURE_RANKS,
    TRANSPOSE_FEATURE_RANKS,
    window_counts,
)
from dg.frontend.errors import ExportError, Problem
from dg.frontend.logic import inside_logic_layer
from dg.frontend.modules import inside_flatten, norm_path
from dg.frontend.ops import overload, targets
from dg.frontend.source import describe_op, module_types, source_info, written_subscript
from dg.lowering import registry

aten = torch.ops.aten

CONSTANT_LAYOUT_OPS = frozenset(
    {
        *targets(registry.SLICE),
        *targets(registry.RESHAPE),
        *targets(registry.FLATTEN),
        *targets(registry.TRANSPOSE),
        *targets(registry.CAT),
        aten.permute.default,
        aten.unsqueeze.default,
        aten.squeeze.dim,
    }
)
"""Ops that only rearrange values: on model constants, dg computes them at import."""
qd = torch.ops.quantized_decomposed  # registered by importing torchao.quantization.pt2e

OUTPUT_STRUCTURE_ATTR = "dg.output_structure"
"""Attribute of `@main`: how the model returns its results, "single" | "tuple".

The same attribute `dg.runtime.program.Program` reads.
"""

NOT_QUANTIZED_FIX = (
    "prepare the model with dg.prepare_qat (then train) or dg.prepare_ptq (then calibrate), "
    "call dg.freeze_quantization, and export the frozen model (dg.check(model, "
    "example_inputs) lists unsupported ops of the float model)"
)

_ELEMENT_TYPES: dict[torch.dtype, IntegerType | AnyFloat] = {
    torch.float32: f32,
    torch.float64: f64,
    torch.int8: i8,
    torch.uint8: IntegerType(8, Signedness.UNSIGNED),
    torch.int32: i32,
    torch.int64: i64,
}
_NUMPY_DTYPES: dict[torch.dtype, str] = {
    torch.float32: "<f4",
    torch.float64: "<f8",
    torch.int8: "i1",
    torch.uint8: "u1",
    torch.int32: "<i4",
    torch.int64: "<i8",
}

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

FUSION_ANCHORS = frozenset(
    {*targets(registry.CONV2D), *targets(registry.LINEAR), *targets(registry.ADD)}
)
"""The ops a ReLU can be fused into (also through a batch norm that folds into them)."""

DEQUANTIZE_OPS = frozenset(
    {
        qd.dequantize_per_tensor.default,
        qd.dequantize_per_tensor.tensor,
        qd.dequantize_per_channel.default,
    }
)
QUANTIZE_OPS = frozenset(
    {
        qd.quantize_per_tensor.default,
        qd.quantize_per_tensor.tensor,
        qd.quantize_per_channel.default,
    }
)


class NodeProblem(Exception):
    """Raised by a handler: this node cannot be imported, because of `reason`.

    `arguments` are the offending arguments as the user would write them
    (``"padding=1"``); the problem then names the op ``nn.MaxPool2d(padding=1)``.
    """

    def __init__(self, reason: str, fix: str | None = None, arguments: str = "", written: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.fix = fix
        self.arguments = arguments
        self.written = written
        """The op's text on the user's line, when the handler found it (``x[:, ::2]``)."""


Handler = Callable[["GraphImporter", Node], SSAValue]

HANDLERS: dict[object, Handler] = {}
"""ATen op -> the function importing one node of it. Every key is an ATen overload of a
row of `dg.lowering.registry.ROWS` (or one of torchao's q/dq ops)."""

UNKNOWN_OP_REASON = (
    "is not an op dg knows: it is not in dg's op table (docs/supported-ops.md), so dg cannot "
    "compile it"
)


def handles(*targets: object) -> Callable[[Handler], Handler]:
    """Register the decorated function as the importer of `targets` (ATen overloads)."""

    def register(handler: Handler) -> Handler:
        for target in targets:
            HANDLERS[target] = handler
        return handler

    return register


class GraphImporter:
    """Builds the `dgtorch` `@main` of one frozen graph, collecting every problem on the way.

    With `require_quantized` (the default) a graph without any quantize op is
    a problem; `check` turns it off to vet a float model before quantization.
    """

    def __init__(self, gm: GraphModule, *, require_quantized: bool = True):
        self.gm = gm
        self.require_quantized = require_quantized
        self.problems: list[Problem] = []
        self.block = Block()
        self.values: dict[Node, SSAValue] = {}
        self.batched: set[Node] = set()
        """Nodes whose values carry the batch axis (derived from a graph input)."""
        self.folded: dict[Node, torch.Tensor] = {}
        """Layout ops of model constants, computed at import (`_fold_constant_layout`)."""
        self.failed: set[Node] = set()
        self.rejected_modules: set[str] = set()
        self.norm_bodies: dict[str, NormBody] = {}
        """The `dg.Norm` bodies met so far, by module path."""
        self.batch_extent: Any = None
        self.quantized = any(
            n.op == "call_function" and n.target in QUANTIZE_OPS for n in gm.graph.nodes
        )

    # -- driver ------------------------------------------------------------
    def run(self) -> ModuleOp | None:
        """The imported module, or None when there were problems (see `problems`)."""
        if self._has_observers():
            # Every op would look unquantized; one clear message is more useful.
            self.problems.append(
                Problem(
                    "",
                    "the model is prepared for quantization but not frozen: it still "
                    "contains observers / fake quantizers",
                    fix="call dg.freeze_quantization(prepared) and export its result",
                )
            )
            return None
        if self.require_quantized and not self.quantized and not _is_logic_only(self.gm):
            # Its ops would be judged before quantization folds them (batch norm):
            # dg.check(float_model) is the way to vet them.
            self.problems.append(
                Problem(
                    "",
                    "the model was never quantized (its graph has no quantize ops)",
                    fix=NOT_QUANTIZED_FIX,
                )
            )
            return None
        structure = output_structure(self.gm)
        if structure is None:
            self.problems.append(
                Problem("", "the model must return one tensor or a flat tuple/list of tensors")
            )
        live = _live_nodes(self.gm)
        results: list[SSAValue] = []
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                self._import_placeholder(node)
            elif node.op == "output":
                results = self._import_output(node)
            elif node in live:
                self._import_node(node)
        if self.problems or structure is None:
            return None
        return self._build_module(results, structure)

    def _has_observers(self) -> bool:
        return any(
            isinstance(self.gm.get_submodule(str(n.target)), (ObserverBase, FakeQuantizeBase))
            for n in self.gm.graph.find_nodes(op="call_module")
        )

    def _import_node(self, node: Node) -> None:
        if node.op == "get_attr":
            return  # materialized as a constant where it is used as a tensor
        if node.op == "call_module" and str(node.target).startswith("_guards"):
            return  # torch.export's input guards: host-side checks only
        if node.op == "call_function" and _is_skipped(node):
            return
        if any(a in self.failed for a in node.all_input_nodes):
            self.failed.add(node)  # its input has no value; the reason was reported there
            return
        if any(a in self.batched for a in node.all_input_nodes):
            self.batched.add(node)
        if self._fold_constant_layout(node):
            return
        if self._inside_rejected_module(node):
            return
        if norm_path(node) is not None and not _is_call(node, _QDQ_OPS):
            _import_norm_body(self, node)
            return
        handler = HANDLERS.get(node.target) if node.op == "call_function" else None
        if handler is None:
            row = registry.rejecting_row(node.target)
            if row is None:
                self.report(
                    node, UNKNOWN_OP_REASON, "see docs/supported-ops.md for what dg supports"
                )
            else:
                self.report(node, row.reason, row.fix)
            return
        try:
            self.values[node] = handler(self, node)
        except NodeProblem as problem:
            self.report(node, problem.reason, problem.fix, problem.arguments, problem.written)

    def _fold_constant_layout(self, node: Node) -> bool:
        """Compute a layout op of model constants now, as a constant (True if it was one).

        Llama-style RoPE slices its cached tables (`self.cos[:seq_len]`); such
        an op reads no activation, so the device has nothing to run: the
        quantizer leaves it float (convert_pt2e folds it into the constant) and
        a float graph still holds it, which is computed here once.
        """
        if node.op != "call_function" or node.target not in CONSTANT_LAYOUT_OPS:
            return False
        inputs = node.all_input_nodes
        if not inputs or not all(a.op == "get_attr" or a in self.folded for a in inputs):
            return False
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), self.constant_tensor)
        self.folded[node] = node.target(*args, **kwargs)  # type: ignore[operator]
        return True

    def _inside_rejected_module(self, node: Node) -> bool:
        """Ops run by a module the registry rejects as a whole (nn.MultiheadAttention).

        The module is reported once, at its first op; its other ops are not.
        """
        for path, module_type in module_types(node):
            row = registry.row_of_module(module_type)
            if row is None or row.status is registry.Status.SUPPORTED:
                continue
            if path not in self.rejected_modules:
                self.rejected_modules.add(path)
                info = source_info(node)
                written = "nn." + module_type.rsplit(".", 1)[-1]
                self.problems.append(Problem(written, row.reason, info.location, path, row.fix))
            self._stand_in(node)
            return True
        return False

    def _stand_in(self, node: Node) -> None:
        """Give a node that cannot be imported a placeholder value of its traced type.

        The ops using it are then still imported, and their problems reported
        too: one round trip shows the user every problem of the model. (A
        module with problems is never returned.)
        """
        try:
            value_type = self.result_type(node)
        except NodeProblem:
            self.failed.add(node)
            return
        placeholder = UnrealizedConversionCastOp.get([], [value_type])
        self.block.add_op(placeholder)
        self.values[node] = placeholder.results[0]

    def _import_placeholder(self, node: Node) -> None:
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor) or val.dtype not in INPUT_DTYPES or val.dim() == 0:
            self.report(
                node,
                "graph inputs must be float32 tensors (int32 for logic layers) with a batch axis",
            )
            return
        if self.batch_extent is None:
            self.batch_extent = val.shape[0]
        self.batched.add(node)
        try:
            arg_type = self.result_type(node)
        except NodeProblem as problem:
            self.report(node, problem.reason, problem.fix)
            return
        self.values[node] = self.block.insert_arg(arg_type, len(self.block.args))

    def _import_output(self, node: Node) -> list[SSAValue]:
        outputs = node.args[0]
        values = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
        nodes = [n for n in values if isinstance(n, Node)]
        if len(nodes) != len(values):
            self.report(node, "every model output must be a tensor computed by the model")
            return []
        if any(n in self.failed or (n not in self.values and n.op != "get_attr") for n in nodes):
            return []  # the reason was reported where the value failed
        return [self.operand(n) for n in nodes]

    def _build_module(self, results: Sequence[SSAValue], structure: str) -> ModuleOp:
        self.block.add_op(func.ReturnOp(*results))
        main = func.FuncOp(
            "main",
            ([a.type for a in self.block.args], [r.type for r in results]),
            Region(self.block),
        )
        # Values only identities read (the dequantize before a dropout, ...)
        # are computed by nothing on the device.
        region_dce(main.body)
        main.attributes[OUTPUT_STRUCTURE_ATTR] = StringAttr(structure)
        return ModuleOp([main])

    # -- services for handlers ----------------------------------------------
    def report(
        self,
        node: Node,
        reason: str,
        fix: str | None = None,
        arguments: str = "",
        written: str = "",
    ) -> None:
        info = source_info(node)
        op = describe_op(node, registry.spellings_of(node.target), arguments, written)
        self.problems.append(Problem(op, reason, info.location, info.module_path, fix))
        if node.op == "placeholder":
            self.failed.add(node)
        else:
            self._stand_in(node)

    def arguments(self, node: Node) -> dict[str, Any]:
        """The node's arguments by schema name, defaults filled in."""
        normalized = normalize_function(
            node.target,  # type: ignore[arg-type]
            node.args,  # type: ignore[arg-type]
            node.kwargs,  # type: ignore[arg-type]
            normalize_to_only_use_kwargs=True,
        )
        assert normalized is not None, f"no schema for {node.target}"
        schema = node.target._schema  # type: ignore[union-attr]
        defaults = {a.name: a.default_value for a in schema.arguments if a.has_default_value()}
        return {**defaults, **normalized.kwargs}

    def operand(self, arg: object) -> SSAValue:
        """The SSA value of a tensor argument (a parameter becomes a constant on first use)."""
        if not isinstance(arg, Node):
            raise NodeProblem(f"expected a tensor operand, got {arg!r}")
        if arg not in self.values:
            assert arg.op == "get_attr" or arg in self.folded, f"{arg} used before it was imported"
            self.values[arg] = self._import_constant(arg)
        return self.values[arg]

    def constant_tensor(self, arg: object) -> torch.Tensor:
        """The value of a tensor argument that must be a parameter/constant of the graph."""
        if isinstance(arg, Node) and arg in self.folded:
            return self.folded[arg]
        if not isinstance(arg, Node) or arg.op != "get_attr":
            raise NodeProblem("expects a constant tensor here (quantization parameters)")
        value = _attribute(self.gm, str(arg.target))
        assert isinstance(value, torch.Tensor), f"{arg.target} is not a tensor"
        return value.detach()

    def result_type(self, node: Node) -> TensorType[Attribute]:
        """The type of `node`'s value: its shape, batch axis dynamic when it carries one."""
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            raise NodeProblem("does not produce a tensor")
        shape = [self._extent(d, axis, node in self.batched) for axis, d in enumerate(val.shape)]
        return TensorType(_element_type(val.dtype), shape)

    def _extent(self, d: Any, axis: int, batched: bool) -> int:
        if batched and axis == 0:
            if not _same_extent(d, self.batch_extent):
                raise NodeProblem(
                    f"{registry.RESHAPE.notes} (axis 0): the device runs every sample of a "
                    "batch alike",
                    fix="keep axis 0 as the batch axis, e.g. x.flatten(1) or x.view(x.size(0), -1)",
                )
            return DYNAMIC_INDEX
        if isinstance(d, torch.SymInt):
            raise NodeProblem(f"axis {axis} has a dynamic extent; only the batch axis may vary")
        return int(d)

    def emit(self, node: Node, op: Operation) -> SSAValue:
        """Append `op` (the import of `node`) with the user's source location; return its result."""
        location = source_info(node).to_location_attr()
        if location is not None:
            op.location = location
        try:
            op.verify()
        except VerifyException as error:
            raise NodeProblem(f"cannot be expressed in dgtorch: {error}") from error
        self.block.add_op(op)
        return op.results[0]

    def require_quantized_operand(self, arg: object, what: str) -> None:
        """A compute op of a quantized model must read dequantized integers, not floats."""
        if not self.quantized:
            return
        if not (
            isinstance(arg, Node) and arg.op == "call_function" and arg.target in DEQUANTIZE_OPS
        ):
            raise NodeProblem(f"its {what} is not quantized", fix=NOT_QUANTIZED_FIX)

    def _import_constant(self, node: Node) -> SSAValue:
        # The constant belongs to the op that reads it.
        return self.emit_constant(next(iter(node.users)), self.constant_tensor(node))

    def emit_constant(self, node: Node, tensor: torch.Tensor) -> SSAValue:
        """A `dgtorch.constant` holding `tensor` (as bytes), located at `node`."""
        if tensor.dtype not in _NUMPY_DTYPES:
            raise NodeProblem(f"a constant of dtype {tensor.dtype} is not supported")
        array = np.ascontiguousarray(tensor.cpu().numpy(), dtype=_NUMPY_DTYPES[tensor.dtype])
        value_type = TensorType(_element_type(tensor.dtype), tensor.shape)
        value = DenseIntOrFPElementsAttr(value_type, BytesAttr(array.tobytes()))
        return self.emit(node, dgtorch.ConstantOp(value))


def _attribute(module: object, target: str) -> object:
    """The attribute a get_attr node reads (``"block.conv.weight"``)."""
    for name in target.split("."):
        module = getattr(module, name)
    return module


def _live_nodes(gm: GraphModule) -> set[Node]:
    """Nodes the graph outputs depend on; the rest (e.g. guard inputs) never runs on the device."""
    live: set[Node] = set()
    pending = [gm.graph.output_node()]
    while pending:
        node = pending.pop()
        if node not in live:
            live.add(node)
            pending.extend(node.all_input_nodes)
    return live


def _is_skipped(node: Node) -> bool:
    """Runtime asserts and symbolic-shape arithmetic (`sym_size`, ...) carry no tensor computation.

    (Nodes without a traced value, like torchao's q/dq, are not skipped.)
    """
    shape_scalar = (int, float, bool, torch.SymInt, torch.SymFloat, torch.SymBool)
    return node.target in SKIPPED_OPS or isinstance(node.meta.get("val"), shape_scalar)


def _same_extent(a: Any, b: Any) -> bool:
    if isinstance(a, torch.SymInt) and isinstance(b, torch.SymInt):
        return a.node.expr == b.node.expr
    if isinstance(a, torch.SymInt) or isinstance(b, torch.SymInt):
        return False
    return int(a) == int(b)


def _element_type(dtype: torch.dtype) -> IntegerType | AnyFloat:
    if dtype not in _ELEMENT_TYPES:
        raise NodeProblem(f"tensors of dtype {dtype} are not supported")
    return _ELEMENT_TYPES[dtype]


def output_structure(gm: GraphModule) -> str | None:
    """How `gm` returns its outputs: "single" (one tensor) or "tuple" (a flat tuple/list).

    None for any other (nested) structure.
    """
    spec = getattr(gm, "_out_spec", None)
    if spec is None:
        outputs = gm.graph.output_node().args[0]
        return "tuple" if isinstance(outputs, (tuple, list)) else "single"
    if spec.is_leaf():
        return "single"
    if spec.type in (tuple, list) and all(child.is_leaf() for child in spec.children()):
        return "tuple"
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


# -- quantization ops -----------------------------------------------------------


def _int_attr(value: object) -> IntegerAttr[I64]:
    return IntegerAttr(int(value), i64)  # type: ignore[call-overload]


def _scalar(imp: GraphImporter, arg: object) -> float:
    """A per-tensor scale or zero point: a literal, or a 0-d constant in `.tensor` variants."""
    return imp.constant_tensor(arg).item() if isinstance(arg, Node) else float(arg)  # type: ignore[arg-type]


def _per_tensor_properties(imp: GraphImporter, args: dict[str, Any]) -> dict[str, Attribute]:
    return {
        "scale": FloatAttr(_scalar(imp, args["scale"]), f64),
        "zero_point": _int_attr(_scalar(imp, args["zero_point"])),
        "quant_min": _int_attr(args["quant_min"]),
        "quant_max": _int_attr(args["quant_max"]),
    }


def _per_channel_properties(imp: GraphImporter, args: dict[str, Any]) -> dict[str, Attribute]:
    scales = imp.constant_tensor(args["scales"]).to(torch.float64).cpu().numpy()
    zps = args["zero_points"]
    zero_points = (
        np.zeros(scales.shape, np.int64)
        if zps is None
        else imp.constant_tensor(zps).to(torch.int64).cpu().numpy()
    )
    return {
        "scales": DenseArrayBase(f64, BytesAttr(scales.astype("<f8").tobytes())),
        "zero_points": DenseArrayBase(i64, BytesAttr(zero_points.astype("<i8").tobytes())),
        "axis": _int_attr(args["axis"]),
        "quant_min": _int_attr(args["quant_min"]),
        "quant_max": _int_attr(args["quant_max"]),
    }


def _qdq_handler(
    op_type: type[Operation],
    properties: Callable[[GraphImporter, dict[str, Any]], dict[str, Attribute]],
    result_dtype: Callable[[dict[str, Any]], torch.dtype],
) -> Handler:
    def handler(imp: GraphImporter, node: Node) -> SSAValue:
        args = imp.arguments(node)
        source = imp.operand(args["input"])
        # convert_pt2e inserts these nodes without shape metadata: the result
        # has the operand's shape and the element type the op converts to.
        assert isinstance(source.type, TensorType)
        result_type = TensorType(_element_type(result_dtype(args)), source.type.get_shape())
        props = properties(imp, args)
        if _round_trips(source, op_type, props, result_type):
            # quantize(dequantize(q)) with the same parameters is q itself, exactly
            # (left where an identity op, like a dropout, sat between them).
            return source.owner.input  # type: ignore[union-attr]
        op = op_type.create(operands=[source], result_types=[result_type], properties=props)
        return imp.emit(node, op)

    return handler


def _round_trips(
    source: SSAValue,
    op_type: type[Operation],
    properties: dict[str, Attribute],
    result_type: Attribute,
) -> bool:
    """`op_type(properties)` applied to `source` gives back what its dequantize read."""
    return (
        op_type is dgtorch.QuantizePerTensorOp
        and isinstance(source.owner, dgtorch.DequantizePerTensorOp)
        and source.owner.input.type == result_type
        and all(source.owner.properties.get(k) == v for k, v in properties.items())
    )


def _quantized_dtype(args: dict[str, Any]) -> torch.dtype:
    return args["dtype"]


def _dequantized_dtype(args: dict[str, Any]) -> torch.dtype:
    return args.get("out_dtype") or torch.float32


handles(qd.quantize_per_tensor.default, qd.quantize_per_tensor.tensor)(
    _qdq_handler(dgtorch.QuantizePerTensorOp, _per_tensor_properties, _quantized_dtype)
)
handles(qd.dequantize_per_tensor.default, qd.dequantize_per_tensor.tensor)(
    _qdq_handler(dgtorch.DequantizePerTensorOp, _per_tensor_properties, _dequantized_dtype)
)
handles(qd.quantize_per_channel.default)(
    _qdq_handler(dgtorch.QuantizePerChannelOp, _per_channel_properties, _quantized_dtype)
)
handles(qd.dequantize_per_channel.default)(
    _qdq_handler(dgtorch.DequantizePerChannelOp, _per_channel_properties, _dequantized_dtype)
)


# -- compute ops ------------------------------------------------------------------


def _pair(value: object, name: str) -> list[int]:
    values = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]  # type: ignore[call-overload]
    if len(values) == 1:
        values *= 2
    if len(values) != 2:
        raise NodeProblem(f"'{name}' must have one or two entries, got {values}")
    return values


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return value.type.get_shape()


def _traced_shape(arg: object) -> list[Any]:
    """The traced shape of a tensor argument (the batch axis may be symbolic).

    torchao's q/dq nodes carry no traced value; they have their operand's shape.
    """
    while isinstance(arg, Node) and "val" not in arg.meta and arg.all_input_nodes:
        arg = arg.all_input_nodes[0]
    assert isinstance(arg, Node), arg
    val = arg.meta.get("val")
    if val is None and arg.op == "get_attr":
        val = _attribute(arg.graph.owning_module, str(arg.target))
    assert isinstance(val, torch.Tensor), arg
    return [d if isinstance(d, torch.SymInt) else int(d) for d in val.shape]


def _i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, values)


def _size(values: Sequence[int]) -> str:
    return "x".join(str(v) for v in values)


def _is_call(node: object, targets: Collection[object]) -> bool:
    return isinstance(node, Node) and node.op == "call_function" and node.target in targets


_PASS_THROUGH = frozenset({*QUANTIZE_OPS, *DEQUANTIZE_OPS, *targets(registry.DROPOUT)})
"""Ops that do not change what a value is for the checks: torchao's q/dq and dropout."""


def producer(arg: object) -> object:
    """The op computing `arg`, looking through q/dq and dropout."""
    while isinstance(arg, Node) and _is_call(arg, _PASS_THROUGH):
        arg = arg.args[0]
    return arg


def consumers(node: Node) -> list[Node]:
    """The ops using `node`'s value, looking through q/dq and dropout."""
    found: list[Node] = []
    for user in node.users:
        if _is_call(user, _PASS_THROUGH):
            found.extend(consumers(user))
        else:
            found.append(user)
    return found


def _weight_op_operands(imp: GraphImporter, args: dict[str, Any]) -> list[Any]:
    imp.require_quantized_operand(args["input"], "input")
    imp.require_quantized_operand(args["weight"], "weight")
    operands: list[Any] = [imp.operand(args["input"]), imp.operand(args["weight"])]
    if args["bias"] is None:
        operands.append([])
    else:
        imp.require_quantized_operand(args["bias"], "bias")
        operands.append([imp.operand(args["bias"])])
    return operands


def _require_activation(imp: GraphImporter, arg: object, what: str) -> None:
    if not (isinstance(arg, Node) and arg in imp.batched):
        raise NodeProblem(f"its {what} must be an activation (computed from the model's input)")
    imp.require_quantized_operand(arg, what)


def _unary(
    imp: GraphImporter, node: Node, op_type: type[Operation], **props: Attribute
) -> SSAValue:
    """Import a one-activation op whose other arguments are `props`."""
    source = node.args[0]
    _require_activation(imp, source, "input")
    op = op_type.create(
        operands=[imp.operand(source)], result_types=[imp.result_type(node)], properties=props
    )
    return imp.emit(node, op)


@handles(*targets(registry.CONV2D))
def _conv2d(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    dilation = _pair(args["dilation"], "dilation")
    groups = int(args["groups"])
    out_channels, in_per_group = _traced_shape(args["weight"])[:2]
    in_channels = in_per_group * groups
    depthwise = groups == in_channels == out_channels
    if groups != 1 and not depthwise:
        raise NodeProblem(
            f"{registry.CONV2D.notes}; got groups={groups} with {in_channels} input and "
            f"{out_channels} output channels",
            fix="use groups=1 (dense), or groups=in_channels=out_channels (depthwise; follow it "
            "with a 1x1 Conv2d to change the channel count)",
            arguments=f"groups={groups}",
        )
    if dilation != [1, 1]:
        raise NodeProblem(
            registry.DILATED_CONV2D.reason,
            registry.DILATED_CONV2D.fix,
            arguments=f"dilation={_python(args['dilation'])}",
        )
    operands = _weight_op_operands(imp, args)
    padding = args["padding"]
    if padding == "same":
        # torch pads k - 1 in total (stride and dilation are 1), the odd one
        # at the bottom/right: as an explicit pad, it folds into the conv.
        operands[0], padding = _same_padding(imp, node, operands[0], args["weight"]), 0
    elif padding == "valid":
        padding = 0
    op = dgtorch.Conv2dOp(
        operands=operands,
        result_types=[imp.result_type(node)],
        properties={
            "stride": _i64_array(_pair(args["stride"], "stride")),
            "padding": _i64_array(_pair(padding, "padding")),
            "dilation": _i64_array(dilation),
            "groups": _int_attr(groups),
        },
    )
    return imp.emit(node, op)


def _same_padding(imp: GraphImporter, node: Node, source: SSAValue, weight: object) -> SSAValue:
    """`source` zero-padded as torch's ``padding="same"`` pads a stride-1 conv's input."""
    kernel_h, kernel_w = _traced_shape(weight)[2:]
    pad: list[int] = []
    for k in (kernel_w, kernel_h):  # torch order: last axis first
        pad += [(k - 1) // 2, k - 1 - (k - 1) // 2]
    if not any(pad):
        return source
    batch, channels, height, width = _shape(source)
    padded = TensorType(f32, [batch, channels, height + kernel_h - 1, width + kernel_w - 1])
    op = dgtorch.PadOp(
        operands=[source],
        result_types=[padded],
        properties={"pad": _i64_array(pad), "value": FloatAttr(0.0, f64)},
    )
    return imp.emit(node, op)


def _python(value: object) -> str:
    """`value` as the user would have written it: a one-entry pair as its single value."""
    if isinstance(value, (list, tuple)) and len(set(value)) == 1:
        return repr(value[0])
    return repr(tuple(value)) if isinstance(value, list) else repr(value)


@handles(*targets(registry.LINEAR))
def _linear(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    op = dgtorch.LinearOp(
        operands=_weight_op_operands(imp, args), result_types=[imp.result_type(node)]
    )
    return imp.emit(node, op)


def _is_fusion_anchor(source: object) -> bool:
    """A ReLU fuses into `source`: a conv, linear or add (or a batch norm folding into one)
    whose only user is the ReLU."""
    if not (isinstance(source, Node) and len(source.users) == 1):
        return False
    if _is_call(source, {operator.getitem}) and source.args[1] == 0:
        source = source.args[0]  # output 0 of `_native_batch_norm_legit_no_training`
        assert isinstance(source, Node)
    if _is_call(source, targets(registry.BATCH_NORM)):
        anchor = source.args[0]
        return _is_call(anchor, FUSION_ANCHORS) and len(anchor.users) == 1  # type: ignore[union-attr]
    return _is_call(source, FUSION_ANCHORS)


@handles(*targets(registry.RELU))
def _relu(imp: GraphImporter, node: Node) -> SSAValue:
    source = node.args[0]
    if not _is_fusion_anchor(source):
        raise NodeProblem(registry.STANDALONE_RELU.reason, registry.STANDALONE_RELU.fix)
    op = dgtorch.ReluOp(operands=[imp.operand(source)], result_types=[imp.result_type(node)])
    return imp.emit(node, op)


def _operand_text(arg: object) -> str:
    if isinstance(arg, Node) and arg.op == "get_attr":
        return f"the parameter/constant '{arg.target}'"
    if isinstance(arg, Node):
        return "a tensor that does not depend on the model's input"
    return f"the constant {arg!r}"


@handles(*targets(registry.ADD))
def _add(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    lhs, rhs = args["input"], args["other"]
    for name, operand in (("first", lhs), ("second", rhs)):
        if not (isinstance(operand, Node) and operand in imp.batched):
            raise NodeProblem(
                f"{registry.ADD.notes}, but the {name} operand is {_operand_text(operand)}",
                fix="add two tensors computed by the model; fold a constant offset into the bias "
                "of the preceding Conv2d or Linear",
            )
    if args["alpha"] != 1:
        alpha = f"alpha={args['alpha']}"
        raise NodeProblem(f"only alpha=1 is supported, got {alpha}", arguments=alpha)
    lhs_value, rhs_value = imp.operand(lhs), imp.operand(rhs)
    lhs_shape, rhs_shape = _shape(lhs_value)[1:], _shape(rhs_value)[1:]
    if lhs_shape != rhs_shape:
        raise NodeProblem(
            f"operands must have the same shape (no broadcasting), got {list(lhs_shape)} and "
            f"{list(rhs_shape)} after the batch axis"
        )
    imp.require_quantized_operand(lhs, "first operand")
    imp.require_quantized_operand(rhs, "second operand")
    op = dgtorch.AddOp(operands=[lhs_value, rhs_value], result_types=[imp.result_type(node)])
    return imp.emit(node, op)


MATMUL_OPS = frozenset(
    {aten.matmul.default, aten.bmm.default, aten.mm.default}  # the row without aten.div
)
SCORE_SCALE_FIX = (
    "scale the scores by a Python number: (q @ k.transpose(-2, -1)) * 0.35 or / math.sqrt(d)"
)


def _score_scale(imp: GraphImporter, node: Node, scores: Node, factor: float) -> SSAValue:
    """`scores * factor`: the attention score scale, folded into the matmul later."""
    _require_quantized_output(imp, node)
    op = dgtorch.MulScalarOp(
        operands=[imp.operand(scores)],
        properties={"factor": FloatAttr(factor, f64)},
        result_types=[imp.result_type(node)],
    )
    return imp.emit(node, op)


def _require_quantized_output(imp: GraphImporter, node: Node) -> None:
    """A matmul (with its score scale) must feed a quantize: its output lives on a grid."""
    if imp.quantized and not all(_is_call(user, QUANTIZE_OPS) for user in node.users):
        raise NodeProblem(
            "the output of a matmul must feed a quantized op, but it is used unquantized",
            fix="use the matmul's result in a supported op (softmax, matmul, Linear, add), "
            "quantized with dg.prepare_qat / dg.prepare_ptq",
        )


def _number(arg: object) -> float | None:
    return float(arg) if isinstance(arg, (int, float)) and not isinstance(arg, bool) else None


@handles(aten.div.Tensor)
def _div(imp: GraphImporter, node: Node) -> SSAValue:
    lhs, rhs = node.args[:2]
    divisor = _number(rhs)
    if not _is_call(lhs, MATMUL_OPS):
        raise NodeProblem(
            "division is only supported as the score scale right after a matmul",
            fix="fold the constant factor into the weights of the neighbouring Conv2d or Linear",
        )
    if divisor is None or divisor == 0:
        raise NodeProblem(
            f"the score scale after a matmul must be a non-zero scalar constant, got "
            f"{_operand_text(rhs)}",
            fix=SCORE_SCALE_FIX,
        )
    assert isinstance(lhs, Node)
    return _score_scale(imp, node, lhs, 1.0 / divisor)


@handles(*targets(registry.BARE_MUL))
def _mul(imp: GraphImporter, node: Node) -> SSAValue:
    lhs, rhs = node.args[:2]
    activations = [a for a in (lhs, rhs) if isinstance(a, Node) and a in imp.batched]
    scores = [a for a in (lhs, rhs) if isinstance(a, Node) and _is_call(a, MATMUL_OPS)]
    others = [a for a in (lhs, rhs) if not scores or a is not scores[0]]
    if len(scores) == 1 and not _is_constant_tensor(imp, others):
        (other,) = others
        factor = _number(other)
        if factor is None:
            raise NodeProblem(
                "the score scale after a matmul must be a scalar constant, got "
                f"{'an activation' if other in activations else _operand_text(other)}",
                fix=SCORE_SCALE_FIX,
            )
        return _score_scale(imp, node, scores[0], factor)
    if not all(isinstance(a, Node) for a in (lhs, rhs)):
        raise NodeProblem(registry.BARE_MUL.reason, registry.BARE_MUL.fix)
    if len(activations) == 2:
        raise NodeProblem(
            f"multiplying two activations is not supported: {registry.MUL_CONST_TENSOR.notes}",
            fix=MUL_ACTIVATIONS_FIX,
        )
    if not activations:
        raise NodeProblem(registry.MUL_CONST_TENSOR.reason)
    (activation,) = activations
    constant = rhs if activation is lhs else lhs
    assert isinstance(constant, Node)
    constant_val = constant.meta.get("val")
    if isinstance(constant_val, torch.Tensor) and constant_val.dim() == 0:
        raise NodeProblem(registry.BARE_MUL.reason, registry.BARE_MUL.fix)
    imp.require_quantized_operand(activation, "activation operand")
    imp.require_quantized_operand(constant, "constant operand")
    activation_value, constant_value = imp.operand(activation), imp.operand(constant)
    result_type = imp.result_type(node)
    if result_type.get_shape() != _shape(activation_value):
        raise NodeProblem(
            f"the constant (shape {list(_shape(constant_value))}) must broadcast to the "
            f"activation (shape {list(_shape(activation_value)[1:])} after the batch axis) "
            "without enlarging it",
            fix="give the constant the activation's shape, or extent 1 on the axes it repeats",
        )
    op = dgtorch.MulOp(operands=[activation_value, constant_value], result_types=[result_type])
    return imp.emit(node, op)


def _is_constant_tensor(imp: GraphImporter, others: Sequence[object]) -> bool:
    """`others` is one tensor of the model that is not an activation (a buffer, a table).

    A matmul times such a tensor is the mul-by-constant row, not a score scale:
    the quantizer leaves the matmul's output on its own grid there (only a Python
    number folds into the matmul), so the float graph checked by prepare has the
    mul right after the matmul, and the frozen graph has a dequantize between them.
    """
    if len(others) != 1 or not isinstance(others[0], Node) or others[0] in imp.batched:
        return False
    value = others[0].meta.get("val")
    return not (isinstance(value, torch.Tensor) and value.dim() == 0)


MUL_ACTIVATIONS_FIX = (
    "multiply the activation by a constant tensor (a buffer of the model, e.g. RoPE's cos/sin "
    "tables), or compute the product with torch.matmul or a Linear layer"
)


@handles(*MATMUL_OPS)
def _matmul(imp: GraphImporter, node: Node) -> SSAValue:
    if node.target is aten.mm.default:
        raise NodeProblem(registry.MM_REASON, registry.MM_FIX)
    lhs, rhs = node.args[:2]
    for name, operand in (("first", lhs), ("second", rhs)):
        if not (isinstance(operand, Node) and operand in imp.batched):
            raise NodeProblem(
                f"only activation x activation is supported, but the {name} operand is "
                f"{_operand_text(operand)}",
                fix="multiply by a weight matrix with nn.Linear",
            )
    lhs_value, rhs_value = imp.operand(lhs), imp.operand(rhs)
    shapes = [list(_shape(v)[1:]) for v in (lhs_value, rhs_value)]
    if any(len(s) not in (2, 3) for s in shapes) or len(shapes[0]) != len(shapes[1]):
        raise NodeProblem(
            f"feature rank 2-3 per operand (the same for both) is supported, got {shapes[0]} "
            f"and {shapes[1]} after the batch axis",
            fix="reshape the operands to [B, S, D] or [B, H, S, D] first",
        )
    imp.require_quantized_operand(lhs, "first operand")
    imp.require_quantized_operand(rhs, "second operand")
    scaled = len(node.users) == 1 and _is_call(next(iter(node.users)), SCALE_OPS)
    if not scaled:
        _require_quantized_output(imp, node)
    op = dgtorch.MatmulOp(operands=[lhs_value, rhs_value], result_types=[imp.result_type(node)])
    return imp.emit(node, op)


SCALE_OPS = frozenset({aten.mul.Tensor, aten.div.Tensor})


@handles(*targets(registry.FLATTEN))
def _flatten(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    op = dgtorch.FlattenOp(
        operands=[imp.operand(args["input"])],
        result_types=[imp.result_type(node)],
        properties={
            "start_dim": _int_attr(args["start_dim"]),
            "end_dim": _int_attr(args["end_dim"]),
        },
    )
    return imp.emit(node, op)


@handles(*targets(registry.RESHAPE))
def _reshape(imp: GraphImporter, node: Node) -> SSAValue:
    # The target shape may mention symbolic sizes; the result type (from the
    # traced shape, batch axis dynamic) says all there is to say.
    op = dgtorch.ReshapeOp(
        operands=[imp.operand(node.args[0])], result_types=[imp.result_type(node)]
    )
    return imp.emit(node, op)


CHANNELS_LAST = [0, 2, 3, 1]
"""The NCHW -> NHWC permutation of `dg.Flatten`."""


@handles(aten.permute.default)
def _permute(imp: GraphImporter, node: Node) -> SSAValue:
    dims = [int(d) for d in node.args[1]]  # type: ignore[union-attr, arg-type]
    channels_last = dims == CHANNELS_LAST and len(_traced_shape(node.args[0])) == 4
    if not (inside_flatten(node) and channels_last):
        raise NodeProblem(
            registry.PERMUTE.reason, registry.PERMUTE.fix, arguments=", ".join(map(str, dims))
        )
    return _unary(imp, node, dgtorch.PermuteOp, dims=_i64_array(dims))


# -- transpose and slice (issue 4) -------------------------------------------------------


@handles(*targets(registry.TRANSPOSE))
def _transpose(imp: GraphImporter, node: Node) -> SSAValue:
    source = node.args[0]
    rank = len(_traced_shape(source))
    dim0, dim1 = (int(d) for d in node.args[1:3])  # type: ignore[arg-type]
    arguments = f"{dim0}, {dim1}"
    axes = {dim0 % rank, dim1 % rank}
    if len(axes) == 1:
        return imp.operand(source)  # swapping an axis with itself changes nothing
    if 0 in axes:
        raise NodeProblem(
            f"cannot move the batch axis (axis 0); the spec: {registry.TRANSPOSE.notes}",
            fix="swap two feature axes, e.g. x.transpose(-2, -1); keep axis 0 the batch axis",
            arguments=arguments,
        )
    if rank - 1 not in TRANSPOSE_FEATURE_RANKS:
        raise NodeProblem(
            f"is supported at feature rank 2-3 only (rank without the batch axis), and this "
            f"input has feature rank {rank - 1}; the spec: {registry.TRANSPOSE.notes}",
            fix="reshape to at most three feature axes first (e.g. merge two axes with "
            "x.flatten(1, 2)), or use dg.Flatten() to flatten a feature map",
            arguments=arguments,
        )
    return _unary(imp, node, dgtorch.TransposeOp, dim0=_int_attr(dim0), dim1=_int_attr(dim1))


SLICE_FIX = "slice the sequence tensor (after a Linear or matmul), along a feature axis, step 1"


@handles(aten.alias.default)
def _alias(imp: GraphImporter, node: Node) -> SSAValue:
    # The same values (a slice of a whole axis): no op on the device.
    return imp.operand(node.args[0])


@handles(aten.slice.Tensor)
def _slice(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    source = args["input"]
    shape = _traced_shape(source)
    dim = int(args["dim"]) % len(shape)
    start, end, step = args["start"], args["end"], int(args["step"])
    shown_end = None if end is None or end >= sys.maxsize else end
    arguments = f"dim={args['dim']}, start={start}, end={shown_end}, step={step}"
    try:
        return _import_slice(imp, node, source, (dim, start, end, step), arguments)
    except NodeProblem as problem:
        problem.written = written_subscript(node, dim, (start, end, step), len(shape))
        raise


def _import_slice(
    imp: GraphImporter,
    node: Node,
    source: object,
    bounds: tuple[int, Any, Any, int],
    arguments: str,
) -> SSAValue:
    shape = _traced_shape(source)
    dim, start, end, step = bounds
    if dim == 0:
        if (start or 0) == 0 and (end is None or end >= sys.maxsize) and step == 1:
            return imp.operand(source)  # x[:, ...] keeps the whole batch
        raise NodeProblem(
            f"cannot slice the batch axis (axis 0); the spec: {registry.SLICE.notes}",
            fix=SLICE_FIX + "; the device runs every sample of a batch alike",
            arguments=arguments,
        )
    picked = range(shape[dim])[slice(start, end, step)]
    if step != 1:
        raise NodeProblem(
            f"has step {step}, and the device slices contiguous ranges only; the spec: "
            f"{registry.SLICE.notes}",
            fix="use step 1 (a contiguous range, x[:, a:b])",
            arguments=arguments,
        )
    if len(picked) == shape[dim]:
        return imp.operand(source)  # the whole axis: nothing to do
    if not picked:
        raise NodeProblem("selects no element", fix="slice a non-empty range", arguments=arguments)
    operand = imp.operand(source)
    if dgq.value_domain(operand) != dgq.SEQUENCE:
        raise NodeProblem(
            "slices a spatial feature map (its input comes from a conv, pool, resize or pad, "
            f"or is an NCHW image); the spec: {registry.SLICE.notes}",
            fix="slice sequence-domain tensors only: flatten the map first (dg.Flatten(), or "
            "x.flatten(2).transpose(1, 2) for [B, H*W, C]), or crop with a conv's stride/padding",
            arguments=arguments,
        )
    _require_activation(imp, source, "input")
    op = dgtorch.SliceOp(
        operands=[operand],
        result_types=[imp.result_type(node)],
        properties={
            "dim": _int_attr(dim),
            "start": _int_attr(picked.start),
            "end": _int_attr(picked.start + len(picked)),
            "step": _int_attr(step),
        },
    )
    return imp.emit(node, op)


@handles(*targets(registry.DROPOUT))
def _dropout(imp: GraphImporter, node: Node) -> SSAValue:
    # Identity at inference, whatever mode the graph was traced in: a frozen
    # model is for inference, and dg.freeze_quantization removes dropout.
    return imp.operand(node.args[0])


# -- pooling --------------------------------------------------------------------------


@handles(*targets(registry.MAX_POOL2D))
def _max_pool2d(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    kernel = _pair(args["kernel_size"], "kernel_size")
    stride = _pair(args["stride"] or kernel, "stride")
    padding = _pair(args["padding"], "padding")
    dilation = _pair(args["dilation"], "dilation")
    ceil_mode = bool(args["ceil_mode"])
    fix = (
        "remove the padding (padding=0): pad with the preceding Conv2d instead, or use a "
        "kernel_size and stride that need none"
    )
    if padding != [0, 0]:
        raise NodeProblem(
            f"{registry.MAX_POOL2D.notes}; got padding={_python(args['padding'])}",
            fix,
            arguments=f"padding={_python(args['padding'])}",
        )
    if dilation != [1, 1]:
        raise NodeProblem(
            f"only dilation=1 is supported, got dilation={_python(args['dilation'])}",
            arguments=f"dilation={_python(args['dilation'])}",
        )
    spatial = _traced_shape(args["input"])[2:]
    counts = [window_counts(n, k, s, 0, 0) for n, k, s in zip(spatial, kernel, stride, strict=True)]
    if ceil_mode and any(ceil != floor for floor, ceil in counts):
        floor_size = [floor for floor, _ in counts]
        ceil_size = [ceil for _, ceil in counts]
        raise NodeProblem(
            f"{registry.MAX_POOL2D.notes}: with ceil_mode=True the last window on the "
            f"{_size(spatial)} input reads past the edge (output {_size(ceil_size)} instead of "
            f"{_size(floor_size)}), which is padding",
            "use ceil_mode=False, or an input size where (size - kernel_size) is a multiple of "
            "the stride",
            arguments="ceil_mode=True",
        )
    # Without an overhang the ceil and floor rules agree: the device has one rule.
    return _unary(
        imp,
        node,
        dgtorch.MaxPool2dOp,
        kernel=_i64_array(kernel),
        stride=_i64_array(stride),
        padding=_i64_array(padding),
        dilation=_i64_array(dilation),
        ceil_mode=BoolAttr.from_bool(False),
    )


@handles(*targets(registry.AVG_POOL2D))
def _avg_pool2d(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    kernel = _pair(args["kernel_size"], "kernel_size")
    props: dict[str, Attribute] = {
        "kernel": _i64_array(kernel),
        "stride": _i64_array(_pair(args["stride"] or kernel, "stride")),
        "padding": _i64_array(_pair(args["padding"], "padding")),
        "ceil_mode": BoolAttr.from_bool(bool(args["ceil_mode"])),
        "count_include_pad": BoolAttr.from_bool(bool(args["count_include_pad"])),
    }
    if args["divisor_override"] is not None:
        props["divisor_override"] = _int_attr(args["divisor_override"])
    return _unary(imp, node, dgtorch.AvgPool2dOp, **props)


@handles(*targets(registry.ADAPTIVE_AVG_POOL2D))
def _adaptive_avg_pool2d(imp: GraphImporter, node: Node) -> SSAValue:
    output_size = _pair(node.args[1], "output_size")
    spatial = _traced_shape(node.args[0])[2:]
    if any(n % o for n, o in zip(spatial, output_size, strict=True)):
        raise NodeProblem(
            f"the input size {_size(spatial)} does not divide evenly by the output size "
            f"{_size(output_size)}, so it is no plain average pool",
            f"{registry.ADAPTIVE_AVG_POOL2D.fix}; {_fitting_sizes(spatial)}",
            arguments=f"output_size={_python(output_size)}",
        )
    return _unary(imp, node, dgtorch.AdaptiveAvgPool2dOp, output_size=_i64_array(output_size))


def _fitting_sizes(spatial: Sequence[int]) -> str:
    """The output sizes an adaptive pool of `spatial` may have, per axis."""

    def divisors(n: int) -> str:
        return ", ".join(str(d) for d in range(1, n + 1) if n % d == 0)

    height, width = spatial
    if height == width:
        return f"output sizes that divide {height}: {divisors(height)}"
    return f"output heights that divide {height}: {divisors(height)}; widths for {width}: " + (
        divisors(width)
    )


# -- activations --------------------------------------------------------------------


@handles(*targets(registry.SOFTMAX))
def _softmax(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    if args.get("dtype") is not None or args.get("half_to_float"):
        raise NodeProblem("softmax may not change the dtype", arguments="dtype=...")
    return _unary(imp, node, dgtorch.SoftmaxOp, dim=_int_attr(args["dim"]))


@handles(*targets(registry.SIGMOID))
def _sigmoid(imp: GraphImporter, node: Node) -> SSAValue:
    return _unary(imp, node, dgtorch.SigmoidOp)


# -- padding, concatenation, resizing ------------------------------------------------

PAD_CONSUMERS = targets(registry.CONV2D, registry.AVG_POOL2D)
"""The ops an F.pad may immediately precede: their padding absorbs it."""


@handles(*targets(registry.PAD))
def _pad(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    pad = [int(p) for p in args["pad"]]
    mode = args.get("mode", "constant")
    value = args.get("value") or 0.0
    if mode != "constant":
        raise NodeProblem(
            f"only zero padding is supported, got mode='{mode}'", arguments=f"mode='{mode}'"
        )
    if value != 0:
        raise NodeProblem(
            f"{registry.PAD.op}: only zero padding folds into the next layer, got value={value:g}",
            fix="pad with value=0",
            arguments=f"value={value:g}",
        )
    users = consumers(node)
    if any(_is_call(u, targets(registry.MAX_POOL2D)) for u in users):
        raise NodeProblem(
            f"nn.MaxPool2d: {registry.MAX_POOL2D.notes}",
            "remove the F.pad before the max pool (max pooling cannot pad)",
        )
    if not users or not all(_is_call(u, PAD_CONSUMERS) for u in users):
        raise NodeProblem(registry.STANDALONE_PAD.reason, registry.STANDALONE_PAD.fix)
    if len(_traced_shape(args["input"])) != 4 or len(pad) > 4 or any(p < 0 for p in pad):
        raise NodeProblem(
            "only padding of the spatial axes (H, W) of a feature map by non-negative amounts "
            f"is supported, got pad={tuple(pad)}",
            arguments=f"pad={tuple(pad)}",
        )
    return _unary(imp, node, dgtorch.PadOp, pad=_i64_array(pad), value=FloatAttr(float(value), f64))


@handles(*targets(registry.CAT))
def _cat(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    tensors = list(args["tensors"])
    rank = len(_traced_shape(tensors[0]))
    dim = int(args["dim"])
    if dim % rank == 0:
        raise NodeProblem(
            f"cannot concatenate along the batch axis (dim={dim}); the spec: {registry.CAT.notes}",
            fix="concatenate along a feature axis (dim=1 for the channels of a feature map)",
            arguments=f"dim={dim}",
        )
    for index, tensor in enumerate(tensors):
        _require_activation(imp, tensor, f"input {index}")
    op = dgtorch.CatOp(
        operands=[[imp.operand(t) for t in tensors]],
        result_types=[imp.result_type(node)],
        properties={"dim": _int_attr(dim)},
    )
    return imp.emit(node, op)


NEAREST_MODES = {
    aten.upsample_nearest2d.vec: "nearest",
    aten.upsample_nearest2d.default: "nearest",
    aten._upsample_nearest_exact2d.vec: "nearest-exact",
    aten._upsample_nearest_exact2d.default: "nearest-exact",
}
assert set(NEAREST_MODES) == set(targets(registry.INTERPOLATE))


@handles(*targets(registry.INTERPOLATE))
def _upsample_nearest(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    spatial_in = _traced_shape(node.args[0])[2:]
    spatial_out = _traced_shape(node)[2:]
    # torch picks source pixels by the scale factor when one is given; the
    # device by the sizes. They agree exactly when the factor gives the size.
    scales = [args.get(k) for k in ("scale_factors", "scales_h", "scales_w")]
    factors = scales[0] or [s for s in scales[1:] if s is not None]
    if factors and any(
        n * f != o for n, f, o in zip(spatial_in, _pair_floats(factors), spatial_out, strict=True)
    ):
        raise NodeProblem(
            f"scale_factor={_python(factors)} does not give a whole output size for the "
            f"{_size(spatial_in)} input",
            fix=f"pass size=({', '.join(map(str, spatial_out))}) instead of scale_factor",
            arguments=f"scale_factor={_python(factors)}",
        )
    mode = NEAREST_MODES[node.target]  # type: ignore[index]
    for size_in, size_out in zip(spatial_in, spatial_out, strict=True):
        if not _torch_picks_exact_sources(size_in, size_out, mode):
            raise NodeProblem(
                f"resizing {size_in} to {size_out} picks source pixels by float32 rounding "
                "that the device's exact integer rule does not reproduce",
                fix="resize by a whole-number factor (or its inverse)",
            )
    return _unary(imp, node, dgtorch.UpsampleNearest2dOp, mode=StringAttr(mode))


def _torch_picks_exact_sources(size_in: int, size_out: int, mode: str) -> bool:
    """Whether torch's nearest resize reads the sources of docs/dghw.md's integer rule.

    torch computes source indices in float32 and can round differently for
    ratios such as 26 -> 22; resizing an index ramp shows which it reads.
    """
    ramp = torch.arange(size_in, dtype=torch.float32).view(1, 1, size_in, 1)
    picked = torch.nn.functional.interpolate(ramp, size=(size_out, 1), mode=mode).flatten()
    offset = 0.5 if mode == "nearest-exact" else 0.0
    exact = np.minimum(np.floor((np.arange(size_out) + offset) * size_in / size_out), size_in - 1)
    return bool(np.array_equal(picked.numpy(), exact.astype(np.float32)))


def _pair_floats(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values] * (2 if len(values) == 1 else 1)


@handles(*(overload(name) for name in registry.INTERPOLATE_OTHER_MODES))
def _upsample_other(imp: GraphImporter, node: Node) -> SSAValue:
    mode = registry.INTERPOLATE_OTHER_MODES[str(node.target)]
    raise NodeProblem(
        f"{registry.INTERPOLATE.notes}; got mode='{mode}'",
        fix='use mode="nearest" or mode="nearest-exact"',
        arguments=f"mode='{mode.split()[0]}'",
    )


# -- batch norm ---------------------------------------------------------------------


@handles(*targets(registry.BATCH_NORM))
def _batch_norm(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    _check_batch_norm_source(imp, args["input"])
    channels = _traced_shape(args["input"])[1]
    if args["running_mean"] is None or args["running_var"] is None:
        raise NodeProblem(
            "needs running statistics to fold (track_running_stats=False is not supported)"
        )
    params = [
        _batch_norm_param(imp, node, args[name], channels, default)
        for name, default in (
            ("weight", 1.0),
            ("bias", 0.0),
            ("running_mean", None),
            ("running_var", None),
        )
    ]
    source = imp.operand(args["input"])
    op = dgtorch.BatchNormOp(
        operands=[source, *params],
        # torchao's switch to eval mode re-creates batch norm nodes with the
        # traced (static) batch size: the result has the input's type.
        result_types=[source.type],
        properties={"eps": FloatAttr(float(args["eps"]), f64)},
    )
    return imp.emit(node, op)


def _check_batch_norm_source(imp: GraphImporter, source_arg: object) -> None:
    """A batch norm folds into the Linear (dg.export) or Conv2d (freeze) it directly follows.

    Either must have no other user. In a frozen model a Conv2d's batch norm is
    already folded: one that is left could not be. Before quantization (a
    float model) Conv2d -> batch norm is fine: quantization will fold it.
    """
    source = producer(source_arg)
    if not _is_call(source, WEIGHT_OPS):
        raise NodeProblem(
            f"{registry.BATCH_NORM.notes}; a BatchNorm that follows anything else cannot fold, "
            f"and this one follows {_name_of(source)}",
            fix=registry.BATCH_NORM.fix,
        )
    assert isinstance(source, Node)
    users = consumers(source)
    if len(users) != 1:
        raise NodeProblem(
            f"{registry.BATCH_NORM.notes}; but the {_name_of(source)} it follows has "
            f"{len(users)} users",
            fix=f"let the BatchNorm be the only user of the {_name_of(source)}",
        )
    if source.target in targets(registry.LINEAR) and len(_traced_shape(source)) != 2:
        raise NodeProblem(
            "BatchNorm normalizes axis 1, but the "
            f"{_name_of(source)} computes the last axis of a rank-{len(_traced_shape(source))} "
            "tensor: it folds only into a Linear on [batch, features]",
            fix="normalize [batch, features] tensors only, or drop the BatchNorm",
        )
    if imp.quantized and source.target in targets(registry.CONV2D):
        raise NodeProblem(
            f"{registry.BATCH_NORM.notes}; this one follows the {_name_of(source)} but was not "
            "folded by freeze_quantization",
            fix="quantize with dg.prepare_qat / dg.prepare_ptq and dg.freeze_quantization",
        )


WEIGHT_OPS = targets(registry.CONV2D, registry.LINEAR)


def _name_of(node: object) -> str:
    """An op for a message about another op: ``nn.Linear 'fc1' (model.py:12)``."""
    if not (isinstance(node, Node) and node.op == "call_function"):
        return "the model's input"
    name = describe_op(node, registry.spellings_of(node.target))
    info = source_info(node)
    if info.module_path:
        name += f" '{info.module_path}'"
    if info.location:
        name += f" at {info.location}"
    return name


def _batch_norm_param(
    imp: GraphImporter, node: Node, arg: object, channels: int, default: float | None
) -> SSAValue:
    if arg is not None:
        return imp.operand(arg)
    # affine=False: the identity scale and shift.
    assert default is not None
    array = np.full(channels, default, dtype="<f4")
    value = DenseIntOrFPElementsAttr(TensorType(f32, [channels]), BytesAttr(array.tobytes()))
    return imp.emit(node, dgtorch.ConstantOp(value))


@handles(operator.getitem)
def _getitem(imp: GraphImporter, node: Node) -> SSAValue:
    # `_native_batch_norm_legit_no_training` returns (output, mean, rstd).
    source, index = node.args
    if _is_call(source, targets(registry.BATCH_NORM)) and index == 0:
        return imp.operand(source)
    raise NodeProblem(UNKNOWN_OP_REASON)


# -- entry points -------------------------------------------------------------------


# -- integer logic layers (dg.frontend.logic) ------------------------------------------

INPUT_DTYPES = (torch.float32, torch.int32)
"""Graph inputs: float32 for the quantized model, int32 for logic layers. (int8 logic
tensors exist in dghw, but an i8 @main boundary without host qparams would be ambiguous
with a quantized one that lost them, so int8 model inputs are not accepted yet.)"""

LOGIC_DTYPES = (torch.int32, torch.int8)

LOGIC_INPUT_FIX = (
    "feed logic layers an int32 model input or another logic layer's output; they do not "
    "take float or quantized tensors"
)

REPEAT_OUTSIDE_LOGIC_FIX = (
    "remove the repeat from the quantized model; on int32 tensors, call it inside the forward "
    "of a logic layer (a subclass of dg.LogicLayer)"
)


def _is_logic_only(gm: GraphModule) -> bool:
    """A graph whose every input is int32: it runs logic layers only and has nothing to quantize."""
    vals = [n.meta.get("val") for n in gm.graph.find_nodes(op="placeholder")]
    return bool(vals) and all(isinstance(v, torch.Tensor) and v.dtype in LOGIC_DTYPES for v in vals)


def _logic_operand(imp: GraphImporter, arg: object) -> SSAValue:
    """The value of a logic layer's input, which must be an int32 or int8 tensor."""
    value = imp.operand(arg)
    value_type = value.type
    if not (isinstance(value_type, TensorType) and value_type.element_type in (i32, i8)):
        raise NodeProblem(
            f"logic layers take int32 or int8 tensors, got {value_type}", LOGIC_INPUT_FIX
        )
    return value


def _int_constant(arg: object, what: str) -> int:
    if isinstance(arg, bool) or not isinstance(arg, int):
        got = "a tensor" if isinstance(arg, Node) else repr(arg)
        raise NodeProblem(
            f"the {what} must be a Python int constant, got {got}",
            "use a constant int (dg.BitShift(shift, direction) / dg.Bitwise(kind, value))",
        )
    return arg


_SHIFT_DIRECTIONS: dict[object, str] = {
    **dict.fromkeys(
        (
            aten.__lshift__.Scalar,
            aten.bitwise_left_shift.Tensor_Scalar,
            aten.__lshift__.Tensor,
            aten.bitwise_left_shift.Tensor,
        ),
        "left",
    ),
    **dict.fromkeys(
        (
            aten.__rshift__.Scalar,
            aten.bitwise_right_shift.Tensor_Scalar,
            aten.__rshift__.Tensor,
            aten.bitwise_right_shift.Tensor,
        ),
        "right",
    ),
}


@handles(*targets(registry.BIT_SHIFT))
def _bitwise_shift(imp: GraphImporter, node: Node) -> SSAValue:
    source = _logic_operand(imp, node.args[0])
    shift = _int_constant(node.args[1], "shift amount")
    op = dgtorch.BitwiseShiftOp.create(
        operands=[source],
        result_types=[imp.result_type(node)],
        properties={
            "direction": StringAttr(_SHIFT_DIRECTIONS[node.target]),
            "shift": _int_attr(shift),
        },
    )
    return imp.emit(node, op)


_BITWISE_KINDS: dict[object, str] = {
    **dict.fromkeys((aten.bitwise_and.Scalar, aten.__and__.Scalar), "and"),
    **dict.fromkeys((aten.bitwise_and.Tensor, aten.__and__.Tensor), "and"),
    **dict.fromkeys((aten.bitwise_or.Scalar, aten.__or__.Scalar), "or"),
    **dict.fromkeys((aten.bitwise_or.Tensor, aten.__or__.Tensor), "or"),
    **dict.fromkeys((aten.bitwise_xor.Scalar, aten.__xor__.Scalar), "xor"),
    **dict.fromkeys((aten.bitwise_xor.Tensor, aten.__xor__.Tensor), "xor"),
}


LOGIC_OPERANDS_FIX = (
    "compute both operands from the model's int32 inputs; for a constant second operand "
    "write it as a Python int (x & 5, (x > 3).to(torch.int32)) or use dg.Bitwise(kind, value) "
    "/ dg.Compare(kind, threshold)"
)

LOGIC_BROADCAST_FIX = (
    "give both operands the same shape: tile the smaller one inside the logic layer's forward, "
    "e.g. x & y.repeat(1, 4) (Tensor.repeat is accepted in a dg.LogicLayer subclass)"
)


def _logic_operands(imp: GraphImporter, node: Node) -> tuple[SSAValue, SSAValue]:
    """The two tensor operands of a logic op: computed from the model's inputs (a constant
    tensor has the constant forms), logic tensors of one dtype, and one shape (dg does not
    broadcast them)."""
    lhs_arg, rhs_arg = node.args[0], node.args[1]
    for name, arg in (("first", lhs_arg), ("second", rhs_arg)):
        if not (isinstance(arg, Node) and arg in imp.batched):
            raise NodeProblem(
                f"a logic op on two tensors takes tensors computed from the model's inputs, "
                f"but the {name} operand is {_operand_text(arg)}",
                LOGIC_OPERANDS_FIX,
            )
    # One dtype follows: the model's integer inputs are int32, and nothing converts them.
    lhs, rhs = _logic_operand(imp, lhs_arg), _logic_operand(imp, rhs_arg)
    if _shape(lhs) != _shape(rhs):
        raise NodeProblem(
            f"operands must have the same shape (no broadcasting), got {list(_shape(lhs)[1:])} "
            f"and {list(_shape(rhs)[1:])} after the batch axis",
            LOGIC_BROADCAST_FIX,
        )
    return lhs, rhs


@handles(*targets(registry.BITWISE))
def _bitwise(imp: GraphImporter, node: Node) -> SSAValue:
    source = _logic_operand(imp, node.args[0])
    value = _int_constant(node.args[1], "bitwise constant")
    op = dgtorch.BitwiseOp.create(
        operands=[source],
        result_types=[imp.result_type(node)],
        properties={"kind": StringAttr(_BITWISE_KINDS[node.target]), "value": _int_attr(value)},
    )
    return imp.emit(node, op)


@handles(*targets(registry.BITWISE_TENSORS))
def _bitwise_tensors(imp: GraphImporter, node: Node) -> SSAValue:
    lhs, rhs = _logic_operands(imp, node)
    op = dgtorch.BitwiseTensorOp.create(
        operands=[lhs, rhs],
        result_types=[imp.result_type(node)],
        properties={"kind": StringAttr(_BITWISE_KINDS[node.target])},
    )
    return imp.emit(node, op)


_COMPARE_KINDS: dict[object, str] = {
    aten.gt.Scalar: "gt",
    aten.ge.Scalar: "ge",
    aten.lt.Scalar: "lt",
    aten.le.Scalar: "le",
    aten.eq.Scalar: "eq",
    aten.ne.Scalar: "ne",
}

_COMPARE_TENSORS_KINDS: dict[object, str] = {
    aten.gt.Tensor: "gt",
    aten.ge.Tensor: "ge",
    aten.lt.Tensor: "lt",
    aten.le.Tensor: "le",
    aten.eq.Tensor: "eq",
    aten.ne.Tensor: "ne",
}

COMPARE_FIX = "convert the comparison to 0/1 right away: (x > c).to(torch.int32), or dg.Compare"


def _is_int32_conversion(node: Node) -> bool:
    return node.target is aten.to.dtype and node.args[1:2] == (torch.int32,)


def _require_int32_conversion(node: Node) -> None:
    """dg has no bool tensors: every use of a comparison must be its `.to(torch.int32)`."""
    users = [user for user in node.users if not _is_skipped(user)]
    if not users or not all(_is_int32_conversion(user) for user in users):
        raise NodeProblem("its bool result must be converted to int32 right away", COMPARE_FIX)


@handles(*_COMPARE_KINDS)
def _compare(imp: GraphImporter, node: Node) -> SSAValue:
    """A comparison and its `.to(torch.int32)`, as one i32 0/1 op (dg has no bool tensors)."""
    source = _logic_operand(imp, node.args[0])
    value = _int_constant(node.args[1], "comparison threshold")
    _require_int32_conversion(node)
    op = dgtorch.CompareOp.create(
        operands=[source],
        result_types=[TensorType(i32, _shape(source))],
        properties={"kind": StringAttr(_COMPARE_KINDS[node.target]), "value": _int_attr(value)},
    )
    return imp.emit(node, op)


@handles(*targets(registry.COMPARE_TENSORS))
def _compare_tensors(imp: GraphImporter, node: Node) -> SSAValue:
    """A comparison of two tensors and its `.to(torch.int32)`, as one i32 0/1 op."""
    lhs, rhs = _logic_operands(imp, node)
    _require_int32_conversion(node)
    op = dgtorch.CompareTensorOp.create(
        operands=[lhs, rhs],
        result_types=[TensorType(i32, _shape(lhs))],
        properties={"kind": StringAttr(_COMPARE_TENSORS_KINDS[node.target])},
    )
    return imp.emit(node, op)


@handles(aten.to.dtype)
def _to_dtype(imp: GraphImporter, node: Node) -> SSAValue:
    """`.to(torch.int32)` of a comparison: the compare op already gives 0/1 as i32."""
    source = node.args[0]
    comparisons = _COMPARE_KINDS.keys() | _COMPARE_TENSORS_KINDS.keys()
    if not (_is_call(source, comparisons) and _is_int32_conversion(node)):
        raise NodeProblem(
            "dtype conversions are supported only as the int32 result of a comparison",
            "remove the conversion; logic layers take int32 tensors, quantized layers float32",
        )
    return imp.operand(source)


@handles(*targets(registry.LOGIC_REPEAT))
def _repeat(imp: GraphImporter, node: Node) -> SSAValue:
    if not inside_logic_layer(node):
        raise NodeProblem(registry.REPEAT.reason, REPEAT_OUTSIDE_LOGIC_FIX)
    source = _logic_operand(imp, node.args[0])
    written = node.args[1]
    repeats = [r for r in written if isinstance(r, int)] if isinstance(written, list) else []
    if len(repeats) != len(_shape(source)):
        raise NodeProblem(
            f"repeats must be constant ints, one per input axis ({len(_shape(source))}), "
            f"got {written!r}",
            "pass one repeat count per axis, the batch axis first (1)",
        )
    if repeats[0] != 1:
        raise NodeProblem(
            "cannot repeat along the batch axis (axis 0): the device runs every sample alike",
            "repeat the feature axes only, e.g. x.repeat(1, 2)",
        )
    op = dgtorch.RepeatOp.create(
        operands=[source],
        result_types=[imp.result_type(node)],
        properties={"repeats": _i64_array(repeats)},
    )
    return imp.emit(node, op)


# -- dg.Norm (issue 4) ---------------------------------------------------------------------

_QDQ_OPS = QUANTIZE_OPS | DEQUANTIZE_OPS


@dataclass(frozen=True)
class NormBody:
    """The ops one `dg.Norm` runs (torchao's q/dq around it excluded), read from the graph."""

    path: str
    nodes: tuple[Node, ...]
    activations: tuple[Node, ...]
    """Values from outside the body that it reads (one input, maybe dequantized twice)."""
    outputs: tuple[Node, ...]
    """Body values used outside it: exactly one, the normalized result."""
    weight: Node | None
    bias: Node | None
    eps: float | None
    kind: str

    @staticmethod
    def of(gm: GraphModule, path: str) -> NormBody:
        nodes = [
            n
            for n in gm.graph.nodes
            if n.op == "call_function" and not _is_call(n, _QDQ_OPS) and norm_path(n) == path
        ]
        inside = set(nodes)
        reads = dict.fromkeys(a for n in nodes for a in n.all_input_nodes if a not in inside)
        # `... * self.weight + self.bias`: the parameters are what a mul / an add reads.
        parameters = {n.target: a for n in nodes for a in n.all_input_nodes if a.op == "get_attr"}
        eps = [
            float(a)
            for n in nodes
            if n.target in targets(registry.ADD)
            for a in n.args
            if isinstance(a, (int, float))
        ]
        return NormBody(
            path,
            tuple(nodes),
            tuple(a for a in reads if a.op != "get_attr"),
            tuple(n for n in nodes if any(u not in inside for u in n.users)),
            parameters.get(aten.mul.Tensor),
            parameters.get(aten.add.Tensor),
            eps[0] if len(eps) == 1 else None,
            "layer" if any(n.target == aten.sub.Tensor for n in nodes) else "rms",
        )

    def source(self, quantized: bool) -> Node | None:
        """The one tensor the norm normalizes (a dequantize of it, in a quantized graph)."""
        sources = {producer(a) if quantized else a for a in self.activations}
        return self.activations[0] if len(sources) == 1 else None


NORM_FIX = (
    "apply dg.Norm to a [B, D] or [B, S, D] sequence tensor (after a Linear, matmul or "
    "flatten), and use its result only as a whole"
)


def _import_norm_body(imp: GraphImporter, node: Node) -> None:
    """Import a `dg.Norm` as one `dgtorch.norm`, at the last op of its body; skip the others.

    Its ops (mean, sub, mul, add of eps, rsqrt, ...) are legal only here: the
    device computes the whole normalization as one integer op.
    """
    path = norm_path(node)
    assert path is not None
    body = imp.norm_bodies.get(path)
    if body is None:
        body = imp.norm_bodies[path] = NormBody.of(imp.gm, path)
        source = body.source(imp.quantized)
        if body.outputs != body.nodes[-1:] or source is None or None in (body.weight, body.eps):
            _report_norm(
                imp,
                node,
                body,
                "its body must read one tensor and return one (the module as dg defines it)",
                NORM_FIX,
            )
            imp.failed.update(body.nodes)  # nothing after it can be imported
            return
    if node is not body.nodes[-1]:
        return  # no value of its own: only the norm's result is used
    try:
        imp.values[node] = _norm(imp, node, body)
    except NodeProblem as problem:
        _report_norm(imp, node, body, problem.reason, problem.fix)
        imp._stand_in(node)


def _report_norm(imp: GraphImporter, node: Node, body: NormBody, reason: str, fix: str | None):
    info = source_info(node)
    imp.problems.append(Problem("dg.Norm", reason, info.location, body.path, fix))


def _norm(imp: GraphImporter, node: Node, body: NormBody) -> SSAValue:
    source = body.source(imp.quantized)
    assert source is not None and body.weight is not None and body.eps is not None
    _require_activation(imp, source, "input")
    operand = imp.operand(source)
    extents = _shape(operand)
    shape = "[" + ", ".join(["B", *map(str, extents[1:])]) + "]"
    if dgq.value_domain(operand) != dgq.SEQUENCE:
        raise NodeProblem(
            f"normalizes the last axis of sequence tensors only, and its input {shape} is a "
            "spatial feature map (from a conv, pool, resize or pad, or an "
            "NCHW image), whose last axis is its width",
            fix="flatten the map first (dg.Flatten(), or x.flatten(2).transpose(1, 2) for "
            "[B, H*W, C]), or use nn.BatchNorm2d after a Conv2d for feature maps",
        )
    if len(extents) - 1 not in NORM_FEATURE_RANKS or not 1 <= extents[-1] <= MAX_NORM_EXTENT:
        raise NodeProblem(
            f"normalizes the last axis of [B, D] or [B, S, D] tensors with D <= "
            f"{MAX_NORM_EXTENT}, and its input is {shape}",
            fix=NORM_FIX,
        )
    bias = [imp.operand(body.bias)] if body.kind == "layer" and body.bias is not None else []
    operands = [operand, imp.operand(body.weight), bias]
    op = dgtorch.NormOp(
        operands=operands,
        properties={"kind": StringAttr(body.kind), "eps": FloatAttr(body.eps, f64)},
        result_types=[imp.result_type(node)],
    )
    return imp.emit(node, op)


def import_graph(gm: GraphModule, example_inputs: Sequence[object] = ()) -> ModuleOp:
    """The `dgtorch` module of frozen graph `gm`; raises `ExportError` listing every problem.

    `example_inputs`, when given, are checked against the graph's inputs.
    """
    module, problems = _import(gm, example_inputs, require_quantized=True)
    if problems or module is None:
        raise ExportError(problems)
    return module


def collect_problems(
    gm: GraphModule, example_inputs: Sequence[object] = (), *, require_quantized: bool = True
) -> list[Problem]:
    """Every reason why `import_graph` would reject `gm` (empty when it would not)."""
    return _import(gm, example_inputs, require_quantized=require_quantized)[1]


def _import(
    gm: GraphModule, example_inputs: Sequence[object], *, require_quantized: bool
) -> tuple[ModuleOp | None, list[Problem]]:
    importer = GraphImporter(gm, require_quantized=require_quantized)
    module = importer.run()
    return module, _example_problems(gm, example_inputs) + importer.problems


def _example_problems(gm: GraphModule, example_inputs: Sequence[object]) -> list[Problem]:
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
