"""dg's op registry: every row of the product's op table and how dg implements or rejects it.

The product spec (``shared/spec/supported-pytorch-ops.txt``) lists the
PyTorch ops dg supports, the special cases, and the ops it does not support.
`ROWS` holds one `OpRow` per spec row, with the spec's text verbatim, plus
the rows dg adds beyond the spec (`Section.BEYOND_SPEC`). Everything else
that needs the list reads it from here:

- the importer registers its handlers per row (`dg.frontend.importer.handles`)
  and rejects the ATen ops of `Status.NOT_SUPPORTED` rows with the row's
  reason and fix;
- ``dg/tools/gen_supported_ops.py`` renders ``docs/supported-ops.md`` from it,
  each row linked to the dgtorch/dgq/dghw ops of ``docs/dialects.md``;
- the tests compare it against the spec file.

Op names (``"dgq.conv2d"``) are strings: the registry describes the
pipeline, it does not import it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

import torch
from torch._ops import OpOverload

aten = torch.ops.aten


class Section(Enum):
    """The tables of the spec, in its order; `BEYOND_SPEC` holds what dg adds."""

    LAYERS = "Layers"
    ACTIVATIONS = "Activations"
    SHAPE = "Shape & Elementwise Operations"
    NOT_SUPPORTED = "Not Supported"
    SPECIAL_CASES = "Special Cases"
    BEYOND_SPEC = "Beyond the spec"


class Status(Enum):
    """What dg does with a row today."""

    SUPPORTED = "supported"
    PLANNED = "not yet implemented"
    """A supported row of the spec that a later dg release implements; export rejects it."""
    NOT_SUPPORTED = "rejected at export"


@dataclass(frozen=True)
class OpRow:
    """One row of the op table.

    `op` and `notes` are the spec's two columns, verbatim ("" when the spec
    has no note). `aten` are the ATen overloads ``torch.export`` produces for
    it, `module_types` the ``nn.Module`` classes (qualified names) whose whole
    body the row covers, e.g. ``nn.MultiheadAttention``, which exports as
    many small ops. `dgtorch`/`dgq`/`dghw` name the dialect ops implementing
    the row at each stage, `patterns` the lowering patterns involved.
    `spellings` are the names users write for it (``F.interpolate``), used to
    name the op in error messages when the ATen name is not what they wrote.
    For rejected rows, `fix` says what to write instead; `reason` is what
    error messages say.
    """

    section: Section
    op: str
    notes: str = ""
    aten: tuple[OpOverload, ...] = ()
    module_types: tuple[str, ...] = ()
    dgtorch: tuple[str, ...] = ()
    dgq: tuple[str, ...] = ()
    dghw: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    status: Status = Status.SUPPORTED
    fix: str | None = None
    spellings: tuple[str, ...] = ()
    message: str | None = None
    """What errors say when the spec's note is not the right sentence for them."""
    remark: str = ""
    """dg's reading of the row where the spec leaves room (shown on the supported-ops page)."""

    @property
    def in_spec(self) -> bool:
        return self.section is not Section.BEYOND_SPEC

    @property
    def reason(self) -> str:
        """The reason error messages give: the spec's note, or a generic one."""
        if self.message is not None:
            return self.message
        if self.status is Status.PLANNED:
            return (
                f"is a supported row of the spec ({self.op}) that this dg release does not "
                "implement yet"
            )
        return self.notes or "is not supported"


ACTIVATION_FIX = (
    "dg has only relu (as a fusion tail right after a Conv2d, a Linear or a residual add), "
    "torch.sigmoid and torch.softmax: use one of them"
)

# -- Layers ------------------------------------------------------------------------

CONV2D = OpRow(
    Section.LAYERS,
    "nn.Conv2d",
    "Dense convolution (groups=1); depthwise only when groups = in_channels = out_channels "
    "(depth multiplier 1 only)",
    aten=(aten.conv2d.default, aten.conv2d.padding),
    dgtorch=("dgtorch.conv2d",),
    dgq=("dgq.conv2d",),
    dghw=("dghw.conv2d", "dghw.depthwise_conv2d", "dghw.rescale"),
    patterns=("LegalizeConv2d",),
    spellings=("nn.Conv2d", "F.conv2d"),
)
LINEAR = OpRow(
    Section.LAYERS,
    "nn.Linear",
    aten=(aten.linear.default,),
    dgtorch=("dgtorch.linear",),
    dgq=("dgq.linear",),
    dghw=("dghw.fully_connected", "dghw.rescale"),
    patterns=("LegalizeLinear",),
    spellings=("nn.Linear", "F.linear"),
)
AVG_POOL2D = OpRow(
    Section.LAYERS,
    "nn.AvgPool2d",
    "A preceding F.pad folds into its padding",
    aten=(aten.avg_pool2d.default,),
    dgtorch=("dgtorch.avg_pool2d",),
    dgq=("dgq.avg_pool2d",),
    dghw=("dghw.avg_pool2d",),
    patterns=("LegalizeAvgPool2d", "FoldPadIntoAvgPool2d"),
    spellings=("nn.AvgPool2d", "F.avg_pool2d"),
)
MAX_POOL2D = OpRow(
    Section.LAYERS,
    "nn.MaxPool2d",
    "No padding support, native or via a preceding F.pad",
    aten=(aten.max_pool2d.default,),
    dgtorch=("dgtorch.max_pool2d",),
    dgq=("dgq.max_pool2d",),
    dghw=("dghw.max_pool2d",),
    patterns=("LegalizeMaxPool2d",),
    spellings=("nn.MaxPool2d", "F.max_pool2d"),
)

# -- Activations -------------------------------------------------------------------

SOFTMAX = OpRow(
    Section.ACTIVATIONS,
    "torch.softmax / F.softmax",
    "Output pinned to a fixed quantization grid",
    aten=(aten.softmax.int, aten._softmax.default),
    dgtorch=("dgtorch.softmax",),
    dgq=("dgq.softmax",),
    dghw=("dghw.softmax",),
    patterns=("LegalizeSoftmax",),
    spellings=("F.softmax", "torch.softmax", "nn.Softmax"),
)
SIGMOID = OpRow(
    Section.ACTIVATIONS,
    "torch.sigmoid",
    "Output pinned to a fixed quantization grid",
    aten=(aten.sigmoid.default,),
    dgtorch=("dgtorch.sigmoid",),
    dgq=("dgq.sigmoid",),
    dghw=("dghw.table",),
    patterns=("LegalizeSigmoid",),
    spellings=("torch.sigmoid", "F.sigmoid", "nn.Sigmoid"),
)
RELU = OpRow(
    Section.ACTIVATIONS,
    "F.relu",
    "Only recognized as a fusion tail immediately after a weight op (Conv2d/Linear) or a "
    "residual add; not a standalone layer",
    aten=(aten.relu.default, aten.relu_.default),
    dgtorch=("dgtorch.relu",),
    dgq=("dgq.conv2d", "dgq.linear", "dgq.add"),
    dghw=("dghw.rescale", "dghw.add"),
    patterns=("FuseReluTail",),
    spellings=("F.relu", "torch.relu", "nn.ReLU"),
)

# -- Shape & Elementwise Operations -------------------------------------------------

FLATTEN = OpRow(
    Section.SHAPE,
    "torch.flatten",
    aten=(aten.flatten.using_ints,),
    dgtorch=("dgtorch.flatten",),
    dgq=("dgq.reshape",),
    dghw=("dghw.reshape", "dghw.transpose", "dghw.fully_connected"),
    patterns=("FoldFlattenReorderIntoFullyConnected",),
    spellings=("torch.flatten", "nn.Flatten"),
)
RESHAPE = OpRow(
    Section.SHAPE,
    "torch.reshape / view",
    "Cannot change the batch-axis extent",
    aten=(aten.view.default, aten.reshape.default, aten._unsafe_view.default),
    dgtorch=("dgtorch.reshape",),
    dgq=("dgq.reshape",),
    dghw=("dghw.reshape", "dghw.transpose"),
    spellings=("torch.reshape", "Tensor.view"),
)
TRANSPOSE = OpRow(
    Section.SHAPE,
    "torch.transpose",
    "Feature rank 2–3 only; cannot move the batch axis",
    aten=(aten.transpose.int,),
    dgtorch=("dgtorch.transpose",),
    dgq=("dgq.transpose",),
    dghw=("dghw.transpose",),
    patterns=("LegalizeTranspose", "LowerTranspose"),
    spellings=("torch.transpose", "Tensor.transpose"),
)
SLICE = OpRow(
    Section.SHAPE,
    "torch.slice / __getitem__[:n]",
    "Sequence-domain tensors only (not spatial/HWC feature maps); not the batch axis; step must "
    "be 1",
    # torch.export records a slice of a whole axis (x[..., 0:n] on an n-wide axis) as alias.
    aten=(aten.slice.Tensor, aten.alias.default),
    dgtorch=("dgtorch.slice",),
    dgq=("dgq.slice",),
    dghw=("dghw.slice",),
    patterns=("LegalizeSlice", "LowerSlice"),
    spellings=("x[:n]",),
)
PAD = OpRow(
    Section.SHAPE,
    "F.pad(pad_value=0)",
    "Only usable as an immediate prefix to Conv2d or AvgPool2d; no standalone padding layer in "
    "quantized models",
    aten=(aten.pad.default, aten.constant_pad_nd.default),
    dgtorch=("dgtorch.pad",),
    dgq=("dgq.pad",),
    dghw=("dghw.conv2d", "dghw.depthwise_conv2d", "dghw.avg_pool2d"),
    patterns=("LegalizePad", "FoldPadIntoConv2d", "FoldPadIntoAvgPool2d"),
    spellings=("F.pad", "nn.ZeroPad2d", "nn.ConstantPad2d"),
)
CAT = OpRow(
    Section.SHAPE,
    "torch.cat",
    "Not the batch axis; requires compiler ≥ v0.15.0; inputs and output share one quantization "
    "scale",
    aten=(aten.cat.default, aten.concat.default),
    dgtorch=("dgtorch.cat",),
    dgq=("dgq.concat",),
    dghw=("dghw.concat",),
    patterns=("LegalizeConcat",),
    spellings=("torch.cat", "torch.concat", "torch.concatenate"),
)
MATMUL = OpRow(
    Section.SHAPE,
    "torch.matmul / torch.bmm / torch.mm",
    "Activation × activation; feature rank 2–3 per operand; trailing scale must be a scalar "
    "constant; output must feed a quantized op",
    aten=(aten.matmul.default, aten.bmm.default, aten.mm.default, aten.div.Tensor),
    dgtorch=("dgtorch.matmul", "dgtorch.mul_scalar"),
    dgq=("dgq.matmul",),
    dghw=("dghw.matmul", "dghw.rescale"),
    patterns=("LegalizeMatmul", "FoldScaleIntoMatmul"),
    spellings=("torch.matmul", "torch.bmm", "torch.mm", "@"),
    remark="torch.mm is rejected at export: its operands are [B, K] matrices, "
    "feature rank 1, below the row's 2–3, and a product of two [B, K] activations mixes the "
    "samples of a batch; use nn.Linear for activation × weight, torch.matmul on [B, S, D] for "
    "activation × activation",
)
"""`aten.div.Tensor` is here for the score scale `/ sqrt(d)`; the importer rejects any other
division."""
MM_REASON = (
    "multiplies two matrices [B, K] x [K, N]: with the batch axis first, each operand has "
    "feature rank 1, but the row needs feature rank 2-3 per operand ([B, S, D] or "
    "[B, H, S, D]); and a product of two [B, K] activations mixes the samples of a batch "
    "(every output row reads every sample of the second operand), which the device, running "
    "each sample alike, cannot do"
)
MM_FIX = (
    "for activation x weight use nn.Linear(K, N) (or F.linear); for activation x activation "
    "use torch.matmul / @ on [B, S, D] operands, e.g. q @ k.transpose(-2, -1)"
)
MUL_CONST_TENSOR = OpRow(
    Section.SHAPE,
    "torch.mul(x, const_tensor)",
    "Activation × constant-tensor broadcast only (e.g., RoPE's cos/sin tables); not a bare "
    "scalar, not activation × activation",
    aten=(aten.mul.Tensor,),
    dgtorch=("dgtorch.mul",),
    dgq=("dgq.mul_constant",),
    dghw=("dghw.mul",),
    patterns=("LegalizeMulConstant",),
    spellings=("torch.mul", "*"),
)
ADD = OpRow(
    Section.SHAPE,
    "Element-wise +",
    "Both operands must already be quantized activation streams",
    aten=(aten.add.Tensor, aten.add_.Tensor),
    dgtorch=("dgtorch.add",),
    dgq=("dgq.add",),
    dghw=("dghw.add",),
    patterns=("LegalizeAdd",),
    spellings=("+", "torch.add"),
)
INTERPOLATE = OpRow(
    Section.SHAPE,
    'F.interpolate(mode="nearest")',
    'Mode must be "nearest" or "nearest-exact"; input/output share one quantization grid',
    aten=(
        aten.upsample_nearest2d.vec,
        aten.upsample_nearest2d.default,
        aten._upsample_nearest_exact2d.vec,
        aten._upsample_nearest_exact2d.default,
    ),
    dgtorch=("dgtorch.upsample_nearest2d",),
    dgq=("dgq.resize_nearest",),
    dghw=("dghw.resize_nearest",),
    patterns=("LegalizeResizeNearest",),
    spellings=("F.interpolate", "nn.Upsample", "F.upsample"),
)

INTERPOLATE_OTHER_MODES: dict[OpOverload, str] = {
    aten.upsample_bilinear2d.vec: "bilinear",
    aten.upsample_bilinear2d.default: "bilinear",
    aten._upsample_bilinear2d_aa.vec: "bilinear (antialias)",
    aten.upsample_bicubic2d.vec: "bicubic",
    aten.upsample_bicubic2d.default: "bicubic",
    aten.upsample_linear1d.vec: "linear",
    aten.upsample_trilinear3d.vec: "trilinear",
    aten.upsample_nearest1d.vec: "nearest (1-D)",
    aten.upsample_nearest3d.vec: "nearest (3-D)",
}
"""`F.interpolate` modes dg does not support, by the ATen op they export as (the
interpolate row reports them, naming the mode)."""

# -- Not Supported -------------------------------------------------------------------

PERMUTE = OpRow(
    Section.NOT_SUPPORTED,
    "torch.permute",
    "Only the NCHW→NHWC reorder inside dg.Flatten is recognized; any other permute is "
    "rejected. Use dg.Flatten or torch.transpose.",
    aten=(aten.permute.default,),
    status=Status.NOT_SUPPORTED,
    fix="use dg.Flatten() to flatten a feature map channels-last, or torch.transpose",
    spellings=("torch.permute", "Tensor.permute"),
)
STANDALONE_PAD = OpRow(
    Section.NOT_SUPPORTED,
    "Standalone F.pad",
    "Padding is only supported immediately before a Conv2d or AvgPool2d.",
    aten=(aten.pad.default, aten.constant_pad_nd.default),
    status=Status.NOT_SUPPORTED,
    fix="use the padding argument of the following layer, or put the F.pad right before a "
    "Conv2d or AvgPool2d",
    spellings=PAD.spellings,
)
EXPAND = OpRow(
    Section.NOT_SUPPORTED,
    "Tensor.expand()",
    "Not supported.",
    aten=(aten.expand.default,),
    status=Status.NOT_SUPPORTED,
    fix="let an elementwise op broadcast instead, or compute the expanded tensor as a layer output",
    spellings=("Tensor.expand", "Tensor.expand_as"),
)
REPEAT = OpRow(
    Section.NOT_SUPPORTED,
    "Tensor.repeat()",
    "Only supported inside the logic layers (dg.BitShift, etc.), not in quantized models.",
    aten=(aten.repeat.default,),
    status=Status.NOT_SUPPORTED,
    fix="remove the repeat from the quantized model",
    spellings=("Tensor.repeat",),
)
BARE_MUL = OpRow(
    Section.NOT_SUPPORTED,
    "Bare torch.mul(x, scalar)",
    "Not supported on its own; only valid inside dg.Norm or an attention score scale.",
    aten=(aten.mul.Tensor, aten.mul.Scalar, aten.mul_.Tensor),
    status=Status.NOT_SUPPORTED,
    fix="fold the constant factor into the weights of the neighbouring Conv2d or Linear",
    spellings=("torch.mul", "*"),
)
STANDALONE_RELU = OpRow(
    Section.NOT_SUPPORTED,
    "Standalone F.relu",
    "Only supported as a fusion tail after a weight op or residual add, not as a layer of its own.",
    aten=RELU.aten,
    status=Status.NOT_SUPPORTED,
    fix="apply the ReLU directly to the output of a Conv2d, Linear or residual add (or remove it)",
    spellings=RELU.spellings,
)
CONV_TRANSPOSE2D = OpRow(
    Section.NOT_SUPPORTED,
    "nn.ConvTranspose2d",
    "Not supported.",
    aten=(aten.conv_transpose2d.input, aten.conv_transpose1d.default, aten.conv_transpose3d.input),
    status=Status.NOT_SUPPORTED,
    fix='upsample with F.interpolate(mode="nearest") followed by a Conv2d',
    spellings=("nn.ConvTranspose2d", "F.conv_transpose2d"),
)
OTHER_ACTIVATIONS = OpRow(
    Section.NOT_SUPPORTED,
    "Other activations",
    "F.gelu, torch.tanh, F.silu, F.hardswish, F.leaky_relu, and similar are not supported; only "
    "relu, sigmoid, and softmax are.",
    aten=(
        aten.gelu.default,
        aten.gelu_.default,
        aten.tanh.default,
        aten.tanh_.default,
        aten.silu.default,
        aten.silu_.default,
        aten.hardswish.default,
        aten.hardswish_.default,
        aten.leaky_relu.default,
        aten.leaky_relu_.default,
        aten.relu6.default,
        aten.hardtanh.default,
        aten.hardtanh_.default,
        aten.elu.default,
        aten.elu_.default,
        aten.selu.default,
        aten.celu.default,
        aten.mish.default,
        aten.hardsigmoid.default,
        aten.softplus.default,
        aten.prelu.default,
        aten.rrelu.default,
        aten.glu.default,
        aten.log_sigmoid.default,
        aten.log_softmax.int,
        aten.threshold.default,
        aten.softshrink.default,
        aten.hardshrink.default,
    ),
    status=Status.NOT_SUPPORTED,
    fix=ACTIVATION_FIX,
)
FUSED_ATTENTION = OpRow(
    Section.NOT_SUPPORTED,
    "Fused attention",
    "F.scaled_dot_product_attention and nn.MultiheadAttention export as a single op that cannot "
    "be quantized. Use dg.SelfAttention or explicit matmul + softmax.",
    aten=(aten.scaled_dot_product_attention.default, aten._native_multi_head_attention.default),
    module_types=("torch.nn.modules.activation.MultiheadAttention",),
    status=Status.NOT_SUPPORTED,
    fix="replace nn.MultiheadAttention(embed_dim, num_heads, batch_first=True), or "
    "F.scaled_dot_product_attention with its q/k/v projections, by "
    "dg.SelfAttention(embed_dim, num_heads) on [B, S, embed_dim] (no mask, no dropout; "
    "rope=True, max_seq_len=S adds RoPE), or write the attention out: "
    "torch.softmax((q @ k.transpose(-2, -1)) * scale, dim=-1) @ v",
    spellings=("F.scaled_dot_product_attention", "nn.MultiheadAttention"),
)
DILATED_CONV2D = OpRow(
    Section.NOT_SUPPORTED,
    "Dilated nn.Conv2d",
    "Dilation (dilation != 1) is not supported, and is not caught at export, so avoid it.",
    aten=CONV2D.aten,
    status=Status.NOT_SUPPORTED,
    fix="use dilation=1 (a larger kernel, or stacked convolutions, cover the same field)",
    spellings=CONV2D.spellings,
    # The spec warns that the reference toolchain misses it; dg does not.
    message="Dilation (dilation != 1) is not supported; dg rejects it at export",
)

# -- Special Cases -------------------------------------------------------------------

BATCH_NORM = OpRow(
    Section.SPECIAL_CASES,
    "Batch normalization",
    "Conv → BatchNorm folds via torchao's QAT pass inside freeze_quantization; Linear → "
    "BatchNorm folds separately inside dg.export() (requires the linear have exactly one user)",
    aten=(aten.batch_norm.default, aten._native_batch_norm_legit_no_training.default),
    dgtorch=("dgtorch.batch_norm",),
    dgq=("dgq.conv2d", "dgq.linear"),
    dghw=("dghw.conv2d", "dghw.fully_connected"),
    patterns=("FoldBatchNormIntoLinear",),
    fix="put the BatchNorm right after a Conv2d or a Linear whose output nothing else uses",
    spellings=("nn.BatchNorm2d", "nn.BatchNorm1d", "F.batch_norm"),
)
DROPOUT = OpRow(
    Section.SPECIAL_CASES,
    "Dropout",
    "Absent from the traced graph in eval mode",
    aten=(
        aten.dropout.default,
        aten.feature_dropout.default,
        aten.alpha_dropout.default,
        aten.feature_alpha_dropout.default,
    ),
    spellings=("nn.Dropout", "F.dropout"),
)

# -- Beyond the spec -----------------------------------------------------------------

ADAPTIVE_AVG_POOL2D = OpRow(
    Section.BEYOND_SPEC,
    "nn.AdaptiveAvgPool2d / F.adaptive_avg_pool2d",
    "Lowered to an average pool when the input size divides evenly by the output size",
    aten=(aten.adaptive_avg_pool2d.default, aten._adaptive_avg_pool2d.default),
    dgtorch=("dgtorch.adaptive_avg_pool2d",),
    dgq=("dgq.avg_pool2d",),
    dghw=("dghw.avg_pool2d",),
    patterns=("LowerAdaptiveAvgPool2d",),
    fix="choose an output size that divides the input size (1 works for any input), or use "
    "nn.AvgPool2d",
    spellings=("nn.AdaptiveAvgPool2d", "F.adaptive_avg_pool2d"),
)
DG_FLATTEN = OpRow(
    Section.BEYOND_SPEC,
    "dg.Flatten",
    "NCHW→NHWC reorder + flatten, the device's own memory order; the only place a permute is "
    "accepted",
    aten=(aten.permute.default, aten.flatten.using_ints),
    dgtorch=("dgtorch.permute", "dgtorch.flatten"),
    dgq=("dgq.flatten_channels_last",),
    dghw=("dghw.reshape",),
    patterns=("LegalizeChannelsLastFlatten",),
    spellings=("dg.Flatten",),
)
DG_NORM = OpRow(
    Section.BEYOND_SPEC,
    "dg.Norm(dim, eps, kind)",
    'Layer norm (kind="layer") or RMS norm (kind="rms") over the last axis of a sequence '
    "tensor ([B, D] or [B, S, D], D <= 4096), int8 in and out, computed exactly in integers; "
    "the only place its body's ops (mean, rsqrt, a bare scalar add/mul, ...) are accepted; "
    "not on spatial feature maps",
    module_types=("dg.frontend.modules.Norm",),
    dgtorch=("dgtorch.norm",),
    dgq=("dgq.norm",),
    dghw=("dghw.norm",),
    patterns=("LegalizeNorm", "LowerNorm"),
    spellings=("dg.Norm",),
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
NORM_BUILDING_BLOCKS = OpRow(
    Section.BEYOND_SPEC,
    "mean, sum, var, std, sqrt, rsqrt (outside dg.Norm)",
    "Rejected: the reductions and roots of a hand-written normalization, accepted only inside "
    "dg.Norm's forward",
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
    dgtorch=(
        "dgtorch.quantize_per_tensor",
        "dgtorch.dequantize_per_tensor",
        "dgtorch.quantize_per_channel",
        "dgtorch.dequantize_per_channel",
        "dgtorch.constant",
    ),
    dgq=("dgq.quantize", "dgq.dequantize", "dgq.requantize", "dgq.constant"),
    dghw=("dghw.rescale", "dghw.constant"),
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
    patterns=("LegalizeBitwiseShift",),
    spellings=("dg.BitShift",),
)
BITWISE = OpRow(
    Section.BEYOND_SPEC,
    "dg.Bitwise / torch.bitwise_and, bitwise_or, bitwise_xor (&, ^) with a constant",
    f"Bitwise and / or / xor with an int32 constant c; {LOGIC_NOTE}",
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
    patterns=("LegalizeBitwise",),
    spellings=("dg.Bitwise",),
)
COMPARE = OpRow(
    Section.BEYOND_SPEC,
    "dg.Compare / (x > c).to(torch.int32)",
    "Comparison with an int32 constant c (>, >=, <, <=, ==, !=) giving 0/1 as int32; the "
    "bool result must be converted with .to(torch.int32) right away; " + LOGIC_NOTE,
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
    patterns=("LegalizeCompare",),
    spellings=("dg.Compare",),
)
BITWISE_TENSORS = OpRow(
    Section.BEYOND_SPEC,
    "dg.Bitwise(kind) / torch.bitwise_and, bitwise_or, bitwise_xor (&, ^) of two tensors",
    "Bitwise and / or / xor of two tensors of one dtype and the same shape (no broadcasting: "
    f"tile the smaller one with Tensor.repeat inside the logic layer); {LOGIC_NOTE}",
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
    patterns=("LegalizeBitwiseTensor",),
    spellings=("dg.Bitwise",),
)
COMPARE_TENSORS = OpRow(
    Section.BEYOND_SPEC,
    "dg.Compare(kind) / (x > y).to(torch.int32) of two tensors",
    "Comparison of two tensors of one dtype and the same shape (>, >=, <, <=, ==, !=; no "
    "broadcasting) giving 0/1 as int32; the bool result must be converted with "
    ".to(torch.int32) right away; " + LOGIC_NOTE,
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
    patterns=("LegalizeCompareTensor",),
    spellings=("dg.Compare",),
)
LOGIC_REPEAT = OpRow(
    Section.BEYOND_SPEC,
    "Tensor.repeat() inside a logic layer",
    "Tiles an int32 tensor inside the forward of a dg.LogicLayer subclass (never the batch "
    "axis); elsewhere it is the Not Supported row above",
    aten=(aten.repeat.default,),
    dgtorch=("dgtorch.repeat",),
    dghw=("dghw.tile",),
    patterns=("LegalizeRepeat",),
    spellings=("Tensor.repeat",),
)
NEGATION = OpRow(
    Section.BEYOND_SPEC,
    "Negation (-x, torch.neg)",
    "Rejected: the device has no negation of an activation. RoPE's rotate_half "
    "cat((-x2, x1)) * sin compiles as cat((x2, x1)) * cat(-sin, sin), the sign in the "
    "constant table (dg.RotaryEmbedding)",
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
LOGIC_ROWS = (BIT_SHIFT, BITWISE, COMPARE, BITWISE_TENSORS, COMPARE_TENSORS, LOGIC_REPEAT)
"""Rows of the integer logic layers: they skip dgq (nothing to quantize), so link no dgq op."""

ROWS: tuple[OpRow, ...] = (
    CONV2D,
    LINEAR,
    AVG_POOL2D,
    MAX_POOL2D,
    SOFTMAX,
    SIGMOID,
    RELU,
    FLATTEN,
    RESHAPE,
    TRANSPOSE,
    SLICE,
    PAD,
    CAT,
    MATMUL,
    MUL_CONST_TENSOR,
    ADD,
    INTERPOLATE,
    PERMUTE,
    STANDALONE_PAD,
    EXPAND,
    REPEAT,
    BARE_MUL,
    STANDALONE_RELU,
    CONV_TRANSPOSE2D,
    OTHER_ACTIVATIONS,
    FUSED_ATTENTION,
    DILATED_CONV2D,
    BATCH_NORM,
    DROPOUT,
    ADAPTIVE_AVG_POOL2D,
    DG_FLATTEN,
    DG_NORM,
    TORCH_NORMALIZATION,
    NORM_BUILDING_BLOCKS,
    SUBTRACTION,
    QUANTIZATION,
    BIT_SHIFT,
    BITWISE,
    COMPARE,
    BITWISE_TENSORS,
    COMPARE_TENSORS,
    LOGIC_REPEAT,
    NEGATION,
)
"""Every row, in the spec's order, then dg's own."""


def rows_covering(target: object) -> Iterator[OpRow]:
    """The rows whose ATen overloads include `target` (supported rows first)."""
    return (row for row in ROWS if target in row.aten)


def rejecting_row(target: object) -> OpRow | None:
    """The row that rejects every use of `target` outright: not supported, or planned.

    None when some row supports `target` (its handler judges each use).
    """
    rows = list(rows_covering(target))
    if any(row.status is Status.SUPPORTED for row in rows):
        return None
    return rows[0] if rows else None


def row_of_module(module_type: str) -> OpRow | None:
    """The row covering every op run inside an ``nn.Module`` of qualified type `module_type`."""
    return next((row for row in ROWS if module_type in row.module_types), None)


def spellings_of(target: object) -> tuple[str, ...]:
    """How users write `target`, over all rows covering it (for error messages)."""
    rows = list(rows_covering(target))
    if target in INTERPOLATE_OTHER_MODES:
        rows.append(INTERPOLATE)
    return tuple(dict.fromkeys(s for row in rows for s in row.spellings))
