"""The rows of the product spec's op table (``supported-pytorch-ops.txt``), verbatim.

Each row also says how dg implements it: its op family, its dialect ops at
every stage and how the quantizer annotates it (see `dg.lowering.registry.table`).
"""

from __future__ import annotations

from dg.lowering.dghw_to_tosa.activations import TableToTosa
from dg.lowering.dghw_to_tosa.elementwise import AddToTosa, MulToTosa
from dg.lowering.dghw_to_tosa.layout import (
    ConcatToTosa,
    ReshapeToTosa,
    ResizeNearestToTosa,
    SliceToTosa,
    TransposeToTosa,
)
from dg.lowering.dghw_to_tosa.pooling import AvgPool2dToTosa, MaxPool2dToTosa
from dg.lowering.dghw_to_tosa.sequence import MatmulToTosa, SoftmaxToTosa
from dg.lowering.dghw_to_tosa.weights import (
    Conv2dToTosa,
    DepthwiseConv2dToTosa,
    FullyConnectedToTosa,
)
from dg.lowering.dgq_to_dghw.activations import LowerSigmoid
from dg.lowering.dgq_to_dghw.elementwise import LowerAdd, LowerMulConstant
from dg.lowering.dgq_to_dghw.layout import (
    FoldTransposeOfTranspose,
    LowerConcat,
    LowerReshape,
    LowerResizeNearest,
    LowerSlice,
    LowerTranspose,
)
from dg.lowering.dgq_to_dghw.pooling import LowerAvgPool2d, LowerMaxPool2d
from dg.lowering.dgq_to_dghw.sequence import (
    FoldTransposesAroundSoftmax,
    LowerMatmul,
    LowerSoftmax,
)
from dg.lowering.dgq_to_dghw.weights import (
    FoldFlattenReorderIntoFullyConnected,
    LowerConv2d,
    LowerLinear,
)
from dg.lowering.dgtorch_to_dgq.activations import FuseReluTail, LegalizeSigmoid
from dg.lowering.dgtorch_to_dgq.elementwise import LegalizeAdd, LegalizeMulConstant
from dg.lowering.dgtorch_to_dgq.layout import (
    LegalizeConcat,
    LegalizePad,
    LegalizeReshape,
    LegalizeResizeNearest,
    LegalizeSlice,
    LegalizeTranspose,
)
from dg.lowering.dgtorch_to_dgq.pooling import LegalizeAvgPool2d, LegalizeMaxPool2d
from dg.lowering.dgtorch_to_dgq.sequence import FoldScaleIntoMatmul, LegalizeMatmul, LegalizeSoftmax
from dg.lowering.dgtorch_to_dgq.weights import (
    FoldBatchNormIntoLinear,
    LegalizeConv2d,
    LegalizeLinear,
)
from dg.lowering.pad_folding import FoldPadIntoAvgPool2d, FoldPadIntoConv2d
from dg.lowering.registry.table import Family, OpRow, QuantRule, Section, Status, aten

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
    family=Family.WEIGHTS,
    quantization=QuantRule.WEIGHTED,
    aten=(aten.conv2d.default, aten.conv2d.padding),
    dgtorch=("dgtorch.conv2d",),
    dgq=("dgq.conv2d",),
    dghw=("dghw.conv2d", "dghw.depthwise_conv2d", "dghw.rescale"),
    spellings=("nn.Conv2d", "F.conv2d"),
    to_dgq=(LegalizeConv2d,),
    to_dghw=(LowerConv2d,),
    to_tosa=(Conv2dToTosa, DepthwiseConv2dToTosa),
)
LINEAR = OpRow(
    Section.LAYERS,
    "nn.Linear",
    family=Family.WEIGHTS,
    quantization=QuantRule.WEIGHTED,
    aten=(aten.linear.default,),
    dgtorch=("dgtorch.linear",),
    dgq=("dgq.linear",),
    dghw=("dghw.fully_connected", "dghw.rescale"),
    spellings=("nn.Linear", "F.linear"),
    to_dgq=(LegalizeLinear,),
    to_dghw=(LowerLinear, FoldFlattenReorderIntoFullyConnected),
    to_tosa=(FullyConnectedToTosa,),
)
AVG_POOL2D = OpRow(
    Section.LAYERS,
    "nn.AvgPool2d",
    "A preceding F.pad folds into its padding",
    family=Family.POOLING,
    quantization=QuantRule.SHARED_GRID,
    aten=(aten.avg_pool2d.default,),
    dgtorch=("dgtorch.avg_pool2d",),
    dgq=("dgq.avg_pool2d",),
    dghw=("dghw.avg_pool2d",),
    spellings=("nn.AvgPool2d", "F.avg_pool2d"),
    to_dgq=(LegalizeAvgPool2d,),
    to_dghw=(LowerAvgPool2d,),
    to_tosa=(AvgPool2dToTosa,),
)
MAX_POOL2D = OpRow(
    Section.LAYERS,
    "nn.MaxPool2d",
    "No padding support, native or via a preceding F.pad",
    family=Family.POOLING,
    quantization=QuantRule.SHARED_GRID,
    aten=(aten.max_pool2d.default,),
    dgtorch=("dgtorch.max_pool2d",),
    dgq=("dgq.max_pool2d",),
    dghw=("dghw.max_pool2d",),
    spellings=("nn.MaxPool2d", "F.max_pool2d"),
    to_dgq=(LegalizeMaxPool2d,),
    to_dghw=(LowerMaxPool2d,),
    to_tosa=(MaxPool2dToTosa,),
)

# -- Activations -------------------------------------------------------------------

SOFTMAX = OpRow(
    Section.ACTIVATIONS,
    "torch.softmax / F.softmax",
    "Output pinned to a fixed quantization grid",
    family=Family.SEQUENCE,
    quantization=QuantRule.FIXED_GRID,
    aten=(aten.softmax.int, aten._softmax.default),
    dgtorch=("dgtorch.softmax",),
    dgq=("dgq.softmax",),
    dghw=("dghw.softmax",),
    spellings=("F.softmax", "torch.softmax", "nn.Softmax"),
    to_dgq=(LegalizeSoftmax,),
    to_dghw=(LowerSoftmax, FoldTransposesAroundSoftmax),
    to_tosa=(SoftmaxToTosa,),
)
SIGMOID = OpRow(
    Section.ACTIVATIONS,
    "torch.sigmoid",
    "Output pinned to a fixed quantization grid",
    family=Family.ACTIVATIONS,
    quantization=QuantRule.FIXED_GRID,
    aten=(aten.sigmoid.default,),
    dgtorch=("dgtorch.sigmoid",),
    dgq=("dgq.sigmoid",),
    dghw=("dghw.table",),
    spellings=("torch.sigmoid", "F.sigmoid", "nn.Sigmoid"),
    to_dgq=(LegalizeSigmoid,),
    to_dghw=(LowerSigmoid,),
    to_tosa=(TableToTosa,),
)
RELU = OpRow(
    Section.ACTIVATIONS,
    "F.relu",
    "Only recognized as a fusion tail immediately after a weight op (Conv2d/Linear) or a "
    "residual add; not a standalone layer",
    family=Family.ACTIVATIONS,
    quantization=QuantRule.FUSION_TAIL,
    aten=(aten.relu.default, aten.relu_.default),
    dgtorch=("dgtorch.relu",),
    dgq=("dgq.conv2d", "dgq.linear", "dgq.add"),
    dghw=("dghw.rescale", "dghw.add"),
    spellings=("F.relu", "torch.relu", "nn.ReLU"),
    to_dgq=(FuseReluTail,),
)

# -- Shape & Elementwise Operations -------------------------------------------------

FLATTEN = OpRow(
    Section.SHAPE,
    "torch.flatten",
    family=Family.LAYOUT,
    quantization=QuantRule.SHARED_GRID,
    aten=(aten.flatten.using_ints,),
    dgtorch=("dgtorch.flatten",),
    dgq=("dgq.reshape",),
    dghw=("dghw.reshape", "dghw.transpose", "dghw.fully_connected"),
    spellings=("torch.flatten", "nn.Flatten"),
    to_dgq=(LegalizeReshape,),
    to_dghw=(LowerReshape,),
    to_tosa=(ReshapeToTosa,),
)
RESHAPE = OpRow(
    Section.SHAPE,
    "torch.reshape / view",
    "Cannot change the batch-axis extent",
    family=Family.LAYOUT,
    quantization=QuantRule.SHARED_GRID,
    aten=(aten.view.default, aten.reshape.default, aten._unsafe_view.default),
    dgtorch=("dgtorch.reshape",),
    dgq=("dgq.reshape",),
    dghw=("dghw.reshape", "dghw.transpose"),
    spellings=("torch.reshape", "Tensor.view"),
    to_dgq=(LegalizeReshape,),
    to_dghw=(LowerReshape,),
    to_tosa=(ReshapeToTosa,),
)
TRANSPOSE = OpRow(
    Section.SHAPE,
    "torch.transpose",
    "Feature rank 2–3 only; cannot move the batch axis",
    family=Family.LAYOUT,
    quantization=QuantRule.SHARED_GRID,
    aten=(aten.transpose.int,),
    dgtorch=("dgtorch.transpose",),
    dgq=("dgq.transpose",),
    dghw=("dghw.transpose",),
    spellings=("torch.transpose", "Tensor.transpose"),
    to_dgq=(LegalizeTranspose,),
    to_dghw=(LowerTranspose, FoldTransposeOfTranspose),
    to_tosa=(TransposeToTosa,),
)
SLICE = OpRow(
    Section.SHAPE,
    "torch.slice / __getitem__[:n]",
    "Sequence-domain tensors only (not spatial/HWC feature maps); not the batch axis; step must "
    "be 1",
    # torch.export records a slice of a whole axis (x[..., 0:n] on an n-wide axis) as alias.
    family=Family.LAYOUT,
    quantization=QuantRule.SHARED_GRID,
    aten=(aten.slice.Tensor, aten.alias.default),
    dgtorch=("dgtorch.slice",),
    dgq=("dgq.slice",),
    dghw=("dghw.slice",),
    spellings=("x[:n]",),
    to_dgq=(LegalizeSlice,),
    to_dghw=(LowerSlice,),
    to_tosa=(SliceToTosa,),
)
PAD = OpRow(
    Section.SHAPE,
    "F.pad(pad_value=0)",
    "Only usable as an immediate prefix to Conv2d or AvgPool2d; no standalone padding layer in "
    "quantized models",
    family=Family.LAYOUT,
    quantization=QuantRule.SHARED_GRID,
    aten=(aten.pad.default, aten.constant_pad_nd.default),
    dgtorch=("dgtorch.pad",),
    dgq=("dgq.pad",),
    dghw=("dghw.conv2d", "dghw.depthwise_conv2d", "dghw.avg_pool2d"),
    spellings=("F.pad", "nn.ZeroPad2d", "nn.ConstantPad2d"),
    to_dgq=(LegalizePad, FoldPadIntoConv2d, FoldPadIntoAvgPool2d),
    to_dghw=(FoldPadIntoConv2d, FoldPadIntoAvgPool2d),
)
CAT = OpRow(
    Section.SHAPE,
    "torch.cat",
    "Not the batch axis; requires compiler ≥ v0.15.0; inputs and output share one quantization "
    "scale",
    family=Family.LAYOUT,
    quantization=QuantRule.CONCAT_GRID,
    aten=(aten.cat.default, aten.concat.default),
    dgtorch=("dgtorch.cat",),
    dgq=("dgq.concat",),
    dghw=("dghw.concat",),
    spellings=("torch.cat", "torch.concat", "torch.concatenate"),
    to_dgq=(LegalizeConcat,),
    to_dghw=(LowerConcat,),
    to_tosa=(ConcatToTosa,),
)
MATMUL_PRODUCTS = (aten.matmul.default, aten.bmm.default, aten.mm.default)
"""The matmul row's products: the row without the score scale's division."""
SCORE_SCALES = (aten.mul.Tensor, aten.div.Tensor)
"""`scores * s` or `scores / d` right after a product: folded into the matmul's requantization."""

MATMUL = OpRow(
    Section.SHAPE,
    "torch.matmul / torch.bmm / torch.mm",
    "Activation × activation; feature rank 2–3 per operand; trailing scale must be a scalar "
    "constant; output must feed a quantized op",
    family=Family.SEQUENCE,
    aten=(*MATMUL_PRODUCTS, aten.div.Tensor),
    dgtorch=("dgtorch.matmul", "dgtorch.mul_scalar"),
    dgq=("dgq.matmul",),
    dghw=("dghw.matmul", "dghw.rescale"),
    spellings=("torch.matmul", "torch.bmm", "torch.mm", "@"),
    remark="torch.mm is rejected at export: its operands are [B, K] matrices, "
    "feature rank 1, below the row's 2–3, and a product of two [B, K] activations mixes the "
    "samples of a batch; use nn.Linear for activation × weight, torch.matmul on [B, S, D] for "
    "activation × activation",
    to_dgq=(LegalizeMatmul, FoldScaleIntoMatmul),
    to_dghw=(LowerMatmul,),
    to_tosa=(MatmulToTosa,),
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
    family=Family.ELEMENTWISE,
    aten=(aten.mul.Tensor,),
    dgtorch=("dgtorch.mul",),
    dgq=("dgq.mul_constant",),
    dghw=("dghw.mul",),
    spellings=("torch.mul", "*"),
    to_dgq=(LegalizeMulConstant,),
    to_dghw=(LowerMulConstant,),
    to_tosa=(MulToTosa,),
)
ADD = OpRow(
    Section.SHAPE,
    "Element-wise +",
    "Both operands must already be quantized activation streams",
    family=Family.ELEMENTWISE,
    quantization=QuantRule.RESIDUAL,
    aten=(aten.add.Tensor, aten.add_.Tensor),
    dgtorch=("dgtorch.add",),
    dgq=("dgq.add",),
    dghw=("dghw.add",),
    spellings=("+", "torch.add"),
    to_dgq=(LegalizeAdd,),
    to_dghw=(LowerAdd,),
    to_tosa=(AddToTosa,),
)
INTERPOLATE = OpRow(
    Section.SHAPE,
    'F.interpolate(mode="nearest")',
    'Mode must be "nearest" or "nearest-exact"; input/output share one quantization grid',
    family=Family.LAYOUT,
    quantization=QuantRule.SHARED_GRID,
    aten=(
        aten.upsample_nearest2d.vec,
        aten.upsample_nearest2d.default,
        aten._upsample_nearest_exact2d.vec,
        aten._upsample_nearest_exact2d.default,
    ),
    dgtorch=("dgtorch.upsample_nearest2d",),
    dgq=("dgq.resize_nearest",),
    dghw=("dghw.resize_nearest",),
    spellings=("F.interpolate", "nn.Upsample", "F.upsample"),
    to_dgq=(LegalizeResizeNearest,),
    to_dghw=(LowerResizeNearest,),
    to_tosa=(ResizeNearestToTosa,),
)

INTERPOLATE_OTHER_MODES: dict[str, str] = {
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
    family=Family.LAYOUT,
    aten=(aten.permute.default,),
    status=Status.NOT_SUPPORTED,
    fix="use dg.Flatten() to flatten a feature map channels-last, or torch.transpose",
    spellings=("torch.permute", "Tensor.permute"),
)
STANDALONE_PAD = OpRow(
    Section.NOT_SUPPORTED,
    "Standalone F.pad",
    "Padding is only supported immediately before a Conv2d or AvgPool2d.",
    family=Family.LAYOUT,
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
    family=Family.LAYOUT,
    aten=(aten.expand.default,),
    status=Status.NOT_SUPPORTED,
    fix="let an elementwise op broadcast instead, or compute the expanded tensor as a layer output",
    spellings=("Tensor.expand", "Tensor.expand_as"),
)
REPEAT = OpRow(
    Section.NOT_SUPPORTED,
    "Tensor.repeat()",
    "Only supported inside the logic layers (dg.BitShift, etc.), not in quantized models.",
    family=Family.LAYOUT,
    aten=(aten.repeat.default,),
    status=Status.NOT_SUPPORTED,
    fix="remove the repeat from the quantized model",
    spellings=("Tensor.repeat",),
)
BARE_MUL = OpRow(
    Section.NOT_SUPPORTED,
    "Bare torch.mul(x, scalar)",
    "Not supported on its own; only valid inside dg.Norm or an attention score scale.",
    family=Family.ELEMENTWISE,
    aten=(aten.mul.Tensor, aten.mul.Scalar, aten.mul_.Tensor),
    status=Status.NOT_SUPPORTED,
    fix="fold the constant factor into the weights of the neighbouring Conv2d or Linear",
    spellings=("torch.mul", "*"),
)
STANDALONE_RELU = OpRow(
    Section.NOT_SUPPORTED,
    "Standalone F.relu",
    "Only supported as a fusion tail after a weight op or residual add, not as a layer of its own.",
    family=Family.ACTIVATIONS,
    aten=RELU.aten,
    status=Status.NOT_SUPPORTED,
    fix="apply the ReLU directly to the output of a Conv2d, Linear or residual add (or remove it)",
    spellings=RELU.spellings,
)
CONV_TRANSPOSE2D = OpRow(
    Section.NOT_SUPPORTED,
    "nn.ConvTranspose2d",
    "Not supported.",
    family=Family.WEIGHTS,
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
    family=Family.ACTIVATIONS,
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
    family=Family.SEQUENCE,
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
    family=Family.WEIGHTS,
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
    family=Family.WEIGHTS,
    aten=(aten.batch_norm.default, aten._native_batch_norm_legit_no_training.default),
    dgtorch=("dgtorch.batch_norm",),
    dgq=("dgq.conv2d", "dgq.linear"),
    dghw=("dghw.conv2d", "dghw.fully_connected"),
    fix="put the BatchNorm right after a Conv2d or a Linear whose output nothing else uses",
    spellings=("nn.BatchNorm2d", "nn.BatchNorm1d", "F.batch_norm"),
    to_dgq=(FoldBatchNormIntoLinear,),
)
DROPOUT = OpRow(
    Section.SPECIAL_CASES,
    "Dropout",
    "Absent from the traced graph in eval mode",
    family=Family.LAYOUT,
    quantization=QuantRule.SHARED_GRID,
    aten=(
        aten.dropout.default,
        aten.feature_dropout.default,
        aten.alpha_dropout.default,
        aten.feature_alpha_dropout.default,
    ),
    spellings=("nn.Dropout", "F.dropout"),
)
