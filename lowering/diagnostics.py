"""How the lowering passes report what they cannot convert.

A conversion pass rewrites what it can and then checks legality: any op left
that the target stage does not allow fails the pass. Problems travel as
objects (`LoweringProblem`: the op, the `Reason`, the message and the fix),
carried by `LoweringError`; text is made only at the edge (`dg-opt` prints the
exception, `dg.export` turns each problem into a `dg.ExportError` entry).

Why an op was not converted lives beside the conditions that would have
converted it: every pattern of a pass is an `ExplainingPattern`, whose
`explain(op)` names the `Reason` it declines `op` for (or None when `op` is not
its business). `check_legality` asks the pass's patterns in order; an op no
pattern explains gets the pass's fallback reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, NoReturn

from xdsl.dialects.builtin import ArrayAttr, CallSiteLoc, FileLineColLoc, FusedLoc, NameLoc
from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import RewritePattern
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import PassFailedException


def describe_location(location: Attribute) -> str | None:
    """`file:line:column` of a location, or None when it holds no file position."""
    position = user_position(location)
    if position is None:
        return None
    return f"{position.filename.data}:{position.line.data}:{position.column.data}"


def user_position(location: Attribute) -> FileLineColLoc | None:
    """The file position a location holds (the first of a fused one), or None."""
    match location:
        case FileLineColLoc():
            return location
        case NameLoc():
            return user_position(location.location)
        case CallSiteLoc():
            return user_position(location.callee)
        case FusedLoc(locations=ArrayAttr(data=inner_locations)):
            for inner in inner_locations:
                if (position := user_position(inner)) is not None:
                    return position
    return None


def source_of(op: Operation) -> tuple[str, str]:
    """(module path, ``file:line``) of an op's location, empty where unknown.

    The importer gives each op `NameLoc(module path, file:line:col)`; dghw ops keep it.
    """
    module_path = op.location.desc.data if isinstance(op.location, NameLoc) else ""
    where = describe_location(op.location)
    return module_path, where.rsplit(":", 1)[0] if where else ""


@dataclass(frozen=True)
class Reason:
    """One way a pattern can decline an op: a stable code and the text for the user.

    `message` and `fix` are `str.format` templates; `Reason.at(op, **fields)`
    fills them. `code` is unique across dg (kebab-case, e.g. "conv2d-dilation"):
    tests find every reason by its code.
    """

    code: str
    message: str
    fix: str | None = None

    def at(self, op: Operation, **fields: object) -> LoweringProblem:
        """This reason, for `op`, with its templates filled from `fields`."""
        fix = None if self.fix is None else self.fix.format(**fields)
        return LoweringProblem(op, self, self.message.format(**fields), fix)


@dataclass(frozen=True)
class LoweringProblem:
    """One op a pass could not convert, and why."""

    op: Operation
    reason: Reason
    message: str
    fix: str | None = None

    @property
    def location(self) -> str | None:
        """The user's `file:line:column` of the op, when its location holds one."""
        return describe_location(self.op.location)

    def __str__(self) -> str:
        """`file:line:col: error: 'op': message`, MLIR style (without a location if unknown)."""
        text = f"'{self.op.name}': {self.message}"
        if self.fix:
            text += f" Fix: {self.fix}"
        where = self.location
        return text if where is None else f"{where}: error: {text}"


class LoweringError(PassFailedException):
    """A pass failed on the ops of `problems`; its message has one line per problem.

    The message starts with the first problem's location, which is how dg-opt
    finds where to report a failing pass.
    """

    def __init__(self, pass_name: str, problems: Sequence[LoweringProblem]):
        assert problems, f"{pass_name}: a LoweringError needs at least one problem"
        self.pass_name = pass_name
        self.problems: list[LoweringProblem] = list(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))


def raise_problems(pass_name: str, problems: Sequence[LoweringProblem]) -> NoReturn:
    """Fail `pass_name` with `problems`, the annotated IR attached as a note."""
    diagnostic = Diagnostic()
    for problem in problems:
        diagnostic.add_message(problem.op, problem.message)
    diagnostic.raise_exception(problems[0].op, LoweringError(pass_name, problems))


class ExplainingPattern(RewritePattern):
    """A rewrite pattern that can say why it leaves an op unconverted.

    `reasons` lists every `Reason` its `explain` can return, so that tests can
    check each one is produced by some input.
    """

    reasons: ClassVar[tuple[Reason, ...]] = ()

    def explain(self, op: Operation) -> LoweringProblem | None:
        """Why this pattern does not convert `op`; None when `op` is not its business."""
        return None


@dataclass(frozen=True)
class Legality:
    """What a pass leaves legal, and how it explains the rest."""

    is_legal: Callable[[Operation], bool]
    patterns: Sequence[RewritePattern]
    fallback: Reason
    """The reason of an illegal op that no pattern explains."""
    extra: Sequence[Callable[[Operation], LoweringProblem | None]] = field(default=())
    """Explanations asked before the patterns (checks that belong to no single pattern)."""

    def explain(self, op: Operation) -> LoweringProblem:
        """The first explanation of `op`: the extra checks, then the patterns in order."""
        explainers: Iterable[Callable[[Operation], LoweringProblem | None]] = (
            *self.extra,
            *(p.explain for p in self.patterns if isinstance(p, ExplainingPattern)),
        )
        for explain in explainers:
            if (problem := explain(op)) is not None:
                return problem
        return self.fallback.at(op)


def check_legality(pass_name: str, root: Operation, legality: Legality) -> None:
    """Fail `pass_name` if any op nested in `root` is illegal, explaining each one."""
    problems = [legality.explain(op) for op in root.walk() if not legality.is_legal(op)]
    if problems:
        raise_problems(pass_name, problems)


def all_reasons(patterns: Iterable[RewritePattern]) -> list[Reason]:
    """Every reason the given patterns declare."""
    return [r for p in patterns if isinstance(p, ExplainingPattern) for r in p.reasons]
