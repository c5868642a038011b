"""How the lowering passes report what they cannot convert.

A conversion pass rewrites what it can and then checks legality: any op left
that the target stage does not allow fails the pass with one message per op,
saying which op, where the user wrote it and why it was not converted. The
annotated IR that xDSL attaches to the exception points at the same ops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NoReturn

from xdsl.dialects.builtin import ArrayAttr, CallSiteLoc, FileLineColLoc, FusedLoc, NameLoc
from xdsl.ir import Attribute, Operation
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import PassFailedException


def describe_location(location: Attribute) -> str | None:
    """`file:line:column` of a location, or None when it holds no file position."""
    match location:
        case FileLineColLoc():
            return f"{location.filename.data}:{location.line.data}:{location.column.data}"
        case NameLoc():
            return describe_location(location.location)
        case CallSiteLoc():
            return describe_location(location.callee)
        case FusedLoc(locations=ArrayAttr(data=inner_locations)):
            for inner in inner_locations:
                if (text := describe_location(inner)) is not None:
                    return text
    return None


def format_problem(op: Operation, message: str) -> str:
    """`file:line:col: error: 'op': message`, MLIR style (without a location if unknown)."""
    where = describe_location(op.location)
    text = f"'{op.name}': {message}"
    return text if where is None else f"{where}: error: {text}"


def raise_diagnostics(pass_name: str, problems: Sequence[tuple[Operation, str]]) -> NoReturn:
    """Fail `pass_name` with one diagnostic line per problem.

    The message starts with the first problem's location, which is how dg-opt
    finds where to report a failing pass; the annotated IR follows as a note.
    """
    assert problems, f"{pass_name}: raise_diagnostics needs at least one problem"
    diagnostic = Diagnostic()
    for op, message in problems:
        diagnostic.add_message(op, message)
    summary = "\n".join(format_problem(op, message) for op, message in problems)
    diagnostic.raise_exception(problems[0][0], PassFailedException(summary))


def raise_at(pass_name: str, op: Operation, message: str) -> NoReturn:
    """Fail `pass_name` on a single op (for errors found while rewriting it)."""
    raise_diagnostics(pass_name, [(op, message)])


def check_legality(
    pass_name: str,
    root: Operation,
    is_legal: Callable[[Operation], bool],
    explain: Callable[[Operation], str],
) -> None:
    """Fail `pass_name` if any op nested in `root` is illegal, explaining each one."""
    problems = [(op, explain(op)) for op in root.walk() if not is_legal(op)]
    if problems:
        raise_diagnostics(pass_name, problems)
