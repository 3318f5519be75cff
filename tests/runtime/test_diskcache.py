"""The disk cache within one process: a fresh jit object (an empty memory cache) is served from
disk; damaged, planted, mismatched and other-version entries are recompiled, never executed; an
unwritable directory degrades to memory with one warning."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import sys
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import amber
from amber import nn
from amber.runtime import DiskCache
from amber import version
from amber.runtime import diskcache


class Model(nn.Cell):
    """A small cell with a parameter, a config value and control flow."""

    def __init__(self, scale: float = 2.0) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.scale = scale

    def construct(self, x: np.ndarray) -> np.ndarray:
        y = self.fc(x)
        if y.sum() > 0:
            y = y * self.scale
        return y


X = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
OFFSET = 1.0


class UsesGlobal(nn.Cell):
    """Reads a module-level constant: guarded, and re-read by name in a new process."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        return x + OFFSET


def run_fresh(net: nn.Cell, x: np.ndarray = X) -> amber.runtime.JitFunction:
    """Call `net` through a new jit object (no memory cache) and check it against eager."""
    fast = amber.jit(net)
    np.testing.assert_allclose(fast(x), net.construct(x), rtol=1e-6)
    return fast


def entry_files(cache_dir: Path) -> tuple[Path, Path]:
    (meta,) = cache_dir.glob("*/*.json")
    return meta.with_suffix(".py"), meta


def test_second_jit_object_is_served_from_disk(cache_dir: Path) -> None:
    net = Model()
    first = run_fresh(net)
    assert (first.stats.compiles, first.stats.disk_hits) == (1, 0)
    py, meta = entry_files(cache_dir)
    assert first.last.cache_path == str(py)
    assert "def " in py.read_text() and py.read_text() == first.code  # the readable module
    second = run_fresh(net)
    assert (second.stats.compiles, second.stats.disk_hits) == (0, 1)
    assert second.last.origin == "disk" and second.code == first.code


def test_cache_directory_is_private(cache_dir: Path) -> None:
    run_fresh(Model())
    for folder in (cache_dir, *[p for p in cache_dir.iterdir() if p.is_dir()]):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for file in cache_dir.glob("*/*"):
        assert stat.S_IMODE(file.stat().st_mode) & 0o077 == 0


def test_guard_mismatch_is_a_miss_and_both_entries_stay_usable(cache_dir: Path) -> None:
    run_fresh(Model(scale=2.0))
    three = run_fresh(Model(scale=3.0))
    assert three.stats.compiles == 1  # same source and signature, other guard value
    assert len(list(cache_dir.glob("*/*.json"))) == 2
    for scale in (2.0, 3.0):
        assert run_fresh(Model(scale=scale)).stats.disk_hits == 1


def test_changed_global_constant_is_a_miss(monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_fresh(UsesGlobal()).stats.compiles == 1
    assert run_fresh(UsesGlobal()).stats.disk_hits == 1  # the guard on OFFSET was persisted
    monkeypatch.setattr(sys.modules[__name__], "OFFSET", 2.5)
    again = run_fresh(UsesGlobal())
    assert again.stats.compiles == 1
    np.testing.assert_allclose(again(X), X + 2.5)


def test_other_input_signature_is_a_miss(cache_dir: Path) -> None:
    run_fresh(Model())
    assert run_fresh(Model(), np.ones((5, 4), np.float32)).stats.compiles == 1


@pytest.mark.parametrize("damage", ["truncate", "garble", "empty"])
def test_damaged_module_is_recompiled_and_rewritten(cache_dir: Path, damage: str) -> None:
    run_fresh(Model())
    py, _ = entry_files(cache_dir)
    good = py.read_text()
    py.write_text({"truncate": good[:len(good) // 2], "garble": good.replace("return", "retrun"),
                   "empty": ""}[damage])
    again = run_fresh(Model())
    assert (again.stats.compiles, again.stats.disk_hits) == (1, 0)
    assert py.read_text() == good  # rewritten, so the next process is served again
    assert run_fresh(Model()).stats.disk_hits == 1


def test_planted_code_is_never_executed(cache_dir: Path, tmp_path: Path) -> None:
    run_fresh(Model())
    py, _ = entry_files(cache_dir)
    marker = tmp_path / "executed"
    plant = f"open({str(marker)!r}, 'w').write('x')\n"
    py.write_text(plant + py.read_text())
    again = run_fresh(Model())
    assert again.stats.compiles == 1 and not marker.exists()


@pytest.mark.parametrize("damage", ["truncate", "not json", "edited"])
def test_damaged_metadata_is_recompiled(cache_dir: Path, damage: str) -> None:
    run_fresh(Model())
    _, meta = entry_files(cache_dir)
    text = meta.read_text()
    meta.write_text({"truncate": text[:len(text) // 3], "not json": "\x00garbage\x00",
                     "edited": text.replace('"inputs": [', '"inputs": ["1", ', 1)}[damage])
    if damage == "edited":
        assert meta.read_text() != text
    assert run_fresh(Model()).stats.compiles == 1


def test_entry_of_another_amber_version_is_not_used(cache_dir: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    run_fresh(Model())
    _, meta_path = entry_files(cache_dir)
    meta = json.loads(meta_path.read_text())
    del meta["sha256"]
    meta["amber_version"] = "0.0.1"
    meta_path.write_text(diskcache._seal(meta))  # a well-formed entry, just from elsewhere
    assert run_fresh(Model()).stats.compiles == 1
    monkeypatch.setattr(diskcache, "__version__", "99.0")  # a new version looks elsewhere
    assert run_fresh(Model()).stats.compiles == 1
    assert len(list(cache_dir.glob("*/*.json"))) == 2


def test_entry_written_under_another_numpy_is_not_used(cache_dir: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Types follow the running NumPy (NumPy 1 promotes a 0-d float32 plus a Python int to
    float64, NumPy 2 keeps float32): code compiled under one must not serve the other."""
    run_fresh(Model())
    monkeypatch.setattr(np, "__version__", "1.26.4" if np.__version__.startswith("2.") else "2.4.6")
    assert run_fresh(Model()).stats.compiles == 1
    assert len(list(cache_dir.glob("*/*.json"))) == 2


def test_entry_of_a_changed_compiler_is_not_used(cache_dir: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An edited checkout keeps its version number; the compiler's content fingerprint
    changes. A `touch` (or a fresh checkout) changes modification times only: still a hit.
    (Measured on a copy of the compiler's files, so the real ones are never touched.)"""
    copy = tmp_path / "amber-copy"
    for package in version.COMPILER_PACKAGES:
        shutil.copytree(Path(version.__file__).parent / package, copy / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(version, "_ROOT", copy)
    monkeypatch.setattr(version, "_fingerprint", [])
    run_fresh(Model())
    assert run_fresh(Model()).stats.disk_hits == 1
    compiler_file = copy / "codegen" / "emitter.py"
    stat = compiler_file.stat()
    os.utime(compiler_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    monkeypatch.setattr(version, "_fingerprint", [])  # a new process
    assert run_fresh(Model()).stats.disk_hits == 1
    compiler_file.write_text(compiler_file.read_text() + "\n# an edit\n")
    monkeypatch.setattr(version, "_fingerprint", [])
    assert run_fresh(Model()).stats.compiles == 1


def _import_file(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


HELPER = '''
import numpy as np


def bump(x):
    return x + 1.0
'''

USER = '''
import numpy as np
from amber import nn
from {helper} import bump


class UsesHelper(nn.Cell):
    def construct(self, x):
        return bump(x) * 2.0
'''


def test_changed_helper_source_invalidates_the_entry(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    helper = tmp_path / "amber_test_helper_mod.py"
    helper.write_text(HELPER)
    (tmp_path / "amber_test_user_mod.py").write_text(USER.format(helper=helper.stem))
    monkeypatch.syspath_prepend(str(tmp_path))
    user = _import_file(tmp_path / "amber_test_user_mod.py", "amber_test_user_mod")
    x = np.ones(3, np.float32)
    assert run_fresh(user.UsesHelper(), x).stats.compiles == 1
    assert run_fresh(user.UsesHelper(), x).stats.disk_hits == 1
    helper.write_text(HELPER.replace("x + 1.0", "x + 1.5"))  # the file on disk changed
    assert run_fresh(user.UsesHelper(), x).stats.compiles == 1


def test_unwritable_directory_warns_once_and_keeps_working(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    if os.geteuid() == 0:  # NOTE: root writes through chmod 0500; a path under a file fails
        blocker.write_text("a regular file")
        target = blocker / "cache"
    else:
        blocker.mkdir(mode=0o500)
        target = blocker / "cache"
    amber.set_context(cache_dir=target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_fresh(Model())
        run_fresh(Model(scale=5.0))
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "cannot write the compile cache" in messages[0]
    assert str(target) in messages[0] and caught[0].filename == __file__


def test_disk_cache_off(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMBER_CACHE", "0")
    run_fresh(Model())
    assert not cache_dir.exists()
    monkeypatch.delenv("AMBER_CACHE")
    amber.set_context(disk_cache=False)
    run_fresh(Model())
    assert not cache_dir.exists()


def test_list_and_clear(cache_dir: Path) -> None:
    cache = DiskCache(cache_dir)
    assert list(cache.entries()) == [] and cache.clear() == 0
    run_fresh(Model())
    run_fresh(Model(), np.ones((1, 4), np.float32))
    entries = list(cache.entries())
    assert len(entries) == 2 and all(e.valid for e in entries)
    assert {e.signature for e in entries} == {"(f32[2,4])", "(f32[1,4])"}
    assert all(e.target == "Model.construct" for e in entries)
    py, _ = entries[0].path, None
    py.write_text("broken")
    assert sorted(e.valid for e in cache.entries()) == [False, True]
    assert cache.clear() == 2
    assert list(cache.entries()) == [] and cache_dir.is_dir()
