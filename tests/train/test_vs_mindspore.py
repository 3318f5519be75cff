"""Optional: amber.dataset, the metrics and a Model.train script against MindSpore 2.10 itself.
Skipped when mindspore is not importable (it needs NumPy 1.26):

    PYTHONPATH=$PWD/.. /path/to/mindspore-venv/bin/python -m pytest tests/train/test_vs_mindspore.py

The same pipeline or operation is built with each library's module and the rows compared; the
sample training script runs under each interpreter and the test accuracies must agree within
2 points (different random streams give different initial weights, so not bit for bit)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ms = pytest.importorskip("mindspore", reason="MindSpore 2.x is not installed (optional oracle)")

import mindspore.dataset as ms_ds  # noqa: E402
import mindspore.train as ms_train  # noqa: E402

import amber.dataset as am_ds  # noqa: E402
import amber.train as am_train  # noqa: E402

RNG = np.random.default_rng(0)
IMAGE = RNG.integers(0, 256, (6, 8, 3)).astype(np.uint8)
SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "ms_train_lenet.py"


def pipelines(ds):
    """Deterministic pipelines, built with either library's `dataset` module."""
    data = {"x": np.arange(23), "y": np.arange(23) * 3}
    base = lambda **kw: ds.NumpySlicesDataset(data, shuffle=False, **kw)  # noqa: E731
    return {
        "map_batch": base().map(lambda x: x * 2, input_columns="x").batch(5),
        "drop_remainder": base().batch(5, drop_remainder=True),
        "repeat_take_skip": base().repeat(2).skip(20).take(7),
        "project_rename": base().project(["y", "x"]).rename(["y"], ["z"]),
        "map_outputs": base().map(lambda y: (y, y + 1), input_columns="y",
                                  output_columns=["a", "b"]),
        "shard": base(num_shards=4, shard_id=3),
        "num_samples": base(num_samples=4),
        "generator": ds.GeneratorDataset(lambda: ((np.float32(k), k) for k in range(7)),
                                         ["v", "k"]).batch(3),
    }


@pytest.mark.parametrize("name", sorted(pipelines(am_ds)))
def test_pipelines_give_mindspores_rows(name):
    ours, theirs = pipelines(am_ds)[name], pipelines(ms_ds)[name]
    assert ours.get_col_names() == theirs.get_col_names()
    assert ours.get_dataset_size() == theirs.get_dataset_size()
    got = list(ours.create_tuple_iterator(output_numpy=True))
    want = list(theirs.create_tuple_iterator(output_numpy=True))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def operations(vision, transforms):
    return [
        (vision.Rescale(1 / 255, -0.5), IMAGE), (vision.Normalize([1, 2, 3], [4, 5, 6]), IMAGE),
        (vision.HWC2CHW(), IMAGE), (vision.Resize((3, 5)), IMAGE),
        (vision.Resize((13, 17)), IMAGE), (vision.Resize(4), IMAGE),
        (vision.Resize((12, 16), vision.Inter.NEAREST), IMAGE),
        (vision.Resize((5, 3)), IMAGE.astype(np.float32)),
        (vision.RandomHorizontalFlip(1.0), IMAGE), (vision.RandomCrop((6, 8)), IMAGE),
        (transforms.TypeCast(np.int32), np.array([1.7, -2.5])),
        (transforms.OneHot(5), np.array([0, 4, 2])),
    ]


@pytest.mark.parametrize("index", range(12))
def test_operations_give_mindspores_values(index):
    op, arg = operations(am_ds.vision, am_ds.transforms)[index]
    ms_op, _ = operations(ms_ds.vision, ms_ds.transforms)[index]
    got, want = op(arg.copy()), ms_op(arg.copy())
    assert got.shape == want.shape and got.dtype == want.dtype
    # NOTE: OpenCV resizes uint8 in fixed point: a pixel may round the other way
    atol = 1.0001 if got.dtype == np.uint8 else 1e-5
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-6,
                               atol=atol)


def test_metrics_give_mindspores_values():
    scores = RNG.standard_normal((30, 6))
    labels = RNG.integers(0, 6, 30)
    for name in ("Accuracy", "Precision", "Recall", "F1", "Top1CategoricalAccuracy",
                 "Top5CategoricalAccuracy", "MAE", "MSE"):
        ours, theirs = getattr(am_train, name)(), getattr(ms_train, name)()
        if name in ("MAE", "MSE"):
            args = (scores[:, 0], scores[:, 1])
        else:
            args = (scores, labels)
        np.testing.assert_allclose(ours(*args), theirs(*args), rtol=1e-12, err_msg=name)


def run_sample(tmp: Path, on_amber: bool) -> float:
    """The sample's test accuracy, run by this interpreter as MindSpore or through the alias."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    command = [sys.executable, str(SAMPLE), "--epochs", "4", "--ckpt-dir", str(tmp)]
    if on_amber:
        command[1:1] = ["-m", "amber.compat"]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SAMPLE.parents[2]),
                                                          env.get("PYTHONPATH")]))
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "restores the network: True" in done.stdout
    return float(re.search(r"test accuracy: ([\d.]+)", done.stdout)[1])


def test_the_model_train_sample_reaches_mindspores_accuracy(tmp_path):
    pytest.importorskip("sklearn", reason="the digits come with scikit-learn")
    theirs = run_sample(tmp_path / "ms", on_amber=False)
    ours = run_sample(tmp_path / "amber", on_amber=True)
    print(f"test accuracy: amber {ours:.3f}, MindSpore {theirs:.3f}")
    assert abs(ours - theirs) <= 0.02, (ours, theirs)
