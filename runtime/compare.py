"""Per-layer fidelity: where between the float model and the device is accuracy lost?

`compare` runs one batch through three models and lines up their values at
every activation quantization of the frozen model (each `quantize_per_tensor`
node, i.e. each int8 tensor a layer hands to the next):

- the **device** (the dghw interpreter), its int8 values recorded by an
  interpreter listener (`ValueRecorder`), saturation counted by another
  (`SaturationCounter`);
- the **fake-quant** (frozen) model, run node by node with `torch.fx.Interpreter`:
  the int8 output of each quantize node;
- the **float** model, optional: the user's float `nn.Module`, prepared with
  dg's own PTQ observers (`dg.prepare_ptq`) so that BatchNorm is folded the same
  way and every observer sits where the frozen model quantizes. The value an
  observer sees is the float value at that point; observers and quantize
  nodes pair up by the node they observe (the same torch.export node names).

Device values pair with quantize nodes by the user's source line (the dghw
op's location, carried through the lowering, against the quantize node's
`source_info`, the same rule the importer uses), the value's shape (NCHW or
the device's NHWC) and its place in the graph: the device values it reads are
those paired with the quantize nodes the node reads (`DeviceValues.match`); a
graph input is the @main argument of the same index. Every difference is measured on the
same grid: steps of the quantize node's scale.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import IntegerType, NameLoc, TensorType
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from dg.dialects import dghw
from dg.lowering.diagnostics import describe_location
from dg.runtime.interpreter import Saturation, SaturationCounter, ValueRecorder

if TYPE_CHECKING:
    import torch
    from torch.fx import GraphModule, Node

    from dg.runtime.program import Program

MAX_STEPS_OK = 1
"""A layer within one output step of the fake-quant model everywhere is as exact as dg promises."""

NCHW_FROM_NHWC = (0, 3, 1, 2)
NHWC_FROM_NCHW = (0, 2, 3, 1)


@dataclass(frozen=True)
class LayerRow:
    """The device against the reference models at one activation quantization."""

    index: int
    layer: str
    """The user's module path (e.g. ``block.conv``), or the ops when it ran in the root module."""
    source: str
    """``file:line`` of the user's code, empty when unknown."""
    op: str
    """The frozen model's ops producing the value, e.g. ``conv2d+relu``."""
    device_ops: tuple[str, ...]
    """The dghw ops computing it from the previous layers' values."""
    scale: float
    elements: int
    sqnr_float_db: float | None
    """SQNR of the device value against the float model's (None without a float model)."""
    sqnr_fake_quant_db: float
    """SQNR of the device value against the fake-quant model's (inf: identical)."""
    max_steps: int
    """Largest |device - fake-quant| in steps of `scale`."""
    own_steps: int
    """The same when the layer reads the fake-quant model's values of the layers before it:
    the layer's own error, without the differences it inherits (`DeviceValues.own_result`)."""
    differing: float
    """Share of elements that differ from the fake-quant model at all."""
    saturated: int
    """Values the layer's requantizations clipped to the int8 range (`SaturationCounter`)."""
    saturated_share: float


@dataclass
class FidelityReport:
    """`Program.compare`'s answer: one `LayerRow` per activation quantization, in graph order."""

    rows: list[LayerRow]
    unmatched: list[str] = field(default_factory=list)
    """Quantize nodes of the frozen model with no device value to compare (by node name)."""

    @property
    def first_bad(self) -> LayerRow | None:
        """The first layer whose own error exceeds one step: where to look when accuracy drops.

        Its own error (`LayerRow.own_steps`), because one-step ties of earlier layers
        can add up to more than a step downstream without any layer being wrong.
        """
        return next((row for row in self.rows if row.own_steps > MAX_STEPS_OK), None)

    def to_dict(self) -> dict[str, Any]:
        first = self.first_bad
        return {
            "rows": [asdict(row) for row in self.rows],
            "first_bad": None if first is None else first.index,
            "unmatched": list(self.unmatched),
        }

    def __str__(self) -> str:
        return format_report(self)

    def plot(self, path: str | os.PathLike[str]) -> None:
        """Write a PNG: SQNR per layer (float and fake-quant), saturation per layer."""
        plot_report(self, path)


def compare(
    program: Program,
    frozen: GraphModule,
    device_inputs: Sequence[np.ndarray],
    frozen_inputs: Sequence[torch.Tensor],
    float_model: torch.nn.Module | None = None,
) -> FidelityReport:
    """The per-layer report of `program` on one batch (module docstring).

    `device_inputs` are what the device reads (int8 / int32 arrays), `frozen_inputs`
    what the frozen and float models read; their int8 quantization is `device_inputs`.
    """
    points = quantization_points(frozen, frozen_inputs)
    floats = float_values(float_model, frozen_inputs) if float_model is not None else {}
    paired = pair_float_values(points, floats)
    recorder, saturation = ValueRecorder(), SaturationCounter()
    program._device(device_inputs, listeners=(recorder, saturation))
    device = DeviceValues(program, device_inputs, recorder)
    rows: list[LayerRow] = []
    unmatched: list[str] = []
    for point, float_value in zip(points, paired, strict=True):
        value = device.match(point)
        if value is None:
            unmatched.append(point.node_name)
            continue
        rows.append(layer_row(len(rows), point, device, value, float_value, saturation))
    return FidelityReport(rows, unmatched)


# -- the frozen model ---------------------------------------------------------


@dataclass(frozen=True)
class QuantizationPoint:
    """One activation quantize node of the frozen model and the int8 tensor it produced."""

    node_name: str
    observed: str
    """Name of the node whose value is quantized (the float model's observers see it too)."""
    placeholder: int | None
    """Index of the graph input it quantizes, if it quantizes one."""
    values: np.ndarray
    scale: float
    zero_point: int
    file: str
    line: int
    module_path: str
    op: str
    inputs: tuple[str, ...] = ()
    """Names of the quantize nodes whose values this layer reads (through their dequantizes):
    the layer's place in the graph, which pairs it with a device value (`DeviceValues.match`)."""


def quantization_points(
    frozen: GraphModule, inputs: Sequence[torch.Tensor]
) -> list[QuantizationPoint]:
    """Every activation quantize node of `frozen`, with its value on `inputs`, in graph order."""
    from dg.frontend.prepare import PER_TENSOR_QUANTIZE
    from dg.frontend.source import SourceInfo, source_info

    nodes = [
        n for n in frozen.graph.nodes if n.op == "call_function" and n.target in PER_TENSOR_QUANTIZE
    ]
    wanted = {*nodes, *(a for n in nodes for a in n.args[1:3] if hasattr(a, "op"))}
    values = run_capturing(frozen, inputs, wanted)
    placeholders = [n for n in frozen.graph.nodes if n.op == "placeholder"]
    points = []
    for node in nodes:
        observed = node.args[0]
        placeholder = placeholders.index(observed) if observed in placeholders else None
        # A graph input's quantize has no line of the user's: torch.export
        # records its own input guard's frame there.
        info = source_info(node) if placeholder is None else SourceInfo()
        points.append(
            QuantizationPoint(
                node_name=node.name,
                observed=observed.name,
                placeholder=placeholder,
                values=values[node].numpy(),
                scale=float(_scalar(node.args[1], values)),
                zero_point=int(_scalar(node.args[2], values)),
                file=info.file,
                line=info.line,
                module_path=info.module_path,
                op=producing_ops(observed),
                inputs=quantized_inputs(observed, set(nodes)),
            )
        )
    return points


def quantized_inputs(node: Node, quantizes: set[Node]) -> tuple[str, ...]:
    """The quantize nodes among `quantizes` that `node` reads, through any other nodes."""
    found: dict[str, None] = {}
    seen: set[Node] = set()
    frontier = list(node.all_input_nodes)
    while frontier:
        n = frontier.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in quantizes:
            found[n.name] = None
        else:
            frontier.extend(n.all_input_nodes)
    return tuple(found)


def _scalar(arg: object, values: dict[Any, Any]) -> float:
    """A quantize node's scale or zero point: a literal, or a tensor node's value."""
    value = values[arg] if arg in values else arg
    return float(value.item() if hasattr(value, "item") else value)  # type: ignore[arg-type]


def run_capturing(
    gm: GraphModule, inputs: Sequence[torch.Tensor], wanted: set[Any]
) -> dict[Any, Any]:
    """Run `gm` node by node (`torch.fx.Interpreter`); the values of the `wanted` nodes."""
    import torch
    import torch.fx

    captured: dict[Any, Any] = {}

    class Capture(torch.fx.Interpreter):
        def run_node(self, n: Node) -> Any:
            result = super().run_node(n)
            if n in wanted:
                captured[n] = result.detach() if isinstance(result, torch.Tensor) else result
            return result

    with torch.no_grad():
        Capture(gm).run(*inputs)
    return captured


def producing_ops(node: Node) -> str:
    """The ops between the previous dequantizes and `node`, e.g. ``conv2d+relu``."""
    names: list[str] = []
    while node.op == "call_function" and "quantize" not in str(node.target):
        names.append(str(getattr(node.target, "__name__", node.target)).split(".")[0])
        inputs = node.all_input_nodes
        if not inputs:
            break
        node = inputs[0]
    return "+".join(reversed(names)) if names else "input"


# -- the float model ----------------------------------------------------------


def float_values(model: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> dict[str, np.ndarray]:
    """The float value at every activation observer of `model` prepared by dg, by observed node.

    `model` is the float `nn.Module`, or its torch.export capture (a `GraphModule`,
    in eval mode), which is prepared as it is.
    """
    from torch.fx import GraphModule
    from torchao.quantization.pt2e import FakeQuantizeBase, ObserverBase
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    import dg

    if isinstance(model, GraphModule):  # already captured (e.g. a loaded .float.pt2)
        prepared = prepare_pt2e(copy.deepcopy(model), dg.DgQuantizer(is_qat=False))
    else:
        prepared = dg.prepare_ptq(model, tuple(inputs))
    observers = [
        n
        for n in prepared.graph.nodes
        if n.op == "call_module"
        and isinstance(prepared.get_submodule(n.target), (ObserverBase, FakeQuantizeBase))
        and n.args[0].op != "get_attr"
    ]
    values = run_capturing(prepared, inputs, set(observers))
    return {n.args[0].name: values[n].numpy() for n in observers}


def pair_float_values(
    points: Sequence[QuantizationPoint], floats: dict[str, np.ndarray]
) -> list[np.ndarray | None]:
    """The float value of each point: the observer of the same node, else the next unused
    observer of the same shape in graph order (QAT's conv-BN folding renames nodes)."""
    paired: list[np.ndarray | None] = [floats.get(point.observed) for point in points]
    used = {point.observed for point in points if point.observed in floats}
    remaining = [name for name in floats if name not in used]
    for i, point in enumerate(points):
        if paired[i] is not None:
            continue
        name = next((n for n in remaining if floats[n].shape == point.values.shape), None)
        if name is not None:
            paired[i] = floats[name]
            remaining = remaining[remaining.index(name) + 1 :]
    return paired


# -- the device ---------------------------------------------------------------


def is_int8(t: Attribute) -> bool:
    return (
        isinstance(t, TensorType)
        and isinstance(t.element_type, IntegerType)
        and t.element_type.width.data == 8
    )


def source_of(op: Operation) -> tuple[str, str]:
    """(module path, ``file:line``) of a dghw op's location, empty where unknown."""
    module_path = op.location.desc.data if isinstance(op.location, NameLoc) else ""
    where = describe_location(op.location)
    return module_path, where.rsplit(":", 1)[0] if where else ""


class Layout:
    """How the device lays out the elements of a tensor of the frozen model."""

    def to_model(self, device: np.ndarray) -> np.ndarray:
        return device

    def to_device(self, model: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return model


class Nhwc(Layout):
    """A feature map: NCHW in the frozen model, NHWC on the device."""

    def to_model(self, device: np.ndarray) -> np.ndarray:
        return device.transpose(NCHW_FROM_NHWC)

    def to_device(self, model: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return model.transpose(NHWC_FROM_NCHW)


@dataclass(frozen=True)
class FlattenedNhwc(Layout):
    """A reshape of an NHWC map of shape `nhwc`: elements in (H, W, C) order on the device."""

    nhwc: tuple[int, ...]

    def to_model(self, device: np.ndarray) -> np.ndarray:
        n, h, w, c = self.nhwc
        return device.reshape(n, h, w, c).transpose(NCHW_FROM_NHWC).reshape(device.shape[0], -1)

    def to_device(self, model: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        n, h, w, c = self.nhwc
        return model.reshape(n, c, h, w).transpose(NHWC_FROM_NCHW).reshape(shape)


SAME, NHWC = Layout(), Nhwc()


class DeviceValues:
    """The device's int8 values of one run, and which quantization point each one is."""

    def __init__(self, program: Program, inputs: Sequence[np.ndarray], recorder: ValueRecorder):
        self.arguments = list(program.main.body.block.args)
        self.values: dict[SSAValue, np.ndarray] = dict(zip(self.arguments, inputs, strict=True))
        self.candidates: list[Operation] = []
        for op in program.main.body.block.ops:
            if op not in recorder.results:
                continue
            for result, array in zip(op.results, recorder.results[op], strict=True):
                self.values[result] = array
            if not isinstance(op, dghw.ConstantOp) and op.results and is_int8(op.results[0].type):
                self.candidates.append(op)
        self.matched: dict[SSAValue, QuantizationPoint] = {}
        self.by_point: dict[str, SSAValue] = {}
        """The device value of each matched point, by quantize node name."""
        self.points: dict[str, QuantizationPoint] = {}
        """Every point `match` was asked about, matched or not."""
        self.layouts: dict[SSAValue, Layout] = {}
        """How each matched value's elements are laid out on the device (`readings`)."""
        self._interpreter = program._device.interpreter

    def match(self, point: QuantizationPoint) -> SSAValue | None:
        """The device value of `point`, or None; a value matches one point at most.

        Points come in graph order. A candidate must come from the point's source
        line and hold its shape; among those that read the device values of the
        layers the point reads, the one agreeing best with the point is taken:
        source lines alone do not tell apart the layers of one module call
        (attention's heads, RoPE's halves), and program order may differ from
        graph order. Without such a candidate (the structure differs), the first
        by line and shape is taken.
        """
        self.points[point.node_name] = point
        if point.placeholder is not None:
            if point.placeholder >= len(self.arguments):
                return None
            return self._take(self.arguments[point.placeholder], point)
        where = f"{point.file}:{point.line}" if point.file else ""
        fitting = []
        for op in self.candidates:
            value = op.results[0]
            _, op_where = source_of(op)
            if value in self.matched or (where and op_where and op_where != where):
                continue
            if self.readings(value, point.values.shape):
                fitting.append(value)
        expected = self.expected_inputs(point)
        same_place = [v for v in fitting if self.matched_inputs(v) == expected]
        if same_place:
            # The ops between two layers (a layout transpose before a softmax, the softmax,
            # the transpose back) all read the same layers: the layer's own value is the
            # one agreeing best with the frozen model's, the first of equals.
            chosen = min(same_place, key=lambda v: self.disagreement(v, point))
            return self._take(chosen, point)
        return self._take(fitting[0], point) if fitting else None

    def disagreement(self, value: SSAValue, point: QuantizationPoint) -> int:
        """How many elements of `value`, in its best layout, differ from `point`'s."""
        array = self.values[value]
        layouts = self.readings(value, point.values.shape)
        return min(int(np.count_nonzero(lay.to_model(array) != point.values)) for lay in layouts)

    def expected_inputs(self, point: QuantizationPoint) -> frozenset[SSAValue]:
        """The device values of the points `point` reads; an unmatched one (folded away on
        the device) stands for the points it reads itself."""
        values: set[SSAValue] = set()
        for name in point.inputs:
            if name in self.by_point:
                values.add(self.by_point[name])
            elif name in self.points:
                values |= self.expected_inputs(self.points[name])
        return frozenset(values)

    def matched_inputs(self, value: SSAValue) -> frozenset[SSAValue]:
        """The matched values and arguments that the ops computing `value` read."""
        found: set[SSAValue] = set()
        seen: set[SSAValue] = set()
        frontier = list(value.owner.operands) if isinstance(value.owner, Operation) else []
        while frontier:
            v = frontier.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in self.matched or isinstance(v, BlockArgument):
                found.add(v)
            elif isinstance(v.owner, Operation) and not isinstance(v.owner, dghw.ConstantOp):
                frontier.extend(v.owner.operands)
        return frozenset(found)

    def readings(self, value: SSAValue, shape: tuple[int, ...]) -> list[Layout]:
        """The layouts in which `value` can hold a tensor of the frozen model's `shape`.

        The device keeps feature maps NHWC; a reshape of an NHWC map (a flatten)
        holds its elements in (H, W, C) order, the lowering having permuted the
        consumer's weights to match. Only the tensor types say which applies, and
        for a square map more than one fits: `reading` takes the best.
        """
        array = self.values[value]
        layouts: list[Layout] = []
        if array.shape == shape:
            layouts.append(SAME)
        if array.ndim == 4 and tuple(array.shape[i] for i in NCHW_FROM_NHWC) == shape:
            layouts.append(NHWC)
        owner = value.owner
        if isinstance(owner, dghw.ReshapeOp) and owner.input in self.values:
            feature_map = self.values[owner.input]
            if feature_map.ndim == 4 and array.size == math.prod(shape):
                layouts.append(FlattenedNhwc(feature_map.shape))
        # A reshape of a rank-4 value that is not a flatten (attention heads merged back
        # into [B, S, D]) keeps torch's order: only a layout giving the model's shape fits.
        return [layout for layout in layouts if layout.to_model(array).shape == shape]

    def reading(self, value: SSAValue, point: QuantizationPoint) -> np.ndarray:
        """`value` in the frozen model's layout, in the layout agreeing best; remembered."""
        layouts = self.readings(value, point.values.shape)

        def differences(layout: Layout) -> int:
            return int(np.count_nonzero(layout.to_model(self.values[value]) != point.values))

        self.layouts[value] = min(layouts, key=differences)
        return self.layouts[value].to_model(self.values[value])

    def own_result(self, value: SSAValue) -> np.ndarray:
        """`value` recomputed by its layer's ops from the fake-quant model's values.

        The layer reads what the frozen model computed for the earlier layers,
        so its difference from the fake-quant model is its own error, not one it
        inherited.
        """
        if isinstance(value, BlockArgument):
            return self.values[value]
        computed: dict[SSAValue, np.ndarray] = {}

        def operand(v: SSAValue) -> np.ndarray:
            if v in computed:
                return computed[v]
            if v in self.matched:
                array = self.values[v]
                return self.layouts[v].to_device(self.matched[v].values, array.shape)
            return self.values[v]  # a constant

        for op in self.layer_ops(value):
            results = self._interpreter.run_op(op, tuple(operand(v) for v in op.operands))
            computed.update(zip(op.results, results, strict=True))
        return computed[value]

    def _take(self, value: SSAValue, point: QuantizationPoint) -> SSAValue:
        self.matched[value] = point
        self.by_point[point.node_name] = value
        return value

    def layer_ops(self, value: SSAValue) -> list[Operation]:
        """The ops computing `value` from other matched values, inputs and constants."""
        ops: list[Operation] = []
        frontier = [value]
        while frontier:
            v = frontier.pop()
            if isinstance(v, BlockArgument) or (v is not value and v in self.matched):
                continue
            op = v.owner
            if not isinstance(op, Operation) or isinstance(op, dghw.ConstantOp) or op in ops:
                continue
            ops.append(op)
            frontier.extend(op.operands)
        order = {op: i for i, op in enumerate(value.owner.parent_block().ops)} if ops else {}  # type: ignore[union-attr]
        return sorted(ops, key=lambda op: order.get(op, 0))


def sqnr_db(signal: np.ndarray, approximation: np.ndarray) -> float:
    """10 log10(sum signal^2 / sum (approximation - signal)^2); inf when they are equal."""
    s = signal.astype(np.float64)
    noise = float(np.sum((approximation.astype(np.float64) - s) ** 2))
    power = float(np.sum(s**2))
    if noise == 0:
        return math.inf
    if power == 0:
        return -math.inf
    return 10 * math.log10(power / noise)


def layer_row(
    index: int,
    point: QuantizationPoint,
    device: DeviceValues,
    value: SSAValue,
    float_value: np.ndarray | None,
    saturation: SaturationCounter,
) -> LayerRow:
    array = device.reading(value, point)
    steps = np.abs(array.astype(np.int64) - point.values.astype(np.int64))
    own = device.layouts[value].to_model(device.own_result(value))
    own_steps = np.abs(own.astype(np.int64) - point.values.astype(np.int64))
    dequantized = (array.astype(np.float64) - point.zero_point) * point.scale
    fake_quant = (point.values.astype(np.float64) - point.zero_point) * point.scale
    ops = device.layer_ops(value) if isinstance(value.owner, Operation) else []
    counts = [saturation.counts.get(op, Saturation(0, 0, 0)) for op in ops]
    saturated = sum(c.total for c in counts)
    elements = max((c.elements for c in counts), default=0)
    module_path, where = source_of(value.owner) if isinstance(value.owner, Operation) else ("", "")
    if isinstance(value, BlockArgument):
        layer = f"input #{value.index}"
    else:
        layer = module_path or point.module_path or point.op
    return LayerRow(
        index=index,
        layer=layer,
        source=where or (f"{point.file}:{point.line}" if point.file else ""),
        op=point.op,
        device_ops=tuple(op.name.removeprefix("dghw.") for op in ops),
        scale=point.scale,
        elements=int(array.size),
        sqnr_float_db=None if float_value is None else sqnr_db(float_value, dequantized),
        sqnr_fake_quant_db=sqnr_db(fake_quant, dequantized),
        max_steps=int(steps.max(initial=0)),
        own_steps=int(own_steps.max(initial=0)),
        differing=float(np.count_nonzero(steps) / max(steps.size, 1)),
        saturated=saturated,
        saturated_share=saturated / elements if elements else 0.0,
    )


# -- presentation -------------------------------------------------------------

COLUMNS = (
    "#",
    "layer",
    "source",
    "op",
    "device ops",
    "SQNR float",
    "SQNR fq",
    "max Δ",
    "own Δ",
    "differ",
    "saturated",
)


def _db(value: float | None) -> str:
    if value is None:
        return "-"
    return "exact" if value == math.inf else f"{value:.1f} dB"


def _share(value: float) -> str:
    """A percentage that does not round a few differing elements away to 0.00%."""
    return "<0.01%" if 0 < value < 0.0001 else f"{value:.2%}"


def format_report(report: FidelityReport) -> str:
    """The report as an aligned text table, followed by its verdict."""
    lines = [
        (
            str(row.index),
            row.layer,
            os.path.basename(row.source) if row.source else "-",
            row.op,
            "+".join(row.device_ops) or "-",
            _db(row.sqnr_float_db),
            _db(row.sqnr_fake_quant_db),
            str(row.max_steps),
            str(row.own_steps),
            _share(row.differing),
            f"{row.saturated} ({_share(row.saturated_share)})" if row.saturated else "0",
        )
        for row in report.rows
    ]
    widths = [max(len(c), *(len(line[i]) for line in lines)) for i, c in enumerate(COLUMNS)]
    right = {0, 5, 6, 7, 8, 9, 10}

    def render(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    text = [render(COLUMNS), render(["-" * w for w in widths]), *(render(line) for line in lines)]
    text.append(verdict(report))
    if report.unmatched:
        text.append(f"not compared (no device value found): {', '.join(report.unmatched)}")
    return "\n".join(text)


def verdict(report: FidelityReport) -> str:
    first = report.first_bad
    if first is None:
        return f"every layer's own error is within {MAX_STEPS_OK} step of the fake-quant model"
    where = f" at {first.source}" if first.source else ""
    return (
        f"first layer whose own error exceeds {MAX_STEPS_OK} step: #{first.index} {first.layer}"
        f"{where} (max {first.own_steps} steps on the fake-quant model's inputs, "
        f"{first.max_steps} end to end; {_share(first.differing)} of its elements differ)"
    )


PLOT_EXTRA_HINT = "pip install 'dg[plot]' (or: pip install matplotlib)"


def plot_report(report: FidelityReport, path: str | os.PathLike[str]) -> None:
    """SQNR and saturation per layer as a PNG (matplotlib, the `plot` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(f"FidelityReport.plot needs matplotlib: {PLOT_EXTRA_HINT}") from error

    rows = report.rows
    x = np.arange(len(rows))
    labels = [f"{row.index} {row.layer}" for row in rows]
    finite = [
        v
        for row in rows
        for v in (row.sqnr_float_db, row.sqnr_fake_quant_db)
        if v is not None and math.isfinite(v)
    ]
    ceiling = (max(finite) if finite else 40.0) + 10.0  # where "exact" (inf) is drawn

    def shown(values: Sequence[float | None]) -> list[float]:
        return [math.nan if v is None else min(v, ceiling) for v in values]

    figure, (top, bottom) = plt.subplots(
        2, 1, sharex=True, figsize=(max(6.0, 0.6 * len(rows) + 2), 6)
    )
    top.plot(x, shown([r.sqnr_fake_quant_db for r in rows]), "o-", label="vs fake-quant model")
    if any(r.sqnr_float_db is not None for r in rows):
        top.plot(x, shown([r.sqnr_float_db for r in rows]), "s-", label="vs float model")
    top.axhline(ceiling, color="grey", linestyle=":", linewidth=0.8)
    top.annotate(
        "exact (= fake-quant)",
        (1, ceiling),
        xycoords=("axes fraction", "data"),
        xytext=(-4, 4),
        textcoords="offset points",
        ha="right",
        color="grey",
    )
    top.set_ylim(top=ceiling + 0.12 * ceiling)
    top.set_ylabel("SQNR of the device (dB)")
    top.set_title("Where does my accuracy go? (per layer)")
    top.legend(loc="lower left")
    bottom.bar(x, [100 * r.saturated_share for r in rows], color="tab:red")
    bottom.set_ylabel("saturated values (%)")
    first = report.first_bad
    if first is not None:
        for axis in (top, bottom):
            axis.axvline(first.index, color="tab:red", linestyle="--", linewidth=1)
        top.annotate(
            f"first > {MAX_STEPS_OK} step",
            (first.index, ceiling),
            xytext=(4, -14),
            textcoords="offset points",
            color="tab:red",
        )
    bottom.set_xticks(x, labels, rotation=45, ha="right")
    figure.tight_layout()
    figure.savefig(os.fspath(path), format="png", dpi=100)
    plt.close(figure)
