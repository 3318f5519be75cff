"""`amber export --format onnx`: the samples written as ONNX models that onnxruntime runs."""
from __future__ import annotations

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
