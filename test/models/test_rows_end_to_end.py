"""One end-to-end model test per supported row of the spec (issue 3 and docs/design/cnn-rows.md).

Each model is tiny and exercises its row right after (or before) a conv or a
linear, the way real networks use it. The standard is the slice's: quantize
with dg, freeze, `dg.export`, and the program must be within one output step
of the frozen model on every element of a batch the export never saw
(`harness.assert_matches_frozen`).
"""

from __future__ import annotations

from functools import cache

import pytest
import torch
import torch.nn.functional as F
from harness import (
    Compiled,
    Lambda,
    assert_matches_frozen,
    calls_matching,
    check_model,
    compile_model,
    output_qparams,
)
from torch import nn

import dg

IMAGE = (3, 8, 8)


class ConvThen(nn.Module):
    """conv (3 -> `channels`, 3x3, same size) followed by `tail`; the usual host of a row."""

    def __init__(self, tail, channels: int = 4, in_channels: int = 3):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, channels, 3, padding=1)
        self.tail = tail

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.tail(self.conv(x))


# -- nn.Conv2d ------------------------------------------------------------------------

CONV_CASES = {
    "k3x5_s2x1_p1x2": dict(kernel_size=(3, 5), stride=(2, 1), padding=(1, 2)),
    "k4_s3_p3": dict(kernel_size=4, stride=3, padding=3),
    "k1_s2_no_bias": dict(kernel_size=1, stride=2, bias=False),
    "k3_same": dict(kernel_size=3, padding="same"),
    # torch pads an even kernel's "same" asymmetrically: one more row/column at the end.
    "k4x2_same": dict(kernel_size=(4, 2), padding="same"),
    "k2_valid": dict(kernel_size=2, padding="valid"),
}


@pytest.mark.parametrize("case", CONV_CASES)
def test_dense_conv(case: str) -> None:
    model = nn.Sequential(nn.Conv2d(3, 5, **CONV_CASES[case]))
    check_model("nn.Conv2d dense", case, model, [(3, 9, 10)])


class Depthwise(nn.Module):
    def __init__(self, stride: int, relu: bool):
        super().__init__()
        self.expand = nn.Conv2d(3, 6, 1)
        self.depthwise = nn.Conv2d(6, 6, 3, stride=stride, padding=1, groups=6)
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.depthwise(self.expand(x))
        return F.relu(y) if self.relu else y


@pytest.mark.parametrize("stride, relu", [(1, True), (2, False)])
def test_depthwise_conv(stride: int, relu: bool) -> None:
    check_model(
        "nn.Conv2d depthwise",
        f"s{stride}{'_relu' if relu else ''}",
        Depthwise(stride, relu),
        [IMAGE],
    )


# -- nn.Linear ------------------------------------------------------------------------


class Mlp(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.fc1 = nn.Linear(features, 10)
        self.fc2 = nn.Linear(10, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


@pytest.mark.parametrize("shape", [(12,), (5, 12), (2, 3, 12)], ids=["BD", "BSD", "BTSD"])
def test_linear(shape: tuple[int, ...]) -> None:
    check_model("nn.Linear", "x".join(map(str, shape)), Mlp(12), [shape])


class LinearCalledTwice(nn.Module):
    """One Linear applied twice (tied weights): each call has its own input scale."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 12)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(F.relu(self.fc(x)))


@pytest.mark.parametrize("mode", ["ptq", "qat"])
def test_linear_called_twice_quantizes_each_call(mode: str) -> None:
    """Each call's int32 bias is on its own input scale x the weight scale (one bias node
    for both calls quantized the bias for the first call only, and export failed)."""
    compiled = check_model(
        "nn.Linear", f"called_twice_{mode}", LinearCalledTwice(), [(12,)], mode=mode
    )
    assert compiled.program.mlir().count("dghw.fully_connected ") == 2


# -- nn.AvgPool2d (and F.pad folded into it) ------------------------------------------------

AVG_POOL_CASES = {
    "k2": (None, dict(kernel_size=2)),
    "k3_s2_p1_include_pad": (None, dict(kernel_size=3, stride=2, padding=1)),
    "k3_s2_p1_exclude_pad": (
        None,
        dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    ),
    "fpad_fold_include_pad": ((1, 1, 1, 1), dict(kernel_size=3, stride=1)),
    # The F.pad zeros are real input to torch: they count even with count_include_pad=False.
    "fpad_fold_exclude_pad": ((1, 2, 0, 1), dict(kernel_size=3, stride=2, count_include_pad=False)),
    "ceil_mode_overhang": (None, dict(kernel_size=3, stride=2, ceil_mode=True)),
    "ceil_mode_p1_include_pad": (None, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    "ceil_mode_p1_exclude_pad": (
        None,
        dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    ),
    "divisor_override": (None, dict(kernel_size=2, divisor_override=3)),
    "divisor_override_p1": (None, dict(kernel_size=3, stride=2, padding=1, divisor_override=5)),
}


class PadThenPool(nn.Module):
    def __init__(self, pad, pool: nn.Module):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.pad = pad
        self.pool = pool

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        if self.pad is not None:
            y = F.pad(y, self.pad)
        return self.pool(y)


@pytest.mark.parametrize("case", AVG_POOL_CASES)
def test_avg_pool2d(case: str) -> None:
    pad, options = AVG_POOL_CASES[case]
    check_model("nn.AvgPool2d", case, PadThenPool(pad, nn.AvgPool2d(**options)), [IMAGE])


def test_avg_pool2d_fpad_and_own_padding_excluded() -> None:
    """F.pad zeros count, the pool's own padding does not: compile exactly or refuse clearly."""
    pool = nn.AvgPool2d(2, stride=2, padding=1, count_include_pad=False)
    model = PadThenPool((1, 0, 1, 0), pool)
    try:
        compiled = compile_model(model, [IMAGE])
    except dg.ExportError as error:
        assert any("avg_pool" in p.op or "AvgPool2d" in p.op for p in error.problems), error
        return
    assert_matches_frozen("nn.AvgPool2d", "fpad_and_own_padding_exclude_pad", compiled)


# -- nn.MaxPool2d ----------------------------------------------------------------------------

MAX_POOL_CASES = {
    "k3_s2": ((3, 9, 9), dict(kernel_size=3, stride=2)),
    "k2x3_s1x2": (IMAGE, dict(kernel_size=(2, 3), stride=(1, 2))),
    # ceil_mode that never reads past the edge is no padding: 7 = 2 * 2 + 3.
    "ceil_mode_exact": ((3, 7, 7), dict(kernel_size=3, stride=2, ceil_mode=True)),
}


@pytest.mark.parametrize("case", MAX_POOL_CASES)
def test_max_pool2d(case: str) -> None:
    shape, options = MAX_POOL_CASES[case]
    check_model("nn.MaxPool2d", case, ConvThen(nn.MaxPool2d(**options)), [shape])


# -- softmax and sigmoid ---------------------------------------------------------------------

FIXED_GRID = (1 / 256, -128)


class LinearThen(nn.Module):
    def __init__(self, tail, features: int = 12, out: int = 6):
        super().__init__()
        self.fc = nn.Linear(features, out)
        self.tail = tail

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.tail(self.fc(x))


FIXED_GRID_CASES = {
    "torch.softmax_linear": (lambda: LinearThen(Lambda(lambda y: torch.softmax(y, -1))), (12,)),
    "F.softmax_BSD": (lambda: LinearThen(Lambda(lambda y: F.softmax(y, dim=-1))), (5, 12)),
    "F.softmax_channels": (lambda: ConvThen(Lambda(lambda y: F.softmax(y, dim=1))), IMAGE),
    "F.softmax_width": (lambda: ConvThen(Lambda(lambda y: F.softmax(y, dim=3))), IMAGE),
    "torch.sigmoid_conv": (lambda: ConvThen(Lambda(torch.sigmoid)), IMAGE),
}


FIXED_GRID_RUNS = [
    *((case, "ptq") for case in FIXED_GRID_CASES),
    ("F.softmax_BSD", "qat"),
    ("torch.sigmoid_conv", "qat"),
]
"""Every case with PTQ; QAT (fake quantizers, not observers) for one softmax and one sigmoid."""


@pytest.mark.parametrize("case, mode", FIXED_GRID_RUNS)
def test_softmax_sigmoid_on_the_fixed_grid(case: str, mode: str) -> None:
    make, shape = FIXED_GRID_CASES[case]
    row = "torch.softmax / F.softmax" if "softmax" in case else "torch.sigmoid"
    compiled = compile_model(make(), [shape], mode=mode)
    (scale, zero_point) = output_qparams(compiled.frozen)[0]
    assert (scale, zero_point) == pytest.approx(FIXED_GRID), "the quantizer must pin the grid"
    assert_matches_frozen(row, f"{case}_{mode}", compiled)


# -- F.relu as a fusion tail -----------------------------------------------------------------


class Residual(nn.Module):
    def __init__(self, relu: bool):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 3, 3, padding=1)
        self.conv2 = nn.Conv2d(3, 3, 3, padding=1)
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv1(x)
        z = self.conv2(y) + y
        return F.relu(z) if self.relu else z


RELU_CASES = {
    "after_conv": (lambda: ConvThen(nn.ReLU()), IMAGE),
    "after_linear": (lambda: LinearThen(Lambda(F.relu)), (12,)),
    "after_add": (lambda: Residual(relu=True), IMAGE),
}


@pytest.mark.parametrize("case", RELU_CASES)
def test_relu_tail(case: str) -> None:
    make, shape = RELU_CASES[case]
    check_model("F.relu (fusion tail)", case, make(), [shape])


# -- flatten, reshape / view, dg.Flatten -------------------------------------------------------


class ConvReshapeLinear(nn.Module):
    """conv (C=3, H=4, W=6 after the stride) -> a shape op -> linear on the last axis."""

    def __init__(self, reshape, features: int):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, stride=(2, 1), padding=1)
        self.reshape = reshape
        self.fc = nn.Linear(features, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.reshape(self.conv(x)))


SHAPE_CASES = {
    "torch.flatten": ("torch.flatten", lambda y: torch.flatten(y, 1), 72),
    "nn.Flatten": ("torch.flatten", nn.Flatten(), 72),
    "view_size0": ("torch.reshape / view", lambda y: y.view(y.size(0), -1), 72),
    "view_minus1": ("torch.reshape / view", lambda y: y.view(-1, 72), 72),
    "reshape_BC_HW": ("torch.reshape / view", lambda y: y.reshape(y.shape[0], 3, 24), 24),
    "flatten_2_3": ("torch.flatten", lambda y: torch.flatten(y, 2), 24),
}


@pytest.mark.parametrize("case", SHAPE_CASES)
def test_flatten_reshape_feeding_linear(case: str) -> None:
    """CHW order on an NHWC device: H, W and C all differ, so any misorder shows."""
    row, reshape, features = SHAPE_CASES[case]
    module = reshape if isinstance(reshape, nn.Module) else Lambda(reshape)
    check_model(row, case, ConvReshapeLinear(module, features), [(2, 8, 6)])


def test_reshape_output() -> None:
    """A reshape as the model's last op: the device result comes back in torch's order."""
    model = ConvThen(Lambda(lambda y: y.reshape(y.shape[0], 8, 2, 16)))
    check_model("torch.reshape / view", "model_output", model, [IMAGE])


@pytest.mark.parametrize("then_linear", [True, False], ids=["then_linear", "model_output"])
def test_dg_flatten(then_linear: bool) -> None:
    model = ConvReshapeLinear(dg.Flatten(), 72)
    if not then_linear:
        model.fc = nn.Identity()
    case = "conv_then_linear" if then_linear else "model_output"
    check_model("dg.Flatten", case, model, [(2, 8, 6)])


# -- F.pad before a conv --------------------------------------------------------------------


class PadThenConv(nn.Module):
    def __init__(self, pad, first: bool, conv_padding: int = 0):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 1)
        self.conv = nn.Conv2d(4 if not first else 3, 5, 3, padding=conv_padding)
        self.pad = pad
        self.first = first

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x if self.first else self.stem(x)
        return self.conv(F.pad(y, self.pad))


PAD_CONV_CASES = {
    "asymmetric": ((1, 2, 0, 1), False, 0),
    "plus_own_padding": ((1, 1, 2, 2), False, 1),
    "on_graph_input": ((1, 1, 1, 1), True, 0),
    "explicit_value_0": ((2, 0, 0, 2), False, 0),
}


@pytest.mark.parametrize("case", PAD_CONV_CASES)
def test_pad_before_conv(case: str) -> None:
    pad, first, conv_padding = PAD_CONV_CASES[case]
    check_model("F.pad (before Conv2d)", case, PadThenConv(pad, first, conv_padding), [IMAGE])


# -- torch.cat --------------------------------------------------------------------------------


class TwoBranchCat(nn.Module):
    def __init__(self, dim: int, with_input: bool = False):
        super().__init__()
        self.a = nn.Conv2d(3, 3, 3, padding=1)
        self.b = nn.Conv2d(3, 3, 1)
        self.dim = dim
        self.with_input = with_input

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        branches = [self.a(x), F.relu(self.b(x))]
        if self.with_input:
            branches.append(x)
        return torch.cat(branches, dim=self.dim)


class LinearCat(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.a = nn.Linear(12, 6)
        self.b = nn.Linear(12, 4 if dim == -1 else 6)
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat((self.a(x), self.b(x)), self.dim)


CAT_CASES = {
    "channels": (lambda: TwoBranchCat(1), IMAGE),
    "height": (lambda: TwoBranchCat(2), IMAGE),
    "width_negative_dim": (lambda: TwoBranchCat(-1), IMAGE),
    "three_with_graph_input": (lambda: TwoBranchCat(1, with_input=True), IMAGE),
    "linear_features": (lambda: LinearCat(-1), (12,)),
    "BSD_sequence": (lambda: LinearCat(1), (5, 12)),
}


@pytest.mark.parametrize("case", CAT_CASES)
def test_cat(case: str) -> None:
    make, shape = CAT_CASES[case]
    check_model("torch.cat", case, make(), [shape])


def test_cat_needs_compiler_0_15() -> None:
    compiled = compile_model(TwoBranchCat(1), [IMAGE])
    with pytest.raises(dg.ExportError) as info:
        dg.export(compiled.frozen, (torch.randn(2, *IMAGE),), target_version="0.14.0")
    assert "0.15.0" in str(info.value) and "0.14.0" in str(info.value)


# -- element-wise + ---------------------------------------------------------------------------


class TwoInputAdd(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


class InputPlusConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x) + x


ADD_CASES = {
    "two_convs": (lambda: Residual(relu=False), [IMAGE]),
    "graph_input_plus_conv": (InputPlusConv, [IMAGE]),
    "two_graph_inputs": (TwoInputAdd, [(4, 6), (4, 6)]),
}


@pytest.mark.parametrize("case", ADD_CASES)
def test_elementwise_add(case: str) -> None:
    make, shapes = ADD_CASES[case]
    check_model("Element-wise +", case, make(), shapes)


# -- F.interpolate ------------------------------------------------------------------------------

INTERPOLATE_CASES = {
    "scale_2": dict(scale_factor=2),
    "size_3x7_down_and_up": dict(size=(3, 7)),
}


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("case", INTERPOLATE_CASES)
def test_interpolate(case: str, mode: str) -> None:
    options = INTERPOLATE_CASES[case]
    model = ConvThen(Lambda(lambda y: F.interpolate(y, mode=mode, **options)))
    check_model(f'F.interpolate(mode="{mode}")', case, model, [(3, 4, 4)])


# -- BatchNorm folds ------------------------------------------------------------------------


def randomize_batch_norm(bn: nn.modules.batchnorm._BatchNorm, seed: int) -> None:
    """Statistics and affine parameters far from the identity, one gamma negative."""
    generator = torch.Generator().manual_seed(seed)
    n = bn.num_features
    with torch.no_grad():
        bn.running_mean.copy_(torch.randn(n, generator=generator))
        bn.running_var.copy_(torch.rand(n, generator=generator) * 2 + 0.2)
        bn.weight.copy_(torch.rand(n, generator=generator) + 0.5)
        bn.weight[0] = -bn.weight[0]
        bn.bias.copy_(torch.randn(n, generator=generator))


class ConvBn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(4)
        randomize_batch_norm(self.bn1, 1)
        randomize_batch_norm(self.bn2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))


class LinearBn(nn.Module):
    def __init__(self, relu: bool):
        super().__init__()
        self.fc1 = nn.Linear(12, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 3)
        self.relu = relu
        randomize_batch_norm(self.bn, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.bn(self.fc1(x))
        return self.fc2(F.relu(y) if self.relu else y)


class BatchNormNet(nn.Module):
    """Both folds in one model: Conv -> BN (freeze folds it) and Linear -> BN (dg.export does)."""

    def __init__(self):
        super().__init__()
        self.convs = ConvBn()
        self.fc = LinearBn(relu=True)
        self.fc.fc1 = nn.Linear(4 * 8 * 8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.convs(x), 1))


@cache
def batch_norm_net_qat() -> Compiled:
    """QAT, where torchao's conv-bn folding alone takes many seconds: compiled once."""
    return compile_model(BatchNormNet(), [IMAGE], mode="qat")


def batch_norm_inputs(gm: torch.fx.GraphModule) -> list[str]:
    """The op each batch norm of `gm` normalizes the output of."""
    return [str(n.args[0].target) for n in calls_matching(gm, "batch_norm")]


def test_conv_batch_norm_folds_in_freeze_qat() -> None:
    compiled = batch_norm_net_qat()
    assert batch_norm_inputs(compiled.frozen) == ["aten.linear.default"], (
        "a conv's batch norm is left in the frozen graph"
    )
    assert_matches_frozen("BatchNorm (Conv -> BN)", "qat", compiled)


def test_conv_batch_norm_folds_in_prepare_ptq() -> None:
    compiled = compile_model(ConvBn(), [IMAGE])
    assert not calls_matching(compiled.frozen, "batch_norm"), "batch norm left in the frozen graph"
    assert_matches_frozen("BatchNorm (Conv -> BN)", "ptq", compiled)


def test_linear_batch_norm_folds_in_export_qat() -> None:
    compiled = batch_norm_net_qat()
    assert batch_norm_inputs(compiled.frozen) == ["aten.linear.default"], "nothing left to fold"
    assert "dgtorch.batch_norm" in compiled.program.mlir("dgtorch")
    assert "batch_norm" not in compiled.program.mlir("dgq"), "dg.export did not fold it"
    assert_matches_frozen("BatchNorm (Linear -> BN)", "qat", compiled)


@pytest.mark.parametrize("relu", [False, True], ids=["bn", "bn_relu"])
def test_linear_batch_norm_ptq(relu: bool) -> None:
    """PTQ: torchao folds it already in prepare_pt2e, or dg.export does; either way exactly."""
    compiled = compile_model(LinearBn(relu), [(12,)])
    if calls_matching(compiled.frozen, "batch_norm"):
        assert "batch_norm" not in compiled.program.mlir("dgq"), "dg.export did not fold it"
    assert_matches_frozen(
        "BatchNorm (Linear -> BN)", f"ptq_{'relu' if relu else 'plain'}", compiled
    )


# -- Dropout --------------------------------------------------------------------------------


class WithDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.drop2d = nn.Dropout2d(0.5)
        self.fc = nn.Linear(4 * 4 * 4, 6)
        self.drop = nn.Dropout(0.5)
        self.out = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.drop2d(F.relu(self.conv(x)))
        y = self.drop(F.relu(self.fc(torch.flatten(y, 1))))
        return self.out(F.dropout(y, 0.2, training=self.training))


def dropouts_in_train_mode(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    training = []
    for node in calls_matching(gm, "dropout"):
        train = node.kwargs.get("train", node.args[2] if len(node.args) > 2 else False)
        if train is not False:
            training.append(node)
    return training


def test_dropout_eval_model() -> None:
    check_model("Dropout", "eval_ptq", WithDropout(), [IMAGE])


@cache
def dropout_qat() -> Compiled:
    """`WithDropout` prepared by prepare_qat, i.e. captured in train mode, dropout and all."""
    return compile_model(WithDropout(), [IMAGE], mode="qat")


def test_dropout_prepared_in_train_mode() -> None:
    compiled = dropout_qat()
    assert not dropouts_in_train_mode(compiled.frozen)
    assert_matches_frozen("Dropout", "prepared_in_train_mode_qat", compiled)


def test_dropout_exported_in_train_mode() -> None:
    """A user who forgot .eval() before dg.export still gets the inference program."""
    frozen = dropout_qat().frozen
    frozen.train()
    try:
        program = dg.export(frozen, (torch.randn(2, *IMAGE),))
    finally:
        frozen.eval()
    exported = Compiled(frozen, program, (IMAGE,))
    assert_matches_frozen("Dropout", "dg.export_in_train_mode", exported)


# -- adaptive average pooling ------------------------------------------------------------------

ADAPTIVE_CASES = {
    "nn_1x1": (nn.AdaptiveAvgPool2d((1, 1)), (3, 4, 4)),
    "nn_2x4_of_8x8": (nn.AdaptiveAvgPool2d((2, 4)), IMAGE),
    "F_int_4_of_8x8": (Lambda(lambda y: F.adaptive_avg_pool2d(y, 4)), IMAGE),
    "F_identity_size": (Lambda(lambda y: F.adaptive_avg_pool2d(y, (8, 8))), IMAGE),
}


@pytest.mark.parametrize("case", ADAPTIVE_CASES)
def test_adaptive_avg_pool2d_divisible(case: str) -> None:
    pool, shape = ADAPTIVE_CASES[case]
    check_model("AdaptiveAvgPool2d (divisible)", case, ConvThen(pool), [shape])


class ResNetHead(nn.Module):
    """The head of a ResNet: global average pool, flatten, fc."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.avgpool(F.relu(self.conv(x)))
        return self.fc(torch.flatten(x, 1))


def test_adaptive_avg_pool2d_resnet_head() -> None:
    check_model("AdaptiveAvgPool2d (divisible)", "resnet_head", ResNetHead(), [IMAGE])
