"""What runs in new processes: `amber export --format onnx` (the samples written as ONNX models
onnxruntime runs), the onnxruntime backend served from the disk cache (a new process builds no
graph), and `import amber` importing neither onnx nor onnxruntime. Under NumPy 1 these are not
collected (conftest.py): they do not depend on NumPy's version, and that run's budget is small."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

ROOT = Path(__file__).resolve().parents[2]


def amber_cli(*args, cwd):
    env = {**os.environ, "AMBER_CACHE": "0"}
    return subprocess.run([sys.executable, "-m", "amber", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_rnn_sample_exports_with_its_while_loop(tmp_path):
    out = tmp_path / "rnn.onnx"
    proc = amber_cli("export", str(ROOT / "samples" / "rnn.py") + ":EarlyStopRNN",
                     "--format", "onnx", "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "wrote" in proc.stdout and "opset 17" in proc.stdout
    model = onnx.load(out)
    onnx.checker.check_model(model, full_check=True)
    assert "Loop" in {n.op_type for n in model.graph.node}


def test_dynamic_lenet_runs_at_several_batches(tmp_path):
    out = tmp_path / "lenet.onnx"
    proc = amber_cli("export", str(ROOT / "samples" / "lenet.py") + ":LeNet5", "--format",
                     "onnx", "--input", "Nx1x32x32:float32", "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    for batch in (1, 5):
        (y,) = session.run(None, {"x": np.zeros((batch, 1, 32, 32), np.float32)})
        assert y.shape == (batch, 10)


def test_wrong_suffix_is_a_usage_error(tmp_path):
    proc = amber_cli("export", str(ROOT / "samples" / "lenet.py") + ":LeNet5", "--format",
                     "onnx", "-o", str(tmp_path / "lenet.py"), cwd=tmp_path)
    assert proc.returncode != 0 and ".onnx" in proc.stderr


SCRIPT = """
import json, sys
import numpy as np
import amber
from amber.runtime import pipeline
from amber.samples.lenet import LeNet5
built = []
original = pipeline.build
pipeline.build = lambda *a, **k: built.append(1) or original(*a, **k)
amber.set_seed(0)
net = amber.jit(LeNet5(), backend="onnxruntime")
out = net(np.ones((2, 1, 32, 32), np.float32))
print(json.dumps({"built": len(built), "hits": net.stats.disk_hits, "out": out.tolist()}))
"""


def test_a_new_process_runs_the_session_from_the_disk_cache(tmp_path):
    env = {**os.environ, "AMBER_CACHE_DIR": str(tmp_path), "AMBER_CACHE": "1"}

    def run():
        proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    cold, warm = run(), run()
    assert cold["built"] == 1 and warm["built"] == 0 and warm["hits"] == 1
    assert warm["out"] == cold["out"]


def test_import_amber_imports_neither_onnx_nor_onnxruntime():
    code = "import sys, amber; print('onnx' in sys.modules, 'onnxruntime' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "False"]
