"""Everyday idioms beyond the spec's wording compile and match the frozen model (issue 13)."""

from __future__ import annotations

import pytest
import torch
from harness import CHECK_SEED, assert_matches_frozen, check_model, compile_model, inputs, line_of
from idiom_models import (
    BatchSplit,
    ChunkedProjection,
    DictHeads,
    GlobalMeanHead,
    LastAxisSum,
    SharedBranches,
    SpatialChunk,
    SplitSizes,
    TokenMean,
    UnbindTokens,
)
from torch.utils._pytree import tree_flatten

import dg
from dg.lowering import registry


@pytest.mark.parametrize("keepdim", [False, True])
def test_spatial_mean_is_a_global_average_pool(keepdim):
    compiled = check_model(
        "x.mean((2, 3))", f"keepdim={keepdim}", GlobalMeanHead(keepdim), [(3, 32, 32)]
    )
    assert "dghw.avg_pool2d" in compiled.program.mlir("dghw")
    assert "aten.mean" not in str(compiled.frozen.graph)


@pytest.mark.parametrize("keepdim", [False, True])
def test_token_mean_is_an_average_pool_of_the_sequence(keepdim):
    compiled = check_model(
        "x.mean(1)", f"[64, 64] keepdim={keepdim}", TokenMean(64, keepdim), [(64, 64)]
    )
    assert "dghw.avg_pool2d" in compiled.program.mlir("dghw")


def test_reductions_without_a_row_do_not_point_at_dg_norm():
    problems = dg.check(LastAxisSum(), (torch.randn(2, 8, 16),))
    assert [p.op.split(" (")[0] for p in problems] == ["Tensor.amax", "Tensor.sum"]
    for problem in problems:
        assert problem.reason == registry.REDUCTIONS.reason
        assert "dg.Norm" not in (problem.fix or "")
        assert problem.location.endswith(f":{line_of(LastAxisSum.forward, '# dg: reductions')}")


def test_chunk_of_a_projection_is_three_slices():
    compiled = check_model("Tensor.chunk", "qkv 64x64", ChunkedProjection(), [(64, 64)])
    assert compiled.program.mlir("dghw").count("dghw.slice") == 3


def test_split_with_sizes_and_split_by_size():
    check_model("torch.split", "[16, 32] and 4", SplitSizes(), [(64, 48)])


def test_unbind_and_select_of_tokens():
    check_model("Tensor.unbind / x[:, i]", "S=8", UnbindTokens(), [(8, 32)])


def test_chunk_of_a_feature_map_gets_the_slice_rows_error():
    problems = dg.check(SpatialChunk(), (torch.randn(2, 3, 16, 16),))
    assert len(problems) == 2
    for problem in problems:
        assert problem.op.startswith("Tensor.chunk (aten.slice.Tensor(dim=1")
        assert "slices a spatial feature map" in problem.reason
        assert registry.SLICE.notes in problem.reason
        assert problem.location.endswith(f":{line_of(SpatialChunk.forward, '# dg: spatial chunk')}")


def test_a_split_of_the_batch_axis_is_refused():
    problems = dg.check(BatchSplit(), (torch.randn(4, 8, 32),))
    # torch.export cannot keep the batch dynamic through it: refused before dg's importer.
    assert [p.op for p in problems] == ["torch.export"]
    assert "fixes its batch size" in problems[0].reason


def test_dict_and_nested_outputs_keep_their_structure():
    compiled = compile_model(DictHeads(), [(3, 16, 16)])
    xs = inputs(compiled.shapes, 3, seed=CHECK_SEED)
    with torch.no_grad():
        expected = compiled.frozen(*xs)
    actual = compiled.program.run(*xs)
    assert list(actual) == ["logits", "extra"]
    assert isinstance(actual["extra"], tuple) and isinstance(actual["extra"][1], list)
    expected_leaves, expected_spec = tree_flatten(expected)
    actual_leaves, actual_spec = tree_flatten(actual)
    assert actual_spec == expected_spec
    for (scale, _), want, got in zip(
        compiled.program.output_qparams, expected_leaves, actual_leaves, strict=True
    ):
        assert want.shape == got.shape
        assert ((want - got).abs() / scale).max().item() <= 1.0 + 1e-3


def test_nested_structure_survives_save_and_load(tmp_path):
    compiled = compile_model(DictHeads(), [(3, 16, 16)])
    path = tmp_path / "heads.mlir"
    compiled.program.save(path)
    loaded = dg.load(path)
    x = inputs(compiled.shapes, 2, seed=CHECK_SEED)
    assert tree_flatten(loaded.run(*x))[1] == tree_flatten(compiled.program.run(*x))[1]


def test_one_tensor_as_two_example_inputs():
    torch.manual_seed(0)
    model = SharedBranches().eval()
    x = torch.randn(2, 16, 32)
    prepared = dg.prepare_ptq(model, (x, x))
    with torch.no_grad():
        for step in range(3):
            a, b = inputs([(16, 32), (16, 32)], 8, seed=10 + step)
            prepared(a, b)
            prepared(a, a)
    frozen = dg.freeze_quantization(prepared)
    program = dg.export(frozen, (x, x))
    assert len(program.input_qparams) == 2
    y = torch.randn(5, 16, 32)
    scale = program.output_qparams[0][0]
    assert ((program.run(y, y) - frozen(y, y)).abs() / scale).max().item() <= 1.0 + 1e-3


def test_one_module_called_on_two_inputs():
    compiled = compile_model(SharedBranches(), [(16, 32), (16, 32)])
    assert_matches_frozen("shared module", "two inputs", compiled)
