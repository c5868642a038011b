"""Export each of torchao's rewrite patterns once, not once per call.

torchao's PT2E passes rewrite the model with small pattern graphs that they
build by `torch.export`-ing a pattern function on tiny example tensors
(`_get_aten_graph_module_for_pattern`), again on every call:

- `move_exported_model_to_eval` / `_to_train` (every `dg.freeze_quantization`,
  and every `.eval()` / `.train()` of a prepared model): 6 exports (dropout,
  batch norm);
- `convert_pt2e` of a QAT model with a batch norm: 96 exports (4 conv kinds x 12
  quantization variants x match and replacement), ~25 s on a 2-core machine;
- `prepare_qat_pt2e`: 12 more.

That is most of the time of freezing a small model. The exported pattern only
depends on the pattern function (its code and the values it closes over) and on
the shapes and dtypes of the example inputs, never on their values (torchao
draws them with `torch.randn`). `apply` memoizes the export on exactly that
key and hands every caller its own deep copy of the graph, so a caller that
edits it changes nothing for the next. A pattern the key cannot describe (an
unknown module or callable) is exported as before.

The key is made of values that are the same in every process (a function's code
by its contents, torch's functions and ops by name), so an export also persists:
`STORE` (`pattern_store.PatternStore`) keeps it in the user's cache directory,
and a later process loads it instead of exporting it again.

`_get_aten_graph_module_for_pattern` is private to torchao, and no public API
lets a caller supply the patterns; what dg relies on (its signature, that the
passes look it up where `apply` replaces it, that only the example inputs'
shapes reach the graph) is pinned in test/frontend/test_pattern_cache.py.
"""

from __future__ import annotations

import copy
import types
import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch.fx import GraphModule
from torchao.quantization.pt2e import qat_utils
from torchao.quantization.pt2e import utils as pt2e_utils
from torchao.quantization.pt2e.export_utils import WrapperModule

from dg.frontend.pattern_store import PatternStore

_export_pattern = pt2e_utils._get_aten_graph_module_for_pattern
_CACHE: dict[object, GraphModule] = {}
STORE: PatternStore | None = PatternStore()
"""Where exports persist across processes (`pattern_store`); None: this process only."""


class _Uncacheable(Exception):
    """The value has no key that determines the exported pattern."""


_ATOMS = (bool, int, float, str, bytes, type(None), torch.dtype, torch.device, torch.layout)


def _key(value: object, depth: int = 0, *, tensor_values: bool = True) -> object:
    """A hashable key equal for two values exactly when they export to the same pattern.

    A tensor is keyed by its values too, except the example inputs, positional
    or keyword (`tensor_values=False`): torchao draws those at random, and only
    their shapes and dtypes reach the exported graph. A tensor a pattern function
    closes over could be baked into the graph, so its values count.
    """
    if depth > 8:
        raise _Uncacheable
    if isinstance(value, torch.Tensor):
        layout = (tuple(value.shape), value.dtype, value.device, value.layout, value.requires_grad)
        if not tensor_values:
            return ("tensor", *layout)
        if value.layout != torch.strided or value.numel() > 4096:
            raise _Uncacheable
        contents = value.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes()
        return ("tensor", *layout, contents)
    if isinstance(value, _ATOMS):
        return (type(value), value)
    if isinstance(value, (tuple, list)):
        return (
            type(value),
            tuple(_key(v, depth + 1, tensor_values=tensor_values) for v in value),
        )
    if isinstance(value, dict):
        items = value.items()
        return (
            "dict",
            tuple((k, _key(v, depth + 1, tensor_values=tensor_values)) for k, v in items),
        )
    if isinstance(value, types.FunctionType):
        # A fresh closure per call (torchao builds the pattern functions in factories):
        # the code and everything it reads besides the module's globals.
        try:
            cells = tuple(_key(cell.cell_contents, depth + 1) for cell in value.__closure__ or ())
        except ValueError:  # a cell not bound yet
            raise _Uncacheable from None
        return (
            "function",
            value.__module__,
            value.__qualname__,
            _code_key(value.__code__),
            _key(value.__defaults__, depth + 1),
            _key(value.__kwdefaults__, depth + 1),
            cells,
        )
    if type(value) is WrapperModule:
        wrapped: Any = value
        if wrapped._parameters or wrapped._buffers or wrapped._modules:
            raise _Uncacheable
        return ("WrapperModule", _key(wrapped.fn, depth + 1))
    if isinstance(value, torch._ops.OpOverload):
        return ("op", str(value))  # e.g. aten.add.Tensor: one op per name
    if isinstance(value, types.BuiltinFunctionType):
        # torch's C functions (F.conv2d is torch.conv2d): fixed objects, named by
        # their module and qualified name, which are the same in every process.
        return ("builtin", value.__module__, value.__qualname__)
    raise _Uncacheable


def _code_key(code: types.CodeType) -> object:
    """A code object as values that are the same in every process that loads the same source.

    (A code object is hashable, but a key written to disk needs its contents.) Line
    numbers count: the exported pattern's stack traces quote them.
    """
    constants = tuple(
        _code_key(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
        for c in code.co_consts
    )
    return (
        code.co_qualname,
        code.co_filename,
        code.co_firstlineno,
        code.co_code,
        code.co_linetable,
        constants,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_argcount,
        code.co_kwonlyargcount,
        code.co_flags,
    )


def pattern_key(
    pattern: Callable, example_inputs: tuple[Any, ...], is_cuda: bool, kwargs: dict[str, Any]
) -> object:
    """What decides the export of `pattern` on these inputs; raises `_Uncacheable`."""
    return (
        _key(pattern),
        _key(tuple(example_inputs), tensor_values=False),
        is_cuda,
        _key(kwargs, tensor_values=False),  # example keyword inputs, like example_inputs
        torch.is_grad_enabled(),
        torch.is_inference_mode_enabled(),
        torch.get_default_dtype(),
    )


def cached_export_pattern(
    pattern: Callable, example_inputs: tuple[Any, ...], is_cuda: bool = False, **kwargs: Any
) -> GraphModule:
    """torchao's `_get_aten_graph_module_for_pattern`, exported once per key (module docstring)."""
    try:
        key = pattern_key(pattern, example_inputs, is_cuda, kwargs)
    except _Uncacheable:
        return _export_pattern(pattern, example_inputs, is_cuda, **kwargs)
    if key not in _CACHE:
        stored = STORE.load(key) if STORE is not None else None
        if stored is None:
            stored = _export_pattern(pattern, example_inputs, is_cuda, **kwargs)
            if STORE is not None:
                STORE.save(key, stored)
        _CACHE[key] = stored
    with warnings.catch_warnings():
        # Copying the graph's input/output pytree specs trips torch's LeafSpec deprecation.
        warnings.filterwarnings("ignore", r".*LeafSpec", FutureWarning)
        return copy.deepcopy(_CACHE[key])


def apply() -> None:
    """Route torchao's pattern exports through `cached_export_pattern`.

    `qat_utils` imported the function by name; the other passes look it up in
    `utils` when they run.
    """
    pt2e_utils._get_aten_graph_module_for_pattern = cached_export_pattern  # type: ignore[assignment]
    qat_utils._get_aten_graph_module_for_pattern = cached_export_pattern  # type: ignore[assignment]
