"""The rows dg adds beyond the product spec (`Section.BEYOND_SPEC`): idioms it compiles or
rejects with its own reason, and the integer logic layers."""

from __future__ import annotations

from dg.lowering.dghw_to_tosa.layout import ReshapeToTosa, TransposeToTosa
from dg.lowering.dghw_to_tosa.logic import (
    BitwiseTensorToTosa,
    BitwiseToTosa,
    CompareTensorToTosa,
    CompareToTosa,
    ShiftToTosa,
    TileToTosa,
)
from dg.lowering.dghw_to_tosa.pooling import AvgPool2dToTosa
from dg.lowering.dghw_to_tosa.quantization import ConstantToTosa, RescaleToTosa, SpecializeBatch
from dg.lowering.dgq_to_dghw.layout import LowerFlattenChannelsLast
from dg.lowering.dgq_to_dghw.norm import LowerNorm
from dg.lowering.dgq_to_dghw.pooling import LowerAvgPool2d
from dg.lowering.dgq_to_dghw.quantization import LowerGraphInput, LowerGraphOutput, LowerRequantize
from dg.lowering.dgq_to_dghw.weights import FoldFlattenReorderIntoFullyConnected
from dg.lowering.dgtorch_to_dgq.layout import LegalizeChannelsLastFlatten
from dg.lowering.dgtorch_to_dgq.logic import (
    LegalizeBitwise,
    LegalizeBitwiseShift,
    LegalizeBitwiseTensor,
    LegalizeCompare,
    LegalizeCompareTensor,
    LegalizeRepeat,
)
from dg.lowering.dgtorch_to_dgq.norm import LegalizeNorm
from dg.lowering.dgtorch_to_dgq.pooling import LowerAdaptiveAvgPool2d
from dg.lowering.dgtorch_to_dgq.quantization import (
    FoldDequantizeQuantize,
    LegalizeDequantizePerTensor,
    LegalizeQuantizedConstant,
    LegalizeQuantizePerTensor,
)
from dg.lowering.registry.table import Family, OpRow, QuantRule, Section, Status, aten

# -- Beyond the spec -----------------------------------------------------------------

ADAPTIVE_AVG_POOL2D = OpRow(
    Section.BEYOND_SPEC,
    "nn.AdaptiveAvgPool2d / F.adaptive_avg_pool2d",
    "Lowered to an average pool when the input size divides evenly by the output size",
    family=Family.POOLING,
    quantization=QuantRule.SHARED_GRID,
    aten=(aten.adaptive_avg_pool2d.default, aten._adaptive_avg_pool2d.default),
    dgtorch=("dgtorch.adaptive_avg_pool2d",),
    dgq=("dgq.avg_pool2d",),
    dghw=("dghw.avg_pool2d",),
    fix="choose an output size that divides the input size (1 works for any input), or use "
    "nn.AvgPool2d",
    spellings=("nn.AdaptiveAvgPool2d", "F.adaptive_avg_pool2d"),
    to_dgq=(LowerAdaptiveAvgPool2d,),
    to_dghw=(LowerAvgPool2d,),
    to_tosa=(AvgPool2dToTosa,),
)
DG_FLATTEN = OpRow(
    Section.BEYOND_SPEC,
    "dg.Flatten",
    "NCHW→NHWC reorder + flatten, the device's own memory order; the only place a permute is "
    "accepted",
    family=Family.LAYOUT,
    aten=(aten.permute.default, aten.flatten.using_ints),
    dgtorch=("dgtorch.permute", "dgtorch.flatten"),
    dgq=("dgq.flatten_channels_last",),
    dghw=("dghw.reshape",),
    spellings=("dg.Flatten",),
    to_dgq=(LegalizeChannelsLastFlatten,),
    to_dghw=(LowerFlattenChannelsLast, FoldFlattenReorderIntoFullyConnected),
    to_tosa=(TransposeToTosa, ReshapeToTosa),
)
DG_NORM = OpRow(
    Section.BEYOND_SPEC,
    "dg.Norm(dim, eps, kind)",
    'Layer norm (kind="layer") or RMS norm (kind="rms") over the last axis of a sequence '
    "tensor ([B, D] or [B, S, D], D <= 4096), int8 in and out, computed exactly in integers; "
    "the only place its body's ops (mean, rsqrt, a bare scalar add/mul, ...) are accepted; "
    "not on spatial feature maps",
    family=Family.NORM,
    module_types=("dg.frontend.modules.Norm",),
    dgtorch=("dgtorch.norm",),
    dgq=("dgq.norm",),
    dghw=("dghw.norm",),
    spellings=("dg.Norm",),
    to_dgq=(LegalizeNorm,),
    to_dghw=(LowerNorm,),
)
NORM_FIX = (
    "normalize with dg.Norm over the last axis of a [B, S, D] or [B, D] tensor: "
    'nn.LayerNorm(d, eps) -> dg.Norm(d, eps=eps, kind="layer"), '
    'nn.RMSNorm(d) -> dg.Norm(d, kind="rms")'
)
TORCH_NORMALIZATION = OpRow(
    Section.BEYOND_SPEC,
    "nn.LayerNorm, nn.RMSNorm, nn.GroupNorm, nn.InstanceNorm (torch's own normalizations)",
    "Rejected: the device normalizes only with dg.Norm (exact integer mean, variance and rsqrt); "
    "BatchNorm folds into the preceding weight op (Special Cases)",
    family=Family.NORM,
    aten=(
        aten.layer_norm.default,
        aten.native_layer_norm.default,
        aten.rms_norm.default,
        aten.group_norm.default,
        aten.native_group_norm.default,
        aten.instance_norm.default,
    ),
    status=Status.NOT_SUPPORTED,
    message="is torch's own normalization, which the device does not run: dg normalizes only "
    "with dg.Norm, computed exactly in integers",
    fix=NORM_FIX + "; a spatial feature map has no norm on the device (use nn.BatchNorm2d "
    "after a Conv2d: it folds into the convolution)",
    spellings=("nn.LayerNorm", "F.layer_norm", "nn.RMSNorm", "F.rms_norm", "nn.GroupNorm"),
)
SPATIAL_MEAN = OpRow(
    Section.BEYOND_SPEC,
    "x.mean((2, 3)) of a feature map; x.mean(1) of [B, S, D] tokens",
    "Global average pooling written as a mean over H and W, with or without keepdim: "
    "compiled as F.adaptive_avg_pool2d(x, 1) (then torch.flatten(x, 1) without keepdim); "
    "token mean-pooling over S likewise, as the pool of the [B, D, S, 1] map of x.transpose(1, "
    "2), exact up to the pool's rounding of ties",
    family=Family.POOLING,
    quantization=QuantRule.SHARED_GRID,
    aten=(aten.mean.dim,),
    dgtorch=("dgtorch.adaptive_avg_pool2d", "dgtorch.flatten", "dgtorch.transpose"),
    dgq=("dgq.avg_pool2d", "dgq.reshape", "dgq.transpose"),
    dghw=("dghw.avg_pool2d", "dghw.reshape", "dghw.transpose"),
    spellings=("Tensor.mean", "torch.mean"),
)
SEQUENCE_SPLITS = OpRow(
    Section.BEYOND_SPEC,
    "torch.split / Tensor.chunk / split_with_sizes / Tensor.unbind / x[:, i]",
    "Compiled as slices (unbind and x[:, i] then drop the sliced axis with a reshape), under "
    "the slice row's rules: sequence-domain tensors only, not the batch axis",
    family=Family.LAYOUT,
    quantization=QuantRule.SHARED_GRID,
    aten=(
        aten.split.Tensor,
        aten.split_with_sizes.default,
        aten.chunk.default,
        aten.unbind.int,
        aten.select.int,
    ),
    dgtorch=("dgtorch.slice", "dgtorch.reshape"),
    dgq=("dgq.slice", "dgq.reshape"),
    dghw=("dghw.slice", "dghw.reshape"),
    spellings=("torch.split", "Tensor.split", "Tensor.chunk", "torch.chunk", "Tensor.unbind"),
)
MODEL_OUTPUTS = OpRow(
    Section.BEYOND_SPEC,
    "Model outputs: one tensor, a tuple or list (nested), or a dict of tensors",
    "Program.run returns the structure the frozen model returns, dict keys included",
    family=Family.QUANTIZATION,
)
SHARED_INPUTS = OpRow(
    Section.BEYOND_SPEC,
    "One tensor passed as several example inputs; one module called on several inputs",
    "Each input is its own @main argument, quantized on its own; each call of a module gets "
    "its own quantization of its output",
    family=Family.QUANTIZATION,
)
REDUCTIONS = OpRow(
    Section.BEYOND_SPEC,
    "amax, amin, max(dim), min(dim), prod, argmax, argmin, logsumexp; sum and mean outside a norm",
    "Rejected: the device reduces only by pooling (a mean over H and W of a feature map) and "
    "inside dg.Norm",
    family=Family.POOLING,
    aten=(
        aten.amax.default,
        aten.amin.default,
        aten.max.dim,
        aten.min.dim,
        aten.max.default,
        aten.min.default,
        aten.prod.dim_int,
        aten.prod.default,
        aten.argmax.default,
        aten.argmin.default,
        aten.logsumexp.default,
    ),
    status=Status.NOT_SUPPORTED,
    message="is a reduction, and the device has no reduction op (it pools feature maps, and "
    "normalizes inside dg.Norm)",
    fix="for a maximum or mean over H and W of a feature map use nn.MaxPool2d or "
    "nn.AvgPool2d with the map's size as kernel (or x.mean((2, 3))); otherwise compute the "
    "reduction on the host, after the model",
)
REDUCTION_FIX = REDUCTIONS.fix
NORM_BUILDING_BLOCKS = OpRow(
    Section.BEYOND_SPEC,
    "mean, sum, var, std, sqrt, rsqrt (outside dg.Norm)",
    "Rejected: the reductions and roots of a hand-written normalization, accepted only inside "
    "dg.Norm's forward",
    family=Family.NORM,
    aten=(
        aten.mean.dim,
        aten.mean.default,
        aten.sum.dim_IntList,
        aten.sum.default,
        aten.var.correction,
        aten.var_mean.correction,
        aten.std.correction,
        aten.sqrt.default,
        aten.rsqrt.default,
    ),
    status=Status.NOT_SUPPORTED,
    message="is a reduction or root that the device computes only as part of dg.Norm "
    "(a hand-written layer norm or RMS norm does not compile op by op)",
    fix=NORM_FIX + "; a mean over H and W of a feature map is nn.AdaptiveAvgPool2d(1)",
)
SUBTRACTION = OpRow(
    Section.BEYOND_SPEC,
    "Subtraction x - y (outside dg.Norm)",
    "Rejected: the device subtracts only inside dg.Norm (x - mean); elsewhere add",
    family=Family.ELEMENTWISE,
    aten=(aten.sub.Tensor, aten.sub.Scalar, aten.rsub.Scalar),
    status=Status.NOT_SUPPORTED,
    message="subtracts, which the device does only inside dg.Norm (x - mean(x))",
    fix="to subtract two activations, negate the weight and bias of the Linear or Conv2d "
    "computing the second one and add (+); to subtract a constant, fold it into the bias of "
    "the preceding Linear or Conv2d; for a normalization use dg.Norm",
    spellings=("-",),
)
QUANTIZATION = OpRow(
    Section.BEYOND_SPEC,
    "torchao quantize / dequantize",
    "The quantization boundaries convert_pt2e leaves around every quantized value",
    family=Family.QUANTIZATION,
    dgtorch=(
        "dgtorch.quantize_per_tensor",
        "dgtorch.dequantize_per_tensor",
        "dgtorch.quantize_per_channel",
        "dgtorch.dequantize_per_channel",
        "dgtorch.constant",
    ),
    dgq=("dgq.quantize", "dgq.dequantize", "dgq.requantize", "dgq.constant"),
    dghw=("dghw.rescale", "dghw.constant"),
    to_dgq=(
        LegalizeQuantizePerTensor,
        LegalizeDequantizePerTensor,
        LegalizeQuantizedConstant,
        FoldDequantizeQuantize,
    ),
    to_dghw=(LowerGraphInput, LowerGraphOutput, LowerRequantize),
    to_tosa=(SpecializeBatch, ConstantToTosa, RescaleToTosa),
)
"""torchao's quantized_decomposed ops are registered by torchao, so the importer lists
their overloads itself (`dg.frontend.importer.QUANTIZE_OPS` / `DEQUANTIZE_OPS`)."""

# -- integer logic layers (dg.frontend.logic): int32 tensors, never quantized, no dgq step --
LOGIC_NOTE = (
    "int32 tensors only (an int32 model input or another logic layer's output), never "
    "quantized; bit-identical to torch"
)
BIT_SHIFT = OpRow(
    Section.BEYOND_SPEC,
    "dg.BitShift / x << k / x >> k",
    f"Arithmetic shift by a constant k in [0, 31]; {LOGIC_NOTE}",
    family=Family.LOGIC,
    aten=(
        aten.__lshift__.Scalar,
        aten.__rshift__.Scalar,
        aten.bitwise_left_shift.Tensor_Scalar,
        aten.bitwise_right_shift.Tensor_Scalar,
        # A tensor shift amount: rejected by the handler with a fix.
        aten.__lshift__.Tensor,
        aten.__rshift__.Tensor,
        aten.bitwise_left_shift.Tensor,
        aten.bitwise_right_shift.Tensor,
    ),
    dgtorch=("dgtorch.bitwise_shift",),
    dghw=("dghw.shift",),
    spellings=("dg.BitShift",),
    to_dgq=(LegalizeBitwiseShift,),
    to_tosa=(ShiftToTosa,),
)
BITWISE = OpRow(
    Section.BEYOND_SPEC,
    "dg.Bitwise / torch.bitwise_and, bitwise_or, bitwise_xor (&, ^) with a constant",
    f"Bitwise and / or / xor with an int32 constant c; {LOGIC_NOTE}",
    family=Family.LOGIC,
    aten=(
        aten.bitwise_and.Scalar,
        aten.__and__.Scalar,
        aten.bitwise_or.Scalar,
        aten.__or__.Scalar,
        aten.bitwise_xor.Scalar,
        aten.__xor__.Scalar,
    ),
    dgtorch=("dgtorch.bitwise",),
    dghw=("dghw.bitwise",),
    spellings=("dg.Bitwise",),
    to_dgq=(LegalizeBitwise,),
    to_tosa=(BitwiseToTosa,),
)
COMPARE = OpRow(
    Section.BEYOND_SPEC,
    "dg.Compare / (x > c).to(torch.int32)",
    "Comparison with an int32 constant c (>, >=, <, <=, ==, !=) giving 0/1 as int32; the "
    "bool result must be converted with .to(torch.int32) right away; " + LOGIC_NOTE,
    family=Family.LOGIC,
    aten=(
        aten.gt.Scalar,
        aten.ge.Scalar,
        aten.lt.Scalar,
        aten.le.Scalar,
        aten.eq.Scalar,
        aten.ne.Scalar,
        aten.to.dtype,
    ),
    dgtorch=("dgtorch.compare",),
    dghw=("dghw.compare",),
    spellings=("dg.Compare",),
    to_dgq=(LegalizeCompare,),
    to_tosa=(CompareToTosa,),
)
BITWISE_TENSORS = OpRow(
    Section.BEYOND_SPEC,
    "dg.Bitwise(kind) / torch.bitwise_and, bitwise_or, bitwise_xor (&, ^) of two tensors",
    "Bitwise and / or / xor of two tensors of one dtype and the same shape (no broadcasting: "
    f"tile the smaller one with Tensor.repeat inside the logic layer); {LOGIC_NOTE}",
    family=Family.LOGIC,
    aten=(
        aten.bitwise_and.Tensor,
        aten.__and__.Tensor,
        aten.bitwise_or.Tensor,
        aten.__or__.Tensor,
        aten.bitwise_xor.Tensor,
        aten.__xor__.Tensor,
    ),
    dgtorch=("dgtorch.bitwise_tensor",),
    dghw=("dghw.bitwise_tensor",),
    spellings=("dg.Bitwise",),
    to_dgq=(LegalizeBitwiseTensor,),
    to_tosa=(BitwiseTensorToTosa,),
)
COMPARE_TENSORS = OpRow(
    Section.BEYOND_SPEC,
    "dg.Compare(kind) / (x > y).to(torch.int32) of two tensors",
    "Comparison of two tensors of one dtype and the same shape (>, >=, <, <=, ==, !=; no "
    "broadcasting) giving 0/1 as int32; the bool result must be converted with "
    ".to(torch.int32) right away; " + LOGIC_NOTE,
    family=Family.LOGIC,
    aten=(
        aten.gt.Tensor,
        aten.ge.Tensor,
        aten.lt.Tensor,
        aten.le.Tensor,
        aten.eq.Tensor,
        aten.ne.Tensor,
    ),
    dgtorch=("dgtorch.compare_tensor",),
    dghw=("dghw.compare_tensor",),
    spellings=("dg.Compare",),
    to_dgq=(LegalizeCompareTensor,),
    to_tosa=(CompareTensorToTosa,),
)
LOGIC_REPEAT = OpRow(
    Section.BEYOND_SPEC,
    "Tensor.repeat() inside a logic layer",
    "Tiles an int32 tensor inside the forward of a dg.LogicLayer subclass (never the batch "
    "axis); elsewhere it is the Not Supported row above",
    family=Family.LOGIC,
    aten=(aten.repeat.default,),
    dgtorch=("dgtorch.repeat",),
    dghw=("dghw.tile",),
    spellings=("Tensor.repeat",),
    to_dgq=(LegalizeRepeat,),
    to_tosa=(TileToTosa,),
)
NEGATION = OpRow(
    Section.BEYOND_SPEC,
    "Negation (-x, torch.neg)",
    "Rejected: the device has no negation of an activation. RoPE's rotate_half "
    "cat((-x2, x1)) * sin compiles as cat((x2, x1)) * cat(-sin, sin), the sign in the "
    "constant table (dg.RotaryEmbedding)",
    family=Family.ELEMENTWISE,
    aten=(aten.neg.default,),
    status=Status.NOT_SUPPORTED,
    message="negates an activation, and the device has no negation op (a quantized value "
    "and its negation need not share a grid)",
    fix="in RoPE, fold the sign into the constant sin table: write "
    "x * cos + torch.cat((x2, x1), dim=-1) * sin_signed with "
    "sin_signed = torch.cat((-sin_half, sin_half), dim=-1) as a buffer, or use "
    "dg.RotaryEmbedding(head_dim, max_seq_len); elsewhere negate the weights and bias of the "
    "Linear or Conv2d that computes the value",
    spellings=("-", "torch.neg", "Tensor.neg"),
)
