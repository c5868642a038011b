"""im2col for the GEMMs of convolutions: the window view of a padded NHWC map, its patches
as a whole, or a block of their rows at a time (`copy_patches`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dg.runtime.kernels.common import centered_into
from dg.runtime.kernels.pooling import pad_for_windows


def conv_patches(windows: np.ndarray) -> np.ndarray:
    """im2col: the [N*OH*OW, KH*KW*C] patches of `conv_windows`, a view of x where no copy
    is needed (a 1x1 conv of stride 1 without padding, of int8 x)."""
    return windows.reshape(math.prod(windows.shape[:3]), -1)


def conv_windows(
    x: np.ndarray,
    input_zp: int,
    kernel: tuple[int, int],
    stride: Sequence[int],
    pad: Sequence[int],
    centered: bool = True,
) -> np.ndarray:
    """The [N, OH, OW, KH, KW, C] view of every output's window of an NHWC int8 map.

    `centered`: of float32 x - input_zp, padded with 0 (for float32 GEMMs); else of x's own
    int8, padded with input_zp (for int8 GEMMs, which fold the zero point into the bias).
    Either way a padded position contributes nothing, as reading input_zp does.
    A window's elements are ordered (ky, kx, c), the OHWI weight order: with the window axes
    in front of C, an im2col copy reads runs of C contiguous elements, which is most
    of its cost.
    """
    (kh, kw), (sy, sx) = kernel, stride
    top, bottom, left, right = pad
    oh = (x.shape[1] + top + bottom - kh) // sy + 1
    ow = (x.shape[2] + left + right - kw) // sx + 1
    if centered:
        padded = centered_padded(x, input_zp, pad, np.dtype(np.float32))
    elif any(pad):
        padded = pad_for_windows(x, (top, left), kernel, stride, (oh, ow), input_zp)
    else:
        padded = np.ascontiguousarray(x)  # the window view is made on its buffer
    n, c = padded.shape[0], padded.shape[3]
    sn, sh, sw, sc = padded.strides
    # Made from strides directly: `sliding_window_view` + a strided slice + a transpose
    # give the same view at ~30 us of Python per call, which is a third of a small conv.
    return np.ndarray(
        (n, oh, ow, kh, kw, c), padded.dtype, padded, 0, (sn, sh * sy, sw * sx, sh, sw, sc)
    )


def copy_patches(windows: np.ndarray, out: np.ndarray, start: int) -> None:
    """The im2col rows [start, start + len(out)) of `windows` ([N, OH, OW, KH, KW, C], rows
    in (n, oh, ow) order) copied into `out` [rows, KH*KW*C]: an item's whole output rows in
    one copy, a partial row in one more."""
    _, oh, ow = windows.shape[:3]
    window = windows.shape[3:]
    done, end = 0, len(out)
    while done < end:
        item, rest = divmod(start + done, oh * ow)
        row, column = divmod(rest, ow)
        if column or end - done < ow:
            take = min(ow - column, end - done)
            target = out[done : done + take].reshape(take, *window)
            np.copyto(target, windows[item, row, column : column + take])
        else:
            rows = min(oh - row, (end - done) // ow)
            take = rows * ow
            target = out[done : done + take].reshape(rows, ow, *window)
            np.copyto(target, windows[item, row : row + rows])
        done += take


def centered_padded(
    x: np.ndarray, zero_point: int, pad: Sequence[int], dtype: np.dtype[Any]
) -> np.ndarray:
    """x - zero_point in `dtype` (exact: wide enough for it), NHWC, padded with 0.

    `pad` = (top, bottom, left, right). The subtraction writes straight into the
    interior of the result (`centered_into`) and only the border is zeroed, where
    `np.pad` of a centered copy would make three passes (convert, subtract, pad) and
    a zero-filled result two (a 1x1 conv has no border at all).
    """
    top, bottom, left, right = pad
    n, h, w, c = x.shape
    out = np.empty((n, top + h + bottom, left + w + right, c), dtype=dtype)
    out[:, :top] = 0
    out[:, top + h :] = 0
    out[:, top : top + h, :left] = 0
    out[:, top : top + h, left + w :] = 0
    centered_into(out[:, top : top + h, left : left + w], x, zero_point)
    return out
