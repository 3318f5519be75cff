"""Freed memory kept between calls (runtime/heap.py, `set_context(retain_memory=...)`): with the
default, repeated calls that free and allocate megabytes of arrays take no page faults (in a
fresh process, so the allocator's state is this test's alone); the setting is checked and the
user's own `MALLOC_TOP_PAD_` wins."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import amber
from amber.runtime import heap

needs_glibc = pytest.mark.skipif(heap._mallopt() is None,
                                 reason="not glibc's malloc: retain_memory changes nothing")

FAULTS = """
import json, resource, numpy as np, amber
{setting}
@amber.jit
def f(x):
    a = x * 2.0
    b = np.tanh(a) + x
    return ((b * a - 1.0) * b).sum()
x = np.ones((512, 1024))  # NOTE: 4 MiB arrays, freed and made again each call
for _ in range(3):
    f(x)
start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    f(x)
print(json.dumps((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start) / 10))
"""


def _faults(folder: Path, setting: str) -> float:
    """Page faults a call, in a new process running FAULTS from a file (jit reads sources)."""
    script = folder / f"faults_{len(setting)}.py"
    script.write_text(FAULTS.format(setting=setting))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env={**os.environ, "AMBER_CACHE": "0"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@needs_glibc
def test_compiled_calls_reuse_freed_pages(tmp_path: Path) -> None:
    kept = _faults(tmp_path, "")
    released = _faults(tmp_path, "amber.set_context(retain_memory=0)")
    assert kept <= 5, f"{kept} page faults a call with freed memory kept"
    assert released == 0 or kept < released  # NOTE: glibc's own default (~1000 here)


def test_the_setting_is_checked_and_the_environment_wins(monkeypatch) -> None:
    for bad in (-1, 1 << 31, 2.5, "64MB"):
        with pytest.raises(ValueError, match="retain_memory must be an int of bytes"):
            amber.set_context(retain_memory=bad)
    assert amber.get_context("retain_memory") == 64 << 20
    monkeypatch.setenv("MALLOC_TOP_PAD_", "1024")
    assert not heap.retain(1 << 20)
