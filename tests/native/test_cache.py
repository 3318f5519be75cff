"""Numba's cache lives beside the disk-cache entry: a second process loads the kernel it
compiled instead of compiling it again; `amber cache clear` removes it too."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
import numpy as np
sys.path.insert(0, {samples!r})
import amber
from rnn import EarlyStopRNN, example_inputs
amber.set_seed(0)
net = amber.jit(EarlyStopRNN(), backend="numba")
h, steps = net(*example_inputs())
module = net.last.fn.__globals__
kernels = [v for k, v in module.items() if k.endswith("_while") and hasattr(v, "stats")]
print(json.dumps({{"hits": sum(sum(k.stats.cache_hits.values()) for k in kernels),
                  "misses": sum(sum(k.stats.cache_misses.values()) for k in kernels),
                  "kernels": len(kernels), "disk_hits": net.stats.disk_hits,
                  "file": net.last.filename, "sum": float(h.sum()), "steps": steps}}))
"""


def run(cache_dir: Path) -> dict:
    env = {"AMBER_CACHE_DIR": str(cache_dir), "AMBER_CACHE": "1", "PATH": "/usr/bin:/bin"}
    code = PROBE.format(samples=str(ROOT / "samples"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_process_loads_the_kernel_from_numbas_cache(numba, cache_dir: Path) -> None:
    first, second = run(cache_dir), run(cache_dir)
    assert first["kernels"] == second["kernels"] == 1
    assert first["disk_hits"] == 0 and first["misses"] == 1 and first["hits"] == 0
    assert second["disk_hits"] == 1 and second["hits"] == 1 and second["misses"] == 0
    assert (first["sum"], first["steps"]) == (second["sum"], second["steps"])
    entry = Path(second["file"])
    assert entry.parent.parent == cache_dir
    assert any(p.suffix == ".nbi" for p in (entry.parent / "__pycache__").iterdir())
    subprocess.run([sys.executable, "-m", "amber", "cache", "clear"], check=True,
                   env={"AMBER_CACHE_DIR": str(cache_dir), "PATH": "/usr/bin:/bin"},
                   capture_output=True)
    assert not any(cache_dir.rglob("*.nbi")) and not any(cache_dir.rglob("*.nbc"))


LARGE_SUM_MODULE = '''
import numpy as np
from amber import nn


class Norms(nn.Cell):
    """A loop whose kernel sums 1024 elements: NumPy's pairwise sum splits them in halves."""

    def construct(self, x):
        for _ in range(10):
            x = x * 0.5 + 1.0
            if np.sum(x * x) > 1000.0:
                x = x - 1.0
        return x
'''

LARGE_SUM_PROBE = """
import json, sys
import numpy as np
sys.path.insert(0, {folder!r})
import amber
from norms import Norms
net = amber.jit(Norms(), backend="numba")
x = np.linspace(-1, 1, 1024, dtype=np.float32).reshape(16, 64)
total = net(x).tolist()
kernels = [k for k in net.last.fn.__globals__ if k.endswith("_for")]
print(json.dumps({{"total": total, "eager": Norms().construct(x).tolist(),
                  "kernels": kernels, "disk_hits": net.stats.disk_hits}}))
"""


def test_a_cached_kernel_summing_more_than_a_block_loads_in_a_second_process(
        numba, cache_dir: Path, tmp_path: Path) -> None:
    """The pairwise sum above 128 elements is not recursive: Numba's cache crashed the process
    loading a recursive function (numba/numba#6061)."""
    (tmp_path / "norms.py").write_text(LARGE_SUM_MODULE)
    env = {"AMBER_CACHE_DIR": str(cache_dir), "AMBER_CACHE": "1", "PATH": "/usr/bin:/bin"}
    code = LARGE_SUM_PROBE.format(folder=str(tmp_path))
    runs = [json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                      text=True, check=True).stdout.strip().splitlines()[-1])
            for _ in range(2)]
    assert [r["disk_hits"] for r in runs] == [0, 1]
    assert runs[0]["kernels"] == runs[1]["kernels"] != []
    assert runs[0]["total"] == runs[1]["total"] == runs[0]["eager"]
