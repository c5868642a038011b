"""Where in the user's code an FX node came from, and what the user called it.

`torch.export` records the Python stack of every traced op
(``node.meta["stack_trace"]``) and the chain of submodules it ran in
(``node.meta["nn_module_stack"]``). The innermost frame that is not torch,
torchao or dg itself is the line the user wrote.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import torch
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


def _is_user_file(file: str) -> bool:
    return not os.path.abspath(file).startswith(_library_dirs())


def _own_source(node: Node) -> SourceInfo | None:
    trace = node.meta.get("stack_trace")
    if not trace:
        return None
    frames = list(_FRAME.finditer(trace + "\n"))
    for frame in reversed(frames):
        if _is_user_file(frame["file"]):
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


def describe_op(node: Node) -> str:
    """The op as the user wrote it, followed by its ATen name: ``"F.gelu (aten.gelu.default)"``."""
    written = _written_name(node)
    aten = aten_name(node)
    return f"{written} ({aten})" if written else aten


def _written_name(node: Node) -> str | None:
    base = getattr(node.target, "__name__", "").split(".")[0].rstrip("_")
    info = _own_source(node)
    if info is not None and base:
        for call in _CALL.finditer(info.code):
            callee = call["callee"]
            if callee.split(".")[-1].rstrip("_") == base:
                return callee
    stack = node.meta.get("nn_module_stack")
    if stack:
        _, module_type = list(stack.values())[-1]
        module_type = str(module_type)
        if module_type.startswith("torch.nn.modules."):
            return "nn." + module_type.rsplit(".", 1)[-1]
    return None
