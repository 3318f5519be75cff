"""The disk cache records every function inlined into an entry by where it was read, including
those that emit no node of their own (a SequentialCell's `construct`), so models built from
containers are stored and reused; an entry that cannot be stored says so once."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

import amber
from amber import nn

X = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)


class Stack(nn.Cell):
    """Only containers and layers: its own construct is the only user line in the code."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell(nn.Dense(4, 4), nn.SequentialCell(nn.ReLU(), nn.Tanh()))

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.body(x)


def scaled_by(scale: float):
    """A function reading a closure variable: its guard cannot be re-read in another process."""
    def scaled(x: np.ndarray) -> np.ndarray:
        return x * scale
    return scaled


def test_a_model_of_containers_is_stored_and_served_from_disk(cache_dir: Path) -> None:
    net = Stack()
    first = amber.jit(net)
    np.testing.assert_allclose(first(X), net.construct(X), rtol=1e-6)
    assert first.last.cache_path is not None
    assert len(list(cache_dir.glob("*/*.json"))) == 1
    second = amber.jit(net)
    np.testing.assert_allclose(second(X), net.construct(X), rtol=1e-6)
    assert (second.stats.compiles, second.stats.disk_hits) == (0, 1)


def test_the_entry_records_the_container_source(cache_dir: Path) -> None:
    amber.jit(Stack())(X)
    (meta,) = cache_dir.glob("*/*.json")
    text = meta.read_text()
    for file in ("containers.py", "basic.py", "activation.py", Path(__file__).name):
        assert file in text, file


def test_an_entry_that_cannot_be_stored_warns_once(cache_dir: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            fn = scaled_by(3.0)
            np.testing.assert_array_equal(amber.jit(fn)(X), X * 3.0)
    messages = [str(w.message) for w in caught if "disk cache" in str(w.message)]
    assert len(messages) == 1, messages
    assert "scaled" in messages[0] and "recompiled in every new process" in messages[0]
    assert caught[0].filename == __file__
    assert not list(cache_dir.glob("*/*.json"))


HELPER_DEFINED_TWICE = '''
def helper(x):
    return x[0] + x[1]


FIRST = helper


def f(x):
    return helper(x)


def helper(x):
    return (x[0] + x[1]) * 10
'''


def test_a_helper_rebound_to_another_def_of_its_name_is_not_served_stale(
        cache_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """Both defs of `helper` stay in the file, so the entry's source records still match: the
    entry must also check which def the name is bound to now (in memory and on disk)."""
    (tmp_path / "twice.py").write_text(HELPER_DEFINED_TWICE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import twice
    second, x = twice.helper, np.arange(4.0)
    twice.helper = twice.FIRST
    compiled = amber.jit(twice.f)
    assert compiled(x) == twice.f(x) == 1.0
    twice.helper = second
    assert compiled(x) == twice.f(x) == 10.0          # the memory cache's code guard
    twice.helper = twice.FIRST
    assert amber.jit(twice.f)(x) == 1.0
    twice.helper = second
    fresh = amber.jit(twice.f)                        # an empty memory cache: disk lookups
    assert fresh(x) == twice.f(x) == 10.0
