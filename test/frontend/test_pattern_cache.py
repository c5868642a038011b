"""dg.frontend.pattern_cache: torchao's rewrite patterns exported once, keyed soundly."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torchao.quantization.pt2e import qat_utils
from torchao.quantization.pt2e import utils as pt2e_utils
from torchao.quantization.pt2e.export_utils import WrapperModule

from dg.frontend import pattern_cache
from dg.frontend.pattern_cache import _key, cached_export_pattern


def scaled(factor: float) -> WrapperModule:
    """A pattern as torchao builds them: a fresh closure per call, wrapped in a module."""

    def pattern(x: torch.Tensor) -> torch.Tensor:
        return F.relu(x) * factor

    return WrapperModule(pattern)


def test_torchao_passes_use_the_cache():
    import dg.frontend.prepare  # noqa: F401  (applies it)

    assert pt2e_utils._get_aten_graph_module_for_pattern is cached_export_pattern
    assert qat_utils._get_aten_graph_module_for_pattern is cached_export_pattern


def test_the_key_is_the_code_closure_and_input_shapes_not_the_values():
    x = (torch.randn(1, 3),)
    assert _key(scaled(2.0)) == _key(scaled(2.0))
    assert _key(scaled(2.0)) != _key(scaled(3.0))
    inputs = {"tensor_values": False}  # example inputs: random values, only shapes count
    assert _key(x, **inputs) == _key((torch.randn(1, 3),), **inputs)
    assert _key(x, **inputs) != _key((torch.randn(1, 4),), **inputs)
    assert _key(x, **inputs) != _key((torch.randn(1, 3, dtype=torch.float64),), **inputs)
    assert _key({"bias": torch.randn(1)}) != _key({"bias": torch.randn(2)})


def test_a_hit_is_a_private_copy_of_the_same_graph():
    before = len(pattern_cache._CACHE)
    first = cached_export_pattern(scaled(2.0), (torch.randn(1, 3),))
    second = cached_export_pattern(scaled(2.0), (torch.randn(1, 3),))
    assert len(pattern_cache._CACHE) == before + 1
    assert first is not second and first.code == second.code
    first.graph.erase_node(next(n for n in first.graph.nodes if n.op == "output"))
    third = cached_export_pattern(scaled(2.0), (torch.randn(1, 3),))
    assert third.code == second.code  # editing one copy changes no other
    x = torch.randn(1, 3)
    torch.testing.assert_close(third(x), F.relu(x) * 2.0)
    torch.testing.assert_close(cached_export_pattern(scaled(3.0), (x,))(x), F.relu(x) * 3.0)


def test_a_pattern_the_key_cannot_describe_is_exported_every_time():
    class Scale(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2

    before = len(pattern_cache._CACHE)
    pattern = cached_export_pattern(Scale(), (torch.randn(1, 3),))
    assert len(pattern_cache._CACHE) == before
    torch.testing.assert_close(pattern(torch.ones(1, 3)), torch.full((1, 3), 2.0))


def test_a_tensor_the_pattern_closes_over_is_keyed_by_its_values():
    def offset_by(table: torch.Tensor) -> WrapperModule:
        def pattern(x: torch.Tensor) -> torch.Tensor:
            return x + table

        return WrapperModule(pattern)

    ones, twos = torch.ones(3), torch.full((3,), 2.0)
    assert _key(offset_by(ones)) == _key(offset_by(torch.ones(3)))
    assert _key(offset_by(ones)) != _key(offset_by(twos))  # same shape, other values
    x = torch.zeros(1, 3)
    torch.testing.assert_close(cached_export_pattern(offset_by(twos), (x,))(x), twos[None])


def test_torchao_private_pattern_export_is_what_dg_relies_on(monkeypatch):
    """Pins torchao's private `_get_aten_graph_module_for_pattern` (no public API supplies
    the patterns): its signature, and that torchao's passes look it up where `apply`
    replaces it, on every call."""
    import inspect

    from torchao.quantization.pt2e import move_exported_model_to_eval

    import dg.frontend.prepare  # noqa: F401  (applies it)

    signature = inspect.signature(pattern_cache._export_pattern)
    assert list(signature.parameters) == ["pattern", "example_inputs", "is_cuda", "kwargs"]
    assert signature.parameters["is_cuda"].default is False
    seen = []

    def spy(pattern, example_inputs, is_cuda=False, **kwargs):
        seen.append(pattern)
        return cached_export_pattern(pattern, example_inputs, is_cuda, **kwargs)

    monkeypatch.setattr(pt2e_utils, "_get_aten_graph_module_for_pattern", spy)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
    exported = torch.export.export(model, (torch.randn(2, 4),)).module()
    move_exported_model_to_eval(exported)
    assert seen  # the dropout and batch norm patterns came through the replaced function
