"""`set_context(save_graphs=True, save_graphs_path=...)`: every compile writes its stages as
numbered files in a directory of its own, the same files `amber dump --out-dir` writes."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import amber
from amber import nn, ops
from amber.graph.passes import PIPELINES


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(3, 2)

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.relu(self.fc(x))


def _flat(steps: object) -> list[str]:
    return [steps] if isinstance(steps, str) else [n for s in steps for n in _flat(s)]


def test_each_compile_writes_its_stages(tmp_path: Path) -> None:
    out = tmp_path / "graphs"
    amber.set_context(save_graphs=True, save_graphs_path=out, opt_level=1)
    net = amber.jit(Net(), dynamic=False)  # NOTE: each shape its own compile
    net(np.ones((1, 3), np.float32))
    net(np.ones((1, 3), np.float32))  # same key: no new compile, no new directory
    net(np.ones((4, 3), np.float32))
    dirs = sorted(p.name for p in out.iterdir())
    assert dirs == ["Net.construct_0", "Net.construct_1"]
    files = sorted(p.name for p in (out / dirs[1]).iterdir())
    names = [f[3:].rsplit(".", 1)[0] for f in files]
    assert names == ["source", "ir", *_flat(PIPELINES[1]), "opt-ir", "code"]
    assert [f[:2] for f in files] == [f"{i:02d}" for i in range(len(files))]
    source = (out / dirs[1] / files[0]).read_text()
    assert "# --- Net.construct" in source and "# --- Dense.construct" in source
    code = (out / dirs[1] / files[-1]).read_text()
    assert "Input signature: (f32[4,3])" in code and code == net.code


def test_saving_compiles_even_when_the_disk_cache_has_the_code(tmp_path: Path) -> None:
    first = amber.jit(Net())
    first(np.ones((1, 3), np.float32))
    second = amber.jit(Net())
    second(np.ones((1, 3), np.float32))
    assert second.stats.disk_hits == 1  # what a new jit object finds, unless saving graphs
    amber.set_context(save_graphs=True, save_graphs_path=tmp_path / "graphs")
    fresh = amber.jit(Net())
    fresh(np.ones((1, 3), np.float32))
    assert fresh.stats.disk_hits == 0 and fresh.stats.compiles == 1
    assert [p.name for p in (tmp_path / "graphs").iterdir()] == ["Net.construct_0"]


def test_off_by_default(tmp_path: Path, monkeypatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    amber.jit(Net())(np.ones((2, 3), np.float32))
    assert not amber.get_context().save_graphs and list(work.iterdir()) == []
