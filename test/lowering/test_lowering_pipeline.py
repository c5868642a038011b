"""`lower` (the Python API of the pipeline) and the compiler-version gate of dg-pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

import dg
from dg.dialects.dghw import Dghw
from dg.dialects.dgq import Dgq
from dg.dialects.dgtorch import DgTorch
from dg.lowering import pipeline
from dg.lowering.pipeline import DgPipelinePass, check_version_gates, lower

# The lit test's model: conv+relu, conv, residual add+relu, flatten, linear.
MODEL = Path(__file__).with_name("dg-pipeline.mlir")


def context() -> Context:
    ctx = Context()
    for dialect in (Builtin, Func, DgTorch, Dgq, Dghw):
        ctx.load_dialect(dialect)
    return ctx


@pytest.fixture
def model() -> ModuleOp:
    return Parser(context(), MODEL.read_text()).parse_module()


def dialects(module: ModuleOp) -> set[str]:
    return {op.dialect_name() for op in module.walk()}


def test_lower_returns_a_clone_per_stage(model: ModuleOp) -> None:
    before = str(model)
    stages = lower(model)
    assert list(stages) == ["dgtorch", "dgq", "dghw"]
    assert str(model) == before, "lower must not modify its input"
    assert str(stages["dgtorch"]) == before
    assert len({id(m) for m in (model, *stages.values())}) == 4
    assert dialects(stages["dgq"]) == {"builtin", "func", "dgq"}
    assert dialects(stages["dghw"]) == {"builtin", "func", "dghw"}


def test_lower_stops_at_the_target_stage(model: ModuleOp) -> None:
    stages = lower(model, target="dgq")
    assert list(stages) == ["dgtorch", "dgq"]


def test_lower_matches_the_pipeline_pass(model: ModuleOp) -> None:
    stages = lower(model)
    DgPipelinePass().apply(context(), model)
    assert str(model) == str(stages["dghw"])


def test_lower_rejects_an_unknown_target(model: ModuleOp) -> None:
    with pytest.raises(ValueError, match="unknown target stage 'tosa'"):
        lower(model, target="tosa")  # type: ignore[arg-type]


def test_default_target_version_is_this_compiler() -> None:
    assert DgPipelinePass().target_version == dg.__version__


def test_pass_option_spelling() -> None:
    from xdsl.utils.arg_spec import parse_spec

    spec = parse_spec('dg-pipeline{target-version="0.14.0"}')
    assert DgPipelinePass.from_pass_spec(spec).target_version == "0.14.0"


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("0.16.0", "target_version 0.16.0 is newer than this compiler"),
        ("1.0", "invalid target_version '1.0': expected MAJOR.MINOR.PATCH"),
        ("latest", "invalid target_version 'latest'"),
    ],
)
def test_bad_target_versions(model: ModuleOp, version: str, message: str) -> None:
    with pytest.raises(PassFailedException, match=message):
        lower(model, target_version=version)
    with pytest.raises(PassFailedException, match=message):
        DgPipelinePass(target_version=version).apply(context(), model)


@pytest.mark.parametrize("op_name", ["dgq.add", "dghw.add"])
def test_version_gate_rejects_ops_newer_than_the_target(
    model: ModuleOp, op_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(pipeline.MINIMUM_COMPILER_VERSION, op_name, "0.15.0")
    expected = f"net.py:12:0: error: '{op_name}': {op_name} requires dg compiler >= 0.15.0, " + (
        "but target_version is 0.14.0"
    )
    with pytest.raises(PassFailedException) as error:
        lower(model, target_version="0.14.0")
    assert str(error.value) == expected
    with pytest.raises(PassFailedException) as error:
        DgPipelinePass(target_version="0.14.0").apply(context(), model.clone())
    assert str(error.value) == expected


def test_version_gate_admits_ops_at_or_after_their_version(
    model: ModuleOp, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(pipeline.MINIMUM_COMPILER_VERSION, "dgq.add", "0.14.2")
    for version in ("0.14.2", "0.15.0"):
        assert "dghw" in lower(model, target_version=version)


def test_version_gate_compares_numerically(model: ModuleOp) -> None:
    """0.9.0 < 0.10.0 < 0.15.0: versions are compared as numbers, not strings."""
    dgq_module = lower(model, target="dgq")["dgq"]
    gates = {"dgq.conv2d": "0.10.0"}
    check_version_gates(dgq_module, "0.10.0", gates)
    with pytest.raises(PassFailedException, match="requires dg compiler >= 0.10.0"):
        check_version_gates(dgq_module, "0.9.0", gates)


def test_every_gated_op_is_reported(model: ModuleOp) -> None:
    dgq_module = lower(model, target="dgq")["dgq"]
    with pytest.raises(PassFailedException) as error:
        check_version_gates(dgq_module, "0.14.0", {"dgq.conv2d": "0.15.0"})
    lines = str(error.value).splitlines()
    assert [line.split(": error:")[0] for line in lines] == ["net.py:10:0", "net.py:11:0"]


def test_the_version_table_names_real_ops() -> None:
    known = {op.name for dialect in (Dgq, Dghw) for op in dialect.operations}
    assert set(pipeline.MINIMUM_COMPILER_VERSION) <= known
    for version in pipeline.MINIMUM_COMPILER_VERSION.values():
        pipeline.parse_version(version)


# The error lit test's model: a torch.cat of two quantized inputs.
CONCAT_MODEL = Path(__file__).with_name("dg-pipeline-errors.mlir")


def test_concat_requires_compiler_0_15() -> None:
    model = Parser(context(), CONCAT_MODEL.read_text()).parse_module()
    with pytest.raises(PassFailedException) as error:
        lower(model, target_version="0.14.0")
    assert str(error.value) == (
        "cat.py:4:0: error: 'dgq.concat': dgq.concat requires dg compiler >= 0.15.0, "
        "but target_version is 0.14.0"
    )
    dghw_module = lower(model, target_version="0.15.0")["dghw"]
    with pytest.raises(PassFailedException, match="'dghw.concat': dghw.concat requires dg"):
        check_version_gates(dghw_module, "0.14.0")
