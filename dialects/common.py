"""Verification helpers shared by the dg dialects.

Each dialect states its own constraints; the helpers here only keep the
arithmetic of those constraints (shapes with a dynamic batch, conv output
extents, integer array properties) in one place.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, IntegerType, TensorType
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.hints import isa


def tensor_type(value_type: Attribute, what: str) -> TensorType[Attribute]:
    """`value_type` as a ranked tensor type, or a VerifyException naming `what`."""
    if not isinstance(value_type, TensorType):
        raise VerifyException(f"{what} must be a ranked tensor, got {value_type}")
    return value_type


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


def check_positive(values: Sequence[int], name: str) -> None:
    if any(v < 1 for v in values):
        raise VerifyException(f"'{name}' entries must be >= 1, got {list(values)}")


def check_non_negative(values: Sequence[int], name: str) -> None:
    if any(v < 0 for v in values):
        raise VerifyException(f"'{name}' entries must be >= 0, got {list(values)}")


def static_numel(shape: Sequence[int]) -> int | None:
    """Element count of a fully static shape, or None when any extent is dynamic."""
    n = 1
    for d in shape:
        if d == DYNAMIC_INDEX:
            return None
        n *= d
    return n


def _dim(d: int) -> str:
    return "?" if d == DYNAMIC_INDEX else str(d)


def _shape(shape: Sequence[int]) -> str:
    """A shape as MLIR spells it in a tensor type: `?x4x4`."""
    return "x".join(_dim(d) for d in shape)
