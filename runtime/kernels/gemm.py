"""The GEMM of a conv2d or fully_connected, prepared once (`PreparedGemm`): its weights
(`gemm_weights`), its plan, its rows, and the requantized GEMM a block of rows at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias, cast

import numpy as np
import torch
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Attribute, Operation

from dg.dialects import dghw
from dg.runtime.exact import (
    FLOAT_INT8_GEMM_MACS,
    as_tensor,
    centered_magnitude_bound,
    float32_gemm_into,
    torch_matmul_is_ieee,
)
from dg.runtime.int8_gemm import int8_gemm_into, int8_gemms_enabled, int8_tensor
from dg.runtime.kernels.common import centered_into
from dg.runtime.kernels.gemm_weights import AnyGemmWeights, GemmWeights, Int8GemmWeights
from dg.runtime.kernels.patches import conv_patches, conv_windows, copy_patches
from dg.runtime.kernels.requantization import ScaledGemm, SumRequantization
from dg.runtime.threads import run_blocks_in_parts


@dataclass(frozen=True)
class AccumulatePlan:
    """What an accumulate op's kernels read from its op on every run, read once."""

    input_zp: int
    stride: tuple[int, ...]
    """A convolution's (sy, sx); () for fully_connected."""
    pad: tuple[int, ...]
    """A convolution's (top, bottom, left, right); () for fully_connected."""
    shape: tuple[int, ...]
    """The result type's shape, `DYNAMIC_INDEX` where x's extent goes (`result_shape`)."""

    def result_shape(self, x: np.ndarray) -> tuple[int, ...]:
        """The result's shape for the input x: x's extents where it is dynamic (the batch
        axis alone, in every lowered module, is filled without a loop)."""
        shape = self.shape
        if shape[0] == DYNAMIC_INDEX and DYNAMIC_INDEX not in shape[1:]:
            return (x.shape[0], *shape[1:])
        return tuple(x.shape[i] if d == DYNAMIC_INDEX else d for i, d in enumerate(shape))

    @staticmethod
    def prepare(op: dghw.AccumulateOp) -> AccumulatePlan:
        conv = isinstance(op, dghw.Conv2dOp | dghw.DepthwiseConv2dOp)
        return AccumulatePlan(
            op.input_zp.value.data,
            tuple(op.stride.get_values()) if conv else (),
            tuple(op.pad.get_values()) if conv else (),
            tuple(cast(TensorType[Attribute], op.result.type).get_shape()),
        )


FUSED_BLOCK = 1 << 16
"""Sums per block of a requantized GEMM (`PreparedGemm.requantized`): the block's int32 or
float32 sums (256 KB) and float64 scratch (512 KB) stay in cache between the GEMM and the
requantization."""


SCALED_GEMM_MAX_K = 64
"""The longest rows `ScaledGemm` takes for a result of more than `SCALED_GEMM_SMALL_RESULT`
elements: its float64 GEMM costs about twice the float32 one, which its three fewer passes
over the sums repay only for short rows (one thread, alone: [256, 8] x [8, 32] 26 -> 16
us, [256, 32] x [32, 32] 32 -> 24, [256, 64] x [64, 32] 37 -> 34; [64, 144] x [144, 16]
13 -> 14, [512, 144] x [144, 32] 118 -> 164)."""

SCALED_GEMM_SMALL_RESULT = 1 << 12
"""Results up to which `ScaledGemm` takes rows of any length (within `FLOAT_INT8_GEMM_MACS`):
over so few sums the passes it saves cost more in calls than in arithmetic. With it, in
one process, each device call followed by an eager one, two runs each: the digits CNN at
batch 1 0.98-0.99 of the time, the digits transformer (its [1, 256] x [256, 10] head)
0.99-1.00; at batch 32 both 0.99-1.00."""


def takes_scaled(rows: int, k: int, n: int) -> bool:
    """Whether a GEMM of `rows` rows by a [k, n] matrix runs as its `ScaledGemm`: within
    `FLOAT_INT8_GEMM_MACS`, for rows of at most `SCALED_GEMM_MAX_K` terms or a result of
    at most `SCALED_GEMM_SMALL_RESULT` elements."""
    if rows * k * n > FLOAT_INT8_GEMM_MACS:
        return False
    return k <= SCALED_GEMM_MAX_K or rows * n <= SCALED_GEMM_SMALL_RESULT


BlockGemm: TypeAlias = tuple[int, Callable[[int, int, torch.Tensor], None], torch.dtype, int]
"""`PreparedGemm.block_gemm`'s (rows, GEMM of a block of rows, sums dtype, multiply-adds)."""


GemmOp: TypeAlias = dghw.Conv2dOp | dghw.FullyConnectedOp
"""The accumulate ops that run as GEMMs."""


def gemm_weights(op: GemmOp, matrix: np.ndarray, bias: np.ndarray) -> AnyGemmWeights:
    """`op`'s [K, N] weight `matrix` prepared for int8 GEMMs where they are enabled
    (`int8_gemms_enabled`) and the weights allow (`Int8GemmWeights.prepare`), else for
    float32 GEMMs."""
    input_zp, weight_zp = op.input_zp.value.data, op.weight_zp.value.data
    if int8_gemms_enabled():
        int8 = Int8GemmWeights.prepare(matrix, weight_zp, bias, input_zp)
        if int8 is not None:
            return int8
    x_range = (-128 - input_zp, 127 - input_zp)
    return GemmWeights.prepare(matrix, weight_zp, bias, x_range)


@dataclass(frozen=True)
class PreparedGemm:
    """A conv2d or fully_connected prepared once: its GEMM weights, its plan, and how its
    input becomes the GEMM's rows (`rows`)."""

    weights: AnyGemmWeights
    plan: AccumulatePlan
    kernel: tuple[int, int] | None
    """A conv's (KH, KW); None for fully_connected."""

    def rows(self, x: np.ndarray) -> np.ndarray:
        """The GEMM's [M, K] rows of x, as the weights take them: float32 and centred, or
        x's own int8 for `Int8GemmWeights`; a conv's patches (`conv_patches`), an FC's
        rows (a view, for int8)."""
        int8 = isinstance(self.weights, Int8GemmWeights)
        if self.kernel is not None:
            return conv_patches(self.windows(x, int8))
        rows = x.reshape(-1, x.shape[-1])
        if int8:
            return rows
        return centered_into(np.empty(rows.shape, np.float32), rows, self.plan.input_zp)

    def windows(self, x: np.ndarray, int8: bool) -> np.ndarray:
        """A conv's `conv_windows` of x: of x's own int8 for int8 GEMMs, else centred."""
        assert self.kernel is not None
        plan = self.plan
        return conv_windows(x, plan.input_zp, self.kernel, plan.stride, plan.pad, not int8)

    def scaled(self, requantize: SumRequantization) -> ScaledGemm | None:
        """`requantize` folded into the weights (`ScaledGemm`), for the GEMMs it takes
        (`takes_scaled`): the int8 weights as float32 (`small`) or the float32 centred
        ones, with their rows' bound; None for other weights, or where `ScaledGemm.prepare`
        refuses."""
        weights = self.weights
        if isinstance(weights, Int8GemmWeights):
            matrix, zero_point = weights.small, 0  # the rows are x's own int8 elements
        else:
            matrix = weights.matrix if isinstance(weights.matrix, np.ndarray) else None
            zero_point = self.plan.input_zp
        bound = centered_magnitude_bound(np.dtype(np.int8), zero_point)
        if matrix is None or not takes_scaled(1, matrix.shape[0], matrix.shape[1]):
            return None
        return ScaledGemm.prepare(requantize, matrix, bound)

    def requantized(
        self, x: np.ndarray, requantize: SumRequantization, scaled: ScaledGemm | None = None
    ) -> np.ndarray:
        """`requantize` of the GEMM's sums on x (`one_gemm_sums`): by `scaled` (`ScaledGemm`,
        from `scaled`) for a GEMM it takes (`takes_scaled`). A GEMM of more than
        `FUSED_BLOCK` sums runs a block of rows at a time (`block_gemm`), each block's sums
        requantized while in cache, the blocks split over the caller's threads
        (`run_in_parts`): a map-sized sum was written to memory and read back, and its
        requantization ran slower on two threads than on one (ViT-Ti at batch 32: 160
        against 130 ms)."""
        shape = self.plan.result_shape(x)
        n = self.weights.matrix.shape[1]
        block = self.block_gemm(x) if math.prod(shape) > FUSED_BLOCK else None
        if block is None:
            rows = self.rows(x)
            if scaled is not None and takes_scaled(len(rows), rows.shape[1], n):
                return scaled.apply(rows).reshape(shape)
            return requantize.apply(self.weights.sums(rows).reshape(shape))
        count, gemm, sums_dtype, work = block
        out = torch.empty((count, n), dtype=requantize.dtype)
        block_rows = max(1, FUSED_BLOCK // n)

        def scratch() -> tuple[torch.Tensor, torch.Tensor]:
            return (
                torch.empty((block_rows, n), dtype=sums_dtype),
                torch.empty((block_rows, n), dtype=torch.float64),
            )

        def gemm_then_requantize(
            start: int, end: int, buffers: tuple[torch.Tensor, torch.Tensor]
        ) -> None:
            sums, scaled = buffers[0][: end - start], buffers[1]
            gemm(start, end, sums)
            requantize.requantize_into(sums, out[start:end], scaled)

        run_blocks_in_parts(count, block_rows, gemm_then_requantize, scratch, work)
        return out.numpy().reshape(shape)

    def block_gemm(self, x: np.ndarray) -> BlockGemm | None:
        """(rows M, the GEMM of rows [start, end) into a tensor, its sums' dtype, M K N) for
        `requantized`'s blocks, where a block's GEMM is exact on its own: an int8 GEMM
        (int32 sums), or torch's float32 matmul while it computes in IEEE float32
        (`torch_matmul_is_ieee`); each block's sums are the exact integers of the whole
        GEMM's rows. A block's rows are x's own (`own_rows`; float32: centred a block at a
        time), or a conv's patches copied from its windows (`copy_patches`): no map-sized
        patches (ResNet-18's 7x7 stem at batch 32: 236 MB of float32). None otherwise."""
        weights = self.weights
        int8 = isinstance(weights, Int8GemmWeights)
        if int8:
            matrix, multiply = weights.matrix, int8_gemm_into
        elif isinstance(weights.matrix, np.ndarray) and torch_matmul_is_ieee():
            matrix, multiply = as_tensor(weights.matrix), float32_gemm_into
        else:
            return None
        if matrix is None:
            return None
        count, rows_of = self.block_lhs(x, int8)
        k, n = matrix.shape

        def block(start: int, end: int, sums: torch.Tensor) -> None:
            multiply(rows_of(start, end), matrix, sums)

        return count, block, torch.int32 if int8 else torch.float32, count * k * n

    def block_lhs(
        self, x: np.ndarray, int8: bool
    ) -> tuple[int, Callable[[int, int], torch.Tensor]]:
        """(rows M, the GEMM's rows [start, end) as a tensor) of x, for `block_gemm`."""
        own = self.own_rows(x)
        if own is None:
            windows = self.windows(x, int8)
            k = math.prod(windows.shape[3:])

            def patches(start: int, end: int) -> torch.Tensor:
                block = np.empty((end - start, k), windows.dtype)
                copy_patches(windows, block, start)
                return torch.from_numpy(block)

            return math.prod(windows.shape[:3]), patches
        if int8:
            rows = int8_tensor(own)
            return len(rows), lambda start, end: rows[start:end]

        def centred(start: int, end: int) -> torch.Tensor:
            block = np.empty((end - start, own.shape[1]), np.float32)
            return torch.from_numpy(centered_into(block, own[start:end], self.plan.input_zp))

        return len(own), centred

    def own_rows(self, x: np.ndarray) -> np.ndarray | None:
        """x's int8 elements as the GEMM's [M, K] rows (a view), where they are: an FC's, a
        1x1 conv's of stride 1 without padding; else None (patches)."""
        plan = self.plan
        pointwise = self.kernel == (1, 1) and set(plan.stride) == {1} and not any(plan.pad)
        return x.reshape(-1, x.shape[-1]) if self.kernel is None or pointwise else None

    def accumulate(self, x: np.ndarray, op: Operation) -> np.ndarray:
        """The op's int32 result on x (`AnyGemmWeights.accumulate`), its rows in one run per
        batch item."""
        items = x.shape[0] if self.kernel is not None else fc_items(x)
        shape = self.plan.result_shape(x)
        return self.weights.accumulate(self.rows(x), op, items).reshape(shape)


def fc_items(x: np.ndarray) -> int:
    """The runs of rows of a fully_connected's input, one per batch item (`accumulate`)."""
    return x.shape[0] if x.ndim > 1 else 1
