"""Tiered native compilation (runtime/tiers.py): under backend="auto" the first call runs NumPy
code while the kernels compile in a background thread; the entry switches when they are ready;
`backend="numba"` compiles first. Numba is imported by that thread, never by the call."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import amber
from amber.runtime import reset_context
from amber.runtime.compiled import CompiledFunction
from amber.runtime.tiers import NativeTiers

X = np.linspace(-1.0, 1.0, 16, dtype=np.float32)


def halve_until_small(x):
    """Many iterations over 16 floats: the cost rule makes it a kernel."""
    while np.sum(np.abs(x)) > 1e-3:
        x = np.tanh(x * 0.5)
    return x


def test_auto_runs_numpy_first_then_switches_also_when_warm(numba, monkeypatch) -> None:
    monkeypatch.setenv("AMBER_CACHE", "1")
    reset_context()
    expected = amber.jit(halve_until_small, backend="numpy")(X)
    cold = amber.jit(halve_until_small, backend="auto")
    first = cold(X)
    np.testing.assert_array_equal(first, expected)  # NOTE: the NumPy tier is the NumPy code
    assert cold.wait_kernels(120)
    assert "@numba.njit(" in cold.code and cold.stats.compiles == 1
    np.testing.assert_allclose(cold(X), first, rtol=1e-6, atol=1e-6)
    warm = amber.jit(halve_until_small)  # NOTE: a new jit object has no memory cache
    np.testing.assert_array_equal(warm(X), expected)
    assert warm.stats.disk_hits == 1 and warm.stats.compiles == 0
    assert warm.wait_kernels(120)
    assert "@numba.njit(" in warm.code
    np.testing.assert_allclose(warm(X), first, rtol=1e-6, atol=1e-6)


def grow_big(x):
    """A loop over 8192 floats: above AUTO_MAX_ELEMENTS, auto keeps it NumPy."""
    while np.sum(np.abs(x)) < 1e6:
        x = x * 2.0 + 1.0
    return x


def test_which_loops_go_native_is_decided_in_the_background(numba, monkeypatch) -> None:
    """The first call builds no kernel source (choosing the loops did, 8-20% of that call);
    the background chooses under the parse lock (CPython 3.11's AST conversion is not
    thread-safe: common/parsing.py); a loop auto keeps NumPy leaves the NumPy code stored under
    auto's key too, so a warm process compiles nothing."""
    import threading

    from amber.codegen import native
    from amber.common.parsing import PARSE_LOCK
    monkeypatch.setenv("AMBER_CACHE", "1")
    reset_context()
    chose = []
    real = native.select_regions

    def spy(*args, **kwargs):
        chose.append((threading.current_thread().name, PARSE_LOCK._is_owned()))
        return real(*args, **kwargs)
    monkeypatch.setattr(native, "select_regions", spy)
    x = np.ones(8192, np.float32)
    expected = amber.jit(grow_big, backend="numpy")(x)
    cold = amber.jit(grow_big, backend="auto")
    np.testing.assert_array_equal(cold(x), expected)
    assert cold.wait_kernels(120)
    assert chose and all(name.startswith("amber-native") and locked for name, locked in chose), \
        chose
    assert "@numba.njit(" not in cold.code and cold.stats.compiles == 1
    warm = amber.jit(grow_big, backend="auto")
    np.testing.assert_array_equal(warm(x), expected)
    assert warm.stats.compiles == 0 and warm.stats.disk_hits == 1
    assert warm.wait_kernels(120) and "@numba.njit(" not in warm.code


def _entry(fn) -> CompiledFunction:
    return CompiledFunction(fn=fn, source="", filename="<t>", function_name="f", line_map={})


def test_a_background_failure_warns_and_keeps_the_numpy_tier() -> None:
    entry, tiers = _entry(lambda: "numpy"), NativeTiers()

    def broken() -> CompiledFunction:
        raise RuntimeError("LLVM said no")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tiers.start(entry, broken, "f")
        assert tiers.wait(30)
    assert entry.fn() == "numpy"
    assert any("keep running as NumPy code" in str(w.message) and "LLVM said no"
               in str(w.message) for w in caught)


def test_promote_swaps_the_code_and_remembers_the_tier_it_replaced() -> None:
    entry, tiers = _entry(lambda: "numpy"), NativeTiers()
    tiers.start(entry, lambda: _entry(lambda: "native"), "f")
    assert tiers.wait(30) and tiers.pending == 0
    assert entry.fn() == "native" and entry.replaced is not None
    assert entry.replaced.fn() == "numpy"


_PROBE = """
import importlib.abc, json, sys, threading
importers = []
class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        frame, probing = sys._getframe(1), False  # NOTE: find_spec only asks, not imports
        while frame is not None:
            probing |= frame.f_code.co_name == "find_spec" and "importlib" in \
                frame.f_code.co_filename and "util" in frame.f_code.co_filename
            frame = frame.f_back
        if name in ("numba", "scipy") and not probing:
            importers.append((name, threading.current_thread().name))
        return None
sys.meta_path.insert(0, Watch())
import numpy as np
import amber
sys.path.insert(0, {here!r})
from test_tiers import X, halve_until_small
fn = amber.jit(halve_until_small, backend={backend!r})
fn(X)
main_imported = list(importers)
if {backend!r} == "auto":  # NOTE: the compile itself need not finish, only start importing
    while "numba" not in sys.modules:
        threading.Event().wait(0.01)
print(json.dumps({{"importers": importers, "main": main_imported,
                  "numba": "numba" in sys.modules}}))
"""


@pytest.mark.parametrize("backend", ["auto", "numpy"])
def test_numba_is_imported_only_by_the_background_compile(numba, backend, tmp_path) -> None:
    code = textwrap.dedent(_PROBE.format(here=str(Path(__file__).parent), backend=backend))
    env = {"AMBER_CACHE": "0", "AMBER_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, timeout=300)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["main"] == []  # NOTE: nothing imported numba or scipy before the call ended
    threads = {thread for _, thread in found["importers"]}
    if backend == "numpy":
        assert found["importers"] == [] and not found["numba"]
    else:
        assert found["numba"] and threads and all(t.startswith("amber-native:")
                                                  for t in threads)


def test_numba_converts_its_trees_under_amber_s_parse_lock(numba, monkeypatch) -> None:
    """CPython 3.11 shares the AST conversion's depth counter between threads: Numba parses
    (each kernel's source, for its first line; array expressions) on the kernel's thread, so
    it waits for amber's parsing (common/parsing.py), and amber's for it."""
    import ast
    import threading

    from numba.misc import firstlinefinder
    from numba.np.ufunc import array_exprs

    from amber.common.parsing import PARSE_LOCK
    from amber.runtime.native import import_numba
    import_numba()
    done = []
    with PARSE_LOCK:
        for convert in (lambda: firstlinefinder.ast.parse("x + 1"),
                        lambda: array_exprs.ast.parse("x + 1"),
                        lambda: array_exprs.compile(ast.parse("y = 2"), "<t>", "exec")):
            thread = threading.Thread(target=lambda c=convert: done.append(c()))
            thread.start()
            thread.join(0.2)
            assert thread.is_alive() and not done  # NOTE: waits for the lock this thread holds
            PARSE_LOCK.release()
            thread.join(10)
            PARSE_LOCK.acquire()
            assert not thread.is_alive() and len(done) == 1
            done.clear()
    assert array_exprs.ast.Name is ast.Name and firstlinefinder.ast.walk is ast.walk
    parsed = []
    locked_parse = array_exprs.ast.parse

    def spy(*args, **kwargs):
        parsed.append(args[0])
        return locked_parse(*args, **kwargs)
    monkeypatch.setattr(type(array_exprs.ast), "parse", staticmethod(spy))
    a, b = np.linspace(-1.0, 1.0, 16), np.linspace(0.0, 2.0, 16)
    np.testing.assert_array_equal(numba.njit(array_arithmetic)(a, b), array_arithmetic(a, b))
    assert parsed  # NOTE: Numba's array-expression lowering went through the locked parse


def array_arithmetic(a, b):
    return a * 2.0 + b
