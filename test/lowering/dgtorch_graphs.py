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
    ties: np.ndarray | None = None
    """Where the quantize that made `quantized` rounded an exact tie (x.5 steps): torch rounds
    those to even, the device's TOSA rounding up, so either neighbour is right there."""


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


FIXED_GRID = (1.0 / 256, -128)
"""The output grid of softmax and sigmoid (dgq.FIXED_GRID_SCALE, FIXED_GRID_ZERO_POINT)."""


def quantize(real: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """torch's quantize_per_tensor: clamp(round_half_even(x / scale) + zp)."""
    return np.clip(np.rint(real / scale) + zero_point, QMIN, QMAX).astype(np.int8)


def rounding_ties(real: np.ndarray, scale: float) -> np.ndarray:
    """Where real / scale lies (within float64 noise) exactly halfway between two steps."""
    steps = real / scale
    return np.abs(steps - np.floor(steps) - 0.5) < 1e-9


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
        ties = rounding_ties(value.real, scale)
        return Value(dq, value.shape, real, stored, scale, zero_point, ties)

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
        groups: int = 1,
    ) -> Value:
        assert x.scale is not None
        in_channels, height, width = x.shape
        w_name, w, w_scales = self._weight((out_channels, in_channels // groups, *kernel))
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
            groups=groups,
        ).numpy()
        shape = real.shape[1:]
        name = self._name("conv")
        types = [tensor_type(x.shape, "f32"), tensor_type(real_w.shape, "f32", batch=False)]
        if bias:
            types.append(tensor_type((out_channels,), "f32", batch=False))
        self._emit(
            f"{name} = dgtorch.conv2d {', '.join(operands)} {{stride = {_i64_array(stride)}, "
            f"padding = {_i64_array(padding)}, dilation = array<i64: 1, 1>, "
            f"groups = {groups} : i64}} "
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

    def _unary(
        self, op: str, x: Value, shape: tuple[int, ...], attrs: str, real: np.ndarray
    ) -> Value:
        name = self._name(op.split("_")[0])
        attributes = f" {{{attrs}}}" if attrs else ""
        self._emit(
            f"{name} = dgtorch.{op} {x.name}{attributes} : {tensor_type(x.shape, 'f32')} -> "
            f"{tensor_type(shape, 'f32')}"
        )
        return Value(name, shape, real)

    def max_pool2d(
        self,
        x: Value,
        kernel: tuple[int, int],
        stride: tuple[int, int],
        ceil_mode: bool = False,
    ) -> Value:
        real = F.max_pool2d(torch.from_numpy(x.real), kernel, stride, ceil_mode=ceil_mode).numpy()
        attrs = (
            f"kernel = {_i64_array(kernel)}, stride = {_i64_array(stride)}, "
            f"padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, "
            f"ceil_mode = {str(ceil_mode).lower()}"
        )
        return self._unary("max_pool2d", x, real.shape[1:], attrs, real)

    def avg_pool2d(
        self,
        x: Value,
        kernel: tuple[int, int],
        stride: tuple[int, int],
        padding: tuple[int, int] = (0, 0),
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> Value:
        real = F.avg_pool2d(
            torch.from_numpy(x.real),
            kernel,
            stride,
            padding,
            ceil_mode=ceil_mode,
            count_include_pad=count_include_pad,
            divisor_override=divisor_override,
        ).numpy()
        attrs = (
            f"kernel = {_i64_array(kernel)}, stride = {_i64_array(stride)}, "
            f"padding = {_i64_array(padding)}, ceil_mode = {str(ceil_mode).lower()}, "
            f"count_include_pad = {str(count_include_pad).lower()}"
        )
        if divisor_override is not None:
            attrs += f", divisor_override = {divisor_override} : i64"
        return self._unary("avg_pool2d", x, real.shape[1:], attrs, real)

    def adaptive_avg_pool2d(self, x: Value, output_size: tuple[int, int]) -> Value:
        real = F.adaptive_avg_pool2d(torch.from_numpy(x.real), output_size).numpy()
        attrs = f"output_size = {_i64_array(output_size)}"
        return self._unary("adaptive_avg_pool2d", x, real.shape[1:], attrs, real)

    def softmax(self, x: Value, dim: int) -> Value:
        real = torch.softmax(torch.from_numpy(x.real), dim).numpy()
        return self._unary("softmax", x, x.shape, f"dim = {dim} : i64", real)

    def sigmoid(self, x: Value) -> Value:
        real = torch.sigmoid(torch.from_numpy(x.real)).numpy()
        return self._unary("sigmoid", x, x.shape, "", real)

    def pad(self, x: Value, pad: tuple[int, ...]) -> Value:
        """F.pad with zeros; `pad` in torch order (last axis first)."""
        real = F.pad(torch.from_numpy(x.real), pad).numpy()
        attrs = f"pad = {_i64_array(pad)}, value = 0.0 : f64"
        return self._unary("pad", x, real.shape[1:], attrs, real)

    def upsample_nearest2d(self, x: Value, size: tuple[int, int], mode: str) -> Value:
        real = F.interpolate(torch.from_numpy(x.real), size=size, mode=mode).numpy()
        return self._unary("upsample_nearest2d", x, real.shape[1:], f'mode = "{mode}"', real)

    def cat(self, values: list[Value], dim: int) -> Value:
        real = np.concatenate([v.real for v in values], axis=dim)
        shape = real.shape[1:]
        name = self._name("cat")
        types = ", ".join(tensor_type(v.shape, "f32") for v in values)
        self._emit(
            f"{name} = dgtorch.cat {', '.join(v.name for v in values)} {{dim = {dim} : i64}} : "
            f"({types}) -> {tensor_type(shape, 'f32')}"
        )
        return Value(name, shape, real)

    def channels_last_flatten(self, x: Value) -> Value:
        """`dg.Flatten`: permute(x, [0, 2, 3, 1]) then flatten(1)."""
        permuted = x.real.transpose(0, 2, 3, 1)
        nhwc = self._unary(
            "permute", x, permuted.shape[1:], "dims = array<i64: 0, 2, 3, 1>", permuted
        )
        flat = permuted.reshape(self.batch, -1)
        attrs = "start_dim = 1 : i64, end_dim = -1 : i64"
        return self._unary("flatten", nhwc, flat.shape[1:], attrs, flat)

    def batch_norm(self, x: Value) -> Value:
        """Inference batch norm over axis 1 with random float32 statistics (some gamma < 0)."""
        channels = x.shape[0]
        gamma = self.rng.uniform(0.5, 2.0, channels) * self.rng.choice([-1.0, 1.0], channels)
        beta = self.rng.uniform(-0.5, 0.5, channels)
        mean = self.rng.uniform(-0.5, 0.5, channels)
        var = self.rng.uniform(0.5, 2.0, channels)
        eps = 1e-5
        names, values = [], []
        for param in (gamma, beta, mean, var):
            as_f32 = param.astype(np.float32)
            values.append(as_f32.astype(np.float64))
            names.append(self._float_constant(as_f32))
        gamma, beta, mean, var = values
        real = (x.real - mean) / np.sqrt(var + eps) * gamma + beta
        name = self._name("bn")
        param_type = tensor_type((channels,), "f32", batch=False)
        self._emit(
            f"{name} = dgtorch.batch_norm {x.name}, {', '.join(names)} "
            f"{{eps = {_float(eps)} : f64}} "
            f": ({tensor_type(x.shape, 'f32')}, {', '.join([param_type] * 4)}) -> "
            f"{tensor_type(x.shape, 'f32')}"
        )
        return Value(name, x.shape, real)

    def _float_constant(self, values: np.ndarray) -> str:
        name = self._name("p")
        raw = np.ascontiguousarray(values, dtype="<f4").tobytes()
        t = tensor_type(values.shape, "f32", batch=False)
        self._emit(
            f'{name} = dgtorch.constant {{value = dense<"0x{raw.hex().upper()}"> : {t}}} : {t}'
        )
        return name

    def flatten(self, x: Value) -> Value:
        name = self._name("flat")
        shape = (int(np.prod(x.shape)),)
        self._emit(
            f"{name} = dgtorch.flatten {x.name} {{start_dim = 1 : i64, end_dim = -1 : i64}} : "
            f"{tensor_type(x.shape, 'f32')} -> {tensor_type(shape, 'f32')}"
        )
        # Flatten keeps its input's grid: a linear after it takes that as its input scale.
        stored = None if x.quantized is None else x.quantized.reshape(self.batch, -1)
        ties = None if x.ties is None else x.ties.reshape(self.batch, -1)
        real = x.real.reshape(self.batch, -1)
        return Value(name, shape, real, stored, x.scale, x.zero_point, ties)

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
