"""dg's op registry: every row of the product's op table and how dg implements or rejects it.

The product spec (``supported-pytorch-ops.txt``; the tests keep a copy) lists the
PyTorch ops dg supports, the special cases, and the ops it does not support.
`ROWS` holds one `OpRow` per spec row, with the spec's text verbatim, plus
the rows dg adds beyond the spec (`Section.BEYOND_SPEC`). Everything else
that needs the list derives it from here:

- the conversion passes apply the patterns the rows name, in the rows' order (`patterns_of`);
- the quantizer annotates ops by their row's `QuantRule`;
- the importer registers its handlers per row and rejects the ATen ops of
  `Status.NOT_SUPPORTED` rows with the row's reason and fix;
- ``dg/tools/gen_supported_ops.py`` renders ``docs/supported-ops.md`` from it;
- the tests compare it against the spec file.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.pattern_rewriter import RewritePattern

from dg.lowering.registry.beyond import (
    ADAPTIVE_AVG_POOL2D,
    BIT_SHIFT,
    BITWISE,
    BITWISE_TENSORS,
    COMPARE,
    COMPARE_TENSORS,
    DG_FLATTEN,
    DG_NORM,
    LOGIC_NOTE,
    LOGIC_REPEAT,
    MODEL_OUTPUTS,
    NEGATION,
    NORM_BUILDING_BLOCKS,
    NORM_FIX,
    QUANTIZATION,
    REDUCTION_FIX,
    REDUCTIONS,
    SEQUENCE_SPLITS,
    SHARED_INPUTS,
    SPATIAL_MEAN,
    SUBTRACTION,
    TORCH_NORMALIZATION,
)
from dg.lowering.registry.spec import (
    ACTIVATION_FIX,
    ADD,
    AVG_POOL2D,
    BARE_MUL,
    BATCH_NORM,
    CAT,
    CONV2D,
    CONV_TRANSPOSE2D,
    DILATED_CONV2D,
    DROPOUT,
    EXPAND,
    FLATTEN,
    FUSED_ATTENTION,
    INTERPOLATE,
    INTERPOLATE_OTHER_MODES,
    LINEAR,
    MATMUL,
    MATMUL_PRODUCTS,
    MAX_POOL2D,
    MM_FIX,
    MM_REASON,
    MUL_CONST_TENSOR,
    OTHER_ACTIVATIONS,
    PAD,
    PERMUTE,
    RELU,
    REPEAT,
    RESHAPE,
    SCORE_SCALES,
    SIGMOID,
    SLICE,
    SOFTMAX,
    STANDALONE_PAD,
    STANDALONE_RELU,
    TRANSPOSE,
)
from dg.lowering.registry.table import (
    Family,
    OpRow,
    PatternClass,
    QuantRule,
    Section,
    Stage,
    Status,
)

LOGIC_ROWS = (BIT_SHIFT, BITWISE, COMPARE, BITWISE_TENSORS, COMPARE_TENSORS, LOGIC_REPEAT)
"""Rows of the integer logic layers: they skip dgq (nothing to quantize), so link no dgq op."""

STRUCTURE_ROWS = (MODEL_OUTPUTS, SHARED_INPUTS)
"""Rows about how a model takes and returns its tensors, not ops: no ATen op, no dialect op."""

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
    SPATIAL_MEAN,
    SEQUENCE_SPLITS,
    MODEL_OUTPUTS,
    SHARED_INPUTS,
    DG_FLATTEN,
    DG_NORM,
    TORCH_NORMALIZATION,
    REDUCTIONS,
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
    return (row for row in ROWS if row.covers(target))


def rejecting_row(target: object) -> OpRow | None:
    """The row that rejects every use of `target` outright: not supported, or planned.

    None when some row supports `target` (its handler judges each use).
    """
    rows = list(rows_covering(target))
    if any(row.status is Status.SUPPORTED for row in rows):
        return None
    return rows[0] if rows else None


def rejecting_rows(target: object) -> tuple[OpRow, ...]:
    """The rows that reject some use of `target` (a handler picks the one that fits)."""
    return tuple(row for row in rows_covering(target) if row.status is not Status.SUPPORTED)


def row_of_module(module_type: str) -> OpRow | None:
    """The row covering every op run inside an ``nn.Module`` of qualified type `module_type`."""
    return next((row for row in ROWS if module_type in row.module_types), None)


def spellings_of(target: object) -> tuple[str, ...]:
    """How users write `target`, over all rows covering it (for error messages)."""
    rows = list(rows_covering(target))
    if str(target) in INTERPOLATE_OTHER_MODES:
        rows.append(INTERPOLATE)
    return tuple(dict.fromkeys(s for row in rows for s in row.spellings))


def patterns_of(stage: Stage) -> tuple[PatternClass, ...]:
    """The pattern classes of the conversion pass `stage`: every row's, in the rows' order.

    The order is the one the pass tries them in and asks them for explanations: a pattern
    that matches what several rows share (a pad fold, a reshape) is listed once, at its
    first row; quantization's, which give the general reason for a leftover constant, come
    after the rows whose patterns name constants of their own (weights, norm).
    """
    return tuple(dict.fromkeys(p for row in ROWS for p in row.patterns_of(stage)))


def instantiate_patterns(stage: Stage, *options: int) -> tuple[RewritePattern, ...]:
    """The patterns of the conversion pass `stage`, made with the pass's `options`."""
    return tuple(pattern(*options) for pattern in patterns_of(stage))


def rows_with_rule(rule: QuantRule) -> tuple[OpRow, ...]:
    """The rows the quantizer annotates by `rule`."""
    return tuple(row for row in ROWS if row.quantization is rule)


__all__ = [
    "ACTIVATION_FIX",
    "ADAPTIVE_AVG_POOL2D",
    "ADD",
    "AVG_POOL2D",
    "BARE_MUL",
    "BATCH_NORM",
    "BITWISE",
    "BITWISE_TENSORS",
    "BIT_SHIFT",
    "CAT",
    "COMPARE",
    "COMPARE_TENSORS",
    "CONV2D",
    "CONV_TRANSPOSE2D",
    "DG_FLATTEN",
    "DG_NORM",
    "DILATED_CONV2D",
    "DROPOUT",
    "EXPAND",
    "FLATTEN",
    "FUSED_ATTENTION",
    "Family",
    "INTERPOLATE",
    "INTERPOLATE_OTHER_MODES",
    "LINEAR",
    "LOGIC_NOTE",
    "LOGIC_REPEAT",
    "LOGIC_ROWS",
    "MATMUL",
    "MATMUL_PRODUCTS",
    "MODEL_OUTPUTS",
    "MAX_POOL2D",
    "MM_FIX",
    "MM_REASON",
    "MUL_CONST_TENSOR",
    "NEGATION",
    "NORM_BUILDING_BLOCKS",
    "NORM_FIX",
    "OTHER_ACTIVATIONS",
    "OpRow",
    "PAD",
    "PERMUTE",
    "QUANTIZATION",
    "REDUCTIONS",
    "REDUCTION_FIX",
    "QuantRule",
    "RELU",
    "REPEAT",
    "RESHAPE",
    "ROWS",
    "SCORE_SCALES",
    "SEQUENCE_SPLITS",
    "SHARED_INPUTS",
    "SIGMOID",
    "SLICE",
    "SOFTMAX",
    "SPATIAL_MEAN",
    "STANDALONE_PAD",
    "STRUCTURE_ROWS",
    "STANDALONE_RELU",
    "SUBTRACTION",
    "Section",
    "Stage",
    "Status",
    "PatternClass",
    "TORCH_NORMALIZATION",
    "TRANSPOSE",
    "instantiate_patterns",
    "patterns_of",
    "rejecting_row",
    "rejecting_rows",
    "row_of_module",
    "rows_covering",
    "rows_with_rule",
    "spellings_of",
]
