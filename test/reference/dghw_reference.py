"""A slow, direct scalar reference of the dghw ops, written from docs/dghw.md.

Independent of the interpreter on purpose: plain Python integers (unbounded,
so nothing can overflow or round unnoticed), nested loops, one formula per op
copied from the spec. numpy appears only at the edges, to take arrays in and
give arrays out; no numpy arithmetic is used.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


class ReferenceOverflow(ArithmeticError):
    """An int32 result that TOSA leaves unpredictable (dghw.md: "must fit int32")."""


def _grid(shape: Sequence[int]):
    return itertools.product(*(range(d) for d in shape))


def _from_dict(values: dict[tuple[int, ...], int], shape: Sequence[int], dtype) -> np.ndarray:
    out = np.zeros(shape, dtype=dtype)
    for index, v in values.items():
        out[index] = v
    return out


def _require_int32(v: int) -> int:
    if not INT32_MIN <= v <= INT32_MAX:
        raise ReferenceOverflow(v)
    return v


def constant(data: bytes, shape: Sequence[int], bits: int) -> np.ndarray:
    """Little-endian two's-complement elements, row-major."""
    width = bits // 8
    count = len(data) // width
    values = [
        int.from_bytes(data[i * width : (i + 1) * width], "little", signed=True)
        for i in range(count)
    ]
    dtype = {8: np.int8, 32: np.int32}[bits]
    return _from_dict(dict(zip(_grid(shape), values, strict=True)), shape, dtype)


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    stride: Sequence[int],
    pad: Sequence[int],
    input_zp: int,
    weight_zp: int,
) -> np.ndarray:
    """out[n,oy,ox,oc] = bias[oc] + sum (in[n, oy*sy+ky-top, ox*sx+kx-left, ic] - input_zp)
    * (w[oc,ky,kx,ic] - weight_zp); outside the input, in = input_zp."""
    xs, ws, bs = x.tolist(), w.tolist(), bias.tolist()
    n_batch, height, width, channels = x.shape
    out_channels, kh, kw, _ = w.shape
    sy, sx = stride
    top, bottom, left, right = pad
    oh = (height + top + bottom - kh) // sy + 1
    ow = (width + left + right - kw) // sx + 1
    out = {}
    for n, oy, ox, oc in _grid((n_batch, oh, ow, out_channels)):
        acc = bs[oc]
        for ky, kx, ic in _grid((kh, kw, channels)):
            iy, ix = oy * sy + ky - top, ox * sx + kx - left
            value = xs[n][iy][ix][ic] if 0 <= iy < height and 0 <= ix < width else input_zp
            acc += (value - input_zp) * (ws[oc][ky][kx][ic] - weight_zp)
        out[n, oy, ox, oc] = _require_int32(acc)
    return _from_dict(out, (n_batch, oh, ow, out_channels), np.int32)


def fully_connected(
    x: np.ndarray, w: np.ndarray, bias: np.ndarray, input_zp: int, weight_zp: int
) -> np.ndarray:
    """out[..., n] = bias[n] + sum_k (in[..., k] - input_zp) * (w[n, k] - weight_zp)."""
    ws, bs = w.tolist(), bias.tolist()
    n_out, k_len = w.shape
    lead = x.shape[:-1]
    out = {}
    for index in _grid(lead):
        row = x[index].tolist()
        for n in range(n_out):
            acc = bs[n]
            for k in range(k_len):
                acc += (row[k] - input_zp) * (ws[n][k] - weight_zp)
            out[(*index, n)] = _require_int32(acc)
    return _from_dict(out, (*lead, n_out), np.int32)


def rescale(
    x: np.ndarray,
    multiplier: Sequence[int],
    shift: Sequence[int],
    input_zp: int,
    output_zp: int,
    clamp_min: int,
    clamp_max: int,
    out_bits: int,
) -> np.ndarray:
    """TOSA RESCALE SINGLE_ROUND: ((x - in_zp) * m + 2^(s-1)) >> s, + out_zp, clamped.

    `>>` on Python ints is floor division by 2^s, i.e. the arithmetic shift.
    """
    channels = x.shape[-1] if x.ndim else 1
    out = {}
    for index in _grid(x.shape):
        c = index[-1] if len(multiplier) > 1 else 0
        assert len(multiplier) == 1 or len(multiplier) == channels
        m, s = int(multiplier[c]), int(shift[c])
        v = int(x[index]) - input_zp
        r = (v * m + (1 << (s - 1))) >> s
        out[index] = min(max(r + output_zp, clamp_min), clamp_max)
    return _from_dict(out, x.shape, {8: np.int8, 32: np.int32}[out_bits])


def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """out = a + b, required to fit int32."""
    out = {index: _require_int32(int(a[index]) + int(b[index])) for index in _grid(a.shape)}
    return _from_dict(out, a.shape, np.int32)


def mul(x: np.ndarray, c: np.ndarray, input_zp: int, constant_zp: int) -> np.ndarray:
    """out[i] = (x[i] - input_zp) * (c[j] - constant_zp), j = i with c's extent-1 axes at 0."""
    out = {}
    for index in _grid(x.shape):
        j = tuple(0 if extent == 1 else i for i, extent in zip(index, c.shape, strict=True))
        out[index] = _require_int32((int(x[index]) - input_zp) * (int(c[j]) - constant_zp))
    return _from_dict(out, x.shape, np.int32)


def matmul(lhs: np.ndarray, rhs: np.ndarray, lhs_zp: int, rhs_zp: int) -> np.ndarray:
    """out[..., m, n] = sum_k (lhs[..., m, k] - lhs_zp) * (rhs[..., k, n] - rhs_zp), int32."""
    out = {}
    shape = (*lhs.shape[:-1], rhs.shape[-1])
    for index in _grid(shape):
        lead, m, n = index[:-2], index[-2], index[-1]
        total = sum(
            (int(lhs[(*lead, m, k)]) - lhs_zp) * (int(rhs[(*lead, k, n)]) - rhs_zp)
            for k in range(lhs.shape[-1])
        )
        out[index] = _require_int32(total)
    return _from_dict(out, shape, np.int32)


def reshape(x: np.ndarray, item_shape: Sequence[int]) -> np.ndarray:
    """Row-major: the k-th element of each batch item, in index order, stays the k-th."""
    batch = x.shape[0]
    out = {}
    for n in range(batch):
        flat = [int(x[(n, *index)]) for index in _grid(x.shape[1:])]
        for k, index in enumerate(_grid(item_shape)):
            out[(n, *index)] = flat[k]
    return _from_dict(out, (batch, *item_shape), x.dtype)


def transpose(x: np.ndarray, perm: Sequence[int]) -> np.ndarray:
    """Result axis k is input axis perm[k]: out[j] = in[i] with i[perm[k]] = j[k]."""
    out_shape = [x.shape[p] for p in perm]
    out = {}
    for j in _grid(out_shape):
        i = [0] * len(perm)
        for k, p in enumerate(perm):
            i[p] = j[k]
        out[j] = int(x[tuple(i)])
    return _from_dict(out, out_shape, x.dtype)


def slice_axis(x: np.ndarray, axis: int, start: int, end: int) -> np.ndarray:
    """out[..., i, ...] = in[..., start + i, ...] along `axis`, for 0 <= i < end - start."""
    out_shape = list(x.shape)
    out_shape[axis] = end - start
    out = {}
    for j in _grid(out_shape):
        i = list(j)
        i[axis] += start
        out[j] = int(x[tuple(i)])
    return _from_dict(out, out_shape, x.dtype)


def depthwise_conv2d(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    stride: Sequence[int],
    pad: Sequence[int],
    input_zp: int,
    weight_zp: int,
) -> np.ndarray:
    """out[n,oy,ox,c] = bias[c] + sum_{ky,kx} (in[n, oy*sy+ky-top, ox*sx+kx-left, c] - input_zp)
    * (w[ky,kx,c] - weight_zp); outside the input, in = input_zp."""
    xs, ws, bs = x.tolist(), w.tolist(), bias.tolist()
    n_batch, height, width, channels = x.shape
    kh, kw, _ = w.shape
    sy, sx = stride
    top, bottom, left, right = pad
    oh = (height + top + bottom - kh) // sy + 1
    ow = (width + left + right - kw) // sx + 1
    out = {}
    for n, oy, ox, c in _grid((n_batch, oh, ow, channels)):
        acc = bs[c]
        for ky, kx in _grid((kh, kw)):
            iy, ix = oy * sy + ky - top, ox * sx + kx - left
            value = xs[n][iy][ix][c] if 0 <= iy < height and 0 <= ix < width else input_zp
            acc += (value - input_zp) * (ws[ky][kx][c] - weight_zp)
        out[n, oy, ox, c] = _require_int32(acc)
    return _from_dict(out, (n_batch, oh, ow, channels), np.int32)


def max_pool2d(
    x: np.ndarray, kernel: Sequence[int], stride: Sequence[int], out_hw: Sequence[int]
) -> np.ndarray:
    """out[n,oy,ox,c] = max of x[n, oy*sy+ky, ox*sx+kx, c] over the taps inside the input."""
    xs = x.tolist()
    n_batch, height, width, channels = x.shape
    (kh, kw), (sy, sx), (oh, ow) = kernel, stride, out_hw
    out = {}
    for n, oy, ox, c in _grid((n_batch, oh, ow, channels)):
        taps = [
            xs[n][oy * sy + ky][ox * sx + kx][c]
            for ky, kx in _grid((kh, kw))
            if oy * sy + ky < height and ox * sx + kx < width
        ]
        out[n, oy, ox, c] = max(taps)
    return _from_dict(out, (n_batch, oh, ow, channels), np.int8)


def reciprocal_scale(value: int) -> tuple[int, int]:
    """TOSA 1.0 reciprocal_scale: (multiplier, shift) with multiplier * 2^-shift ~ 1 / value.

    k = 32 - clz(value - 1), i.e. the bit length of value - 1 (2^k / 2 < value <= 2^k).
    """
    assert value > 0
    k = (value - 1).bit_length()
    return (((1 << 30) + 1) << k) // value, 30 + k


def apply_scale_32(value: int, multiplier: int, shift: int) -> int:
    """TOSA 1.0 apply_scale_32 with SINGLE_ROUND (double_round = false), over the integers."""
    return (value * multiplier + (1 << (shift - 1))) >> shift


def avg_pool2d(
    x: np.ndarray,
    kernel: Sequence[int],
    stride: Sequence[int],
    pad: Sequence[int],
    out_hw: Sequence[int],
    count_include_pad: bool,
    divisor_override: int | None,
    input_zp: int,
    output_zp: int,
) -> np.ndarray:
    """acc = sum (x - input_zp) over the taps inside the input; the divisor is the override,
    else the taps inside the padded input (count_include_pad) or inside the input;
    out = clamp(apply_scale_32(acc, reciprocal_scale(divisor)) + output_zp, -128, 127)."""
    xs = x.tolist()
    n_batch, height, width, channels = x.shape
    (kh, kw), (sy, sx), (oh, ow) = kernel, stride, out_hw
    top, bottom, left, right = pad
    out = {}
    for n, oy, ox, c in _grid((n_batch, oh, ow, channels)):
        acc = inside_input = inside_padded = 0
        for ky, kx in _grid((kh, kw)):
            iy, ix = oy * sy + ky - top, ox * sx + kx - left
            if 0 <= iy < height and 0 <= ix < width:
                acc += xs[n][iy][ix][c] - input_zp
                inside_input += 1
            if -top <= iy < height + bottom and -left <= ix < width + right:
                inside_padded += 1
        if divisor_override is not None:
            divisor = divisor_override
        else:
            divisor = inside_padded if count_include_pad else inside_input
        multiplier, shift = reciprocal_scale(divisor)
        value = apply_scale_32(acc, multiplier, shift) + output_zp
        out[n, oy, ox, c] = min(max(value, -128), 127)
    return _from_dict(out, (n_batch, oh, ow, channels), np.int8)


def table(x: np.ndarray, entries: Sequence[int]) -> np.ndarray:
    """out = table[x + 128]."""
    values = [int(v) for v in entries]
    out = {index: values[int(x[index]) + 128] for index in _grid(x.shape)}
    return _from_dict(out, x.shape, np.int8)


def softmax(x: np.ndarray, exp_table: Sequence[int], axis: int) -> np.ndarray:
    """Per row along `axis`: e = exp_table[max - x], sum = sum e (must lie in [1, 2^31 - 1]),
    out = clamp(floor((2 * 256 * e + sum) / (2 * sum)) - 128, -128, 127)."""
    table_values = [int(v) for v in exp_table]
    others = [d for k, d in enumerate(x.shape) if k != axis]
    out = {}
    for rest in _grid(others):

        def index(i: int, rest: tuple[int, ...] = rest) -> tuple[int, ...]:
            return (*rest[:axis], i, *rest[axis:])

        row = [int(x[index(i)]) for i in range(x.shape[axis])]
        top = max(row)
        e = [table_values[top - v] for v in row]
        total = sum(e)
        if not 1 <= total <= INT32_MAX:
            raise ReferenceOverflow(total)
        for i, ei in enumerate(e):
            q = (2 * 256 * ei + total) // (2 * total)
            out[index(i)] = min(max(q - 128, -128), 127)
    return _from_dict(out, x.shape, np.int8)


def concat(inputs: Sequence[np.ndarray], axis: int) -> np.ndarray:
    """Input k's element i lands at i + (extents of inputs 0..k-1 along axis)."""
    shape = list(inputs[0].shape)
    shape[axis] = sum(a.shape[axis] for a in inputs)
    out = {}
    offset = 0
    for a in inputs:
        for index in _grid(a.shape):
            moved = list(index)
            moved[axis] += offset
            out[tuple(moved)] = int(a[index])
        offset += a.shape[axis]
    return _from_dict(out, shape, inputs[0].dtype)


def nearest_source(o: int, in_size: int, out_size: int, mode: str) -> int:
    """nearest: floor(o * in / out); nearest-exact: min(floor((o + 1/2) * in / out), in - 1)."""
    if mode == "nearest":
        return o * in_size // out_size
    return min((2 * o + 1) * in_size // (2 * out_size), in_size - 1)


def resize_nearest(x: np.ndarray, out_hw: Sequence[int], mode: str) -> np.ndarray:
    """out[n, oy, ox, c] = x[n, source(oy), source(ox), c] (NHWC)."""
    n_batch, height, width, channels = x.shape
    oh, ow = out_hw
    out = {}
    for n, oy, ox, c in _grid((n_batch, oh, ow, channels)):
        iy = nearest_source(oy, height, oh, mode)
        ix = nearest_source(ox, width, ow, mode)
        out[n, oy, ox, c] = int(x[n, iy, ix, c])
    return _from_dict(out, (n_batch, oh, ow, channels), x.dtype)


def _wrap_int32(v: int) -> int:
    """The int32 whose two's-complement bits are the low 32 bits of `v`."""
    return _wrap(v, 32)


def _wrap(v: int, width: int) -> int:
    """The signed `width`-bit integer whose two's-complement bits are the low bits of `v`."""
    v &= (1 << width) - 1
    return v - (1 << width) if v >= 1 << (width - 1) else v


def shift(x: np.ndarray, direction: str, amount: int) -> np.ndarray:
    """left: low bits (the element width) of x * 2^amount; right: floor(x / 2^amount)."""
    width = 8 * x.dtype.itemsize
    out = {}
    for index in _grid(x.shape):
        v = int(x[index])
        out[index] = _wrap(v * 2**amount, width) if direction == "left" else v // 2**amount
    return _from_dict(out, x.shape, x.dtype)


def bitwise(x: np.ndarray, kind: str, value: int) -> np.ndarray:
    """Bitwise and/or/xor of the two's-complement patterns (Python ints are two's
    complement with infinite sign extension, so the result is already in the element range)."""
    apply = {"and": lambda a: a & value, "or": lambda a: a | value, "xor": lambda a: a ^ value}
    out = {index: apply[kind](int(x[index])) for index in _grid(x.shape)}
    return _from_dict(out, x.shape, x.dtype)


def compare(x: np.ndarray, kind: str, value: int) -> np.ndarray:
    """1 where `x kind value` holds, else 0."""
    holds = {
        "gt": lambda a: a > value,
        "ge": lambda a: a >= value,
        "lt": lambda a: a < value,
        "le": lambda a: a <= value,
        "eq": lambda a: a == value,
        "ne": lambda a: a != value,
    }[kind]
    out = {index: 1 if holds(int(x[index])) else 0 for index in _grid(x.shape)}
    return _from_dict(out, x.shape, np.int32)


def bitwise_tensor(lhs: np.ndarray, rhs: np.ndarray, kind: str) -> np.ndarray:
    """out[i] = lhs[i] and/or/xor rhs[i] on the two's-complement patterns of one element
    type (in range for the reason `bitwise` gives)."""
    apply = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}
    out = {index: apply[kind](int(lhs[index]), int(rhs[index])) for index in _grid(lhs.shape)}
    return _from_dict(out, lhs.shape, lhs.dtype)


def compare_tensor(lhs: np.ndarray, rhs: np.ndarray, kind: str) -> np.ndarray:
    """out[i] = 1 where `lhs[i] kind rhs[i]` holds (signed), else 0; i32."""
    holds = {
        "gt": lambda a, b: a > b,
        "ge": lambda a, b: a >= b,
        "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b,
        "eq": lambda a, b: a == b,
        "ne": lambda a, b: a != b,
    }[kind]
    out = {index: 1 if holds(int(lhs[index]), int(rhs[index])) else 0 for index in _grid(lhs.shape)}
    return _from_dict(out, lhs.shape, np.int32)


def tile(x: np.ndarray, multiples: Sequence[int]) -> np.ndarray:
    """out[i] = x[i mod x.shape] per axis."""
    shape = [d * m for d, m in zip(x.shape, multiples, strict=True)]
    out = {
        index: int(x[tuple(i % d for i, d in zip(index, x.shape, strict=True))])
        for index in _grid(shape)
    }
    return _from_dict(out, shape, x.dtype)


def norm(
    x: np.ndarray,
    kind: str,
    input_zp: int,
    output_zp: int,
    eps: int,
    multiplier: Sequence[int],
    bias: Sequence[int],
    shift: int,
) -> np.ndarray:
    """Per row of the last axis (n elements), x = input - input_zp:
    layer: A = n x - sum x, V = n sum x^2 - (sum x)^2; rms: A = n x, V = n sum x^2;
    D = V * 2^20 + eps; t = max(0, ceil(bitlen(D) / 2) - 11); R = isqrt(2^62 // (D >> 2t));
    Z = (A R + 2^(t-1)) >> t (no rounding term when t = 0);
    out[c] = clamp(((Z multiplier[c] + bias[c] + 2^(shift-1)) >> shift) + output_zp)."""
    n = x.shape[-1]
    out = {}
    for rest in _grid(x.shape[:-1]):
        row = [int(x[(*rest, i)]) - input_zp for i in range(n)]
        total = sum(row)
        squares = sum(v * v for v in row)
        if kind == "layer":
            a = [n * v - total for v in row]
            variance = n * squares - total * total
        else:
            a = [n * v for v in row]
            variance = n * squares
        d = variance * 2**20 + eps
        t = max(0, (d.bit_length() + 1) // 2 - 11)
        r = math.isqrt(2**62 // (d >> (2 * t)))
        for c, ac in enumerate(a):
            z = (ac * r + (2 ** (t - 1) if t > 0 else 0)) >> t
            y = (z * int(multiplier[c]) + int(bias[c]) + 2 ** (shift - 1)) >> shift
            out[(*rest, c)] = min(max(y + output_zp, -128), 127)
    return _from_dict(out, x.shape, np.int8)


def run_module(module, arrays: Sequence[np.ndarray], function: str = "main") -> list[np.ndarray]:
    """Run a dghw `func.func` op by op with the scalar reference (no xDSL interpreter)."""
    func_op = next(op for op in module.ops if op.sym_name.data == function)
    block = func_op.body.block
    values = dict(zip(block.args, arrays, strict=True))
    for op in block.ops:
        if op.name == "func.return":
            return [values[v] for v in op.operands]
        values[op.results[0]] = _reference_op(op, [values[v] for v in op.operands])
    raise AssertionError("function without func.return")


def _prop(op, name: str) -> int:
    return op.properties[name].value.data


def _values(op, name: str) -> tuple[int, ...]:
    return op.properties[name].get_values()


def _text(op, name: str) -> str:
    return op.properties[name].data


def _result(op):
    return op.results[0].type


def _optional(op, name: str) -> int | None:
    attr = op.properties.get(name)
    return None if attr is None else attr.value.data


def _weighted(fn):
    """A conv-like op: its operands, then its stride, pad and zero points."""
    return lambda op, a: fn(
        *a, _values(op, "stride"), _values(op, "pad"), _prop(op, "input_zp"), _prop(op, "weight_zp")
    )


_WEIGHTS = {
    "dghw.conv2d": _weighted(conv2d),
    "dghw.depthwise_conv2d": _weighted(depthwise_conv2d),
    "dghw.fully_connected": lambda op, a: fully_connected(
        *a, _prop(op, "input_zp"), _prop(op, "weight_zp")
    ),
    "dghw.matmul": lambda op, a: matmul(*a, _prop(op, "lhs_zp"), _prop(op, "rhs_zp")),
}
_ARITHMETIC = {
    "dghw.constant": lambda op, a: constant(
        op.properties["value"].data.data,
        _result(op).get_shape(),
        _result(op).element_type.width.data,
    ),
    "dghw.rescale": lambda op, a: rescale(
        a[0],
        _values(op, "multiplier"),
        _values(op, "shift"),
        *(_prop(op, name) for name in ("input_zp", "output_zp", "clamp_min", "clamp_max")),
        _result(op).element_type.width.data,
    ),
    "dghw.add": lambda op, a: add(*a),
    "dghw.mul": lambda op, a: mul(*a, _prop(op, "input_zp"), _prop(op, "constant_zp")),
    "dghw.table": lambda op, a: table(a[0], _values(op, "table")),
    "dghw.softmax": lambda op, a: softmax(a[0], _values(op, "exp_table"), _prop(op, "axis")),
    "dghw.norm": lambda op, a: norm(
        a[0],
        _text(op, "kind"),
        *(_prop(op, name) for name in ("input_zp", "output_zp", "eps")),
        _values(op, "multiplier"),
        _values(op, "bias"),
        _prop(op, "shift"),
    ),
    "dghw.shift": lambda op, a: shift(a[0], _text(op, "direction"), _prop(op, "shift")),
    "dghw.bitwise": lambda op, a: bitwise(a[0], _text(op, "kind"), _prop(op, "value")),
    "dghw.compare": lambda op, a: compare(a[0], _text(op, "kind"), _prop(op, "value")),
}
_MOVEMENT = {
    "dghw.reshape": lambda op, a: reshape(a[0], _result(op).get_shape()[1:]),
    "dghw.transpose": lambda op, a: transpose(a[0], _values(op, "perm")),
    "dghw.slice": lambda op, a: slice_axis(
        a[0], _prop(op, "axis"), _prop(op, "start"), _prop(op, "end")
    ),
    "dghw.concat": lambda op, a: concat(a, _prop(op, "axis")),
    "dghw.tile": lambda op, a: tile(a[0], _values(op, "multiples")),
    "dghw.resize_nearest": lambda op, a: resize_nearest(
        a[0], _result(op).get_shape()[1:3], _text(op, "mode")
    ),
    "dghw.max_pool2d": lambda op, a: max_pool2d(
        a[0], _values(op, "kernel"), _values(op, "stride"), _result(op).get_shape()[1:3]
    ),
    "dghw.avg_pool2d": lambda op, a: avg_pool2d(
        a[0],
        _values(op, "kernel"),
        _values(op, "stride"),
        _values(op, "pad"),
        _result(op).get_shape()[1:3],
        _prop(op, "count_include_pad") != 0,
        _optional(op, "divisor_override"),
        _prop(op, "input_zp"),
        _prop(op, "output_zp"),
    ),
}
_REFERENCES = {**_WEIGHTS, **_ARITHMETIC, **_MOVEMENT}
"""Each dghw op's reference function, called with the op's properties."""


def _reference_op(op, args: list[np.ndarray]) -> np.ndarray:
    reference = _REFERENCES.get(op.name)
    if reference is None:
        raise NotImplementedError(op.name)
    return reference(op, args)
