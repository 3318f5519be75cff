"""The one namer of a generated module: readable, unique identifiers from IR name hints that
never shadow a builtin, a keyword, `np`, a copied helper or a module constant.
"""
from __future__ import annotations

import builtins
import keyword
import re
import unicodedata

SYNTHETIC_PREFIX = "__amber_"
"""Hints the frontend invents (flags for break/continue/return, range loop counters) start
with this prefix: `__amber_brk0` reads `brk`, `__amber_range_i0` reads `i`."""

_SYNTHETIC_LOOP = "range_"

EMPTY_HINT = "t"
"""The base name of values without a hint (`t`, `t_1`, ...)."""

UNUSED = "_"
"""The name of a loop index nothing reads."""

_RESERVED = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"np", UNUSED}
_SUFFIXED = re.compile(r"(?<=.)_\d+$")
_SUFFIX = "{base}_{n}"
_NON_IDENT = re.compile(r"\W")


def readable(hint: str) -> str:
    """The base identifier for a hint: `fc1.weight` -> `fc1_weight`, `__amber_brk0` -> `brk`,
    `__amber_range_stop1` -> `stop`."""
    if hint.startswith(SYNTHETIC_PREFIX):
        hint = hint[len(SYNTHETIC_PREFIX):].rstrip("0123456789").removeprefix(_SYNTHETIC_LOOP)
    base = _NON_IDENT.sub("_", unicodedata.normalize("NFKC", hint))  # NOTE: as Python reads it
    if base[:1].isdigit():
        base = "v" + base
    return base if base.isidentifier() else EMPTY_HINT


def same_variable(a: str, b: str) -> bool:
    """True if two hints name the same user variable: equal up to a printer-style repeat
    suffix (`x`, `x_2`)."""
    return _SUFFIXED.sub("", readable(a)) == _SUFFIXED.sub("", readable(b))


class Namer:
    """Hands out unique identifiers for one module: hints are the user's variable names,
    synthetic frontend names lose their `SYNTHETIC_PREFIX` (`__amber_brk0` -> `brk`), and
    repeats get a numeric suffix (`x`, `x_1`, `x_2`)."""

    def __init__(self) -> None:
        self.taken: set[str] = set(_RESERVED)
        self._next: dict[str, int] = {}

    def reserve(self, ident: str) -> None:
        """Claim a name that must appear verbatim (a copied helper function)."""
        assert ident not in self.taken, f"codegen: the name {ident!r} is claimed twice"
        self.taken.add(ident)

    def fresh(self, hint: str) -> str:
        """A new identifier based on `hint`, unused so far in this module."""
        base = readable(hint)
        if base not in self.taken:
            self.taken.add(base)
            return base
        n = self._next.get(base, 1)
        while _SUFFIX.format(base=base, n=n) in self.taken:
            n += 1
        self._next[base] = n + 1
        ident = _SUFFIX.format(base=base, n=n)
        self.taken.add(ident)
        return ident
