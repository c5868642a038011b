"""Verification helpers shared by the dg dialects.

Each dialect states its own constraints; the helpers here only keep the
arithmetic of those constraints (shapes with a dynamic batch, conv output
extents, integer array properties) in one place.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.hints import isa

OUTPUT_STRUCTURE_ATTR = "dg.output_structure"
"""Attribute of `func.func @main`: how the model returns its results.

"single" (one tensor), "tuple" (a flat tuple), or, for anything nested or a
dict, the JSON of `nest_outputs`' tree. The importer writes it; `Program.run`
reads it to return the results as the model did.
"""

FLAT_STRUCTURES = ("single", "tuple")


def nest_outputs(structure: str, results: Sequence[Any], flat: type[list] | type[tuple]) -> Any:
    """`results` (in @main's order) arranged as `structure` says.

    A JSON structure is a tree whose leaves are result indices and whose inner nodes
    are ``{"tuple": [...]}``, ``{"list": [...]}`` or ``{"dict": [[key, child], ...]}``.
    "tuple" gives `flat` of all results.
    """
    if structure == "single":
        return results[0]
    if structure == "tuple":
        return flat(results)
    return _build(json.loads(structure), results)


def _build(tree: Any, results: Sequence[Any]) -> Any:
    if isinstance(tree, int):
        return results[tree]
    ((kind, children),) = tree.items()
    if kind == "dict":
        return {key: _build(child, results) for key, child in children}
    built = [_build(child, results) for child in children]
    return tuple(built) if kind == "tuple" else built


def structure_leaves(structure: str) -> int | None:
    """How many results `structure` arranges (None for "tuple": any number); raises
    ValueError when it is not a structure."""
    if structure == "single":
        return 1
    if structure == "tuple":
        return None
    try:
        tree = json.loads(structure)
    except json.JSONDecodeError as error:
        raise ValueError(f"output structure {structure!r} is not valid JSON") from error
    leaves: list[int] = []
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, int):
            leaves.append(node)
        elif isinstance(node, dict) and len(node) == 1 and set(node) <= {"tuple", "list", "dict"}:
            ((kind, children),) = node.items()
            pending.extend(c[1] for c in children) if kind == "dict" else pending.extend(children)
        else:
            raise ValueError(f"output structure {structure!r} has an unknown node {node!r}")
    if sorted(leaves) != list(range(len(leaves))):
        raise ValueError(f"output structure {structure!r} does not number its results 0..n-1")
    return len(leaves)


RESIZE_MODES = ("nearest", "nearest-exact")
"""Values of the `mode` property of the nearest-resize ops (torch's names)."""


def tensor_type(value_type: Attribute, what: str) -> TensorType[Attribute]:
    """`value_type` as a ranked tensor type, or a VerifyException naming `what`."""
    if not isinstance(value_type, TensorType):
        raise VerifyException(f"{what} must be a ranked tensor, got {value_type}")
    return value_type


def shape_of(value: SSAValue) -> tuple[int, ...]:
    """The shape of a value of ranked tensor type (the batch axis may be DYNAMIC_INDEX)."""
    assert isinstance(value.type, TensorType), f"expected a tensor, got {value.type}"
    return value.type.get_shape()


def rank_of(value: SSAValue) -> int | None:
    """The rank of a value of tensor type; None for any other type."""
    return len(value.type.get_shape()) if isinstance(value.type, TensorType) else None


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    """An i64 dense array property of `values`."""
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def is_depthwise(groups: int, in_channels: int, out_channels: int) -> bool:
    """groups = in_channels = out_channels: every channel convolved with its own filter."""
    return groups == in_channels == out_channels


def located(op: Operation, origin: Operation) -> Operation:
    """`op`, carrying the source location of `origin`, the op it was made from."""
    op.location = origin.location
    return op


def int_array(attr: DenseArrayBase, name: str, length: int | None = None) -> tuple[int, ...]:
    """The values of an integer dense array property, checked for `length`."""
    if not isa(attr, DenseArrayBase[IntegerType]):
        raise VerifyException(f"'{name}' must be an integer array")
    values = attr.get_values()
    if length is not None and len(values) != length:
        raise VerifyException(f"'{name}' must have {length} elements, got {len(values)}")
    return tuple(int(v) for v in values)


def dims_agree(a: int, b: int) -> bool:
    """Two extents agree when they are equal or either one is dynamic."""
    return a == DYNAMIC_INDEX or b == DYNAMIC_INDEX or a == b


def check_shape(actual: Sequence[int], expected: Sequence[int], what: str) -> None:
    """Raise unless `actual` matches `expected` dimension by dimension (dynamic matches all)."""
    if len(actual) != len(expected) or not all(
        dims_agree(a, e) for a, e in zip(actual, expected, strict=True)
    ):
        raise VerifyException(f"{what} has shape [{_shape(actual)}], expected [{_shape(expected)}]")


def check_same_batch(inp: Sequence[int], out: Sequence[int], what: str) -> None:
    """No dg op may change the batch axis (axis 0): the device vectorizes over it."""
    if not inp or not out:
        raise VerifyException(f"{what}: operands must have a batch axis (rank >= 1)")
    if not dims_agree(inp[0], out[0]) or (inp[0] == DYNAMIC_INDEX) != (out[0] == DYNAMIC_INDEX):
        raise VerifyException(
            f"{what} cannot change the batch-axis extent ({_dim(inp[0])} -> {_dim(out[0])})"
        )


def conv_output_extent(size: int, kernel: int, stride: int, pad_lo: int, pad_hi: int) -> int:
    """Output extent of a convolution or pooling window along one axis (floor mode)."""
    if size == DYNAMIC_INDEX:
        return DYNAMIC_INDEX
    return (size + pad_lo + pad_hi - kernel) // stride + 1


def window_counts(size: int, kernel: int, stride: int, pad_lo: int, pad_hi: int) -> tuple[int, int]:
    """Window counts of a pooling window along one axis: (floor mode, ceil mode).

    Ceil mode follows torch: one more window when the stride does not divide
    the padded extent, unless that window would start past the input and the
    leading padding (it would then cover only trailing padding).
    """
    span = size + pad_lo + pad_hi - kernel
    if span < 0:
        raise VerifyException(
            f"window of extent {kernel} exceeds the padded input extent {size + pad_lo + pad_hi}"
        )
    floor_count = span // stride + 1
    ceil_count = -(-span // stride) + 1
    if ceil_count > floor_count and (ceil_count - 1) * stride >= size + pad_lo:
        ceil_count -= 1
    return floor_count, ceil_count


def check_window_extents(
    result: Sequence[int],
    inp: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    pad: Sequence[int],
    ceil_mode: bool | None = None,
) -> None:
    """Check the spatial extents `result` of a pooling over the spatial extents `inp`.

    `pad` is [top, bottom, left, right]; `kernel` is the effective (dilated)
    window. With `ceil_mode` None (dgq, dghw: the mode is not a property)
    either the floor or the ceil window count is accepted.
    """
    for axis, (out, size) in enumerate(zip(result, inp, strict=True)):
        if out == DYNAMIC_INDEX or size == DYNAMIC_INDEX:
            continue
        floor_count, ceil_count = window_counts(
            size, kernel[axis], stride[axis], pad[2 * axis], pad[2 * axis + 1]
        )
        if ceil_mode is None:
            allowed = sorted({floor_count, ceil_count})
        else:
            allowed = [ceil_count if ceil_mode else floor_count]
        if out not in allowed:
            expected = " or ".join(str(n) for n in allowed)
            raise VerifyException(
                f"result has {out} windows along spatial axis {axis}, expected {expected}"
            )


def normalize_axis(axis: int, rank: int, name: str) -> int:
    """`axis` in [0, rank), accepting torch's negative spelling [-rank, 0)."""
    if not -rank <= axis < rank:
        raise VerifyException(f"'{name}' {axis} is out of range for rank {rank}")
    return axis % rank


def check_not_batch_axis(axis: int, rank: int, what: str) -> None:
    """A non-negative `axis` in [1, rank): ops never mix batch items along axis 0."""
    if not 0 <= axis < rank:
        raise VerifyException(f"{what}: axis {axis} is out of range [0, {rank})")
    if axis == 0:
        raise VerifyException(f"{what} cannot operate along the batch axis (axis 0)")


def check_concat_shapes(
    inputs: Sequence[Sequence[int]], result: Sequence[int], axis: int, what: str
) -> None:
    """Concatenation along non-negative `axis`: equal ranks, equal other extents, summed axis."""
    if not inputs:
        raise VerifyException(f"{what} needs at least one input")
    check_not_batch_axis(axis, len(result), what)
    for i, shape in enumerate(inputs):
        if len(shape) != len(result):
            raise VerifyException(
                f"input #{i} has rank {len(shape)} but the result has rank {len(result)}"
            )
        check_same_batch(shape, result, what)
        others = [d for k, d in enumerate(shape) if k != axis]
        expected = [d for k, d in enumerate(result) if k != axis]
        check_shape(others, expected, f"input #{i} without axis {axis}")
    extents = [shape[axis] for shape in inputs]
    if DYNAMIC_INDEX not in extents:
        check_shape([result[axis]], [sum(extents)], f"result axis {axis}")


def check_resize(
    inp: Sequence[int], out: Sequence[int], mode: StringAttr, spatial: tuple[int, int]
) -> None:
    """A rank-4 nearest resize: only the `spatial` axes change, to static positive extents."""
    if mode.data not in RESIZE_MODES:
        raise VerifyException(f"mode must be one of {', '.join(RESIZE_MODES)}, got '{mode.data}'")
    if len(inp) != 4 or len(out) != 4:
        raise VerifyException("input and result must be rank 4")
    kept = [a for a in range(4) if a not in spatial]
    check_shape([out[a] for a in kept], [inp[a] for a in kept], "result non-spatial axes")
    if any(out[a] == DYNAMIC_INDEX for a in spatial):
        raise VerifyException("the resized extents must be static")


def check_avg_divisor(
    divisor_override: IntegerAttr[IntegerType] | None,
    count_include_pad: IntegerAttr[IntegerType],
    kernel: Sequence[int],
    pad: Sequence[int],
) -> None:
    """The divisor of an average pool is never 0: an override is >= 1, a count never empty."""
    if divisor_override is not None:
        if divisor_override.value.data < 1:
            raise VerifyException(
                f"divisor_override must be >= 1, got {divisor_override.value.data}"
            )
        return
    if not count_include_pad.value.data and any(p >= kernel[i // 2] for i, p in enumerate(pad)):
        raise VerifyException(
            "without count_include_pad every window must overlap the input: "
            f"pad {list(pad)} must be below the kernel {list(kernel)}"
        )


def check_positive(values: Sequence[int], name: str) -> None:
    if any(v < 1 for v in values):
        raise VerifyException(f"'{name}' entries must be >= 1, got {list(values)}")


def check_non_negative(values: Sequence[int], name: str) -> None:
    if any(v < 0 for v in values):
        raise VerifyException(f"'{name}' entries must be >= 0, got {list(values)}")


def check_same_item_size(inp: Sequence[int], out: Sequence[int]) -> None:
    """A reshape keeps the element count of each batch item (checked when both are static)."""
    n_in, n_out = static_numel(inp[1:]), static_numel(out[1:])
    if n_in is not None and n_out is not None and n_in != n_out:
        raise VerifyException(f"element count per batch item changes ({n_in} -> {n_out})")


def static_numel(shape: Sequence[int]) -> int | None:
    """Element count of a fully static shape, or None when any extent is dynamic."""
    n = 1
    for d in shape:
        if d == DYNAMIC_INDEX:
            return None
        n *= d
    return n


# -- transpose and slice (issue 4: tensor domains) ----------------------------------------

TRANSPOSE_FEATURE_RANKS = (2, 3)
"""Feature ranks (rank without the batch axis) at which transpose is supported."""


def check_feature_rank(rank: int, allowed: Sequence[int], what: str) -> None:
    if rank - 1 not in allowed:
        raise VerifyException(
            f"{what} supports feature rank {' or '.join(map(str, allowed))} (rank without the "
            f"batch axis), got rank {rank} (feature rank {rank - 1})"
        )


def check_transpose_perm(
    perm: Sequence[int], x: Sequence[int], y: Sequence[int], what: str
) -> None:
    """`perm` permutes the axes of `x` into `y`, keeping the batch axis first."""
    if sorted(perm) != list(range(len(x))):
        raise VerifyException(f"perm {list(perm)} is not a permutation of the {len(x)} axes")
    if perm[0] != 0:
        raise VerifyException(f"{what} cannot move the batch axis")
    check_shape(y, [x[p] for p in perm], "result")


def check_slice_shape(
    x: Sequence[int], y: Sequence[int], axis: int, start: int, end: int, what: str
) -> None:
    """`y` is `x` cut to [start, end) along the non-batch `axis`, step 1."""
    check_not_batch_axis(axis, len(x), what)
    if not 0 <= start < end:
        raise VerifyException(f"{what} needs 0 <= start < end, got start {start}, end {end}")
    if x[axis] != DYNAMIC_INDEX and end > x[axis]:
        raise VerifyException(f"{what} end {end} exceeds the extent {x[axis]} of axis {axis}")
    expected = list(x)
    expected[axis] = end - start
    check_shape(y, expected, "result")


def check_constant_broadcast(constant: Sequence[int], target: Sequence[int], what: str) -> None:
    """A constant operand must broadcast (numpy rules) to `target` without enlarging it,
    and be the same for every sample: extent 1 on the batch axis when it has one."""
    aligned = len(constant) <= len(target) and all(
        c == 1 or dims_agree(c, t)
        for c, t in zip(reversed(constant), reversed(target), strict=False)
    )
    if not aligned:
        raise VerifyException(
            f"{what} of shape [{_shape(constant)}] does not broadcast to [{_shape(target)}]"
        )
    if len(constant) == len(target) and constant and constant[0] != 1:
        raise VerifyException(f"{what} must not vary along the batch axis (extent 1 there)")


MATMUL_RANKS = (3, 4)
"""Ranks of matmul operands: a batch axis and feature rank 2-3 (the spec's row)."""


def check_matmul_shapes(lhs: Sequence[int], rhs: Sequence[int], result: Sequence[int]) -> None:
    """lhs [..., M, K] @ rhs [..., K, N] = result [..., M, N], equal leading axes."""
    if len(lhs) not in MATMUL_RANKS or len(rhs) != len(lhs):
        raise VerifyException(
            f"matmul operands must both have rank 3 or 4 (feature rank 2-3), got "
            f"[{_shape(lhs)}] and [{_shape(rhs)}]"
        )
    if not dims_agree(lhs[-1], rhs[-2]):
        raise VerifyException(
            f"matmul contraction extents differ: lhs [{_shape(lhs)}], rhs [{_shape(rhs)}]"
        )
    check_shape(rhs[:-2], lhs[:-2], "rhs leading axes")
    check_shape(result, (*lhs[:-1], rhs[-1]), "result")


def _dim(d: int) -> str:
    return "?" if d == DYNAMIC_INDEX else str(d)


def _shape(shape: Sequence[int]) -> str:
    """A shape as MLIR spells it in a tensor type: `?x4x4`."""
    return "x".join(_dim(d) for d in shape)


# -- integer logic layers (dg.BitShift, dg.Bitwise, dg.Compare; dgtorch and dghw) ---------

SHIFT_DIRECTIONS = ("left", "right")
"""`direction` of a logic shift: left (TOSA LOGICAL_LEFT_SHIFT), right (ARITHMETIC_RIGHT_SHIFT)."""

LOGIC_SHIFT_RANGE = (0, 31)
"""Shift amounts of an i32 shift (TOSA: 0 <= shift <= 31; torch agrees on that range)."""

BITWISE_KINDS = ("and", "or", "xor")
"""`kind` of a bitwise op with a constant or a second tensor (TOSA BITWISE_AND / _OR / _XOR)."""

I32_RANGE = (-(1 << 31), (1 << 31) - 1)

COMPARE_KINDS = ("gt", "ge", "lt", "le", "eq", "ne")
"""`kind` of a comparison with a constant or a second tensor (torch's names); 0 or 1 as i32."""


LOGIC_WIDTHS = (8, 32)
"""Element widths of logic-layer tensors: torch.int8 and torch.int32."""


def check_logic_tensor(value_type: Attribute, what: str) -> TensorType[Attribute]:
    """Logic layers compute on i8 or i32 tensors (torch.int8 / torch.int32) only."""
    t = tensor_type(value_type, what)
    if not isinstance(t.element_type, IntegerType) or t.element_type.width.data not in LOGIC_WIDTHS:
        raise VerifyException(f"{what} must be an i8 or i32 tensor (a logic-layer tensor), got {t}")
    return t


def logic_width(t: TensorType[Attribute]) -> int:
    """The element width of a logic tensor that passed `check_logic_tensor`."""
    element = t.element_type
    assert isinstance(element, IntegerType)
    return element.width.data


def check_same_element_type(x: TensorType[Attribute], y: TensorType[Attribute], what: str) -> None:
    """A logic op keeps its input's element type (torch: int8 op int8 is int8)."""
    if x.element_type != y.element_type:
        raise VerifyException(
            f"{what} element type {y.element_type} differs from the input's {x.element_type}"
        )


def check_compare_result(y: TensorType[Attribute]) -> None:
    """A comparison yields 0/1 as i32 (torch: `(x > c).to(torch.int32)`), whatever it compares."""
    if logic_width(y) != 32:
        raise VerifyException(f"a comparison's result must be an i32 tensor (0/1), got {y}")


def check_logic_shift(direction: str, shift: int, width: int = 32) -> None:
    if direction not in SHIFT_DIRECTIONS:
        raise VerifyException(
            f"shift direction must be one of {', '.join(SHIFT_DIRECTIONS)}, got '{direction}'"
        )
    lo, hi = 0, width - 1
    if not lo <= shift <= hi:
        raise VerifyException(f"shift amount must be in [{lo}, {hi}], got {shift}")


def _fits(value: int, width: int) -> bool:
    return -(1 << (width - 1)) <= value < 1 << (width - 1)


def check_bitwise_kind(kind: str) -> None:
    if kind not in BITWISE_KINDS:
        raise VerifyException(
            f"bitwise kind must be one of {', '.join(BITWISE_KINDS)}, got '{kind}'"
        )


def check_bitwise(kind: str, value: int, width: int = 32) -> None:
    check_bitwise_kind(kind)
    if not _fits(value, width):
        raise VerifyException(f"bitwise constant {value} does not fit i{width}")


def check_compare_kind(kind: str) -> None:
    if kind not in COMPARE_KINDS:
        raise VerifyException(
            f"compare kind must be one of {', '.join(COMPARE_KINDS)}, got '{kind}'"
        )


def check_compare(kind: str, value: int, width: int = 32) -> None:
    check_compare_kind(kind)
    if not _fits(value, width):
        raise VerifyException(f"compare threshold {value} does not fit i{width}")


def check_logic_operands(lhs: TensorType[Attribute], rhs: TensorType[Attribute]) -> None:
    """The two operands of a tensor-tensor logic op: one element type, one shape.

    No broadcasting, not even of a dynamic batch axis against a static one: both
    operands are computed from the model's inputs, and a smaller operand is
    tiled explicitly (`Tensor.repeat` in the logic layer, `dghw.tile` on the device).
    """
    if lhs.element_type != rhs.element_type:
        raise VerifyException(
            f"operands must have one element type, got {lhs.element_type} and {rhs.element_type}"
        )
    a, b = lhs.get_shape(), rhs.get_shape()
    if a != b:
        raise VerifyException(
            f"operands must have the same shape (no broadcasting), got [{_shape(a)}] and "
            f"[{_shape(b)}]"
        )


def check_repeat(inp: Sequence[int], out: Sequence[int], repeats: Sequence[int]) -> None:
    """`out` = `inp` tiled `repeats` times per axis (TOSA TILE); the batch axis is never tiled."""
    if len(repeats) != len(inp):
        raise VerifyException(
            f"repeats must have one entry per input axis ({len(inp)}), got {len(repeats)}"
        )
    if repeats[0] != 1:
        raise VerifyException("cannot repeat along the batch axis (axis 0)")
    if any(r < 1 for r in repeats):
        raise VerifyException("repeats must be >= 1")
    expected = [d if d == DYNAMIC_INDEX else d * r for d, r in zip(inp, repeats, strict=True)]
    check_shape(out, expected, "result")


# -- dg.Norm (issue 4) ------------------------------------------------------------------

NORM_KINDS = ("layer", "rms")
"""`dg.Norm`'s kinds: layer norm (mean and variance) and RMS norm (mean square only)."""

NORM_FEATURE_RANKS = (1, 2)
"""A norm normalizes the last axis of a [B, D] or [B, S, D] sequence tensor."""

MAX_NORM_EXTENT = 4096
"""Longest normalized axis: the device's integer sums stay within int64 (docs/dghw.md)."""


def check_norm(kind: str, shape: Sequence[int], what: str) -> int:
    """`kind` is a norm kind and `shape` a [B, D] / [B, S, D] shape; returns D."""
    if kind not in NORM_KINDS:
        raise VerifyException(f"kind must be one of {', '.join(NORM_KINDS)}, got '{kind}'")
    check_feature_rank(len(shape), NORM_FEATURE_RANKS, what)
    extent = shape[-1]
    if extent == DYNAMIC_INDEX or not 1 <= extent <= MAX_NORM_EXTENT:
        raise VerifyException(
            f"{what} normalizes a last axis of {_dim(extent)} elements; it must be static "
            f"and at most {MAX_NORM_EXTENT}"
        )
    return extent
