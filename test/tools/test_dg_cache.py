"""`dg-cache info|clear|warm`: the store's folder and entries; a usage error exits 2.

That `warm` stores every pattern a first freeze needs is tested beside the store
(test/frontend/test_pattern_store.py), in process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def dg_cache(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "dg-cache"), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={"DG_CACHE_DIR": str(cache), "PATH": str(BIN)},
    )


def test_info_and_clear_see_only_the_stored_patterns(tmp_path):
    patterns = tmp_path / "patterns"
    patterns.mkdir()
    for name in ("a.pkl", "b.pkl"):
        (patterns / name).write_bytes(b"x" * 500_000)
    other = tmp_path / "not-dg.txt"
    other.write_text("a user's file")

    shown = dg_cache("info", cache=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == f"{patterns}: 2 stored patterns, 1.0 MB\n"
    assert shown.stderr == ""  # torchao's import noise is dropped

    cleared = dg_cache("clear", cache=tmp_path)
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout == f"removed 2 stored patterns from {patterns}\n"
    assert not patterns.exists() and other.read_text() == "a user's file"


def test_a_usage_error_exits_2_without_a_traceback(tmp_path):
    done = dg_cache("warmup", cache=tmp_path)
    assert done.returncode == 2
    assert "invalid choice: 'warmup'" in done.stderr
    assert "Traceback" not in done.stderr
