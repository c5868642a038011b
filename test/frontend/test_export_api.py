"""dg.export: a frozen model becomes a Program that computes what the frozen model computes."""

from __future__ import annotations

import pytest
import torch
from graph_queries import QUANTIZE, calls
from slice_models import SliceNet, frozen_slice_net, slice_inputs

from dg.frontend.errors import ExportError
from dg.program import export


@pytest.mark.parametrize("mode", ["qat", "ptq"])
def test_program_matches_frozen_model_within_one_output_step(mode):
    frozen = frozen_slice_net(mode)
    program = export(frozen, (slice_inputs(2),))
    assert set(program.stages) == {"dgtorch", "dgq", "dghw"}
    output_scale = calls(frozen, *QUANTIZE)[-1].args[1]
    x = slice_inputs(5, seed=11)
    difference = (program.run(x) - frozen(x)).abs()
    assert difference.max() <= output_scale * 1.001


def test_export_wants_the_frozen_model():
    with pytest.raises(ExportError) as info:
        export(SliceNet(), (slice_inputs(2),))  # type: ignore[arg-type]
    assert "dg.freeze_quantization" in info.value.problems[0].fix


def test_lowering_failures_become_export_errors():
    with pytest.raises(ExportError) as info:
        export(frozen_slice_net("ptq"), (slice_inputs(2),), target_version="99.0.0")
    assert "99.0.0" in str(info.value)


def test_program_runs_any_batch_size():
    program = export(frozen_slice_net("ptq"), (slice_inputs(2),))
    for batch in (1, 3, 7):
        assert program.run(slice_inputs(batch)).shape == (batch, 3)
    assert isinstance(program.run(slice_inputs(1)), torch.Tensor)


def test_invalid_ir_after_lowering_is_reported_as_a_compiler_bug() -> None:
    from xdsl.utils.exceptions import DiagnosticException, VerifyException

    from dg.frontend.export import _lowering_problems

    (bug,) = _lowering_problems(VerifyException("bias scale 1 must equal input scale * weight"))
    assert bug.reason.startswith("internal compiler error: a lowering pass produced invalid IR")
    assert "bias scale 1" in bug.reason and "dg bug" in bug.fix
    (other,) = _lowering_problems(DiagnosticException("no pattern applied"))
    assert other.reason == "lowering failed: no pattern applied"


def test_collection_paused_restores_the_collector_state() -> None:
    import gc

    from dg.frontend.export import collection_paused

    assert gc.isenabled()
    try:
        with collection_paused():
            assert not gc.isenabled()
            raise ValueError("an export error")
    except ValueError:
        pass
    assert gc.isenabled()  # back on, also after an error
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()  # a caller's choice to keep it off is kept
    finally:
        gc.enable()
