"""The import driver: `GraphImporter`, the handler table and the entry points.

`GraphImporter` walks a frozen graph node by node and hands every node to
the handler `HANDLERS` holds for its ATen op (the family modules register
them with `handles`). A node that cannot be imported is not an exception but
a `Problem`; the importer carries on, so that `ExportError` lists every
problem of the model at once. Ops without a handler get the reason and fix
of the registry row that rejects them, or, for ops dg does not know at all,
a message naming them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch.fx import GraphModule, Node
from torch.fx.operator_schemas import normalize_function
from torchao.quantization.pt2e import FakeQuantizeBase, ObserverBase
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    Attribute,
    BytesAttr,
    DenseIntOrFPElementsAttr,
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

from dg.dialects import dgtorch
from dg.frontend.errors import ExportError, Problem
from dg.frontend.importer.graph import (
    INPUT_DTYPES,
    OUTPUT_STRUCTURE_ATTR,
    example_problems,
    is_logic_only,
    is_skipped,
    live_nodes,
    output_structure,
    read_attribute,
)
from dg.frontend.ops import targets
from dg.frontend.source import describe_op, module_types, source_info
from dg.lowering import registry

aten = torch.ops.aten
qd = torch.ops.quantized_decomposed  # registered by importing torchao.quantization.pt2e

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

# The driver needs torchao's q/dq ops to tell a quantized graph from a float one; their
# handlers live in the quantization family.
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

ModuleBodyImporter = Callable[["GraphImporter", Node], bool]

MODULE_BODY_IMPORTERS: list[ModuleBodyImporter] = []
"""Importers of the modules dg compiles as one op (dg.Norm), tried on every node before
`HANDLERS`: one returns True for a node of its module's body (imported or skipped)."""

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


def imports_module_body(body_importer: ModuleBodyImporter) -> ModuleBodyImporter:
    """Register the decorated function in `MODULE_BODY_IMPORTERS`."""
    MODULE_BODY_IMPORTERS.append(body_importer)
    return body_importer


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
        self.batch_changed: set[Node] = set()
        """Nodes whose batch axis an op (reported there) changed, and the nodes reading them."""
        self.parts: dict[Node, list[SSAValue]] = {}
        """The values of nodes computing several tensors (`torch.split`), read by getitem."""
        self.rejected_modules: set[str] = set()
        self.module_bodies: dict[str, Any] = {}
        """The bodies of modules imported as one op met so far (`dg.Norm`), by module path."""
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
        if self.require_quantized and not self.quantized and not is_logic_only(self.gm):
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
                Problem(
                    "",
                    "the model must return tensors: one, or in (nested) tuples, lists and "
                    "dicts with string keys",
                    fix="return the tensors only (no None, no numbers, no objects of your "
                    "own classes)",
                )
            )
        live = live_nodes(self.gm)
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
        if node.op == "call_function" and is_skipped(node):
            return
        if any(a in self.failed for a in node.all_input_nodes):
            self.failed.add(node)  # its input has no value; the reason was reported there
            return
        if any(a in self.batched for a in node.all_input_nodes):
            self.batched.add(node)
        if any(a in self.batch_changed for a in node.all_input_nodes):
            self.batch_changed.add(node)
        if self._fold_constant_layout(node):
            return
        if self._inside_rejected_module(node):
            return
        if any(import_body(self, node) for import_body in MODULE_BODY_IMPORTERS):
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
            self.stand_in(node)
            return True
        return False

    def stand_in(self, node: Node) -> None:
        """Give a node that cannot be imported a placeholder value of its traced type.

        The ops using it are then still imported, and their problems reported
        too: one round trip shows the user every problem of the model. (A
        module with problems is never returned.)
        """
        val = node.meta.get("val")
        if isinstance(val, (tuple, list)) and all(isinstance(v, torch.Tensor) for v in val):
            self.parts[node] = [self._placeholder(v) for v in val]
        elif isinstance(val, torch.Tensor) and val.dtype in _ELEMENT_TYPES:
            self.values[node] = self._placeholder(val)
        else:
            self.failed.add(node)

    def _placeholder(self, val: torch.Tensor) -> SSAValue:
        """A value of `val`'s type standing in for one that could not be imported.

        Its type is read leniently (every symbolic extent dynamic): whatever was wrong
        with the node, the ops using it are judged on their own.
        """
        shape = [DYNAMIC_INDEX if isinstance(d, torch.SymInt) else int(d) for d in val.shape]
        placeholder = UnrealizedConversionCastOp.get(
            [], [TensorType(element_type(val.dtype), shape)]
        )
        self.block.add_op(placeholder)
        return placeholder.results[0]

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
            self.stand_in(node)

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
        value = read_attribute(self.gm, str(arg.target))
        assert isinstance(value, torch.Tensor), f"{arg.target} is not a tensor"
        return value.detach()

    def result_type(self, node: Node) -> TensorType[Attribute]:
        """The type of `node`'s value: its shape, batch axis dynamic when it carries one."""
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            raise NodeProblem("does not produce a tensor")
        shape = [self._extent(d, axis, node) for axis, d in enumerate(val.shape)]
        return TensorType(element_type(val.dtype), shape)

    def _extent(self, d: Any, axis: int, node: Node) -> int:
        if node in self.batched and axis == 0:
            if node in self.batch_changed:
                return DYNAMIC_INDEX  # reported where the batch axis was changed
            if not _same_extent(d, self.batch_extent):
                self.batch_changed.add(node)
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
        value_type = TensorType(element_type(tensor.dtype), tensor.shape)
        value = DenseIntOrFPElementsAttr(value_type, BytesAttr(array.tobytes()))
        return self.emit(node, dgtorch.ConstantOp(value))


def _same_extent(a: Any, b: Any) -> bool:
    if isinstance(a, torch.SymInt) and isinstance(b, torch.SymInt):
        return a.node.expr == b.node.expr
    if isinstance(a, torch.SymInt) or isinstance(b, torch.SymInt):
        return False
    return int(a) == int(b)


def element_type(dtype: torch.dtype) -> IntegerType | AnyFloat:
    if dtype not in _ELEMENT_TYPES:
        raise NodeProblem(f"tensors of dtype {dtype} are not supported")
    return _ELEMENT_TYPES[dtype]


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
    return module, example_problems(gm, example_inputs) + importer.problems
