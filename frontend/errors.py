"""The errors dg reports about a user's model.

The frontend never stops at the first thing it cannot compile: it collects
every `Problem` of a model and raises them together in one `ExportError`, so
that the user can fix all of them in one round trip.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Problem:
    """One reason why a model cannot be compiled, pointing at the user's source.

    `op` names the operation the way the user wrote it when that is known,
    followed by its ATen name, e.g. ``"F.gelu (aten.gelu.default)"``.
    `location` is the user's ``"file:line"`` and `module_path` the dotted path
    of the submodule (``"features.3"``); both are empty when unknown.
    """

    op: str
    reason: str
    location: str = ""
    module_path: str = ""
    fix: str | None = None

    def __str__(self) -> str:
        where = self.location
        if self.module_path:
            where += f" (in {self.module_path})" if where else f"in {self.module_path}"
        text = ": ".join(part for part in (where, self.op, self.reason) if part)
        if self.fix:
            text += f" Fix: {self.fix}"
        return text


class ExportError(Exception):
    """A model cannot be compiled; `problems` holds every reason found."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems: list[Problem] = located_at_caller(problems)
        super().__init__(self._message())

    def _message(self) -> str:
        count = len(self.problems)
        header = f"dg cannot compile this model ({count} problem{'s' if count != 1 else ''}):"
        return "\n".join([header, *(f"  {problem}" for problem in self.problems)])

    def __str__(self) -> str:
        return self._message()


def located_at_caller(problems: Sequence[Problem]) -> list[Problem]:
    """`problems`, each one in a submodule but without a location located at the user's
    call into dg.

    An op of a torch module inside `nn.Sequential` runs in torch's code only: no line of
    the user's is on its stack. The line that handed the model to dg is the user's.
    """
    unlocated = [p for p in problems if p.module_path and not p.location]
    if not unlocated:
        return list(problems)
    where = caller_location()
    return [replace(p, location=where) if p in unlocated else p for p in problems]


def caller_location() -> str:
    """`file:line` of the innermost frame on the stack outside torch, torchao and dg, or ""."""
    # Imported here: it imports torch, which the errors themselves do not need.
    from dg.frontend.source import is_user_file

    frame = sys._getframe(1)
    while frame is not None:
        file = frame.f_code.co_filename
        if is_user_file(file) and not os.path.basename(file).startswith("<frozen "):
            return f"{file}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return ""
