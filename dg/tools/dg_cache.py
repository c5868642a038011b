"""`dg-cache`: dg's cache of torchao's exported rewrite patterns, filled before a first freeze.

    dg-cache warm      export the patterns once, now (about 20 s on a 2-core machine)
    dg-cache info      where the cache is, and its entries and bytes
    dg-cache clear     remove the stored patterns (nothing else)

A freeze exports about 110 small pattern graphs through torchao; `pattern_store`
keeps them in the cache directory (`$DG_CACHE_DIR`, else `$XDG_CACHE_HOME/dg`,
else `~/.cache/dg`), so every process after the first loads them in milliseconds.
`warm` moves that first export out of the user's first freeze: it quantizes small
models that reach every pattern torchao builds for the layers dg supports (QAT
with convolution, depthwise convolution and batch norm, and PTQ), so a later
`prepare_qat` + `freeze_quantization` of any such model finds them stored.
`make .venv` runs it after installing, as pip compiles byte code at install time.
The entries hold for this torch, torchao and Python; after an upgrade they miss
and are exported again (and `warm` refills them).

Exits 0 on success and 2 on a usage error, with no Python traceback.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dg
from dg.frontend.third_party import known_messages_filtered

OK, USAGE_ERROR = 0, 2


def warming_model() -> Any:
    """Every layer kind whose QAT or PTQ rewrite exports a torchao pattern."""
    from torch import nn

    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1, groups=8),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.Dropout(0.1),
        nn.Flatten(),
        nn.Linear(8 * 8 * 8, 10),
    )


def warm() -> None:
    """Quantize `warming_model` both ways: every pattern export on the way is stored."""
    import torch

    torch.manual_seed(0)
    x = torch.rand(4, 3, 8, 8)
    for prepare in (dg.prepare_qat, dg.prepare_ptq):
        prepared = prepare(warming_model(), (x,))
        prepared(x)  # a training step or a calibration batch
        dg.freeze_quantization(prepared)


def store_folder() -> Path:
    """The folder of the store freezes use (`pattern_cache.STORE`; imports torchao)."""
    from dg.frontend import pattern_cache
    from dg.frontend.pattern_store import PatternStore

    return (pattern_cache.STORE or PatternStore()).folder


def info() -> str:
    folder = store_folder()
    entries = sorted(folder.glob("*.pkl")) if folder.is_dir() else []
    size = sum(p.stat().st_size for p in entries)
    return f"{folder}: {len(entries)} stored patterns, {size / 1e6:.1f} MB"


def clear() -> str:
    folder = store_folder()
    entries = len(list(folder.glob("*.pkl"))) if folder.is_dir() else 0
    shutil.rmtree(folder, ignore_errors=True)
    return f"removed {entries} stored patterns from {folder}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="dg-cache", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument("command", choices=("warm", "info", "clear"))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse printed the usage error
        return OK if exit_.code == 0 else USAGE_ERROR
    with known_messages_filtered():  # torchao's import logs what is not the user's business
        if args.command == "warm":
            started = time.perf_counter()
            warm()
            print(f"warmed in {time.perf_counter() - started:.1f} s; {info()}")
        else:
            print(info() if args.command == "info" else clear())
    return OK


if __name__ == "__main__":
    sys.exit(main())
