"""dg.frontend.pattern_store: torchao's exported patterns persist, and a stale entry never loads."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torchao.quantization.pt2e import qat_utils
from torchao.quantization.pt2e import utils as pt2e_utils

import dg
from dg.frontend import pattern_cache, pattern_store
from dg.frontend.pattern_cache import _key, cached_export_pattern
from dg.frontend.pattern_store import PatternStore, cache_directory, dumps, loads

CONV_BN_INPUTS = (torch.randn(1, 1, 3, 3), *(torch.randn(1, 1, 1, 1),), *(torch.randn(1),) * 5)


@pytest.fixture(scope="module")
def conv_bn_pattern() -> torch.fx.GraphModule:
    """torchao's QAT conv -> batch norm replacement pattern, exported by torchao itself."""
    pattern = qat_utils._get_qat_conv_bn_pattern(F.conv2d)
    return pt2e_utils._get_aten_graph_module_for_pattern(pattern, CONV_BN_INPUTS)


def described(gm: torch.fx.GraphModule) -> list[tuple[object, ...]]:
    """Every node with its meta, fake tensors by their layout: what torchao copies into a model."""

    def value(v: object) -> object:
        if isinstance(v, torch.Tensor):
            return (tuple(v.shape), v.stride(), v.dtype, v.device, v.requires_grad, type(v))
        if isinstance(v, list | tuple):
            return tuple(value(x) for x in v)
        if isinstance(v, dict):
            return {k: value(x) for k, x in v.items()}
        return repr(v)

    return [
        (n.op, n.name, n.target, str(n.args), str(n.kwargs), value(dict(n.meta)))
        for n in gm.graph.nodes
    ]


def test_an_entry_is_the_exported_pattern_meta_and_all(conv_bn_pattern):
    loaded = loads(dumps(conv_bn_pattern))
    assert loaded.code == conv_bn_pattern.code
    assert described(loaded) == described(conv_bn_pattern)
    assert loaded.graph._codegen.pytree_info == conv_bn_pattern.graph._codegen.pytree_info
    args = [torch.rand_like(x) for x in CONV_BN_INPUTS]
    expected = conv_bn_pattern(*[a.clone() for a in args])  # batch norm updates its inputs
    torch.testing.assert_close(loaded(*args), expected, rtol=0, atol=0)


def test_a_stored_pattern_is_loaded_not_exported(tmp_path, monkeypatch, conv_bn_pattern):
    pattern = qat_utils._get_qat_conv_bn_pattern(F.conv2d)
    key = pattern_cache.pattern_key(pattern, CONV_BN_INPUTS, False, {})
    store = PatternStore(tmp_path)
    assert store.load(key) is None
    store.save(key, conv_bn_pattern)
    assert described(store.load(key)) == described(conv_bn_pattern)

    # A new process: nothing in memory, the export refused.
    monkeypatch.setattr(pattern_cache, "STORE", store)
    monkeypatch.setattr(pattern_cache, "_CACHE", {})

    def no_export(*args, **kwargs):
        raise AssertionError("exported although stored")

    monkeypatch.setattr(pattern_cache, "_export_pattern", no_export)
    served = cached_export_pattern(pattern, CONV_BN_INPUTS)
    assert described(served) == described(conv_bn_pattern)


def test_an_entry_of_another_environment_or_key_is_a_miss(tmp_path, monkeypatch, conv_bn_pattern):
    store = PatternStore(tmp_path)
    store.save("key", conv_bn_pattern)
    assert store.load("key") is not None
    assert store.load("other key") is None
    # torch or torchao upgraded (or their sources edited): every entry misses.
    environment = pattern_store.environment()
    monkeypatch.setattr(pattern_store, "environment", lambda: (*environment, "upgraded"))
    assert store.load("key") is None
    monkeypatch.undo()
    # A file at the key's place that holds another key (a hash collision) is a miss.
    (entry,) = tmp_path.glob("*.pkl")
    store.save("other key", conv_bn_pattern)
    other = next(p for p in tmp_path.glob("*.pkl") if p != entry)
    other.replace(entry)
    assert store.load("key") is None


def test_a_damaged_entry_is_a_miss_and_is_rewritten(tmp_path, monkeypatch, conv_bn_pattern):
    store = PatternStore(tmp_path)
    store.save("key", conv_bn_pattern)
    (entry,) = tmp_path.glob("*.pkl")
    entry.write_bytes(entry.read_bytes()[:100])  # a truncated write
    assert store.load("key") is None
    store.save("key", conv_bn_pattern)
    assert store.load("key") is not None
    assert [p.name for p in tmp_path.iterdir()] == [entry.name]  # no temporary files left


def test_the_cache_directory_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("DG_CACHE_DIR", str(tmp_path / "dg"))
    assert cache_directory() == tmp_path / "dg"
    monkeypatch.delenv("DG_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_directory() == tmp_path / "xdg" / "dg"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_directory() == tmp_path / "home" / ".cache" / "dg"
    monkeypatch.setenv("DG_CACHE_DIR", str(tmp_path / "dg"))
    assert PatternStore().folder == tmp_path / "dg" / "patterns"


def test_keys_hold_no_process_specific_values():
    """A persistent key must be the same in every process: no object addresses, no ids."""
    pattern = qat_utils._get_quantized_qat_conv_bn_pattern(True, True, True, F.conv2d, True)
    text = repr(_key(pattern))
    assert " at 0x" not in text and "object at" not in text
    assert _key(pattern) == _key(
        qat_utils._get_quantized_qat_conv_bn_pattern(True, True, True, F.conv2d, True)
    )
    assert _key(pattern) != _key(
        qat_utils._get_quantized_qat_conv_bn_pattern(True, True, True, F.conv1d, True)
    )


def readme_model() -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    layers = (nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten())
    model = nn.Sequential(*layers, nn.Linear(512, 10))
    return model, torch.rand(8, 1, 8, 8)


def test_dg_cache_warm_stores_what_a_first_freeze_needs_and_it_is_convert_pt2e_exactly(
    tmp_path, monkeypatch
):
    """`dg-cache warm` exports every pattern into an empty store. Then README's QAT model,
    frozen with torchao's patterns as exported in this process and again with every
    pattern loaded from the store (none exported), gives the same graph, constants and
    outputs; a PTQ model freezes from the store alone too."""
    from dg.tools import dg_cache

    store = PatternStore(tmp_path)
    monkeypatch.setattr(pattern_cache, "STORE", store)
    monkeypatch.setattr(pattern_cache, "_CACHE", {})
    dg_cache.warm()  # every export lands in the store and in memory
    assert len(list(tmp_path.glob("*.pkl"))) > 100

    model, x = readme_model()
    prepared = dg.prepare_qat(model, (x,))
    prepared(x)
    twin = copy.deepcopy(prepared)  # a copy names its nodes afresh: compare two copies
    monkeypatch.setattr(pattern_cache, "STORE", None)
    # torchao's own exports (memoized in memory)
    reference = dg.freeze_quantization(copy.deepcopy(prepared))

    monkeypatch.setattr(pattern_cache, "STORE", store)
    monkeypatch.setattr(pattern_cache, "_CACHE", {})  # a new process
    monkeypatch.setattr(pattern_cache, "_export_pattern", None)  # every pattern must load
    frozen = dg.freeze_quantization(twin)

    assert frozen.code == reference.code
    reference_state, state = reference.state_dict(), frozen.state_dict()
    assert reference_state.keys() == state.keys()
    for name, value in reference_state.items():
        assert torch.equal(value, state[name]), name
    batch = torch.rand(16, 1, 8, 8)
    assert torch.equal(frozen(batch), reference(batch))

    model, x = readme_model()
    calibrated = dg.prepare_ptq(model, (x,))
    calibrated(x)
    dg.freeze_quantization(calibrated)


def test_tests_write_no_cache_outside_their_folder():
    assert Path(os.environ["DG_CACHE_DIR"]).name.startswith("dg-test-cache-")
