"""The dghw interpreter: the bit-accurate device model of the dg accelerator.

Every dghw op has one implementation on xDSL's interpreter framework; values
are numpy arrays (int8 / int32). `docs/dghw.md` is the specification each
implementation follows; `test/reference/dghw_reference.py` is an independent
scalar transcription of it that the tests compare against.

The accumulating ops run their integer dot products as float32 GEMMs, because
BLAS is the fastest dot product numpy has. This is exact, not approximate:
every partial sum a float32 GEMM can form is kept below 2^24 by splitting the
reduction axis into chunks (see `exact_integer_gemm`), and the chunks are
added in int64.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerType, ModuleOp, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import CallableOpInterface
from xdsl.utils.exceptions import InterpretationError

from dg.dialects import dghw

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1

F32_EXACT_LIMIT = 1 << 24
"""Every integer of magnitude <= 2^24 is a float32; 2^24 + 1 is the first one that is not."""

NUMPY_DTYPES: dict[int, type[np.signedinteger[Any]]] = {8: np.int8, 32: np.int32}
"""numpy dtype of each dghw element width (dghw integers are signed)."""

_T = TypeVar("_T")


def numpy_dtype(t: Attribute) -> np.dtype[Any]:
    """The numpy dtype holding the elements of the dghw tensor type `t`."""
    assert isinstance(t, TensorType) and isinstance(t.element_type, IntegerType)
    return np.dtype(NUMPY_DTYPES[t.element_type.width.data])


def centered_magnitude_bound(dtype: np.dtype[Any], zero_point: int) -> int:
    """The largest |x - zero_point| over every value x of `dtype` (a static worst case)."""
    info = np.iinfo(dtype)
    return max(abs(int(info.min) - zero_point), abs(int(info.max) - zero_point))


def exact_chunk_length(x_bound: int, w_bound: int) -> int:
    """The longest reduction a float32 GEMM computes exactly for these operand bounds.

    Every product (x - x_zp)(w - w_zp) is an integer of magnitude <= x_bound * w_bound,
    and every partial sum a GEMM forms over a chunk of `n` terms, in whatever order or
    blocking the BLAS chooses (FMA or not), is a sum of a subset of those products, so
    its magnitude is <= n * x_bound * w_bound. While that stays below 2^24, each
    intermediate is an integer float32 represents exactly, so no float operation
    rounds and the chunk's result is the exact integer sum.
    """
    product_bound = x_bound * w_bound
    if product_bound == 0:
        return 1 << 62  # every product is 0: any length is exact
    return max(1, (F32_EXACT_LIMIT - 1) // product_bound)


def exact_integer_gemm(lhs: np.ndarray, rhs: np.ndarray, chunk: int) -> np.ndarray:
    """lhs @ rhs as int64, for float32 integer matrices, exact when `chunk` is exact.

    `chunk` comes from `exact_chunk_length`; chunk results are exact integers
    below 2^24 and are summed in int64, which cannot overflow for any K numpy can
    hold (K * 255 * 255 < 2^63).
    """
    k = lhs.shape[1]
    if k <= chunk:
        return (lhs @ rhs).astype(np.int64)
    acc = np.zeros((lhs.shape[0], rhs.shape[1]), dtype=np.int64)
    for start in range(0, k, chunk):
        acc += (lhs[:, start : start + chunk] @ rhs[start : start + chunk]).astype(np.int64)
    return acc


@dataclass(frozen=True)
class GemmWeights:
    """An accumulating op's weights and bias, prepared once for exact float32 GEMMs."""

    matrix: np.ndarray
    """(w - weight_zp) as a float32 [K, N] matrix, rows in the op's patch order."""
    bias: np.ndarray
    """int64 [N]."""
    chunk: int
    """Reduction length one float32 GEMM computes exactly (`exact_chunk_length`)."""
    may_overflow: bool
    """Whether some accumulator can leave int32; when False the range check is skipped."""

    @staticmethod
    def prepare(centered_weight: np.ndarray, bias: np.ndarray, x_bound: int) -> GemmWeights:
        """`centered_weight` is the int64 [K, N] matrix of w - weight_zp."""
        w_abs = np.abs(centered_weight)
        w_bound = int(w_abs.max(initial=0))
        bias64 = bias.astype(np.int64)
        # |acc[n]| <= |bias[n]| + x_bound * sum_k |w[k, n]|: exact bound, computed once.
        acc_bound = np.abs(bias64) + x_bound * w_abs.sum(axis=0)
        return GemmWeights(
            matrix=np.ascontiguousarray(centered_weight, dtype=np.float32),
            bias=bias64,
            chunk=exact_chunk_length(x_bound, w_bound),
            may_overflow=bool(acc_bound.max(initial=0) > INT32_MAX),
        )

    def accumulate(self, patches: np.ndarray, op: Operation) -> np.ndarray:
        """bias + patches @ matrix as int32, for float32 [M, K] centered patches."""
        acc = exact_integer_gemm(patches, self.matrix, self.chunk)
        acc += self.bias
        if self.may_overflow:
            check_int32(acc, op)
        return acc.astype(np.int32)


def check_int32(acc: np.ndarray, op: Operation) -> None:
    """TOSA leaves an int32 overflow unpredictable; the device model reports it."""
    if acc.size and (acc.min() < INT32_MIN or acc.max() > INT32_MAX):
        raise InterpretationError(
            f"{op.name}: result {acc.min()}..{acc.max()} overflows int32 "
            f"(result %{op.results[0].name_hint or '?'})"
        )


def defined_by_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, dghw.ConstantOp)


def conv_patches(
    x: np.ndarray, input_zp: int, kernel: tuple[int, int], stride: Sequence[int], pad: Sequence[int]
) -> tuple[np.ndarray, tuple[int, int, int]]:
    """im2col of an NHWC int8 map: float32 [N*OH*OW, C*KH*KW] of (x - input_zp), and (N, OH, OW).

    Centering before padding makes the padded positions 0, i.e. reading input_zp.
    Columns are ordered (c, ky, kx), the order `sliding_window_view` appends its
    window axes in; the weight matrix is permuted to match, once.
    """
    top, bottom, left, right = pad
    centered = x.astype(np.float32)
    centered -= input_zp
    padded = np.pad(centered, ((0, 0), (top, bottom), (left, right), (0, 0)))
    windows = sliding_window_view(padded, kernel, axis=(1, 2))[:, :: stride[0], :: stride[1]]
    n, oh, ow = windows.shape[:3]
    return windows.reshape(n * oh * ow, -1), (n, oh, ow)


@register_impls
@dataclass
class DghwFunctions(InterpreterFunctions):
    """Implementations of the dghw ops on numpy arrays.

    Per-op constants (constant tensors, GEMM weights, rescale parameters) are
    derived once and cached by op, so an instance must only be used with a module
    that is not mutated afterwards.
    """

    _cache: dict[Operation, Any] = field(default_factory=dict[Operation, Any])

    def cached(self, op: Operation, factory: Callable[[], _T]) -> _T:
        if op not in self._cache:
            self._cache[op] = factory()
        return cast(_T, self._cache[op])

    @impl(dghw.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: dghw.ConstantOp, args: tuple[()]
    ) -> tuple[np.ndarray]:
        def read() -> np.ndarray:
            t = op.result.type
            dtype = numpy_dtype(t).newbyteorder("<")  # builtin dense bytes are little-endian
            data = np.frombuffer(op.value.data.data, dtype=dtype)
            return data.reshape(cast(TensorType[Attribute], t).get_shape()).astype(
                dtype.newbyteorder("="), copy=False
            )

        return (self.cached(op, read),)

    def gemm_weights(
        self,
        op: dghw.AccumulateOp,
        weight: np.ndarray,
        bias: np.ndarray,
        to_matrix: Callable[[np.ndarray], np.ndarray],
    ) -> GemmWeights:
        """Prepared weights of `op`; cached when they are constants (always, after lowering)."""
        x_bound = centered_magnitude_bound(np.dtype(np.int8), op.input_zp.value.data)

        def prepare() -> GemmWeights:
            centered = weight.astype(np.int64) - op.weight_zp.value.data
            return GemmWeights.prepare(to_matrix(centered), bias, x_bound)

        if defined_by_constant(op.weight) and defined_by_constant(op.bias):
            return self.cached(op, prepare)
        return prepare()

    @impl(dghw.Conv2dOp)
    def run_conv2d(
        self, interpreter: Interpreter, op: dghw.Conv2dOp, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        x, weight, bias = args
        out_channels, kh, kw, in_channels = weight.shape
        # OHWI -> [(c, ky, kx), o], the column order of `conv_patches`.
        weights = self.gemm_weights(
            op, weight, bias, lambda w: w.transpose(3, 1, 2, 0).reshape(-1, out_channels)
        )
        patches, (n, oh, ow) = conv_patches(
            x, op.input_zp.value.data, (kh, kw), op.stride.get_values(), op.pad.get_values()
        )
        return (weights.accumulate(patches, op).reshape(n, oh, ow, out_channels),)

    @impl(dghw.FullyConnectedOp)
    def run_fully_connected(
        self, interpreter: Interpreter, op: dghw.FullyConnectedOp, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        x, weight, bias = args
        weights = self.gemm_weights(op, weight, bias, lambda w: w.T)
        rows = x.reshape(-1, x.shape[-1]).astype(np.float32)
        rows -= op.input_zp.value.data
        out = weights.accumulate(rows, op)
        return (out.reshape(*x.shape[:-1], weight.shape[0]),)

    @impl(dghw.RescaleOp)
    def run_rescale(
        self, interpreter: Interpreter, op: dghw.RescaleOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        multiplier, shift, rounding = self.cached(op, lambda: rescale_parameters(op))
        # int64 cannot overflow: |x - zp| <= 2^32, m < 2^31, rounding <= 2^61.
        v = x.astype(np.int64)
        v -= op.input_zp.value.data
        v *= multiplier
        v += rounding
        v >>= shift  # arithmetic shift: floor division by 2^shift
        v += op.output_zp.value.data
        np.clip(v, op.clamp_min.value.data, op.clamp_max.value.data, out=v)
        return (v.astype(numpy_dtype(op.result.type)),)

    @impl(dghw.AddOp)
    def run_add(
        self, interpreter: Interpreter, op: dghw.AddOp, args: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray]:
        lhs, rhs = args
        total = lhs.astype(np.int64) + rhs
        check_int32(total, op)
        return (total.astype(np.int32),)

    @impl(dghw.ReshapeOp)
    def run_reshape(
        self, interpreter: Interpreter, op: dghw.ReshapeOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        # The result type's batch extent is `?`: keep the runtime one.
        item_shape = cast(TensorType[Attribute], op.result.type).get_shape()[1:]
        return (x.reshape(x.shape[0], *item_shape),)

    @impl(dghw.TransposeOp)
    def run_transpose(
        self, interpreter: Interpreter, op: dghw.TransposeOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (np.transpose(x, op.perm.get_values()),)


def rescale_parameters(op: dghw.RescaleOp) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Multiplier, shift and rounding term as int64 arrays (length 1 or one per channel)."""
    multiplier = np.array(op.multiplier.get_values(), dtype=np.int64)
    shift = np.array(op.shift.get_values(), dtype=np.int64)
    return multiplier, shift, np.left_shift(np.int64(1), shift - 1)


class DeviceModel:
    """A dghw module ready to run one of its functions on numpy arrays.

    Holds one interpreter, so the per-op caches persist across calls: the
    first call pays for reading weights, later calls only compute.
    """

    def __init__(self, module: ModuleOp, function: str = "main"):
        self.interpreter = Interpreter(module)
        self.interpreter.register_implementations(FuncFunctions())
        self.interpreter.register_implementations(DghwFunctions())
        self.function = find_function(module, function)
        trait = self.function.get_trait(CallableOpInterface)
        assert trait is not None
        self.argument_types = trait.get_argument_types(self.function)

    def __call__(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        check_arguments(self.function.sym_name.data, self.argument_types, arrays)
        results = self.interpreter.call_op(self.function, tuple(arrays))
        return [np.ascontiguousarray(r) for r in results]


def find_function(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise InterpretationError(f"the module has no function @{name}")


def describe_type(t: Attribute) -> str:
    assert isinstance(t, TensorType)
    dims = "x".join("?" if d == DYNAMIC_INDEX else str(d) for d in t.get_shape())
    return f"tensor<{dims}x{t.element_type}>"


def check_arguments(
    function: str, types: Sequence[Attribute], arrays: Sequence[np.ndarray]
) -> None:
    """Raise a ValueError unless `arrays` fit the argument `types` of `@function`.

    Dynamic extents (the batch axis) take the arrays' extent, which must be the
    same for every argument: the device runs one batch at a time.
    """
    if len(arrays) != len(types):
        raise ValueError(f"@{function} takes {len(types)} argument(s), got {len(arrays)}")
    batch: int | None = None
    for i, (array, t) in enumerate(zip(arrays, types, strict=True)):
        where = f"argument #{i} of @{function} ({describe_type(t)})"
        if not isinstance(array, np.ndarray):
            raise ValueError(f"{where}: expected a numpy array, got {type(array).__name__}")
        if array.dtype != numpy_dtype(t):
            raise ValueError(f"{where}: expected {numpy_dtype(t)} elements, got {array.dtype}")
        shape = cast(TensorType[Attribute], t).get_shape()
        if array.ndim != len(shape) or any(
            d != DYNAMIC_INDEX and d != a for d, a in zip(shape, array.shape, strict=True)
        ):
            raise ValueError(f"{where}: got an array of shape {list(array.shape)}")
        for d, a in zip(shape, array.shape, strict=True):
            if d == DYNAMIC_INDEX:
                if batch is not None and a != batch:
                    raise ValueError(f"{where}: batch extent {a} differs from {batch}")
                batch = a


def run_dghw(
    module: ModuleOp, arrays: Sequence[np.ndarray], function: str = "main"
) -> list[np.ndarray]:
    """Run `@function` (default `@main`) of a dghw module on int8/int32 numpy arrays."""
    return DeviceModel(module, function)(arrays)
