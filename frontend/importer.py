"""Import a frozen torchao PT2E graph into the `dgtorch` dialect.

The result is one ``builtin.module`` with one ``func.func @main``: graph
inputs become block arguments, every computing node becomes the `dgtorch` op
of the same name (see docs/architecture.md), the graph outputs are returned.
Axis 0 of every activation is the batch axis and is dynamic (``?``).

Ops are imported by the handlers of `HANDLERS` (ATen op -> handler). A node
that cannot be imported is not an exception but a `Problem`; the importer
carries on, so that `ExportError` lists every problem of the model at once.
`NOT_SUPPORTED` gives specific reasons and fixes for ops users often try.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch._ops import OpOverload
from torch.fx import GraphModule, Node
from torch.fx.operator_schemas import normalize_function
from torchao.quantization.pt2e import FakeQuantizeBase, ObserverBase
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    Attribute,
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
    f32,
    f64,
    i8,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from dg.dialects import dgtorch
from dg.frontend.errors import ExportError, Problem
from dg.frontend.source import describe_op, source_info

aten = torch.ops.aten
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

_ELEMENT_TYPES: dict[torch.dtype, Attribute] = {
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

FUSION_ANCHORS = frozenset({aten.conv2d.default, aten.linear.default, aten.add.Tensor})
"""The ops a ReLU can be fused into."""

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
    """Raised by a handler: this node cannot be imported, because of `reason`."""

    def __init__(self, reason: str, fix: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.fix = fix


@dataclass(frozen=True)
class Unsupported:
    """Why an op is not supported, and what to write instead."""

    reason: str
    fix: str | None = None


Handler = Callable[["GraphImporter", Node], SSAValue]

HANDLERS: dict[OpOverload, Handler] = {}
"""ATen op -> the function importing one node of it."""

NOT_SUPPORTED: dict[OpOverload, Unsupported] = {}
"""Ops known not to be supported, with a specific reason (others get a generic one)."""

UNKNOWN_OP = Unsupported("is not supported by dg")


def handles(*targets: OpOverload) -> Callable[[Handler], Handler]:
    """Register the decorated function as the importer of `targets`."""

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
        self.failed: set[Node] = set()
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
        if self.require_quantized and not self.quantized:
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
        handler = HANDLERS.get(node.target) if node.op == "call_function" else None  # type: ignore[arg-type]
        if handler is None:
            unsupported = NOT_SUPPORTED.get(node.target, UNKNOWN_OP)  # type: ignore[arg-type]
            self.report(node, unsupported.reason, unsupported.fix)
            return
        if any(a in self.failed for a in node.all_input_nodes):
            self.failed.add(node)
            return
        if any(a in self.batched for a in node.all_input_nodes):
            self.batched.add(node)
        try:
            self.values[node] = handler(self, node)
        except NodeProblem as problem:
            self.report(node, problem.reason, problem.fix)

    def _import_placeholder(self, node: Node) -> None:
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor) or val.dtype != torch.float32 or val.dim() == 0:
            self.report(node, "graph inputs must be float32 tensors with a batch axis")
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
        nodes = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
        if not all(isinstance(n, Node) for n in nodes):
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
        main.attributes[OUTPUT_STRUCTURE_ATTR] = StringAttr(structure)
        return ModuleOp([main])

    # -- services for handlers ----------------------------------------------
    def report(self, node: Node, reason: str, fix: str | None = None) -> None:
        info = source_info(node)
        self.problems.append(
            Problem(describe_op(node), reason, info.location, info.module_path, fix)
        )
        self.failed.add(node)

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
            assert arg.op == "get_attr", f"{arg} used before it was imported"
            self.values[arg] = self._import_constant(arg)
        return self.values[arg]

    def constant_tensor(self, arg: object) -> torch.Tensor:
        """The value of a tensor argument that must be a parameter/constant of the graph."""
        if not isinstance(arg, Node) or arg.op != "get_attr":
            raise NodeProblem("expects a constant tensor here (quantization parameters)")
        value = self.gm
        for name in str(arg.target).split("."):
            value = getattr(value, name)
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
                    "cannot change the batch-axis extent (axis 0): the device runs every "
                    "sample of a batch alike",
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
        tensor = self.constant_tensor(node)
        if tensor.dtype not in _NUMPY_DTYPES:
            raise NodeProblem(f"constant {node.target} has unsupported dtype {tensor.dtype}")
        array = np.ascontiguousarray(tensor.cpu().numpy(), dtype=_NUMPY_DTYPES[tensor.dtype])
        value_type = TensorType(_element_type(tensor.dtype), tensor.shape)
        value = DenseIntOrFPElementsAttr(value_type, BytesAttr(array.tobytes()))
        # The constant belongs to the op that reads it.
        user = next(iter(node.users))
        return self.emit(user, dgtorch.ConstantOp(value))


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


def _element_type(dtype: torch.dtype) -> Attribute:
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
        op = op_type.create(
            operands=[source], result_types=[result_type], properties=properties(imp, args)
        )
        return imp.emit(node, op)

    return handler


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


def _i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, values)


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


@handles(aten.conv2d.default)
def _conv2d(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    dilation = _pair(args["dilation"], "dilation")
    if args["groups"] != 1:
        raise NodeProblem(
            f"only dense convolutions (groups=1) are supported, got groups={args['groups']}"
        )
    if dilation != [1, 1]:
        raise NodeProblem(f"dilated convolutions are not supported, got dilation={dilation}")
    op = dgtorch.Conv2dOp(
        operands=_weight_op_operands(imp, args),
        result_types=[imp.result_type(node)],
        properties={
            "stride": _i64_array(_pair(args["stride"], "stride")),
            "padding": _i64_array(_pair(args["padding"], "padding")),
            "dilation": _i64_array(dilation),
            "groups": _int_attr(args["groups"]),
        },
    )
    return imp.emit(node, op)


@handles(aten.linear.default)
def _linear(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    op = dgtorch.LinearOp(
        operands=_weight_op_operands(imp, args), result_types=[imp.result_type(node)]
    )
    return imp.emit(node, op)


@handles(aten.relu.default, aten.relu_.default)
def _relu(imp: GraphImporter, node: Node) -> SSAValue:
    source = node.args[0]
    if not (
        isinstance(source, Node)
        and source.op == "call_function"
        and source.target in FUSION_ANCHORS
        and len(source.users) == 1
    ):
        raise NodeProblem(
            "is only supported as a fusion tail right after a Conv2d, a Linear or a residual "
            "add (whose result nothing else uses), not as a layer of its own",
            fix="apply the ReLU directly to the output of a Conv2d, Linear or add",
        )
    op = dgtorch.ReluOp(operands=[imp.operand(source)], result_types=[imp.result_type(node)])
    return imp.emit(node, op)


@handles(aten.add.Tensor)
def _add(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    lhs, rhs = args["input"], args["other"]
    if not (isinstance(lhs, Node) and isinstance(rhs, Node)):
        raise NodeProblem(
            "adding a scalar is not supported: both operands must be activations",
            fix="add two tensors computed by the model",
        )
    if args["alpha"] != 1:
        raise NodeProblem(f"only alpha=1 is supported, got alpha={args['alpha']}")
    if not (lhs in imp.batched and rhs in imp.batched):
        raise NodeProblem("both operands must be activations, not constants")
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


@handles(aten.flatten.using_ints)
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


@handles(aten.view.default, aten.reshape.default, aten._unsafe_view.default)
def _reshape(imp: GraphImporter, node: Node) -> SSAValue:
    # The target shape may mention symbolic sizes; the result type (from the
    # traced shape, batch axis dynamic) says all there is to say.
    op = dgtorch.ReshapeOp(
        operands=[imp.operand(node.args[0])], result_types=[imp.result_type(node)]
    )
    return imp.emit(node, op)


@handles(aten.dropout.default)
def _dropout(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    if args["train"]:
        raise NodeProblem(
            "runs in training mode",
            fix="export the frozen model (dg.freeze_quantization puts it in eval mode)",
        )
    return imp.operand(args["input"])  # identity in eval mode


# -- entry points -------------------------------------------------------------------


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
