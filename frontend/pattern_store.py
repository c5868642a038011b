"""torchao's exported rewrite patterns on disk: a first freeze in seconds, in every process.

`pattern_cache` memoizes torchao's pattern exports within a process; exporting
them is most of the time of a first `prepare_qat` + `freeze_quantization` (about
110 exports through dynamo, 20 s and more). A `PatternStore` keeps each exported
pattern graph in the user's cache directory, so a new process loads it in
milliseconds instead.

An entry is a pattern's `GraphModule` as torchao made it: every node's op, name,
target, arguments and `meta` (fake tensors as shape, stride, dtype and device,
remade in a fresh `FakeTensorMode`; ATen ops by name), the graph's code generator
(its pytree specs), the module's `meta` and the tensors its `get_attr` nodes read.
The pattern nodes torchao copies into a model keep their meta, so a loaded pattern
must carry the same meta as an exported one, not just the same code.

An entry is valid only for the exact key it was written under: `pattern_cache`'s
key of the pattern function (its code, closure and example input shapes) and the
environment (`environment`): the torch and torchao versions and install paths,
a hash of torchao's PT2E sources, and the Python version. The file name is a hash
of that key and the file repeats the key in full, so a collision, a truncated
file or one from another format is a miss, never a wrong graph. Files are written
to a temporary name and renamed, so a reader never sees half an entry.

Where: `$DG_CACHE_DIR`, else `$XDG_CACHE_HOME/dg`, else `~/.cache/dg`; entries go
to its `patterns/` folder and nothing is written anywhere else. Entries are
pickles, read only from that folder: a file there is trusted like the user's
own code, as torch's own compile caches are.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import pickle
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
import torchao
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.fx import Graph, GraphModule, Node
from torch.fx.node import map_arg

FORMAT = 1
"""Bumped whenever an entry's layout changes: older entries then miss."""

_PT2E_PACKAGE = Path(torchao.__file__).parent / "quantization" / "pt2e"


def cache_directory() -> Path:
    """dg's cache directory: `$DG_CACHE_DIR`, else `$XDG_CACHE_HOME/dg`, else `~/.cache/dg`."""
    override = os.environ.get("DG_CACHE_DIR")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dg"


@functools.cache
def environment() -> tuple[object, ...]:
    """What besides the pattern decides its exported graph and meta (the module docstring).

    The install paths count because the stack traces in the meta name them; the
    sources of torchao's PT2E package because a pattern function calls helpers
    there that its own key does not see, and an editable install changes them
    without a new version.
    """
    sources = hashlib.sha256()
    for path in sorted(_PT2E_PACKAGE.glob("*.py")):
        sources.update(path.name.encode())
        sources.update(path.read_bytes())
    return (
        FORMAT,
        torch.__version__,
        torchao.__version__,
        torch.__file__,
        torchao.__file__,
        sources.hexdigest(),
        sys.version,
    )


class Unstorable(Exception):
    """The graph holds something an entry cannot describe; it is not stored."""


class _Reference:
    """A node argument: the node of that name, earlier in the same graph."""

    def __init__(self, name: str):
        self.name = name


def _reference(node: Node) -> Any:
    return _Reference(node.name)


def _remake_fake_tensor(
    shape: tuple[int, ...], stride: tuple[int, ...], dtype: torch.dtype, device: str, grad: bool
) -> FakeTensor:
    # FakeTensor's constructor around a meta tensor: what the mode's factory
    # functions return, at a seventh of their cost (~2,400 values per freeze).
    meta = torch.empty_strided(shape, stride, dtype=dtype, device="meta", requires_grad=grad)
    return FakeTensor(_fake_mode(), meta, torch.device(device))


@functools.cache
def _fake_mode() -> FakeTensorMode:
    """The mode every loaded meta value belongs to (the values are only ever read)."""
    return FakeTensorMode()


def _remake_op(namespace: str, name: str, overload: str | None) -> object:
    packet = getattr(getattr(torch.ops, namespace), name)
    return packet if overload is None else getattr(packet, overload)


class _Pickler(pickle.Pickler):
    """Pickles fake tensors as their layout and ATen ops as their names; refuses nodes."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, FakeTensor):
            shape, stride = tuple(obj.shape), tuple(obj.stride())
            if not all(isinstance(d, int) for d in (*shape, *stride)):
                raise Unstorable("a symbolic shape")
            layout = (shape, stride, obj.dtype, str(obj.device), obj.requires_grad)
            return _remake_fake_tensor, layout
        if isinstance(obj, torch._ops.OpOverload):
            return _remake_op, (obj.namespace, obj._schema.name.split("::")[1], obj._overloadname)
        if isinstance(obj, torch._ops.OpOverloadPacket):
            namespace, name = obj._qualified_op_name.split("::")
            return _remake_op, (namespace, name, None)
        if isinstance(obj, Node | torch.nn.Module) or (
            isinstance(obj, torch.Tensor) and type(obj) is not torch.Tensor
        ):
            raise Unstorable(type(obj).__name__)
        return NotImplemented


def dumps(pattern: GraphModule) -> bytes:
    """The entry body of an exported pattern (module docstring); raises `Unstorable`."""
    nodes = []
    for node in pattern.graph.nodes:
        args, kwargs = map_arg((node.args, node.kwargs), _reference)
        nodes.append((node.op, node.name, node.target, args, kwargs, node.meta))
    attributes = {
        node.target: getattr(pattern, node.target)
        for node in pattern.graph.find_nodes(op="get_attr")
    }
    state = (nodes, pattern.graph._codegen, attributes, getattr(pattern, "meta", {}))
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        raise Unstorable(str(error)) from error
    return buffer.getvalue()


def loads(body: bytes) -> GraphModule:
    """The pattern `dumps` stored, meta and all."""
    with warnings.catch_warnings():
        # Unpickling the graph's input/output pytree specs trips torch's LeafSpec deprecation.
        warnings.filterwarnings("ignore", r".*LeafSpec", FutureWarning)
        nodes, codegen, attributes, meta = pickle.loads(body)
    graph = Graph()
    made: dict[str, Node] = {}
    for op, name, target, args, kwargs, node_meta in nodes:
        args, kwargs = _resolved((args, kwargs), made)
        node = graph.create_node(op, target, args, kwargs, name=name)
        if node.name != name:
            raise ValueError(f"entry node {name} came back as {node.name}")
        node.meta = node_meta
        made[name] = node
    graph._codegen = codegen
    pattern = GraphModule(attributes, graph)
    pattern.meta = meta
    return pattern


def _resolved(value: Any, made: dict[str, Node]) -> Any:
    if isinstance(value, _Reference):
        return made[value.name]
    if isinstance(value, tuple | list):
        return type(value)(_resolved(v, made) for v in value)
    if isinstance(value, dict):
        return {k: _resolved(v, made) for k, v in value.items()}
    return value


class PatternStore:
    """Exported patterns in `folder`, one file per key (module docstring).

    Without a `folder`, the `patterns/` folder of `cache_directory()` as it is at
    each call: setting `DG_CACHE_DIR` later moves the store.
    """

    def __init__(self, folder: Path | None = None):
        self._fixed_folder = folder

    @property
    def folder(self) -> Path:
        return self._fixed_folder or cache_directory() / "patterns"

    def _path(self, key_text: str) -> Path:
        return self.folder / f"{hashlib.sha256(key_text.encode()).hexdigest()}.pkl"

    def load(self, key: object) -> GraphModule | None:
        """The pattern stored under `key` in this environment, or None (also for a bad file)."""
        key_text = repr((environment(), key))
        try:
            data = self._path(key_text).read_bytes()
            stored_key, body = pickle.loads(data)
            if stored_key != key_text:
                return None
            return loads(body)
        except Exception:  # missing, truncated, from another torch: a miss, re-exported
            return None

    def save(self, key: object, pattern: GraphModule) -> None:
        """Store `pattern` under `key`; a pattern an entry cannot describe is skipped."""
        key_text = repr((environment(), key))
        try:
            data = pickle.dumps((key_text, dumps(pattern)), protocol=pickle.HIGHEST_PROTOCOL)
        except Unstorable:
            return
        folder = self.folder
        with contextlib.suppress(OSError):  # a read-only or full disk: stay uncached
            folder.mkdir(parents=True, exist_ok=True)
            with _temporary_file(folder) as (handle, name):
                handle.write(data)
                handle.flush()
                os.replace(name, self._path(key_text))


@contextlib.contextmanager
def _temporary_file(folder: Path) -> Iterator[tuple[Any, str]]:
    """A new file in `folder`, removed afterwards unless it was renamed away."""
    handle = tempfile.NamedTemporaryFile(dir=folder, suffix=".tmp", delete=False)  # noqa: SIM115
    try:
        with handle:
            yield handle, handle.name
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(handle.name)
