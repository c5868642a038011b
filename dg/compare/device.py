"""The device side of a comparison: its int8 values and which quantization point each one is."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from dg.compare.frozen import QuantizationPoint
from dg.dialects import dghw
from dg.lowering.diagnostics import source_of
from dg.runtime.interpreter import ValueRecorder
from dg.runtime.program import Program

NCHW_FROM_NHWC = (0, 3, 1, 2)
NHWC_FROM_NCHW = (0, 2, 3, 1)


def is_int8(t: Attribute) -> bool:
    return (
        isinstance(t, TensorType)
        and isinstance(t.element_type, IntegerType)
        and t.element_type.width.data == 8
    )


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
        self._interpreter = program.device.interpreter

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
        # A repeated block's layers share source lines: its module path tells them apart.
        same_module = [v for v in fitting if source_of(v.owner)[0] == point.module_path]  # type: ignore[arg-type]
        fitting = same_module or fitting
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
