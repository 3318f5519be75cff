"""samples/ms_train_lenet.py, a MindSpore-style training script (`import mindspore...`, a
dataset pipeline, Model.train with callbacks and a checkpoint), runs unchanged through
`python -m amber.compat` and learns."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "ms_train_lenet.py"


def test_runs_unchanged_through_the_alias_and_learns(tmp_path):
    pytest.importorskip("sklearn", reason="the digits come with scikit-learn")
    imports = [ln for ln in SAMPLE.read_text().splitlines() if ln.startswith(("import ", "from "))]
    assert any("mindspore" in ln for ln in imports)
    assert not any("amber" in ln for ln in imports)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SAMPLE.parents[2]),
                                                      os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "amber.compat", str(SAMPLE), "--epochs", "2", "--train-size",
         "640", "--ckpt-dir", str(tmp_path)], capture_output=True, text=True, env=env,
        timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert re.search(r"^epoch: 2 step: 20, loss is [\d.]+$", out, re.M)
    assert "Train epoch time:" in out
    assert "checkpoint lenet-2_20.ckpt restores the network: True" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lenet-1_20.ckpt", "lenet-2_20.ckpt"]
    accuracy = float(re.search(r"test accuracy: ([\d.]+)", out)[1])
    assert accuracy > 0.5  # 10 classes: chance is 0.1; 2 epochs on 640 images reach ~0.65
