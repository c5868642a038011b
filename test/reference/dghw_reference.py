"""A slow, direct scalar reference of the dghw ops, written from docs/dghw.md.

Independent of the interpreter on purpose: plain Python integers (unbounded,
so nothing can overflow or round unnoticed), nested loops, one formula per op
copied from the spec. numpy appears only at the edges, to take arrays in and
give arrays out; no numpy arithmetic is used.
"""

from __future__ import annotations

import itertools
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


def _reference_op(op, args: list[np.ndarray]) -> np.ndarray:
    def prop(name: str) -> int:
        return op.properties[name].value.data

    def values(name: str) -> tuple[int, ...]:
        return op.properties[name].get_values()

    result_type = op.results[0].type
    match op.name:
        case "dghw.constant":
            attr = op.properties["value"]
            return constant(
                attr.data.data, result_type.get_shape(), result_type.element_type.width.data
            )
        case "dghw.conv2d":
            return conv2d(
                *args, values("stride"), values("pad"), prop("input_zp"), prop("weight_zp")
            )
        case "dghw.fully_connected":
            return fully_connected(*args, prop("input_zp"), prop("weight_zp"))
        case "dghw.rescale":
            return rescale(
                args[0],
                values("multiplier"),
                values("shift"),
                prop("input_zp"),
                prop("output_zp"),
                prop("clamp_min"),
                prop("clamp_max"),
                result_type.element_type.width.data,
            )
        case "dghw.add":
            return add(*args)
        case "dghw.reshape":
            return reshape(args[0], result_type.get_shape()[1:])
        case "dghw.transpose":
            return transpose(args[0], values("perm"))
    raise NotImplementedError(op.name)
