"""amber's log: `logging.getLogger("amber")` reports each compile (INFO: what changed in the
key, seconds) and the disk cache's hits, stores and evictions (DEBUG). Switch it on as for any
library, e.g. `logging.basicConfig(level=logging.DEBUG)`.

`logging` is not imported for this: a program that never imported it cannot have configured a
handler, so nothing would be shown anyway, and a warm start stays free of the import.
"""
from __future__ import annotations

import sys
from typing import Any

LOGGER = "amber"
DEBUG, INFO = 10, 20  # NOTE: logging.DEBUG and logging.INFO, without importing logging


def log(level: int, message: str, *args: Any) -> None:
    """`logging.getLogger("amber").log(level, message, *args)` if logging is in use."""
    logging = sys.modules.get("logging")
    if logging is None:
        return
    logger = logging.getLogger(LOGGER)
    if logger.isEnabledFor(level):
        logger.log(level, message, *args)


def debug(message: str, *args: Any) -> None:
    log(DEBUG, message, *args)


def info(message: str, *args: Any) -> None:
    log(INFO, message, *args)
