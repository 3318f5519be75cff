"""One lock for amber's own Python parsing (source -> `ast`/`gast` trees, and trees -> code).

CPython 3.11 keeps the depth counter of its AST conversion in state shared by every thread of the
interpreter: two threads converting trees at once can leave it out of step, and a later parse then
fails with "SystemError: AST constructor recursion depth mismatch". amber parses on the calling
thread (the frontend) and on the background thread that writes Numba kernels (runtime/tiers.py),
so both take this lock around their parsing.
"""
from __future__ import annotations

import threading

PARSE_LOCK = threading.RLock()
