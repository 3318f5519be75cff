"""`amber export --train` (a train step that runs with NumPy alone and saves an amber checkpoint)
and `amber export --checkpoint FILE` (the module carries those weights)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import amber
from amber import cli

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
TRAIN = f"{SAMPLES / 'train_lenet.py'}:LeNetTrainStep"


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def batches(n: int = 3) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(1)
    return [(rng.standard_normal((32, 1, 32, 32), dtype=np.float32),
             rng.integers(0, 10, 32).astype(np.int32)) for _ in range(n)]


def test_train_step_module_trains_with_numpy_alone(tmp_path: Path, capsys) -> None:
    out_py = tmp_path / "step_static.py"
    code, out, err = run(capsys, "export", TRAIN, "-o", str(out_py), "--train")
    assert code == 0, err
    data = tmp_path / "batches.npz"
    flat = {f"{k}{i}": v for i, pair in enumerate(batches()) for k, v in zip("xy", pair)}
    np.savez(data, **flat)
    losses, ckpt = tmp_path / "losses.npy", tmp_path / "trained.ckpt"
    probe = (
        "import sys, importlib.abc\n"
        "class NoAmber(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'amber': raise ImportError('amber is off limits')\n"
        "sys.meta_path.insert(0, NoAmber())\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "import numpy as np, step_static\n"
        f"d = np.load({str(data)!r})\n"
        "losses = [float(step_static.run(d[f'x{i}'], d[f'y{i}'])) for i in range(3)]\n"
        f"np.save({str(losses)!r}, np.array(losses))\n"
        f"step_static.save({str(ckpt)!r})\n"
        "assert 'amber' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", probe], check=True, cwd=tmp_path)

    amber.set_seed(0)  # what `amber export` did before building LeNetTrainStep()
    step = cli.load_module(TRAIN.rsplit(":", 1)[0]).LeNetTrainStep()
    compiled = amber.jit(step)
    expected = [float(compiled(x, y)) for x, y in batches()]
    np.testing.assert_allclose(np.load(losses), expected, rtol=1e-5)
    saved = amber.load_checkpoint(ckpt)  # every parameter and the optimizer state, by name
    assert {"conv1.weight", "moment1.conv1.weight", "global_step"} <= set(saved)
    assert int(saved["global_step"][0]) == 3
    for name, p in step.parameters_dict().items():
        np.testing.assert_allclose(saved[p.name], p, rtol=1e-4, atol=1e-6, err_msg=name)


def test_train_export_needs_a_train_step(tmp_path: Path, capsys) -> None:
    code, _, err = run(capsys, "export", f"{SAMPLES / 'lenet.py'}:LeNet5", "-o",
                       str(tmp_path / "m.py"), "--train")
    assert code == 2 and "--train needs an nn.TrainOneStepCell" in err
    assert not (tmp_path / "m.py").exists()


def test_checkpoint_weights_are_exported(tmp_path: Path, capsys) -> None:
    sys.path.insert(0, str(SAMPLES))
    try:
        from lenet import LeNet5
    finally:
        sys.path.remove(str(SAMPLES))
    amber.set_seed(7)  # not the seed export builds with: the weights must come from the file
    net = LeNet5()
    ckpt = tmp_path / "lenet.ckpt"
    amber.save_checkpoint(net, ckpt)
    out_py = tmp_path / "lenet_static.py"
    code, _, err = run(capsys, "export", f"{SAMPLES / 'lenet.py'}:LeNet5", "-o", str(out_py),
                       "--checkpoint", str(ckpt))
    assert code == 0, err
    sys.path.insert(0, str(tmp_path))
    try:
        import lenet_static
    finally:
        sys.path.remove(str(tmp_path))
    x = np.random.default_rng(0).standard_normal((1, 1, 32, 32), dtype=np.float32)
    np.testing.assert_allclose(lenet_static.run(x), net.construct(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"must be an array of shape \(1, 1, 32, 32\), dtype "
                                         r"float32; given shape \(2, 1, 32, 32\)"):
        lenet_static.run(np.zeros((2, 1, 32, 32), np.float32))


def test_a_checkpoint_that_does_not_fit_is_a_usage_error(tmp_path: Path, capsys) -> None:
    ckpt = tmp_path / "other.ckpt"
    amber.save_checkpoint({"fc1.weight": np.zeros((2, 2), np.float32)}, ckpt)
    spec = f"{SAMPLES / 'lenet.py'}:LeNet5"
    code, _, err = run(capsys, "export", spec, "-o", str(tmp_path / "m.py"), "--checkpoint",
                       str(ckpt))
    assert code == 2 and "'fc1.weight' has shape (2, 2) in the checkpoint" in err
    amber.save_checkpoint({"fc1.bias": np.zeros(120, np.float32)}, ckpt)
    code, _, err = run(capsys, "export", spec, "-o", str(tmp_path / "m.py"), "--checkpoint",
                       str(ckpt))
    assert code == 2 and "lacks 7 parameter(s)" in err and "conv1.weight" in err
