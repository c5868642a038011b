"""The registry's rows name every pattern of the three conversion passes, each pattern lives in
the family module of a row that names it, and the passes apply exactly the rows' patterns."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest
from xdsl.pattern_rewriter import RewritePattern

from dg.lowering import (
    convert_dghw_to_tosa,
    convert_dgq_to_dghw,
    convert_dgtorch_to_dgq,
    dghw_to_tosa,
    dgq_to_dghw,
    dgtorch_to_dgq,
    pad_folding,
)
from dg.lowering.registry import ROWS, Stage, Status, patterns_of

STAGE_PACKAGES: dict[Stage, ModuleType] = {
    Stage.TO_DGQ: dgtorch_to_dgq,
    Stage.TO_DGHW: dgq_to_dghw,
    Stage.TO_TOSA: dghw_to_tosa,
}
SHARED_MODULES = (pad_folding,)
"""Patterns two passes share (a zero pad folds in dgq, and again after dgq_to_dghw)."""


def family_modules(package: ModuleType) -> list[ModuleType]:
    """The package's family modules (not `common`, which holds the shared base classes)."""
    names = [m.name for m in pkgutil.iter_modules(package.__path__) if m.name != "common"]
    return [importlib.import_module(f"{package.__name__}.{name}") for name in names]


def patterns_defined_in(module: ModuleType) -> set[type]:
    return {
        cls
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, RewritePattern) and cls.__module__ == module.__name__
    }


@pytest.mark.parametrize("stage", list(Stage))
def test_every_pattern_of_a_stage_is_named_by_a_row(stage: Stage):
    defined = set().union(*(patterns_defined_in(m) for m in family_modules(STAGE_PACKAGES[stage])))
    assert defined - set(patterns_of(stage)) == set()


@pytest.mark.parametrize("stage", list(Stage))
def test_each_pattern_lives_in_the_family_module_of_a_row_naming_it(stage: Stage):
    package = STAGE_PACKAGES[stage].__name__
    shared = {m.__name__ for m in SHARED_MODULES}
    for pattern in patterns_of(stage):
        rows = [row for row in ROWS if pattern in row.patterns_of(stage)]
        homes = {f"{package}.{row.family.value}" for row in rows}
        assert pattern.__module__ in homes | shared, (pattern.__name__, sorted(homes))


def test_the_passes_apply_exactly_the_rows_patterns_in_row_order():
    applied = {
        Stage.TO_DGQ: convert_dgtorch_to_dgq.PATTERNS,
        Stage.TO_DGHW: convert_dgq_to_dghw.PATTERNS,
        Stage.TO_TOSA: convert_dghw_to_tosa.patterns(batch=1),
    }
    for stage, patterns in applied.items():
        assert [type(p) for p in patterns] == list(patterns_of(stage)), stage


def test_rejected_rows_name_no_patterns():
    for row in ROWS:
        if row.status is not Status.SUPPORTED:
            assert row.patterns == (), row.op
