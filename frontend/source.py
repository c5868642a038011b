"""Where in the user's code an FX node came from, and what the user called it.

`torch.export` records the Python stack of every traced op
(``node.meta["stack_trace"]``) and the chain of submodules it ran in
(``node.meta["nn_module_stack"]``). The innermost frame that is not torch,
torchao or dg itself is the line the user wrote (`keep_user_frames` makes
torch keep the frames of helpers like ``_forward_impl``, not only ``forward``).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

import torch
import torch.fx.proxy
import torchao
from torch.fx import Node
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, LocationAttr, NameLoc, StringAttr

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in \S+\n(?P<code>[^\n]*)')
_CALL = re.compile(r"(?P<callee>[A-Za-z_][\w.]*)\s*\(")
_QDQ_NAMESPACE = "quantized_decomposed"


@dataclass(frozen=True)
class SourceInfo:
    """The user's file and line of a node (line 0 when unknown) and its submodule path."""

    file: str = ""
    line: int = 0
    code: str = ""
    module_path: str = ""

    @property
    def location(self) -> str:
        """``"file:line"``, or empty when unknown."""
        return f"{self.file}:{self.line}" if self.file else ""

    def to_location_attr(self) -> LocationAttr | None:
        """`NameLoc(module_path, FileLineColLoc(file, line, 0))`; no NameLoc at the root module."""
        if not self.file:
            return None
        # Stack traces carry no column; 0 means "the whole line".
        loc: LocationAttr = FileLineColLoc(StringAttr(self.file), IntAttr(self.line), IntAttr(0))
        if self.module_path:
            loc = NameLoc(StringAttr(self.module_path), loc)
        return loc


@cache
def _library_dirs() -> tuple[str, ...]:
    """Directories whose frames are never the user's: torch, torchao and dg's packages."""
    dirs = [os.path.dirname(torch.__file__), os.path.dirname(torchao.__file__)]
    for package in ("dg", "dg.dialects", "dg.frontend", "dg.lowering", "dg.runtime"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            dirs.extend(spec.submodule_search_locations)
    return tuple(os.path.join(os.path.abspath(d), "") for d in dirs)


def is_user_file(file: str) -> bool:
    return not os.path.abspath(file).startswith(_library_dirs())


def keep_user_frames(model: torch.nn.Module) -> None:
    """Make `torch.export` record the frames of the user's own helper functions.

    `torch.export` keeps only the stack frames of functions named ``forward``
    (and of registered anchors). The line a user wrote in a helper, such as
    torchvision's ``ResNet._forward_impl``, would be lost, and errors would
    point at ``forward``'s call of the helper. So every function and method
    of the (user) modules defining the model's classes becomes an anchor.
    """
    register = getattr(torch.fx.proxy, "_register_stack_trace_anchor", None)
    if register is None:  # a torch without anchors: locations stay at `forward`
        return
    for module_name in {type(m).__module__ for m in model.modules()}:
        namespace = sys.modules.get(module_name)
        file = getattr(namespace, "__file__", None)
        if namespace is None or not file or not is_user_file(file):
            continue
        for value in list(vars(namespace).values()):
            for function in _functions_defined_in(value, module_name):
                register(function)


def _functions_defined_in(value: object, module_name: str) -> Iterator[object]:
    """`value` if it is a function of `module_name`, or the methods of a class defined there."""
    if getattr(value, "__module__", None) != module_name:
        return
    if inspect.isfunction(value):
        yield value
    elif inspect.isclass(value):
        for attribute in vars(value).values():
            function = getattr(attribute, "__func__", attribute)  # static/class methods
            if inspect.isfunction(function):
                yield function


def _own_source(node: Node) -> SourceInfo | None:
    trace = node.meta.get("stack_trace")
    if not trace:
        return None
    frames = list(_FRAME.finditer(trace + "\n"))
    for frame in reversed(frames):
        if is_user_file(frame["file"]):
            return SourceInfo(
                frame["file"], int(frame["line"]), frame["code"].strip(), _module_path(node)
            )
    return None


def _module_path(node: Node) -> str:
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return ""
    path, _ = list(stack.values())[-1]
    prefix = "L['self']."
    return path[len(prefix) :] if path.startswith(prefix) else path


def _is_qdq(node: Node) -> bool:
    return node.op == "call_function" and getattr(node.target, "namespace", "") == _QDQ_NAMESPACE


def source_info(node: Node) -> SourceInfo:
    """The user's source of `node`.

    The quantize/dequantize ops torchao inserts carry no or partial metadata;
    they belong to the op whose value they convert, so they take its source.
    """
    if _is_qdq(node):
        for op in _converted_ops(node):
            info = _own_source(op)
            if info is not None:
                return info
    return _own_source(node) or SourceInfo(module_path=_module_path(node))


def _converted_ops(node: Node) -> Iterator[Node]:
    """The nearest ops around q/dq `node`, the one it converts for first.

    A quantize converts its producer's output (at a graph input: for the
    consumer); a dequantize converts for its consumer (at a graph output: the
    producer's value).
    """
    is_dequantize = getattr(node.target, "__name__", "").startswith("dequantize")
    for step in (_consumers, _producers) if is_dequantize else (_producers, _consumers):
        frontier, seen = [node], {node}
        while frontier:
            for neighbour in step(frontier.pop(0)):
                if neighbour in seen:
                    continue
                seen.add(neighbour)
                if _is_qdq(neighbour):
                    frontier.append(neighbour)
                elif neighbour.op == "call_function":
                    yield neighbour


def _producers(node: Node) -> list[Node]:
    return node.all_input_nodes[:1]


def _consumers(node: Node) -> list[Node]:
    return list(node.users)


def aten_name(node: Node) -> str:
    """The ATen overload name of a call, e.g. ``"aten.gelu.default"``."""
    return str(node.target) if node.op == "call_function" else f"{node.op} {node.target}"


def describe_op(
    node: Node, spellings: Sequence[str] = (), arguments: str = "", written: str = ""
) -> str:
    """The op as the user wrote it, followed by its ATen name: ``"F.gelu (aten.gelu.default)"``.

    `spellings` are names users write for the op (``F.interpolate`` for
    ``aten.upsample_nearest2d``), looked for in the user's line of code.
    `arguments` are the offending arguments, shown as a call:
    ``"nn.MaxPool2d(padding=1) (aten.max_pool2d.default)"``. `written` is
    the op's own text when the handler found it (a subscript, `written_subscript`):
    ``"x[:, ::2] (aten.slice.Tensor(dim=1, start=0, end=None, step=2))"``.
    """
    aten = aten_name(node)
    if written:
        return f"{written} ({aten}({arguments}))" if arguments else f"{written} ({aten})"
    name = _written_name(node, spellings)
    if name and arguments:
        return f"{name}({arguments}) ({aten})"
    if name:
        return f"{name} ({aten})"
    return f"{aten}({arguments})" if arguments else aten


def _written_name(node: Node, spellings: Sequence[str]) -> str | None:
    base = getattr(node.target, "__name__", "").split(".")[0].rstrip("_")
    wanted = {name for name in (base, *(_last_name(s) for s in spellings)) if name}
    info = _own_source(node)
    if info is not None:
        for call in _CALL.finditer(info.code):
            callee = call["callee"]
            # `self.gelu(y)` calls a submodule: its type says what it is.
            calls_submodule = callee.startswith("self.") and callee.count(".") == 1
            if _last_name(callee) in wanted and not calls_submodule:
                is_method = info.code[: call.start()].endswith(".")  # f(x).view(...)
                return f"Tensor.{callee}" if is_method else _as_written(callee)
    module_type = _module_type(node)
    if module_type is not None:
        return module_type
    # An operator (`x + 1`) has no callee to find in the line.
    return next((s for s in spellings if not s[0].isalpha()), None)


def _last_name(callee: str) -> str:
    return callee.split(".")[-1].rstrip("_")


def _as_written(callee: str) -> str:
    """``torch.cat``, ``F.pad`` stay; a method call on a variable (``y.permute``) is
    ``Tensor.permute``."""
    namespace = callee.rpartition(".")[0]
    if not namespace or namespace.split(".")[0] in _NAMESPACES:
        return callee
    return f"Tensor.{callee.rpartition('.')[2]}"


_NAMESPACES = frozenset({"torch", "F", "nn", "functional", "dg", "Tensor"})
"""First components of callees that name a function rather than a tensor."""


def _module_type(node: Node) -> str | None:
    """The innermost torch or dg module `node` ran in, as users write it: ``nn.MaxPool2d``."""
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return None
    _, module_type = list(stack.values())[-1]
    module_type = module_type if isinstance(module_type, str) else _qualified_name(module_type)
    if module_type.startswith("torch.nn.modules."):
        return "nn." + module_type.rsplit(".", 1)[-1]
    if module_type.startswith("dg.frontend.modules."):
        return "dg." + module_type.rsplit(".", 1)[-1]
    return None


def _qualified_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def module_types(node: Node) -> list[tuple[str, str]]:
    """(module path, qualified type) of every module `node` ran in, outermost first."""
    stack = node.meta.get("nn_module_stack") or {}
    prefix = "L['self']."
    result = []
    for path, module_type in stack.values():
        path = path[len(prefix) :] if path.startswith(prefix) else path
        name = module_type if isinstance(module_type, str) else _qualified_name(module_type)
        result.append((path, name))
    return result


# -- subscripts as written ------------------------------------------------------------

_SUBSCRIPT_START = re.compile(r"[\w)\]]\[")
"""A ``[`` that indexes a value (after a name, a call or another subscript), not a list."""


def written_subscript(node: Node, dim: int, bounds: tuple[object, object, int], rank: int) -> str:
    """The subscript on the user's line that slices axis `dim` by ``(start, end, step)``.

    ``x[:, ::2]`` for the ``aten.slice`` of ``return x[:, ::2]``; empty when the
    line has no subscript that fits (a slice written as ``torch.narrow``, a
    slice from a library, an unknown line). `rank` is the sliced tensor's rank
    (``...`` stands for the axes the other indices leave).
    """
    info = _own_source(node)
    if info is None:
        return ""
    code = info.code
    for match in _SUBSCRIPT_START.finditer(code):
        open_at = match.end() - 1
        close_at = _closing_bracket(code, open_at)
        if close_at is None:
            continue
        indices = _parsed_indices(code[open_at + 1 : close_at])
        if indices is not None and _slices_axis(indices, dim, bounds, rank):
            return _indexed_value(code, open_at) + code[open_at : close_at + 1]
    return ""


def _closing_bracket(code: str, open_at: int) -> int | None:
    depth = 0
    for i in range(open_at, len(code)):
        depth += {"[": 1, "]": -1}.get(code[i], 0)
        if depth == 0:
            return i
    return None


def _indexed_value(code: str, open_at: int) -> str:
    """The expression a subscript indexes: ``x``, ``self.fc(x)``, ``q[0]`` (brackets balanced)."""
    depth, i = 0, open_at
    while i > 0:
        char = code[i - 1]
        if char in ")]":
            depth += 1
        elif char in "([":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and not (char.isalnum() or char in "_."):
            break
        i -= 1
    return code[i:open_at]


_ANY = object()
"""An index bound written as an expression (``x[..., half:]``): it matches any value."""


def _parsed_indices(text: str) -> list[object] | None:
    """The indices of a subscript: ``...``, ``None``, an int, or a (start, stop, step) triple."""
    try:
        tree = ast.parse(f"_[{text}]", mode="eval").body
    except SyntaxError:
        return None
    assert isinstance(tree, ast.Subscript)
    elements = tree.slice.elts if isinstance(tree.slice, ast.Tuple) else [tree.slice]
    indices: list[object] = []
    for element in elements:
        if isinstance(element, ast.Slice):
            indices.append(tuple(_bound(b) for b in (element.lower, element.upper, element.step)))
        elif isinstance(element, ast.Constant) and element.value in (Ellipsis, None):
            indices.append(element.value)
        else:
            indices.append(_ANY)  # an index picks one element: it takes an axis
    return indices


def _bound(expression: ast.expr | None) -> object:
    if expression is None:
        return None
    try:
        value = ast.literal_eval(expression)
    except ValueError:
        return _ANY
    return value if isinstance(value, int) else _ANY


def _slices_axis(
    indices: list[object], dim: int, bounds: tuple[object, object, int], rank: int
) -> bool:
    """`indices` slice axis `dim` of a rank-`rank` tensor by `bounds` (start, end, step)."""
    axes: list[object] = []
    taking = [i for i in indices if i is not None and i is not Ellipsis]
    for index in indices:
        if index is Ellipsis:
            axes += [(None, None, None)] * (rank - len(taking))
        elif index is not None:
            axes.append(index)
    written = axes[dim] if dim < len(axes) else None
    if not isinstance(written, tuple):
        return False
    return all(
        w is _ANY or _normal(w, default) == _normal(v, default)
        for w, v, default in zip(written, bounds, (0, sys.maxsize, 1), strict=True)
    )


def _normal(bound: object, default: int) -> object:
    """A slice bound with its default spelled out (``x[:4]`` is ``x[0:4:1]``)."""
    if bound is None or (default == sys.maxsize and isinstance(bound, int) and bound >= default):
        return default
    return bound
