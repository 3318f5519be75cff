"""Background builds (Numba kernels, the native convolution parts): the lock under which they
(and a caller's thread) import Numba, and the switch interval while they run.

Numba's imports are circular: two threads importing it at once can each see the other's
half-initialized modules, so every import of Numba amber makes takes `NUMBA_IMPORT_LOCK`.

The builds share the interpreter with the calls running meanwhile. Python hands its lock to a
waiting thread only every switch interval (5 ms by default), so a call waits up to that long
after each NumPy call that released the lock: a ResNet step took 0.5-0.8 s instead of 0.05
while the native parts were built, 0.07-0.39 s with 0.5 ms. `yielding_often` sets the shorter
interval while any build runs, and puts the user's back when the last one ends (two builds may
overlap).
"""
from __future__ import annotations

import contextlib
import sys
import threading
from typing import Iterator

BUILD_INTERVAL = 5e-4
"""The switch interval while a background build runs (seconds)."""

NUMBA_IMPORT_LOCK = threading.Lock()
"""Held while amber imports Numba (runtime/native.py, ops/conv_native.py)."""

_lock = threading.Lock()
_builds = 0
_saved = 0.0


@contextlib.contextmanager
def yielding_often() -> Iterator[None]:
    """Run the block with the interpreter's switch interval at most `BUILD_INTERVAL`."""
    global _builds, _saved
    with _lock:
        if _builds == 0:
            _saved = sys.getswitchinterval()
            sys.setswitchinterval(min(_saved, BUILD_INTERVAL))
        _builds += 1
    try:
        yield
    finally:
        with _lock:
            _builds -= 1
            if _builds == 0:
                sys.setswitchinterval(_saved)
