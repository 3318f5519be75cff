"""Freed memory kept for the next call: glibc's malloc gives the top of its heap back to the
OS once more than a little of it is free, so a compiled call that frees and allocates a few
megabytes of arrays page-faults on every page of them again on the next call (a ResNet forward
at batch 32: about 1,250 faults and 3 ms of system time a call, its train step 3,400 and 8 ms).
`retain(n)` asks malloc to keep `n` freed bytes (M_TOP_PAD) and to take blocks below 32 MiB
from its heap; the runtime calls it when it loads compiled code, with
`set_context(retain_memory=...)`. Elsewhere than glibc it does nothing."""
from __future__ import annotations

import os

M_TOP_PAD, M_MMAP_THRESHOLD = -2, -3
"""mallopt's parameter numbers (glibc's malloc.h)."""
MMAP_THRESHOLD = 32 << 20
"""Blocks from this size get their own mapping (faulted in on each use): the most glibc's own
rule would rise to. Setting the padding turns that rule off, leaving the threshold where it
stood (128 KiB early in a process: every array of a convolution net would be mapped)."""
GLIBC_TOP_PAD = 128 * 1024
"""glibc's documented default padding, put back by `retain(0)` after a larger one."""

_applied = [0]


def retain(nbytes: int) -> bool:
    """Keep up to `nbytes` of freed heap memory in the process (0: glibc's default padding);
    True if the allocator took the setting. The user's own `MALLOC_TOP_PAD_` or
    `MALLOC_MMAP_THRESHOLD_` in the environment wins, and so does an allocator that is not
    glibc's."""
    if nbytes == _applied[0] or any(os.environ.get(name) is not None for name in
                                    ("MALLOC_TOP_PAD_", "MALLOC_MMAP_THRESHOLD_")):
        return False
    mallopt = _mallopt()
    if mallopt is None or not mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) or \
            not mallopt(M_TOP_PAD, nbytes or GLIBC_TOP_PAD):
        return False
    _applied[0] = nbytes
    return True


def _mallopt():
    """glibc's `mallopt`, or None."""
    import ctypes
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
            return None
    except (AttributeError, ValueError, OSError):  # NOTE: not a GNU system
        return None
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return mallopt
