"""`dg-check`: does my model compile? Builds a model from its Python file and runs `dg.check`.

    dg-check path/to/model.py:ClassName --input 1x3x224x224
    dg-check models.py:Decoder --input 1x16x64 --input 1x16x64 --kwargs '{"depth": 2}'

The class is built with `--kwargs` (JSON, default none) and checked in eval
mode on random float inputs of the `--input` shapes, one per model input. It
prints the grouped report of every problem and exits 0 when the model compiles,
1 when it does not, and 2 on a usage error (a file, class or shape that cannot
be used, or a model that cannot be built); never a Python traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from collections.abc import Sequence

import dg

COMPILES, DOES_NOT_COMPILE, USAGE_ERROR = 0, 1, 2


class UsageError(Exception):
    """The command line names something that cannot be used; the message says what."""


def build_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dg-check",
        description="Check whether a PyTorch model compiles for the dg accelerator.",
    )
    parser.add_argument("model", metavar="FILE.py:CLASS", help="the model's file and class")
    parser.add_argument(
        "-i",
        "--input",
        action="append",
        default=[],
        metavar="SHAPE",
        help="shape of one model input, e.g. 1x3x224x224 (once per input, in order)",
    )
    parser.add_argument(
        "--kwargs", default="{}", metavar="JSON", help="keyword arguments of the class (JSON)"
    )
    parser.add_argument("--version", action="version", version=f"dg-check {dg.__version__}")
    return parser


def parse_shape(text: str) -> tuple[int, ...]:
    """``"1x3x224x224"`` -> ``(1, 3, 224, 224)``."""
    try:
        shape = tuple(int(part) for part in text.lower().split("x"))
    except ValueError:
        raise UsageError(f"--input {text!r} is not a shape like 1x3x224x224") from None
    if not shape or any(d <= 0 for d in shape):
        raise UsageError(f"--input {text!r} is not a shape like 1x3x224x224")
    return shape


def load_class(spec: str) -> type:
    """The class `spec` (``path/to/model.py:ClassName``) names, its file imported as a module."""
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise UsageError(f"{spec!r} is not FILE.py:CLASS")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    module_name = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # its sibling imports
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as error:  # the user's file may raise anything
        raise UsageError(f"{path}: importing it failed: {type(error).__name__}: {error}") from None
    cls = getattr(module, name, None)
    if not isinstance(cls, type):
        raise UsageError(f"{path} defines no class {name!r}")
    return cls


def build_model(cls: type, kwargs_json: str) -> object:
    """An instance of `cls`, from the `--kwargs` JSON object, in eval mode."""
    import torch

    try:
        kwargs = json.loads(kwargs_json)
    except json.JSONDecodeError as error:
        raise UsageError(f"--kwargs is not JSON: {error}") from None
    if not isinstance(kwargs, dict):
        raise UsageError("--kwargs must be a JSON object, e.g. '{\"num_classes\": 10}'")
    try:
        model = cls(**kwargs)
    except Exception as error:  # the user's constructor may raise anything
        raise UsageError(
            f"{cls.__name__}(**{kwargs}) failed: {type(error).__name__}: {error}"
        ) from None
    if not isinstance(model, torch.nn.Module):
        raise UsageError(f"{cls.__name__} is not a torch.nn.Module")
    return model.eval()


def check(spec: str, shapes: Sequence[str], kwargs_json: str = "{}") -> tuple[int, str]:
    """The exit status and the text `dg-check` prints for these arguments."""
    import torch

    if not shapes:
        raise UsageError("give the shape of every model input with --input, e.g. 1x3x224x224")
    model = build_model(load_class(spec), kwargs_json)
    torch.manual_seed(0)
    inputs = tuple(torch.randn(parse_shape(s)) for s in shapes)
    problems = dg.check(model, inputs)  # type: ignore[arg-type]
    if not problems:
        return COMPILES, f"{spec}: dg can compile this model (no problems found)"
    return DOES_NOT_COMPILE, str(dg.ExportError(problems))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_argument_parser().parse_args(argv)
    try:
        status, text = check(args.model, args.input, args.kwargs)
    except UsageError as error:
        print(f"dg-check: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    print(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
