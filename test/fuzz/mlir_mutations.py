"""A mutation fuzzer for dg-opt: broken variants of the .mlir files under test/.

Each mutant is one of the lit inputs with one mutation (truncated, two tokens
swapped, an element type changed, an attribute value broken or removed, a line
deleted or duplicated), run through `dg-opt` with the options of one of that
file's RUN lines (minus `--verify-diagnostics`, so that errors are reported
the way a user sees them). `dg-opt` must either accept the mutant (exit 0:
some mutations leave valid IR) or print an `error:` diagnostic and exit
non-zero; a Python traceback, or a failure without a diagnostic, is a bug.

`check_mutant` calls `dg_opt.main` in process (a subprocess per mutant would
cost a Python start-up with xDSL each); `run_dg_opt_subprocess` is the same
check through the installed command.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from graphs import Outcome
from hypothesis import strategies as st

from dg.tools import dg_opt

TEST_ROOT = Path(__file__).resolve().parents[1]

DROPPED_OPTIONS = {"--verify-diagnostics", "--parsing-diagnostics"}
"""These make xdsl-opt print diagnostics to stdout and exit 0; users see neither."""

OUTPUT_OPTIONS = ("-o", "--output-file")

TOKEN = re.compile(r"%[\w.#]+|@[\w.]+|\"[^\"\n]*\"|-?\d+(?:\.\d+)?(?:e[-+]?\d+)?|[\w.$]+|\S")

TYPE_SWAPS = ["i8", "i32", "i64", "f32", "f64", "i1", "index", "i16"]

BAD_VALUES = [
    "0",
    "-1",
    "1",
    "2",
    "-128",
    "127",
    "128",
    "-129",
    "255",
    "2147483647",
    "2147483648",
    "-2147483649",
    "9223372036854775808",
    "1.5",
    "-0.0",
    "1e300",
    "0x7f",
    '"nearest"',
    '"bogus"',
    "true",
    "?",
]


@dataclass(frozen=True)
class Source:
    path: str
    """Relative to test/."""
    options: tuple[str, ...]


@dataclass(frozen=True)
class Mutant:
    source: Source
    mutation: str
    text: str

    def __repr__(self) -> str:
        # The text is long; say how to rebuild it instead.
        return f"Mutant({self.source!r}, {self.mutation!r}, text=<{len(self.text)} chars>)"


def run_line_options(text: str) -> list[tuple[str, ...]]:
    """The dg-opt options of each `// RUN: [not] dg-opt %s ...` line of a lit file."""
    found = []
    for line in text.splitlines():
        match = re.match(r"\s*// RUN: (?:not )?dg-opt %s(?P<rest>.*)", line)
        if not match:
            continue
        words = shlex.split(match["rest"].split("|")[0].replace("2>&1", ""))
        found.append(tuple(without_output_file(w for w in words if w not in DROPPED_OPTIONS)))
    return found


def without_output_file(words: Iterable[str]) -> Iterator[str]:
    """`words` less `-o FILE`: a RUN line's file is lit's (`%t...`, not substituted here); a
    mutant's output goes to the captured stdout."""
    words = iter(words)
    for word in words:
        if word in OUTPUT_OPTIONS:
            next(words, None)
        elif not word.startswith(tuple(f"{option}=" for option in OUTPUT_OPTIONS)):
            yield word


@cache
def sources() -> tuple[Source, ...]:
    """Every .mlir under test/ with each distinct set of dg-opt options it is run with."""
    found = []
    for path in sorted(TEST_ROOT.rglob("*.mlir")):
        if "Output" in path.parts:
            continue
        text = path.read_text()
        options = set(run_line_options(text)) or {()}
        if "--split-input-file" not in " ".join(o for opts in options for o in opts) and (
            "// -----" in text
        ):
            options = {(*o, "--split-input-file") for o in options}
        for option in sorted(options):
            found.append(Source(str(path.relative_to(TEST_ROOT)), option))
    return tuple(found)


@cache
def source_text(path: str) -> str:
    return (TEST_ROOT / path).read_text()


def body_lines(text: str) -> list[int]:
    """Indices of the lines that are IR (not comments or blank)."""
    lines = text.splitlines()
    return [
        i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("//")
    ]


@st.composite
def mutants(draw) -> Mutant:
    source = draw(st.sampled_from(sources()))
    text = source_text(source.path)
    kind = draw(
        st.sampled_from(
            ["truncate", "swap", "type", "value", "drop_attribute", "delete_line", "duplicate_line"]
        )
    )
    lines = text.splitlines(keepends=True)
    ir = body_lines(text)
    if kind == "truncate":
        cut = draw(st.integers(0, len(text)))
        return Mutant(source, f"truncate at {cut}", text[:cut])
    if kind in ("delete_line", "duplicate_line") and ir:
        i = draw(st.sampled_from(ir))
        new = lines[i] * (2 if kind == "duplicate_line" else 0)
        return Mutant(source, f"{kind} {i + 1}", "".join([*lines[:i], new, *lines[i + 1 :]]))
    # Token-level mutations on one IR line.
    i = draw(st.sampled_from(ir)) if ir else 0
    line = lines[i] if lines else ""
    tokens = list(TOKEN.finditer(line))
    if not tokens:
        return Mutant(source, "unchanged", text)
    if kind == "swap" and len(tokens) > 1:
        a, b = sorted(draw(st.lists(st.sampled_from(range(len(tokens))), min_size=2, max_size=2)))
        ta, tb = tokens[a], tokens[b]
        new = (
            line[: ta.start()]
            + tb.group()
            + line[ta.end() : tb.start()]
            + ta.group()
            + line[tb.end() :]
        )
        mutation = f"swap {ta.group()!r} and {tb.group()!r} on line {i + 1}"
    elif kind == "type":
        typed = [t for t in tokens if re.fullmatch(r"[if]\d+|index", t.group())]
        if not typed:
            return Mutant(source, "unchanged", text)
        t = draw(st.sampled_from(typed))
        replacement = draw(st.sampled_from(TYPE_SWAPS))
        new = line[: t.start()] + replacement + line[t.end() :]
        mutation = f"type {t.group()} -> {replacement} on line {i + 1}"
    elif kind == "drop_attribute":
        entries = list(re.finditer(r"\w+ = [^,{}]+?(?=[,}])", line))
        if not entries:
            return Mutant(source, "unchanged", text)
        e = draw(st.sampled_from(entries))
        new = line[: e.start()] + line[e.end() :]
        new = new.replace("{, ", "{").replace(", }", "}").replace(", ,", ",")
        mutation = f"drop {e.group()!r} on line {i + 1}"
    else:  # "value": a number or string replaced by an edge value
        values = [t for t in tokens if re.fullmatch(r"-?\d.*|\".*\"|true|false", t.group())]
        if not values:
            values = tokens
        t = draw(st.sampled_from(values))
        replacement = draw(st.sampled_from(BAD_VALUES))
        new = line[: t.start()] + replacement + line[t.end() :]
        mutation = f"value {t.group()!r} -> {replacement} on line {i + 1}"
    return Mutant(source, mutation, "".join([*lines[:i], new, *lines[i + 1 :]]))


def classify(status: int, stderr: str) -> Outcome:
    if "Traceback" in stderr:
        return Outcome("traceback", stderr[-3000:])
    if status == 0:
        return Outcome("still-valid")
    if "error" not in stderr:
        return Outcome("no-diagnostic", f"exit {status}, stderr {stderr!r}")
    return Outcome("diagnosed")


HANG_SECONDS = 20
"""A mutant dg-opt has not answered in this long is a hang (every other one takes < 1 s)."""


class Hang(BaseException):
    """Raised into dg-opt by the alarm; a BaseException, so dg-opt's own handlers of
    Exception (which turn errors into diagnostics) cannot hide it."""


def _raise_hang(signum: int, frame: object) -> None:
    raise Hang


@contextlib.contextmanager
def hang_alarm(seconds: int):
    previous = signal.signal(signal.SIGALRM, _raise_hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def check_mutant(mutant: Mutant) -> Outcome:
    """dg_opt.main on the mutant, in process, with stdout and stderr captured.

    A mutant dg-opt does not finish within `HANG_SECONDS` is the outcome "hang": `make fuzz`
    once stalled on one (an unterminated string literal, fixed in dg.xdsl_fixes)."""
    try:
        with hang_alarm(HANG_SECONDS):
            return _check_mutant(mutant)
    except Hang:
        return Outcome("hang", f"{mutant.mutation}\n{mutant.text[-2000:]}")


def _check_mutant(mutant: Mutant) -> Outcome:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / Path(mutant.source.path).name
        path.write_text(mutant.text)
        out, err = io.StringIO(), io.StringIO()
        args = [str(path), *mutant.source.options]
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = dg_opt.main(args)
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else 1
        except Exception:  # noqa: BLE001 - whatever escapes main reaches the user's terminal
            return Outcome(
                "traceback", f"{mutant.mutation}\n{mutant.text[-2000:]}\n{traceback.format_exc()}"
            )
    outcome = classify(status, err.getvalue())
    if not outcome.passed:
        return Outcome(outcome.kind, f"{mutant.mutation}\n{outcome.detail}")
    return outcome


def run_dg_opt_subprocess(text: str, options: tuple[str, ...], directory: Path) -> Outcome:
    """The installed `dg-opt` command on `text`: exit status and stderr as a user sees them."""
    path = directory / "mutant.mlir"
    path.write_text(text)
    dg_opt_bin = Path(sys.executable).parent / "dg-opt"
    done = subprocess.run(
        [str(dg_opt_bin), str(path), *options], capture_output=True, text=True, check=False
    )
    return classify(done.returncode, done.stderr)
