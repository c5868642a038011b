"""Session-wide: the per-row LSB table of the model harness, printed at the end of the run.

`harness.assert_matches_frozen` records each comparison in `harness.RESULTS` (in
the process that ran the test). After each test, the rows it added are tagged
with the test's index in the collection; under pytest-xdist each worker sends
its rows to the controller (`workeroutput`), which merges them. Either way the
table lists every row in collection order, as a serial run prints it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

ROWS: list[tuple[int, int, str]] = []
"""(collection index of the test, order within the test, table line) of every row."""
HEADER: list[str] = []


def _results() -> list:
    harness = sys.modules.get("harness")  # test/models/harness.py, imported by the tests
    return harness.RESULTS if harness is not None else []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    before = len(_results())
    try:
        return (yield)
    finally:
        new = _results()[before:]
        if new:
            harness = sys.modules["harness"]
            HEADER[:] = harness.format_results([])
            lines = harness.format_results(new)[len(HEADER) :]
            index = _collection_index(item)
            ROWS.extend((index, k, line) for k, line in enumerate(lines))


def _collection_index(item: pytest.Item) -> int:
    session = item.session
    indices = getattr(session, "_dg_indices", None)
    if indices is None:
        indices = {it.nodeid: i for i, it in enumerate(session.items)}
        session._dg_indices = indices  # type: ignore[attr-defined]
    return indices.get(item.nodeid, len(indices))


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the rows to the controller
        workeroutput["dg_rows"] = ROWS
        workeroutput["dg_header"] = HEADER


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """xdist controller: a worker finished; keep its rows."""
    output = getattr(node, "workeroutput", {})
    ROWS.extend(tuple(row) for row in output.get("dg_rows", []))
    if output.get("dg_header"):
        HEADER[:] = output["dg_header"]


def pytest_terminal_summary(terminalreporter) -> None:
    if not ROWS or hasattr(terminalreporter.config, "workeroutput"):
        return
    terminalreporter.section("dg model rows: program vs frozen model, in output LSB")
    for line in [*HEADER, *(line for _, _, line in sorted(ROWS))]:
        terminalreporter.write_line(line)


_CACHE_DIR: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """dg's cache (torchao's exported patterns) goes to a folder of this run, never the
    user's: each test process starts cold, as a first freeze does."""
    _CACHE_DIR.append(tempfile.mkdtemp(prefix="dg-test-cache-"))
    os.environ["DG_CACHE_DIR"] = _CACHE_DIR[-1]


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _CACHE_DIR:
        shutil.rmtree(folder, ignore_errors=True)
