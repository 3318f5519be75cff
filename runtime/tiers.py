"""Tiered native compilation. Under `backend="auto"`, a specialization whose loops become Numba
kernels first runs as NumPy code (the same graph, every loop written in NumPy) while a background
thread compiles the kernels, or loads them from Numba's cache beside the disk entry; when they
are ready the entry switches to them (`CompiledFunction.promote`), so the next call runs native.
Numba is imported by that thread, never by a call that only runs NumPy code.

`backend="numba"` compiles the kernels before the first call, as it always did. Under tiering
the first call pays for the NumPy code only: the module with kernels is written by the
background thread too. The NumPy tier is kept in the disk cache under the NumPy backend's key,
so a warm process starts on it too.
"""
from __future__ import annotations

import functools
import threading
import time
from typing import Any, Callable

from . import log
from .compiled import CompiledFunction
from .native import numba_installed
from .warn import warn_user


def tiered(backend: str) -> bool:
    """Whether code compiled for `backend` (the option, before resolving) starts on NumPy."""
    return backend == "auto" and numba_installed()


_EVERY: list[threading.Thread] = []
"""Every background compile of the process that may still run (see `wait_all`)."""


def wait_all(timeout: float | None = None) -> bool:
    """Block until every background compile of the process has finished (at most `timeout`
    seconds in all); True if none is still running. Held compiles (`NativeTiers.release`) are
    not started by this."""
    deadline = None if timeout is None else time.monotonic() + timeout
    threads = [t for t in list(_EVERY) if t.ident is not None]
    for thread in threads:
        thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
    _EVERY[:] = [t for t in _EVERY if t.ident is None or t.is_alive()]
    return not any(t.is_alive() for t in threads)


class NativeTiers:
    """The background compiles one jit object started, so they can be waited for."""

    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []
        self._held: list[threading.Thread] = []
        self._lock = threading.Lock()

    def start(self, entry: CompiledFunction, make_native: Callable[[], CompiledFunction | None],
              title: str) -> None:
        """Run `make_native()` in a daemon thread, from `release()` on, and promote `entry` to
        what it returns (None: keep the NumPy tier). A failure is one warning; the NumPy code
        keeps running."""
        thread = threading.Thread(target=_promote_when_ready, args=(entry, make_native, title),
                                  name=f"amber-native:{title}", daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            self._held.append(thread)
            _EVERY.append(thread)

    @property
    def holding(self) -> bool:
        """Whether compiles wait for `release()`."""
        return bool(self._held)

    def release(self) -> None:
        """Start the held compiles. The jit call that made an entry releases them once it
        returns, so that call does not share the interpreter with Numba's import and compile
        (which hold the GIL most of the time)."""
        with self._lock:
            held, self._held = self._held, []
        for thread in held:
            thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every background compile started so far has finished (at most `timeout`
        seconds in all); True if none is still running."""
        self.release()
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in threads)

    @property
    def pending(self) -> int:
        """How many background compiles are still running."""
        with self._lock:
            return sum(t.is_alive() for t in self._threads) + len(self._held)


def _promote_when_ready(entry: CompiledFunction,
                        make_native: Callable[[], CompiledFunction | None], title: str) -> None:
    start = time.perf_counter()
    try:
        native = make_native()
    except Exception as err:  # NOTE: a background failure must not kill the NumPy tier
        reason = str(err).strip().splitlines()[0] if str(err).strip() else ""
        warn_user(f"amber: {title}: its loops keep running as NumPy code: the Numba kernels "
                  f"could not be made ({type(err).__name__}: {reason})")
        return
    if native is None:
        log.debug("amber: %s keeps its NumPy tier (no native entry)", title)
        return
    entry.promote(native)
    log.info("amber: %s switched to its Numba kernels after %.1f ms in the background", title,
             (time.perf_counter() - start) * 1e3)


def native_generator(artifact: Any) -> Callable[[frozenset[int]], Any] | None:
    """How to write the artifact's code (generated for the NumPy backend) with the loops
    `auto` compiles as kernels, the regions in its argument left NumPy; None when `auto`
    compiles none (the NumPy code is then the code)."""
    from ..codegen.native import select_regions
    if artifact.generate_as is None or not select_regions(artifact.graph, "auto"):
        return None
    return functools.partial(artifact.generate_as, "auto")
