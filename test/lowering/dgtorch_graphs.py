"""Random dgtorch test models, written as convert_pt2e leaves them, with their float reference.

`DgtorchGraph` writes a `func.func @main` op by op (q/dq around every
activation, integer weight and bias constants behind `dequantize_per_channel`)
and, alongside, evaluates the same model in float64 on a concrete batch with
torch's quantization semantics: the reference a compiled program must match
within one output step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

QMIN, QMAX = -128, 127
WEIGHT_QMIN, WEIGHT_QMAX = -127, 127
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True)
class Value:
    """A float value of the graph: its SSA name, per-item shape and reference values."""

    name: str
    shape: tuple[int, ...]
    """Without the batch axis, which is dynamic in the IR."""
    real: np.ndarray
    """Reference values for the whole batch (float64)."""
    quantized: np.ndarray | None = None
    """The stored integers, when this value is the dequantize of a quantized one."""
    scale: float | None = None
    zero_point: int | None = None


def tensor_type(shape: tuple[int, ...], element: str, batch: bool = True) -> str:
    dims = ("?", *map(str, shape)) if batch else tuple(map(str, shape))
    return f"tensor<{'x'.join(dims)}x{element}>"


def _float(value: float) -> str:
    return f"{value:.17e}"


def _f64_array(values: np.ndarray) -> str:
    return "array<f64: " + ", ".join(_float(v) for v in values) + ">"


def _i64_array(values: list[int] | tuple[int, ...] | np.ndarray) -> str:
    return "array<i64: " + ", ".join(str(int(v)) for v in values) + ">"


def _dense(array: np.ndarray, element: str) -> str:
    raw = np.ascontiguousarray(array, dtype=f"<i{array.dtype.itemsize}").tobytes()
    return f'dense<"0x{raw.hex().upper()}"> : {tensor_type(array.shape, element, batch=False)}'


def quantize(real: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """torch's quantize_per_tensor: clamp(round_half_even(x / scale) + zp)."""
    return np.clip(np.rint(real / scale) + zero_point, QMIN, QMAX).astype(np.int8)


def grid_for(real: np.ndarray, relu: bool = False) -> tuple[float, int]:
    """A scale and zero point covering `real`'s range (as an observer would choose them)."""
    lo, hi = min(float(real.min()), 0.0), max(float(real.max()), 0.0)
    if relu:
        lo = 0.0
    scale = max((hi - lo) / (QMAX - QMIN), 1e-6)
    zero_point = int(np.clip(round(QMIN - lo / scale), QMIN, QMAX))
    return scale, zero_point


class DgtorchGraph:
    """Builds one dgtorch function and its float64 reference side by side."""

    def __init__(self, rng: np.random.Generator, batch: int = 16):
        self.rng = rng
        self.batch = batch
        self.lines: list[str] = []
        self.arguments: list[Value] = []
        self.stored_inputs: list[np.ndarray] = []
        """The i8 integers of every argument: what the host passes the device."""
        self.counter = 0

    def _name(self, hint: str) -> str:
        self.counter += 1
        return f"%{hint}{self.counter}"

    def _emit(self, line: str) -> None:
        self.lines.append("  " + line)

    # -- activations ---------------------------------------------------------------

    def input(self, shape: tuple[int, ...], scale: float, zero_point: int) -> Value:
        """A graph argument, quantized and dequantized; its stored integers are random."""
        name = f"%arg{len(self.arguments)}"
        stored = self.rng.integers(QMIN, QMAX + 1, size=(self.batch, *shape)).astype(np.int8)
        argument = Value(name, shape, (stored.astype(np.float64) - zero_point) * scale)
        self.arguments.append(argument)
        self.stored_inputs.append(stored)
        return self._quantize_dequantize(argument, scale, zero_point, stored)

    def quantize(self, value: Value, relu: bool = False) -> Value:
        """Quantize `value` on a grid fitted to its range (the partition's output quantize)."""
        scale, zero_point = grid_for(value.real, relu)
        return self.quantize_to(value, scale, zero_point)

    def quantize_to(self, value: Value, scale: float, zero_point: int) -> Value:
        return self._quantize_dequantize(
            value, scale, zero_point, quantize(value.real, scale, zero_point)
        )

    def _quantize_dequantize(
        self, value: Value, scale: float, zero_point: int, stored: np.ndarray
    ) -> Value:
        params = (
            f"{{scale = {_float(scale)} : f64, zero_point = {zero_point} : i64, "
            f"quant_min = {QMIN} : i64, quant_max = {QMAX} : i64}}"
        )
        float_type, int_type = tensor_type(value.shape, "f32"), tensor_type(value.shape, "i8")
        q, dq = self._name("q"), self._name("dq")
        self._emit(
            f"{q} = dgtorch.quantize_per_tensor {value.name} {params} : {float_type} -> {int_type}"
        )
        self._emit(
            f"{dq} = dgtorch.dequantize_per_tensor {q} {params} : {int_type} -> {float_type}"
        )
        real = (stored.astype(np.float64) - zero_point) * scale
        return Value(dq, value.shape, real, stored, scale, zero_point)

    # -- parameters ----------------------------------------------------------------

    def _weight(self, shape: tuple[int, ...]) -> tuple[str, np.ndarray, np.ndarray]:
        """An i8 per-channel weight: (dequantized SSA name, integers, scales)."""
        values = self.rng.integers(WEIGHT_QMIN, WEIGHT_QMAX + 1, size=shape).astype(np.int8)
        scales = self.rng.uniform(0.002, 0.02, size=shape[0])
        return (
            self._dequantized_constant(values, scales, "i8", WEIGHT_QMIN, WEIGHT_QMAX),
            values,
            scales,
        )

    def _bias(self, input_scale: float, weight_scales: np.ndarray) -> tuple[str, np.ndarray]:
        values = self.rng.integers(-2000, 2001, size=weight_scales.shape).astype(np.int32)
        scales = input_scale * weight_scales
        name = self._dequantized_constant(values, scales, "i32", INT32_MIN, INT32_MAX)
        return name, values * scales

    def _dequantized_constant(
        self, values: np.ndarray, scales: np.ndarray, element: str, qmin: int, qmax: int
    ) -> str:
        constant, dq = self._name("c"), self._name("cd")
        int_type = tensor_type(values.shape, element, batch=False)
        self._emit(
            f"{constant} = dgtorch.constant {{value = {_dense(values, element)}}} : {int_type}"
        )
        zeros = _i64_array([0] * len(scales))
        self._emit(
            f"{dq} = dgtorch.dequantize_per_channel {constant} {{scales = {_f64_array(scales)}, "
            f"zero_points = {zeros}, axis = 0 : i64, quant_min = {qmin} : i64, "
            f"quant_max = {qmax} : i64}} : {int_type} -> "
            f"{tensor_type(values.shape, 'f32', batch=False)}"
        )
        return dq

    # -- computations --------------------------------------------------------------

    def conv2d(
        self,
        x: Value,
        out_channels: int,
        kernel: tuple[int, int],
        stride: tuple[int, int] = (1, 1),
        padding: tuple[int, int] = (0, 0),
        bias: bool = True,
    ) -> Value:
        assert x.scale is not None
        in_channels, height, width = x.shape
        w_name, w, w_scales = self._weight((out_channels, in_channels, *kernel))
        real_w = w * w_scales[:, None, None, None]
        operands = [x.name, w_name]
        real_b = None
        if bias:
            b_name, real_b = self._bias(x.scale, w_scales)
            operands.append(b_name)
        real = F.conv2d(
            torch.from_numpy(x.real),
            torch.from_numpy(real_w),
            None if real_b is None else torch.from_numpy(real_b),
            stride=stride,
            padding=padding,
        ).numpy()
        shape = real.shape[1:]
        name = self._name("conv")
        types = [tensor_type(x.shape, "f32"), tensor_type(real_w.shape, "f32", batch=False)]
        if bias:
            types.append(tensor_type((out_channels,), "f32", batch=False))
        self._emit(
            f"{name} = dgtorch.conv2d {', '.join(operands)} {{stride = {_i64_array(stride)}, "
            f"padding = {_i64_array(padding)}, dilation = array<i64: 1, 1>, groups = 1 : i64}} "
            f": ({', '.join(types)}) -> {tensor_type(shape, 'f32')}"
        )
        return Value(name, shape, real)

    def linear(self, x: Value, out_features: int, bias: bool = True) -> Value:
        assert x.scale is not None
        w_name, w, w_scales = self._weight((out_features, x.shape[-1]))
        real = x.real @ (w * w_scales[:, None]).T
        operands = [x.name, w_name]
        types = [tensor_type(x.shape, "f32"), tensor_type(w.shape, "f32", batch=False)]
        if bias:
            b_name, real_b = self._bias(x.scale, w_scales)
            real = real + real_b
            operands.append(b_name)
            types.append(tensor_type((out_features,), "f32", batch=False))
        shape = (*x.shape[:-1], out_features)
        name = self._name("linear")
        self._emit(
            f"{name} = dgtorch.linear {', '.join(operands)} : ({', '.join(types)}) -> "
            f"{tensor_type(shape, 'f32')}"
        )
        return Value(name, shape, real)

    def relu(self, x: Value) -> Value:
        name = self._name("relu")
        t = tensor_type(x.shape, "f32")
        self._emit(f"{name} = dgtorch.relu {x.name} : {t} -> {t}")
        return Value(name, x.shape, np.maximum(x.real, 0.0))

    def add(self, a: Value, b: Value) -> Value:
        name = self._name("add")
        t = tensor_type(a.shape, "f32")
        self._emit(f"{name} = dgtorch.add {a.name}, {b.name} : ({t}, {t}) -> {t}")
        return Value(name, a.shape, a.real + b.real)

    def flatten(self, x: Value) -> Value:
        name = self._name("flat")
        shape = (int(np.prod(x.shape)),)
        self._emit(
            f"{name} = dgtorch.flatten {x.name} {{start_dim = 1 : i64, end_dim = -1 : i64}} : "
            f"{tensor_type(x.shape, 'f32')} -> {tensor_type(shape, 'f32')}"
        )
        # Flatten keeps its input's grid: a linear after it takes that as its input scale.
        stored = None if x.quantized is None else x.quantized.reshape(self.batch, -1)
        return Value(name, shape, x.real.reshape(self.batch, -1), stored, x.scale, x.zero_point)

    # -- the function --------------------------------------------------------------

    def function(self, *results: Value) -> str:
        """The module text of `@main` returning `results` (dequantized values)."""
        arguments = ", ".join(f"{a.name}: {tensor_type(a.shape, 'f32')}" for a in self.arguments)
        result_types = ", ".join(tensor_type(r.shape, "f32") for r in results)
        body = "\n".join(self.lines)
        names = ", ".join(r.name for r in results)
        return (
            f"func.func @main({arguments}) -> ({result_types}) {{\n{body}\n"
            f"  func.return {names} : {result_types}\n}}\n"
        )
