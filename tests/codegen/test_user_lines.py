"""Lines of amber's layers carry the user's call as their caller (`Loc.caller`): generated
comments, error notes, the disk cache's line map and saved graphs name the user's line."""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import amber
from amber import nn, ops
from amber.graph import Loc, load_graph, save_graph
from amber.runtime.records import decode_line_map, encode_line_map


class Block(nn.Cell):
    """A user's own cell: its lines are user lines, called from `Model.construct`."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x: np.ndarray) -> np.ndarray:
        y = self.fc(x)
        return ops.tanh(y)


class Model(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.dense = nn.Dense(4, 4)
        self.block = Block()
        self.embed = nn.Embedding(5, 4)

    def construct(self, x: np.ndarray, ids: np.ndarray) -> np.ndarray:
        h = self.dense(x)
        h = self.block(h)
        return h + self.embed(ids).sum(axis=0)


@pytest.fixture(autouse=True)
def memory_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compile every time (a disk hit has no graph to inspect)."""
    monkeypatch.setenv("AMBER_CACHE", "0")


def _line(func: object, text: str) -> int:
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _inputs(ids: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    return np.ones((2, 4), np.float32), np.array(ids or [1, 2], np.int32)


def _compiled() -> tuple[Model, object]:
    amber.set_seed(0)
    net = Model()
    fast = amber.jit(net)
    fast(*_inputs())
    return net, fast


def test_layer_nodes_have_the_users_call_as_caller() -> None:
    _, fast = _compiled()
    here = os.path.abspath(__file__)
    dense_call = _line(Model.construct, "h = self.dense(x)")
    found = False
    for node in fast.graph.walk():
        loc = node.loc
        if loc is None or os.path.abspath(loc.file) == here:
            continue
        assert loc.caller is not None, f"{node.name} at {loc} has no caller"
        assert os.path.abspath(loc.user.file) == here
        found = found or loc.user.line == dense_call
    assert found, "no node of self.dense(x) kept its user line"


def test_user_cells_keep_their_own_lines() -> None:
    _, fast = _compiled()
    tanh = _line(Block.construct, "return ops.tanh(y)")
    locs = [n.loc for n in fast.graph.walk() if n.name == "tanh"]
    assert locs and all(loc.user.line == tanh for loc in locs)
    assert all(loc.caller.line == _line(Model.construct, "h = self.block(h)") for loc in locs)


def test_comments_name_user_lines_only() -> None:
    _, fast = _compiled()
    comments = [line.strip() for line in fast.code.splitlines() if line.strip().startswith("# ")]
    assert comments
    base = os.path.basename(__file__)
    assert all(c.startswith(f"# {base}:") for c in comments), comments
    assert f"# {base}:{_line(Model.construct, 'h = self.dense(x)')}: h = self.dense(x)" \
        in comments


def test_error_inside_a_layer_is_noted_at_the_users_call() -> None:
    _, fast = _compiled()
    with pytest.raises(ValueError) as info:
        fast(*_inputs([1, 9]))
    line = _line(Model.construct, "return h + self.embed(ids)")
    assert info.value.__notes__ == [
        f"in {__file__}:{line}: return h + self.embed(ids).sum(axis=0) (compiled by amber)"]


def test_disk_line_map_keeps_callers() -> None:
    inner = Loc("/lib/layer.py", 7, 4, "", Loc("/u/model.py", 3, 8, "", Loc("/u/top.py", 1)))
    line_map = {5: inner, 6: Loc("/u/model.py", 4)}
    assert decode_line_map(encode_line_map(line_map)) == {
        5: Loc("/lib/layer.py", 7, 4, caller=Loc("/u/model.py", 3, 8, caller=Loc("/u/top.py", 1))),
        6: Loc("/u/model.py", 4)}


def test_saved_graphs_keep_callers(tmp_path: Path) -> None:
    _, fast = _compiled()
    path = tmp_path / "g.amber"
    save_graph(fast.graph, path)
    before = [n.loc for n in fast.graph.walk()]
    after = [n.loc for n in load_graph(path).walk()]
    assert after == before and any(loc is not None and loc.caller for loc in after)


PROGRAM = '''
import numpy as np
import amber
from amber import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(5, 4)

    def construct(self, ids):
        return self.embed(ids)


net = amber.jit(Net())
try:
    net(np.array([1, 7], np.int32))
except ValueError as err:
    print(err.__notes__[0])
print(net.last.origin)
'''


def test_disk_hit_notes_the_users_call(tmp_path: Path) -> None:
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    env = {**os.environ, "AMBER_CACHE_DIR": str(tmp_path / "cache"), "AMBER_CACHE": "1"}
    runs = [subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                           text=True, check=True).stdout for _ in range(2)]
    note = f"in {script}:13: return self.embed(ids) (compiled by amber)"
    assert runs == [f"{note}\ncompiled\n", f"{note}\ndisk\n"]
