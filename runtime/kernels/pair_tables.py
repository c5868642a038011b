"""Tables of int8 pairs: groups of ops whose every element is a function of two int8
patterns, run by the device model's plan as lookups in 65536 entries computed once.

- A residual add, `rescale(add(rescale a, rescale b))` (`pair_table_group`, `pair_lookup`);
- a rescaled product with a constant, `rescale(mul(x, c))` (`product_table_group`,
  `ProductTable`, the external impl `MUL_THEN_RESCALE`);
- a residual add of two such products, RoPE's `x cos + rotate(x) sin` (`product_pair_group`,
  `ProductPair`, the external impl `PRODUCT_PAIR`): three lookups per element.

docs/dghw.md ("... as pair tables") states why each gives the ops' integers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation

from dg.dialects import dghw
from dg.runtime.kernels.common import (
    inverse_order,
    memory_order,
    numpy_dtype,
    sole_per_tensor_int8_rescale,
)
from dg.runtime.kernels.quantization import rescale_parameters, unclamped_rescale
from dg.runtime.threads import run_blocks_in_parts


def pair_table_group(add: dghw.AddOp) -> tuple[dghw.RescaleOp, ...] | None:
    """`rescale(add(rescale a, rescale b))` on int8 `a`, `b` of one shape, every rescale
    per tensor and read only inside the group: (rescale a, rescale b, final rescale).

    Such a group maps each pair of int8 inputs to one int8 output, element by
    element, so 65536 entries hold all it can do (TFLite's residual add has this shape).
    """
    inputs = [value.owner for value in (add.lhs, add.rhs)]
    users = list(add.result.uses)
    if add.lhs is add.rhs or len(users) != 1:
        return None
    final = users[0].operation
    group = (*inputs, final)
    if not all(isinstance(op, dghw.RescaleOp) for op in group):
        return None
    lhs, rhs, out = cast(tuple[dghw.RescaleOp, ...], group)
    if not all(len(op.multiplier.get_values()) == 1 for op in group):
        return None
    if numpy_dtype(out.result.type) != np.int8 or lhs.input.type != rhs.input.type:
        return None
    if numpy_dtype(lhs.input.type) != np.int8:
        return None
    if any(len(list(op.result.uses)) != 1 for op in (lhs, rhs)):
        return None
    return lhs, rhs, out


def pair_table(interpreter: Interpreter, group: tuple[dghw.RescaleOp, ...]) -> np.ndarray:
    """The output of a `pair_table_group` for every pair of int8 inputs, computed by the
    ops' own implementations (`Interpreter.run_op`): entry 256 * pattern(a) + pattern(b)."""
    lhs, rhs, final = group
    add = cast(dghw.AddOp, final.input.owner)
    patterns = np.arange(1 << 16, dtype=np.uint16)
    a = (patterns >> 8).astype(np.uint8).view(np.int8)
    b = (patterns & 0xFF).astype(np.uint8).view(np.int8)
    (a_scaled,), (b_scaled,) = interpreter.run_op(lhs, (a,)), interpreter.run_op(rhs, (b,))
    (total,) = interpreter.run_op(add, (a_scaled, b_scaled))
    (table,) = interpreter.run_op(final, (total,))
    return table


PAIR_BLOCK = 1 << 17
"""Elements `pair_lookup` indexes at a time: a 256 KB uint16 index (measured best)."""


def pair_lookup(table: np.ndarray, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """`table[256 * pattern(lhs) + pattern(rhs)]`, element by element (int8 bit patterns).

    Over contiguous operands longer than two blocks, block by block (`PAIR_BLOCK`), the
    uint16 index in cache: the same lookups, without a map-sized index (1.5x as fast at
    batch 32); the blocks of a long map are split over the caller's threads
    (`PARALLEL_NUMPY_WORK`).
    """
    contiguous = lhs.flags.c_contiguous and rhs.flags.c_contiguous
    if not contiguous and lhs.strides == rhs.strides:
        # Two views of one layout (RoPE's halves, per head): walked in memory order, as one
        # C-contiguous array each, twice as fast; each element's lookup is its own.
        order = memory_order(lhs)
        if lhs.transpose(order).flags.c_contiguous:
            walked = pair_lookup(table, lhs.transpose(order), rhs.transpose(order))
            return walked.transpose(inverse_order(order))
    if lhs.size <= 2 * PAIR_BLOCK or not contiguous:
        index = np.left_shift(lhs.view(np.uint8), 8, dtype=np.uint16)
        index |= rhs.view(np.uint8)
        return table.take(index)
    lhs_flat, rhs_flat = lhs.view(np.uint8).reshape(-1), rhs.view(np.uint8).reshape(-1)
    out = np.empty(lhs.size, table.dtype)

    def look_up(start: int, end: int, buffer: np.ndarray) -> None:
        index = buffer[: end - start]
        np.left_shift(lhs_flat[start:end], 8, out=index, dtype=np.uint16)
        index |= rhs_flat[start:end]
        # Every uint16 index is inside the 65536 entries: "clip" never clips, and with
        # `out` it avoids the buffered copy numpy makes for the default "raise".
        table.take(index, out=out[start:end], mode="clip")

    def scratch() -> np.ndarray:
        return np.empty(PAIR_BLOCK, np.uint16)

    run_blocks_in_parts(lhs.size, PAIR_BLOCK, look_up, scratch, lhs.size, numpy=True)
    return out.reshape(lhs.shape)


PRODUCT_GROUP = 1 << 17
"""Elements `ProductTable.apply` looks up at a time (whole batch items): its uint16 index
(256 KB) stays in cache, and a small map is one group (two numpy calls)."""


MUL_THEN_RESCALE = "dghw.mul_then_rescale"
"""The external impl (`impl_external`) the device model's plan runs a `product_table_group`
with: the mul's operands in, the rescale's int8 result out."""


def product_table_group(op: Operation) -> dghw.RescaleOp | None:
    """The per-tensor rescale to int8 that is the only use of `op`'s result, when `op` is a
    `dghw.mul` of a constant: RoPE's products with its cos and sin tables."""
    if not isinstance(op, dghw.MulOp) or not isinstance(op.constant.owner, dghw.ConstantOp):
        return None
    return sole_per_tensor_int8_rescale(op)


@dataclass(frozen=True)
class ProductTable:
    """`rescale(mul(x, c))` of a `product_table_group` as one lookup per element.

    Both factors are int8, so an element's result depends only on the pair of bit
    patterns (c, x): entry 256 * rank(c) + pattern(x) of the table holds the rescale of
    (x - input_zp)(c - constant_zp), computed once by the definitions (the product in
    int64, then `unclamped_rescale` and the clamp, docs/dghw.md), rank(c) the place of
    c's pattern among the constant's distinct ones. A run ORs the constant's ranks,
    shifted left by 8 and tiled over a batch item once, with x's patterns into a uint16
    index and looks it up: two passes instead of the mul's two and the rescale's two to
    five, and no int32 map. Rows only for the patterns the constant holds keep the table
    small (RoPE's cos and sin: 22 and 69 of 256), so more of the network's tables stay
    in cache: the digits transformer at batch 32 took 0.98 of the time with them.
    """

    table: np.ndarray
    """[256 * distinct patterns of the constant] int8."""
    high_byte: np.ndarray
    """uint16, the constant's shape: rank(c) << 8."""
    _tiled: dict[tuple[tuple[int, ...], tuple[int, ...]], np.ndarray] = field(
        default_factory=dict, compare=False, repr=False
    )
    """`high_byte` over one item of each shape, in each memory order (`apply`)."""

    @staticmethod
    def prepare(mul: dghw.MulOp, rescale: dghw.RescaleOp, constant: np.ndarray) -> ProductTable:
        distinct, rank = np.unique(constant.view(np.uint8), return_inverse=True)
        c = distinct.view(np.int8).astype(np.int64)[:, None]
        x = np.arange(256, dtype=np.uint8).view(np.int8).astype(np.int64)[None, :]
        product = (x - mul.input_zp.value.data) * (c - mul.constant_zp.value.data)
        v = unclamped_rescale(rescale, product.reshape(-1), rescale_parameters(rescale))
        np.clip(v, rescale.clamp_min.value.data, rescale.clamp_max.value.data, out=v)
        high_byte = rank.reshape(constant.shape).astype(np.uint16) << 8
        return ProductTable(v.astype(np.int8), high_byte)

    def tile(self, shape: tuple[int, ...], order: tuple[int, ...]) -> np.ndarray:
        """`high_byte` over one batch item of `shape`, in the walk `order` (contiguous, kept
        per shape and order): the constant's extent-1 axes broadcast once, not per call."""
        key = (shape, order)
        high = self._tiled.get(key)
        if high is None:
            tile = np.broadcast_to(self.high_byte, (1, *shape[1:])).transpose(order)
            high = self._tiled[key] = np.ascontiguousarray(tile)
        return high

    def apply(self, x: np.ndarray) -> np.ndarray:
        """The lookups in x's memory order (`item_walk_order`), batch items a group at a
        time (`in_groups`)."""
        order = item_walk_order(x)
        high = self.tile(x.shape, order)
        walked = x.transpose(order).view(np.uint8)
        out = np.empty(walked.shape, np.int8)

        def look_up(items: slice) -> None:
            index = np.bitwise_or(high, walked[items])
            # Every index is an entry (a rank's row): "clip" never clips, and it avoids the
            # slower bounds-checked loop of the default "raise".
            self.table.take(index, mode="clip", out=out[items])

        in_groups(look_up, walked)
        return out.transpose(inverse_order(order))


def item_walk_order(x: np.ndarray) -> tuple[int, ...]:
    """The axes a per-element lookup walks x in: its memory order (`memory_order`) when the
    batch axis is outermost there, else its own. Over the transposed views of RoPE's heads,
    numpy's passes over the logical order stride through memory, two to four times slower;
    each element's result depends on its own operands alone, so only the walk changes."""
    order = memory_order(x)
    return order if order[0] == 0 else tuple(range(x.ndim))


def in_groups(look_up: Callable[[slice], None], walked: np.ndarray) -> None:
    """`look_up` of each group of about `PRODUCT_GROUP` elements (whole batch items) of
    `walked`: its uint16 index stays in cache. A map of one group is one call on the
    caller's thread (most maps at batch 1, where the split's calls and slices cost about a
    third of a RoPE lookup step); the groups of a long map split over the caller's threads
    (`run_blocks_in_parts`)."""
    items = len(walked)
    item_size = walked.size // items if items else 1
    group = max(1, min(items, PRODUCT_GROUP // max(1, item_size)))
    if group >= items:
        look_up(slice(None))
        return

    def look_up_group(start: int, end: int, _: None) -> None:
        look_up(slice(start, end))

    run_blocks_in_parts(items, group, look_up_group, lambda: None, walked.size, numpy=True)


PRODUCT_PAIR = "dghw.product_pair_then_rescale"
"""The external impl (`impl_external`) the device model's plan runs a `product_pair_group`
with: (x, c1, y, c2), the two muls' operands, in; the final rescale's int8 result out."""


ProductPairGroup = tuple[tuple[dghw.MulOp, dghw.RescaleOp], tuple[dghw.MulOp, dghw.RescaleOp]]
"""The (mul, rescale) of each side of a residual add of two products (`product_pair_group`)."""


def product_pair_group(group: tuple[dghw.RescaleOp, ...]) -> ProductPairGroup | None:
    """Each side's (mul, rescale) of a `pair_table_group` whose inputs a and b are both
    `product_table_group`s read only there: rescale(add(rescale(rescale(mul(x, c1))),
    rescale(rescale(mul(y, c2))))), RoPE's sum of rescaled products with its cos and sin
    tables. Each element's result is then pair[first[c1, x], second[c2, y]]."""
    sides = []
    for side in group[:2]:
        product = side.input.owner
        if not isinstance(product, dghw.RescaleOp) or len(list(side.input.uses)) != 1:
            return None
        mul = product.input.owner
        if not isinstance(mul, dghw.MulOp) or product_table_group(mul) is not product:
            return None
        sides.append((mul, product))
    return sides[0], sides[1]


@dataclass(frozen=True)
class ProductPair:
    """A `product_pair_group` as three lookups per element: the pair table (`pair_table`) of
    the two products' `ProductTable` entries. The first product's table holds its results'
    patterns shifted left by 8 (uint16), so the pair's index is one OR of the two lookups:
    six numpy passes instead of the three steps' seven, in one step."""

    first: ProductTable
    second: ProductTable
    first_high: np.ndarray
    """uint16, `first.table`'s shape: pattern(first.table) << 8."""
    table: np.ndarray
    """int8 [65536]: the pair table of the residual add."""

    @staticmethod
    def prepare(
        interpreter: Interpreter, final: dghw.RescaleOp, constants: Sequence[np.ndarray]
    ) -> ProductPair:
        group = pair_table_group(cast(dghw.AddOp, final.input.owner))
        assert group is not None
        sides = product_pair_group(group)
        assert sides is not None
        first, second = (
            ProductTable.prepare(mul, rescale, constant)
            for (mul, rescale), constant in zip(sides, constants, strict=True)
        )
        first_high = np.left_shift(first.table.view(np.uint8), 8, dtype=np.uint16)
        return ProductPair(first, second, first_high, pair_table(interpreter, group))

    def apply(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The group's result on x and y (one shape): both walked in x's walk order
        (`item_walk_order`), batch items a group at a time (`in_groups`)."""
        order = item_walk_order(x)
        x_high, y_high = self.first.tile(x.shape, order), self.second.tile(y.shape, order)
        walked_x = x.transpose(order).view(np.uint8)
        walked_y = y.transpose(order).view(np.uint8)
        second = self.second.table.view(np.uint8)
        out = np.empty(walked_x.shape, self.table.dtype)

        def look_up(items: slice) -> None:
            index = np.bitwise_or(x_high, walked_x[items])
            pair = self.first_high.take(index, mode="clip")
            np.bitwise_or(y_high, walked_y[items], out=index)
            pair |= second.take(index, mode="clip")
            self.table.take(pair, mode="clip", out=out[items])

        in_groups(look_up, walked_x)
        return out.transpose(inverse_order(order))
