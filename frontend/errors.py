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
    """A model cannot be compiled; `problems` holds every reason found, one per place.

    Its message is the grouped report (`report`): alike problems once, with all
    their places.
    """

    def __init__(self, problems: Sequence[Problem]):
        self.problems: list[Problem] = located_at_caller(problems)
        super().__init__(self._message())

    def _message(self) -> str:
        return report(self.problems)

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


@dataclass(frozen=True)
class ProblemGroup:
    """Problems with the same op, reason and fix: one entry of the report, with every place."""

    op: str
    reason: str
    fix: str | None
    places: tuple[tuple[str, str], ...]
    """(location, module path) of each problem, in the order found."""


def group_problems(problems: Sequence[Problem]) -> list[ProblemGroup]:
    """`problems` grouped by (op, reason, fix), groups in the order their first one was found."""
    groups: dict[tuple[str, str, str | None], list[tuple[str, str]]] = {}
    for problem in problems:
        key = (problem.op, problem.reason, problem.fix)
        groups.setdefault(key, []).append((problem.location, problem.module_path))
    return [
        ProblemGroup(op, reason, fix, tuple(places)) for (op, reason, fix), places in groups.items()
    ]


def report(problems: Sequence[Problem]) -> str:
    """The grouped report of `problems`: a header, then per group its op, count, places,
    reason and fix (once)."""
    count = len(problems)
    groups = group_problems(problems)
    header = f"dg cannot compile this model ({_plural(count, 'problem')}"
    header += f", {_plural(len(groups), 'kind')}):" if len(groups) != count else "):"
    lines = [header]
    for group in groups:
        places = f"[{len(group.places)} places]" if len(group.places) > 1 else ""
        title = ": ".join(p for p in (" ".join(p for p in (group.op, places) if p), "") if p)
        title = f"{title}: " if title else ""
        lines.append(f"  {title}{group.reason}")
        lines.extend(f"    at {where}" for where in _places_text(group.places))
        if group.fix:
            lines.append(f"    fix: {group.fix}")
    return "\n".join(lines)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def _places_text(places: Sequence[tuple[str, str]]) -> list[str]:
    """One line per source location, naming the module paths that ran it compactly."""
    by_location: dict[str, list[str]] = {}
    for location, module_path in places:
        by_location.setdefault(location, []).append(module_path)
    lines = []
    for location, paths in by_location.items():
        shown = _short_location(location)
        named = [p for p in paths if p]
        if named:
            modules = compact_paths(named)
            shown = f"{shown} (in {modules})" if shown else f"in {modules}"
        if shown:
            lines.append(shown + (f" x{len(paths)}" if not named and len(paths) > 1 else ""))
    return lines


def _short_location(location: str) -> str:
    """``file:line`` relative to the working directory when the file lies below it."""
    if not location:
        return ""
    file, _, line = location.rpartition(":")
    relative = os.path.relpath(file)
    return f"{relative}:{line}" if not relative.startswith("..") else location


def compact_paths(paths: Sequence[str]) -> str:
    """Dotted module paths written once each, sharing prefixes and numbering ranges:
    ``features.{0.2, 1.conv.0.2, 2-17.conv.{0, 1}.2, 18.2}``."""
    tree: dict[str, dict] = {}
    for path in dict.fromkeys(paths):
        node = tree
        for part in path.split("."):
            node = node.setdefault(part, {})
    return _render(tree)


def _render(tree: dict[str, dict]) -> str:
    if not tree:
        return ""
    rendered = [(key, _render(child)) for key, child in tree.items()]
    merged: list[tuple[str, str]] = []
    for key, rest in rendered:
        if merged and _extends_range(merged[-1], key, rest):
            first = merged[-1][0].split("-")[0]
            merged[-1] = (f"{first}-{key}", rest)
        else:
            merged.append((key, rest))
    rests = {rest for _, rest in merged}
    if len(merged) > 1 and len(rests) == 1 and "" not in rests:
        keys = "{" + ", ".join(key for key, _ in merged) + "}"  # {0-2, 4}.act
        return f"{keys}.{rests.pop()}"
    items = [f"{key}.{rest}" if rest else key for key, rest in merged]
    if len(items) == 1:
        key = merged[0][0]
        return items[0] if "-" not in key else "{" + key + "}" + items[0][len(key) :]
    return "{" + ", ".join(items) + "}"


def _extends_range(previous: tuple[str, str], key: str, rest: str) -> bool:
    """`key` is the number after `previous`'s (range's) last, with the same subtree."""
    last = previous[0].split("-")[-1]
    return previous[1] == rest and last.isdigit() and key.isdigit() and int(key) == int(last) + 1
