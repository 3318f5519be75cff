"""`CompiledFunction`: one specialization, ready to call. It knows how to gather the instance's
parameters and the call's array inputs by path, how to check its guards, and how to point an
exception raised in generated code back at the user's line."""
from __future__ import annotations

import dataclasses
import inspect
import linecache
import re
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Callable, Sequence

import numpy as np

from ..graph.ir import Loc
from .guards import GuardLike, make_guard_check
from .paths import make_input_gatherer

ParamSig = tuple[tuple[tuple[Any, ...] | None, np.dtype | None], ...]
"""(shape, dtype) of each array parameter a specialization was compiled for; (None, None) for a
parameter that is not an array (e.g. a Dropout's random generator)."""


@dataclass(eq=False)
class CompiledFunction:
    """A generated function plus everything needed to call it without its graph."""
    fn: Callable[..., Any]
    source: str
    filename: str
    function_name: str
    line_map: dict[int, Loc]
    param_paths: tuple[str, ...] = ()
    param_sig: ParamSig = ()
    input_paths: tuple[str, ...] = ()
    guards: tuple[GuardLike, ...] = ()
    graph: Any = None
    ir: str = ""
    origin: str = "compiled"
    seconds: float = 0.0
    cache_path: str | None = None
    externals: dict[str, Any] = field(default_factory=dict)
    """Objects the module names but cannot define (user exception classes), by module name."""
    load_line_map: Callable[[], dict[int, Loc]] | None = field(default=None, repr=False)
    """Builds `line_map` on first need (entries read from disk defer it)."""
    trace: dict[str, Any] | None = field(default=None, repr=False)
    """The compile's stages for the compile report (only while one is recorded)."""
    gather: Callable[[tuple, dict], tuple] | None = field(default=None, repr=False)
    guards_hold: Callable[[Any], bool] | None = field(default=None, repr=False)
    replaced: CompiledFunction | None = field(default=None, repr=False)
    """The NumPy tier this entry ran before `promote` swapped its native code in (a call
    still running it may raise; its lines are found there)."""

    def prepare(self, nargs: int) -> None:
        """Precompute the input gatherer (for `nargs` positional arguments) and guard check."""
        self.gather = make_input_gatherer(self.input_paths, nargs)
        self.guards_hold = make_guard_check(self.guards)

    def params_fit(self, arrays: Sequence[np.ndarray]) -> bool:
        """True if `arrays` (NumPy scalars among them: attributes like `self.eps =
        np.float32(1e-5)`) have the shapes and dtypes this code was compiled for, each its own
        memory (the frontend makes one array reached by two paths one input, so code compiled
        for distinct arrays must not run on one)."""
        fits = len(arrays) == len(self.param_sig) and all(
            shape is None or (isinstance(a, np.ndarray | np.generic) and a.dtype == dtype
                              and _shape_fits(a.shape, shape))
            for a, (shape, dtype) in zip(arrays, self.param_sig))
        if not fits:
            return False
        starts = [a.__array_interface__["data"][0] for a in arrays
                  if isinstance(a, np.ndarray) and a.size]
        return len(set(starts)) == len(starts)

    def promote(self, native: CompiledFunction) -> None:
        """Switch to `native` (the same specialization with Numba kernels, see tiers.py): its
        text and line map first, the function last, so a call starting meanwhile runs either
        tier whole."""
        self.replaced = dataclasses.replace(self, replaced=None)
        self.source, self.filename, self.line_map = native.source, native.filename, native.line_map
        self.load_line_map, self.cache_path = native.load_line_map, native.cache_path
        self.externals = native.externals
        self.fn = native.fn

    def annotate(self, exc: BaseException) -> None:
        """Add a note to `exc` naming the user's line that the failing generated line came from."""
        unbound = _UNBOUND.search(str(exc)) if isinstance(exc, UnboundLocalError) else None
        found = self.locate(exc.__traceback__, unbound.group(1) if unbound else None)
        if found is None and self.replaced is not None:
            found = self.replaced.locate(exc.__traceback__, unbound.group(1) if unbound else None)
        if found is None:
            return
        loc = found.user  # NOTE: a layer's line is reported at the user's call of the layer
        add_note(exc, f"in {loc.file}:{loc.line}: {_line_text(loc)} (compiled by amber)")

    def locate(self, tb: TracebackType | None, unbound: str | None = None) -> Loc | None:
        """The user location of the innermost generated-code frame of `tb` that maps to one.
        `unbound`: the variable an UnboundLocalError names, read on that line or a later one."""
        if self.load_line_map is not None:
            self.line_map, self.load_line_map = self.load_line_map(), None
        found = None
        # NOTE: the entry sits under @one_blas_thread, @reuses_buffers
        main_code = getattr(inspect.unwrap(self.fn), "__code__", None)
        while tb is not None:
            code = tb.tb_frame.f_code
            if code.co_filename == self.filename:
                lineno = tb.tb_lineno if unbound is None else self._reading(tb.tb_lineno, unbound)
                loc = self.line_map.get(lineno)
                if loc is None and code is main_code:
                    loc = self._nearest(lineno)
                found = loc or found
            tb = tb.tb_next
        return found

    def _reading(self, lineno: int, name: str) -> int:
        """The first line from `lineno` on that reads `name`. CPython 3.11 runs an assignment
        and a read of a local on the next line as one instruction, and reports a failed read
        at the assignment's line."""
        lines = self.source.splitlines()
        word = re.compile(rf"\b{re.escape(name)}\b")
        for k in range(lineno, min(lineno + 3, len(lines)) + 1):
            if word.search(lines[k - 1].split("#")[0]):
                return k
        return lineno

    def _nearest(self, lineno: int) -> Loc | None:
        """The mapping of the closest mapped line at or above `lineno` (multi-line statements)."""
        best = max((n for n in self.line_map if n <= lineno), default=None)
        return None if best is None else self.line_map[best]


_UNBOUND = re.compile(r"local variable '(\w+)'")
"""The variable an UnboundLocalError's message names."""


def _line_text(loc: Loc) -> str:
    return loc.text.strip() or linecache.getline(loc.file, loc.line).strip()


def _shape_fits(actual: tuple[int, ...], expected: tuple[Any, ...]) -> bool:
    return len(actual) == len(expected) and all(
        not isinstance(e, int) or a == e for a, e in zip(actual, expected))


def as_plain_array(value: Any) -> Any:
    """A parameter as generated code wants it: a Parameter becomes a plain ndarray sharing its
    memory; anything else (an ndarray, a random generator) is passed as it is."""
    if isinstance(value, np.ndarray) and type(value) is not np.ndarray:
        return value.view(np.ndarray)
    return value


def add_note(exc: BaseException, note: str) -> None:
    """Add `note` to `exc` once (Python 3.10 keeps it where 3.11's add_note would)."""
    notes = getattr(exc, "__notes__", None) or []
    if note in notes:
        return
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:
        exc.__notes__ = [*notes, note]  # type: ignore[attr-defined]
