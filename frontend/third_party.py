"""Messages of dg's dependencies that are not the user's business, dropped at dg's own calls.

Importing torchao logs a warning for each optional CUDA kernel library it cannot load on
this machine (`_C_mxfp8`, `_C_cutlass_90a`), and torchao registers its `KernelPreference`
enum with torch's pytree, which logs a deprecation. dg imports torchao for the user, so
`dg.prepare_qat` would print them (and `dg-run --compare`, loading a saved model, a
FutureWarning from inside torch). `known_messages_filtered` drops exactly these records,
on exactly the loggers that emit them, while dg's call runs: a user's own warnings, every
other message of these loggers, and the same messages outside dg's calls all stay.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

KNOWN_MESSAGES = (
    ("torchao", re.compile(r"Failed to load \S*/torchao/_C_(mxfp8|cutlass_90a)\S*\.so: ")),
    (
        "torch.utils._pytree",
        re.compile(r"<enum 'KernelPreference'> is an Enum subclass and is now natively supported"),
    ),
)
"""(logger name, pattern of the message's start) of each message dg drops."""

KNOWN_WARNINGS = ((FutureWarning, r"`isinstance\(treespec, LeafSpec\)` is deprecated"),)
"""(category, pattern of the message's start) of each warning dg drops: torch.export.load of
a saved reference model (`dg-run --compare`) warns about torch's own pytree use."""


class DropMatching(logging.Filter):
    """Drops the records whose message starts with `pattern`."""

    def __init__(self, pattern: re.Pattern[str]):
        super().__init__()
        self.pattern = pattern

    def filter(self, record: logging.LogRecord) -> bool:
        return self.pattern.match(record.getMessage()) is None


@contextmanager
def known_messages_filtered() -> Iterator[None]:
    """While the block runs, the `KNOWN_MESSAGES` and `KNOWN_WARNINGS` are dropped; nothing
    else is, and the warning filters are restored after it."""
    filters = [(logging.getLogger(name), DropMatching(pattern)) for name, pattern in KNOWN_MESSAGES]
    for logger, drop in filters:
        logger.addFilter(drop)
    try:
        with warnings.catch_warnings():
            for category, message in KNOWN_WARNINGS:
                warnings.filterwarnings("ignore", message, category)
            yield
    finally:
        for logger, drop in filters:
            logger.removeFilter(drop)
