"""Every op of the dg dialects has a round-trip test, and every error an invalid-IR test.

test/dialects/<d>/ops.mlir must CHECK the custom form of every op of dialect <d>.
The error messages are read from the source of dialects/*.py with `ast`: each
`raise VerifyException(...)` and each `parser.raise_error("...")`. A message of
dialects/<d>.py must be matched by a CHECK line of test/dialects/<d>/ops-invalid.mlir
(messages of the shared dialects/common.py by one in any dialect's file), which
lit runs with --verify-diagnostics. The few errors that IR text cannot reach,
because IRDL or the type parser rules them out first, are raised here from Python.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.dialects.builtin import DenseArrayBase, f32, i8, i32
from xdsl.ir import Dialect
from xdsl.utils.exceptions import VerifyException

from dg.dialects.common import int_array, tensor_type
from dg.dialects.dghw import Dghw
from dg.dialects.dgq import Dgq, UniformQuantizedType
from dg.dialects.dgtorch import DgTorch

ROOT = Path(__file__).resolve().parents[2]
DIALECTS = ROOT / "dialects"
TESTS = ROOT / "test" / "dialects"
SHARED = "common"
"""The module whose messages any dialect's ops-invalid.mlir may cover."""

ERROR_CALLS = ("VerifyException", "raise_error")


@dataclass(frozen=True)
class ErrorSite:
    """A place in a dialect module that raises a diagnostic with a literal message."""

    module: str
    line: int
    message: str
    """The message as written, f-string fields shown as `{...}`."""
    pattern: re.Pattern[str]
    """The message with every f-string field matching any text."""

    def __str__(self) -> str:
        return f"dialects/{self.module}.py:{self.line}: {self.message!r}"


def _callee_name(call: ast.Call) -> str | None:
    match call.func:
        case ast.Name(id=name) | ast.Attribute(attr=name):
            return name
    return None


def _message_parts(node: ast.expr) -> list[str | None] | None:
    """The literal pieces of a message, None for each f-string field; None if not literal."""
    match node:
        case ast.Constant(value=str(text)):
            return [text]
        case ast.JoinedStr(values=values):
            return [v.value if isinstance(v, ast.Constant) else None for v in values]
    return None


def error_sites() -> list[ErrorSite]:
    sites: list[ErrorSite] = []
    for path in sorted(DIALECTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and _callee_name(node) in ERROR_CALLS):
                continue
            parts = _message_parts(node.args[0]) if node.args else None
            if parts is None:
                # `parser.raise_error(str(error), ...)` re-raises a verifier message, which
                # is a site of its own; any other computed message cannot be checked here.
                assert _callee_name(node) == "raise_error", (
                    f"{path.name}:{node.lineno}: VerifyException needs a literal message"
                )
                continue
            message = "".join("{...}" if p is None else p for p in parts)
            regex = "".join(".+?" if p is None else re.escape(p) for p in parts)
            sites.append(ErrorSite(path.stem, node.lineno, message, re.compile(regex)))
    return sites


def check_lines(dialect: str, test: str = "ops-invalid.mlir") -> list[str]:
    """The patterns of the CHECK lines of one of a dialect's lit tests."""
    path = TESTS / dialect / test
    if not path.exists():
        return []
    prefix = re.compile(r"^\s*//\s*CHECK(?:-NEXT|-SAME)?:\s*(.*)$")
    return [m[1] for line in path.read_text().splitlines() if (m := prefix.match(line))]


# Errors no IR text can trigger: the operands and properties involved are already
# constrained by IRDL (TensorType, DenseArrayBase[I64]) or the type's parser never
# builds such parameters. Each entry raises its error from Python instead.
PYTHON_ONLY: dict[tuple[str, str], Callable[[], object]] = {
    ("common", "{...} must be a ranked tensor, got {...}"): lambda: tensor_type(i32, "input"),
    ("common", "'{...}' must be an integer array"): lambda: int_array(
        DenseArrayBase.from_list(f32, [1.0]), "stride"
    ),
    ("dgq", "expected one zero point per scale"): lambda: UniformQuantizedType(
        i8, [0.5, 0.25], [0], axis=0
    ),
    ("dgq", "a per-tensor type has exactly one scale"): lambda: UniformQuantizedType(
        i8, [0.5, 0.25], [0, 0]
    ),
}

SITES = error_sites()


@pytest.mark.parametrize("dialect", [DgTorch, Dgq, Dghw], ids=lambda d: d.name)
def test_every_op_round_trips(dialect: Dialect) -> None:
    checks = check_lines(dialect.name, "ops.mlir")
    missing = [
        op.name for op in dialect.operations if not any(f" = {op.name} " in c for c in checks)
    ]
    assert not missing, f"test/dialects/{dialect.name}/ops.mlir does not CHECK {missing}"


def test_messages_are_found() -> None:
    # A broken extraction would make every other test here pass vacuously.
    modules = {site.module for site in SITES}
    assert {"common", "dgtorch", "dgq", "dghw"} <= modules
    assert len(SITES) > 50


@pytest.mark.parametrize(
    "site", [s for s in SITES if (s.module, s.message) not in PYTHON_ONLY], ids=str
)
def test_error_has_an_invalid_ir_test(site: ErrorSite) -> None:
    dialects = (
        [d.name for d in TESTS.iterdir() if d.is_dir()] if site.module == SHARED else [site.module]
    )
    checks = [check for d in dialects for check in check_lines(d)]
    assert any(site.pattern.search(check) for check in checks), (
        f"{site} has no CHECK line in "
        + ", ".join(f"test/dialects/{d}/ops-invalid.mlir" for d in dialects)
    )


@pytest.mark.parametrize("key", list(PYTHON_ONLY), ids=lambda key: f"{key[0]}: {key[1]}")
def test_python_only_error(key: tuple[str, str]) -> None:
    (site,) = [s for s in SITES if (s.module, s.message) == key]  # no stale entries
    with pytest.raises(VerifyException) as raised:
        PYTHON_ONLY[key]()
    assert site.pattern.search(str(raised.value)), f"{site} raised {raised.value!r}"
